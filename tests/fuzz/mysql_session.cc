// Fuzz target: a MySQL session as the proxy relays it
// (apps/mysql-proxy/session.cc), below the sockets: a framer per direction
// (packet.hh) splits each side's bytes into packets, the greeting and the
// client's answer are parsed and rewritten (handshake.hh), and the command
// tracker (command.hh) says at every packet whose turn it is and which
// sequence id comes next, until the bytes run out, a side breaks the
// protocol, or the session closes.
//
// The input: one byte for the size of each read (0: all at once), one for
// the framer's limits (low nibble: the largest packet, 16 B << n, 15: the
// proxy's 64 MiB; high nibble: the hold limit, 0 or 8 B << n, 15: the proxy's
// 32 KiB read buffer), a little-endian u16 length of the client's bytes,
// then the client's bytes, then the server's. tests/fuzz/corpus/make_seeds.py
// writes the captured sessions of tests/apps/mysql_proxy in this shape.
//
// Invariants:
// - the framer never takes more bytes than it was given, never leaves a full
//   read buffer unused (its hold limit is the buffer less a header), and
//   returns a packet within its limit, starting with the sequence id asked
//   for, whose payload lies in the bytes given (consumed) or in none of them;
//   framed again (append_packet) the packet is exactly the bytes it took,
//   and the next sequence id is the one append_packet gives;
// - a greeting or an answer that parses rewrites to a payload of the same
//   size that parses to the same fields, its capabilities limited to those
//   forwarded;
// - the tracker never asks a side for a packet out of turn: a command ends
//   (done, failed) with the client's turn for the next command or the
//   session closed, and goes on (more) with a packet inside the exchange;
//   a new command starts at sequence id 0.

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <expected>
#include <optional>
#include <span>
#include <vector>

#include "apps/mysql-proxy/command.hh"
#include "apps/mysql-proxy/generic.hh"
#include "apps/mysql-proxy/handshake.hh"
#include "apps/mysql-proxy/packet.hh"
#include "tests/fuzz/check.hh"

namespace {

using namespace affine_mysql;
using affine_fuzz::apart;
using affine_fuzz::inside;
using affine_fuzz::require;
using affine_fuzz::touch;
using bytes_view = std::span<const std::byte>;

constexpr std::size_t proxy_read_buffer_bytes = 32 * 1024;  // packet_io::read_buffer_bytes

struct limits {
  std::size_t read_size;    // bytes a read brings at most; 0: all there are
  std::size_t max_payload;  // the framer's limit
  std::size_t hold_limit;   // the framer's; the read buffer is 4 bytes more
};

limits limits_from(std::uint8_t read_byte, std::uint8_t limit_byte) {
  const unsigned max_nibble = limit_byte & 0x0f;
  const unsigned hold_nibble = limit_byte >> 4;
  return {.read_size = read_byte,
          .max_payload = max_nibble == 15 ? default_max_packet : std::size_t(16) << max_nibble,
          .hold_limit = hold_nibble == 15  ? proxy_read_buffer_bytes - frame_header_size
                        : hold_nibble == 0 ? 0
                                           : std::size_t(8) << hold_nibble};
}

// One side of the session: its bytes arrive in reads into a buffer of
// hold_limit + 4 bytes, which the framer takes from, as packet_io does.
class side {
 public:
  side(bytes_view stream, const limits& l)
      : stream_(stream), framer_(l.max_payload, l.hold_limit), limits_(l), buffer_(l.hold_limit + frame_header_size) {}

  // The next packet, or nullopt at the end of the bytes or a framing error.
  std::optional<packet_view> read(std::uint8_t expect_seq) {
    drop_taken();
    for (;;) {
      const bytes_view in = std::span(buffer_).subspan(begin_, end_ - begin_);
      const auto s = framer_.take(in, expect_seq);
      if (!s) return std::nullopt;
      require(s->consumed <= in.size(), "the framer takes no more than it was given");
      taken_ += s->consumed;
      if (s->packet) {
        check_packet(*s->packet, in.first(s->consumed), expect_seq);
        last_consumed_ = s->consumed;
        return s->packet;
      }
      begin_ += s->consumed;
      std::memmove(buffer_.data(), buffer_.data() + begin_, end_ - begin_);
      end_ -= begin_;
      begin_ = 0;
      require(end_ < buffer_.size(), "the framer leaves no full read buffer unused");
      if (arrived_ == stream_.size()) return std::nullopt;
      std::size_t n = std::min(buffer_.size() - end_, stream_.size() - arrived_);
      if (limits_.read_size != 0) n = std::min(n, limits_.read_size);
      std::memcpy(buffer_.data() + end_, stream_.data() + arrived_, n);
      end_ += n;
      arrived_ += n;
    }
  }

 private:
  void drop_taken() {
    begin_ += last_consumed_;
    last_consumed_ = 0;
  }

  void check_packet(const packet_view& p, bytes_view consumed, std::uint8_t expect_seq) {
    require(p.seq == expect_seq, "a packet starts with the sequence id asked for");
    require(p.payload.size() <= limits_.max_payload, "a packet within the framer's limit");
    const bytes_view whole = std::span(buffer_);
    require(inside(p.payload, consumed) || apart(p.payload, whole),
            "a payload lies in the bytes the framer took, or in none of the buffer");
    touch(p.payload);
    // The stream's bytes from the end of the previous packet to here are
    // this packet, framed.
    std::vector<std::byte> framed;
    const std::uint8_t next = append_packet(framed, p.seq, p.payload);
    require(next == p.next_seq, "the next sequence id follows the packet's last frame");
    require(framed.size() == framed_size(p.payload.size()), "framed_size is what append_packet adds");
    require(std::ranges::equal(framed, stream_.subspan(packet_start_, taken_ - packet_start_)),
            "a packet framed again is the bytes the framer took for it");
    packet_start_ = taken_;
  }

  bytes_view stream_;
  framer framer_;
  limits limits_;
  std::vector<std::byte> buffer_;
  std::size_t begin_ = 0, end_ = 0;  // the buffered bytes not yet taken
  std::size_t last_consumed_ = 0;    // the last packet's bytes, dropped at the next read
  std::size_t arrived_ = 0;          // bytes of the stream read into the buffer
  std::size_t taken_ = 0;            // bytes of the stream the framer has taken
  std::size_t packet_start_ = 0;     // where the next packet begins in the stream
};

bool same_greeting(const server_greeting& a, const server_greeting& b) {
  return a.server_version == b.server_version && a.connection_id == b.connection_id && a.charset == b.charset &&
         a.status == b.status && std::ranges::equal(a.scramble, b.scramble) &&
         std::ranges::equal(a.scramble_rest, b.scramble_rest) && a.auth_plugin == b.auth_plugin;
}

bool same_answer(const handshake_response& a, const handshake_response& b) {
  return a.max_packet == b.max_packet && a.charset == b.charset && a.user == b.user &&
         std::ranges::equal(a.auth_response, b.auth_response) && a.database == b.database &&
         a.auth_plugin == b.auth_plugin;
}

// A greeting or an answer: rewritten exactly when it parses, to a payload
// of the same size that reads the same but for the capabilities, which are
// those the proxy forwards.
template <class Parsed, class Parse, class Rewrite, class Same>
std::optional<Parsed> check_handshake_packet(bytes_view payload, Parse parse, Rewrite rewrite, Same same) {
  const auto parsed = parse(payload);
  const auto rewritten = rewrite(payload);
  require(parsed.has_value() == rewritten.has_value(), "a handshake packet is rewritten exactly when it parses");
  if (!parsed) return std::nullopt;
  require(rewritten->size() == payload.size(), "a rewritten handshake packet keeps its size");
  const auto again = parse(*rewritten);
  require(again && same(*again, *parsed), "a rewritten handshake packet reads the same");
  require(again->capabilities == (parsed->capabilities & cap::forwarded) &&
              again->mariadb_capabilities == (parsed->mariadb_capabilities & mariadb_cap::forwarded),
          "a rewritten handshake packet carries only the capabilities the proxy forwards");
  return *parsed;
}

void check_turn(const command_tracker& t, outcome o) {
  require(t.current() < command_kind::count_, "a command the tracker knows");
  if (o == outcome::more) {
    require(t.next() == turn::client || t.next() == turn::server, "an exchange that goes on, inside it");
  } else {
    require(t.next() == turn::client_command || t.next() == turn::closed, "an exchange that ended, between them");
  }
  if (t.next() == turn::client_command) require(t.expected_seq() == 0, "a command starts at sequence id 0");
}

// session::relay_greeting_and_answer and relay_commands, less the sockets.
void run_session(side& client, side& server) {
  const auto g = server.read(0);
  if (!g || header_of(g->payload) == err_header) return;
  const auto greeting =
      check_handshake_packet<server_greeting>(g->payload, parse_greeting, rewrite_greeting, same_greeting);
  if (!greeting) return;
  const auto a = client.read(g->next_seq);
  if (!a) return;
  const auto answer = check_handshake_packet<handshake_response>(a->payload, parse_handshake_response,
                                                                 rewrite_handshake_response, same_answer);
  if (!answer) return;
  command_tracker tracker(negotiate(offered(*greeting), requested(*answer)), a->next_seq);
  require(tracker.next() == turn::server, "the server answers the client's handshake");
  for (;;) {
    const turn now = tracker.next();
    if (now == turn::closed) return;
    const bool from_client = now == turn::client_command || now == turn::client;
    const auto p = (from_client ? client : server).read(tracker.expected_seq());
    if (!p) return;
    const auto o = from_client ? tracker.on_client(*p) : tracker.on_server(*p);
    if (!o) return;
    check_turn(tracker, *o);
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size < 4) return 0;
  const limits l = limits_from(data[0], data[1]);
  const bytes_view rest = std::as_bytes(std::span(data + 4, size - 4));
  const std::size_t client_bytes = std::min<std::size_t>(std::size_t(data[2]) | std::size_t(data[3]) << 8, rest.size());
  side client(rest.first(client_bytes), l);
  side server(rest.subspan(client_bytes), l);
  run_session(client, server);
  return 0;
}
