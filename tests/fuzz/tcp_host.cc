// One TCP host at virtual time (tests/stack/tcp/host.hh: tcp::connection
// and the tcp::listener stack::listen_in runs, demultiplexed as
// stack/rx_tcp_demux.cc does), fed a sequence of steps the input decodes
// into: a segment from a peer, written to bytes by emit_tcp and parsed by
// tcp_view as the receive path parses it; a time advance (every timer due
// fires, in order); an application call (accept, read, write, close,
// shutdown, abort). The host listens on port 80 and has one connection
// established through the listener before the first step (peer port
// 40000). Segments are built to be mostly right: to the listener's port,
// from one of 15 peers, with sequence and acknowledgment numbers near what
// each peer has sent and what the host has sent it, options the host
// negotiated, and now and then a byte of the frame changed.
//
// Invariants: no sanitizer report; every segment the host sends is one
// emit_tcp writes and tcp_view reads back the same (checksum checked); what
// the application reads is a peer's bytes in sequence order (a peer's byte
// at sequence number s is s mod 256, unless a changed frame reached that
// peer's connection); the listener's queue counts are the connections it
// has in them; no connection holds more to read than its receive buffer;
// ring buffers hold no more than the live connections' buffers; no step
// sends without bound; at the end every connection and ring buffer freed.
//
// The input: 4 bytes of settings, then steps.
//   [0] bit 0: SACK, 1: timestamps, 2: window scaling, 3: no_delay,
//       4: NewReno (else CUBIC), 5: keepalive (1 s idle, 1 s apart, 3 probes),
//       6: a user timeout of 2.5 s (RFC 9293 3.10.8), 7: pacing
//   [1] our MSS: 88 + 6 * b
//   [2] low nibble: send buffer, high: receive buffer (1 KiB << n % 9)
//   [3] bits 0-1: SYN backlog - 1, 2-3: accept backlog - 1, 4-5: SYN
//       cookies (automatic, always, never)
// A step is an opcode byte, op % 4:
//   0, 1: a segment: port, control, seq, ack, length, options, window
//         (7 bytes; 2 more when the options byte asks for a changed byte)
//   2:    time: (b % 64) << (4 * (b / 64)) ms (1 byte; up to 4.3 minutes)
//   3:    the application: a peer (b % 16) and a call (b / 16), an amount (2 bytes)

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include "stack/tcp/connection.hh"
#include "stack/tcp/ring_buffer.hh"
#include "stack/wire/tcp.hh"
#include "tests/fuzz/check.hh"
#include "tests/fuzz/tcp_steps.hh"
#include "tests/stack/tcp/host.hh"

namespace {

using namespace affine::stack;
using namespace affine::stack::tcp;
using affine::stack::tcp::testing::host;
using affine_fuzz::require;

constexpr std::uint64_t ms = 1'000'000;
constexpr std::uint32_t local_addr = 0x0a000001;
constexpr std::uint32_t remote_addr = 0x0a000002;
constexpr std::uint16_t local_port = 80;
constexpr std::uint16_t first_peer_port = 40000;
constexpr unsigned peers = 16;  // peer 15 sends to a port nobody listens on
constexpr siphash_key secret{3, 1, 4, 1, 5, 9, 2, 6, 5, 3, 5, 8, 9, 7, 9, 3};
// Segments one step may make the host send: far more than any burst of its
// buffers at the smallest MSS, far less than a loop that never ends.
constexpr std::size_t max_sent_per_step = 1 << 16;

using affine_fuzz::peer_sequence;
using affine_fuzz::reader;

// What a peer knows (peer_sequence), and what the application made of it.
struct peer_state : peer_sequence {
  bool tainted = false;     // a changed frame reached it: its bytes may be anything
  connection* app = nullptr;  // the connection the application holds for it
  std::optional<std::byte> last_read{};
};

class driver {
 public:
  explicit driver(std::span<const std::uint8_t> input) : in_{input}, host_(secret, local_addr, remote_addr, local_port) {}

  void run() {
    const std::uint8_t flags = in_.next();
    cfg_.sack = flags & 1;
    cfg_.timestamps = flags & 2;
    cfg_.window_scaling = flags & 4;
    cfg_.no_delay = flags & 8;
    cfg_.congestion = flags & 16 ? congestion_algorithm::new_reno : congestion_algorithm::cubic;
    if (flags & 32) cfg_.keepalive = {.enabled = true, .idle_ns = 1'000 * ms, .interval_ns = 1'000 * ms, .count = 3};
    if (flags & 64) cfg_.user_timeout_ns = 2'500 * ms;
    cfg_.pacing = flags & 128;
    cfg_.mss = std::uint16_t(88 + 6 * in_.next());
    const std::uint8_t buffers = in_.next();
    cfg_.send_buffer = std::size_t(1024) << ((buffers & 15) % 9);
    cfg_.recv_buffer = std::size_t(1024) << ((buffers >> 4) % 9);
    const std::uint8_t l = in_.next();
    listener_config lc;
    lc.syn_backlog = 1 + (l & 3);
    lc.accept_backlog = 1 + ((l >> 2) & 3);
    lc.cookies = std::array{syn_cookie_mode::automatic, syn_cookie_mode::always, syn_cookie_mode::never,
                            syn_cookie_mode::automatic}[(l >> 4) & 3];
    host_.listen(lc);
    establish();
    while (!in_.empty()) {
      const std::uint8_t op = in_.next();
      sent_in_step_ = 0;
      switch (op % 4) {
        case 0:
        case 1: segment_step(); break;
        case 2: time_step(); break;
        default: app_step(); break;
      }
      settle();
    }
    host_.clear();
  }

 private:
  std::uint16_t port_of(unsigned peer) const { return std::uint16_t(first_peer_port + peer); }

  // Peer 0's handshake through the listener, as a Linux client makes it.
  void establish() {
    peer_state& p = peers_[0];
    tcp_segment syn{.src_port = port_of(0), .dst_port = local_port, .control = tcp_control::syn, .seq = seq32(5000),
                    .window = 65535};
    syn.options = {.mss = 1460, .window_scale = 7, .sack_permitted = true, .timestamps = tcp_timestamps{1, 0}};
    p.snd_nxt = seq32(5001);
    p.synced = true;
    deliver(syn, std::nullopt);
    tcp_segment ack{.src_port = port_of(0), .dst_port = local_port, .seq = p.snd_nxt, .ack = p.host_nxt,
                    .window = 65535};
    if (cfg_.timestamps) ack.options.timestamps = tcp_timestamps{2, p.ts_recent};
    deliver(ack, std::nullopt);
    settle();
    accept_all();
    require(p.app != nullptr && p.app->state() == tcp_state::established,
            "a Linux client's handshake through the listener made no established connection");
  }

  void segment_step() {
    const unsigned peer = in_.next() % peers;
    peer_state& p = peers_[peer];
    const std::uint16_t src_port = port_of(peer);
    auto step = affine_fuzz::read_segment(
        in_, p, {.new_connection = !p.synced || !host_.has(src_port), .timestamps = cfg_.timestamps,
                 .ts_value = std::uint32_t(now_ / ms) + 17},
        payload_);
    step.seg.src_port = src_port;
    step.seg.dst_port = peer == peers - 1 ? local_port + 1 : local_port;
    deliver(step.seg, step.change);
  }

  // The segment as the receive path sees it: written to bytes, perhaps a
  // byte changed, parsed (a changed frame as a NIC that checked the sum
  // passes it), then demultiplexed.
  void deliver(const tcp_segment& s, std::optional<std::pair<std::size_t, std::uint8_t>> change) {
    frame_.resize(60 + s.payload.size());
    const auto n = emit_tcp(s, remote_addr, local_addr, frame_, checksum_mode::software);
    if (!n) return;  // options that do not fit
    const std::span<std::byte> bytes = std::span(frame_).first(*n);
    if (change) bytes[change->first % bytes.size()] ^= std::byte(change->second);
    const auto v = tcp_view::parse(bytes, remote_addr, local_addr, change ? checksum_mode::offload : checksum_mode::software);
    if (!v) return;  // the receive path counts and drops it
    const tcp_segment seg = v->segment();
    if (change && seg.src_port >= first_peer_port && seg.src_port < first_peer_port + peers)
      peers_[seg.src_port - first_peer_port].tainted = true;
    const std::size_t reopened = host_.reopened();
    host_.input(seg, cfg_, now_, [this](const tcp_segment& out) { sent(out); });
    // A SYN that ended a TIME-WAIT replaced that peer's connection (RFC
    // 6191): the one the application held is gone, even when the new one
    // took its address, which settle()'s comparison would miss.
    if (host_.reopened() != reopened && seg.src_port >= first_peer_port && seg.src_port < first_peer_port + peers) {
      peer_state& p = peers_[seg.src_port - first_peer_port];
      p.app = nullptr;
      p.last_read.reset();
    }
  }

  void time_step() {
    const std::uint8_t b = in_.next();
    const std::uint64_t step = std::uint64_t(b % 64) << (4 * (b / 64));
    now_ = host_.advance(now_, now_ + step * ms, [this](const tcp_segment& out) { sent(out); });
  }

  void app_step() {
    const std::uint8_t b = in_.next();
    const std::size_t amount = std::size_t(in_.next()) << (in_.next() % 12);
    peer_state& p = peers_[b % peers];
    const unsigned call = b / 16;
    if (call == 0) {
      accept_all();
      return;
    }
    connection* c = p.app;
    if (!c) return;
    if (call < 6) {
      read(p, *c, amount);
    } else if (call < 10) {
      std::vector<std::byte> data(amount);
      for (std::size_t i = 0; i < amount; ++i) data[i] = std::byte('A' + (written_ + i) % 26);
      written_ += c->send(data).value_or(0);
    } else if (call < 12) {
      c->shutdown_write();
    } else if (call < 14) {
      c->close(now_);
      p.app = nullptr;
    } else if (call < 15) {
      c->abort();
      p.app = nullptr;
    } else {
      read(p, *c, SIZE_MAX);
    }
    host_.output(now_, [this](const tcp_segment& out) { sent(out); });
  }

  // The application reads: a peer's bytes come in sequence order.
  void read(peer_state& p, connection& c, std::size_t amount) {
    buffer_.resize(std::min(amount, c.readable()));
    const auto r = c.recv(buffer_);
    if (!r) return;
    for (std::size_t i = 0; i < *r; ++i) {
      if (p.last_read && !p.tainted)
        require(buffer_[i] == std::byte(std::uint8_t(std::to_integer<std::uint8_t>(*p.last_read) + 1)),
                "the application read a byte out of sequence order");
      p.last_read = buffer_[i];
    }
  }

  void accept_all() {
    while (connection* c = host_.accept()) {
      const std::uint16_t port = c->tuple().remote_port;
      require(port >= first_peer_port && port < first_peer_port + peers, "accepted a connection of no peer");
      peer_state& p = peers_[port - first_peer_port];
      p.app = c;
      p.last_read.reset();
    }
  }

  // What the host sent: a segment the wire format holds, read back the same.
  void sent(const tcp_segment& out) {
    require(++sent_in_step_ <= max_sent_per_step, "one step made the host send without end");
    out_frame_.resize(60 + out.payload.size());
    const auto n = emit_tcp(out, local_addr, remote_addr, out_frame_, checksum_mode::software);
    require(n.has_value(), "the host sent a segment emit_tcp cannot write");
    const auto v = tcp_view::parse(std::span<const std::byte>(out_frame_).first(*n), local_addr, remote_addr,
                                   checksum_mode::software);
    require(v.has_value(), "the host sent a segment tcp_view refuses");
    const tcp_segment back = v->segment();
    require(back.src_port == out.src_port && back.dst_port == out.dst_port && back.control == out.control &&
                back.seq == out.seq && back.ack == out.ack && back.window == out.window &&
                back.payload.size() == out.payload.size(),
            "a segment the host sent reads back otherwise");
    if (out.dst_port < first_peer_port || out.dst_port >= first_peer_port + peers) return;
    peers_[out.dst_port - first_peer_port].sent(out);
  }

  // After each step: closed connections go, and what must hold, holds.
  void settle() {
    host_.reap();
    for (unsigned k = 0; k < peers; ++k) {
      peer_state& p = peers_[k];
      if (p.app && host_.find(port_of(k)) != p.app) {
        p.app = nullptr;  // reaped (it was closed)
        p.last_read.reset();
      }
    }
    const listener& l = host_.lst();
    require(l.syn_received() == host_.children(), "the listener counts SYN-RECEIVED children it does not have");
    require(l.accept_queue() == host_.accept_queue(), "the listener counts an accept queue it does not have");
    require(host_.children() <= l.config().syn_backlog, "more SYN-RECEIVED children than the SYN backlog");
    require(host_.accept_queue() <= l.config().accept_backlog, "more connections to accept than the backlog");
    std::size_t buffers = 0;
    host_.each([&](const connection& c) {
      const std::size_t most = std::max(c.config().recv_buffer, c.config().recv_buffer_max);
      require(c.receive_buffer() <= most, "a receive buffer grown past recv_buffer_max");
      require(c.send_buffer() <= std::max(c.config().send_buffer, c.config().send_buffer_max),
              "a send buffer grown past send_buffer_max");
      buffers += c.send_buffer() + c.receive_buffer();
      require(c.readable() <= c.receive_buffer(), "more to read than the receive buffer holds");
      const connection_stats& s = c.stats();
      require(s.retransmitted_segments <= s.segments_sent, "more segments resent than sent");
    });
    require(ring_buffer::live_bytes() <= buffers, "ring buffers hold more than the connections' buffers");
  }

  reader in_;
  host host_;
  connection_config cfg_;
  std::uint64_t now_ = 1'000'000 * ms;
  std::array<peer_state, peers> peers_{};
  std::vector<std::byte> payload_, frame_, out_frame_, buffer_;
  std::size_t written_ = 0;
  std::size_t sent_in_step_ = 0;
};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size < 4) return 0;
  driver(std::span(data, size)).run();
  // Teardown: every connection and ring buffer freed.
  require(connection::live_count() == 0, "a connection outlived the host");
  require(ring_buffer::live_bytes() == 0, "a ring buffer outlived its connection");
  return 0;
}
