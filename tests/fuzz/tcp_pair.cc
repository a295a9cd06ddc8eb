// Two TCP connections back to back at virtual time (tests/stack/tcp/
// wire_pair.hh: A opens to B's tcp::listener, writes a stream and closes;
// B reads it and closes at EOF), through a wire the fuzzer runs: for each
// segment it says deliver, lose, duplicate or delay (which reorders).
// What arrives must be the stream, exactly once and in order, or a side
// must report an error: bytes are never wrong, lost or doubled silently.
//
// The input: 6 bytes of settings, then one byte per segment sent, in the
// order they are sent (the wire delivers every segment after the input runs
// out):
//   [0] bit 0: SACK, 1: timestamps, 2: window scaling, 3: no_delay,
//       4: NewReno (else CUBIC); bits 5..7: the retransmissions allowed (1..8)
//   [1] our MSS: 200 + 5 * b
//   [2] low nibble: A's send buffer, high: B's receive buffer (1 KiB << n%9)
//   [3..4] the stream's length, little-endian, modulo 48 KiB
//   [5] B's reads: 0 all it has whenever it runs, else 64 * b bytes a read
//       and one read per (b % 16 + 1) ms
//   per segment: b % 4: 0 deliver after 5 ms, 1 lose, 2 deliver at 5 ms and
//       again b / 4 ms later, 3 deliver after 5 + 2 * (b / 4) ms

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <span>

#include "stack/tcp/connection.hh"
#include "stack/tcp/ring_buffer.hh"
#include "tests/fuzz/check.hh"
#include "tests/stack/tcp/pattern.hh"
#include "tests/stack/tcp/wire_pair.hh"

namespace {

using namespace affine::stack;
using namespace affine::stack::tcp;
using namespace affine::stack::tcp::testing;
using affine_fuzz::require;

constexpr std::uint64_t ms = 1'000'000;
constexpr std::uint64_t base_delay_ns = 5 * ms;

class fuzzed_wire final : public wire_model {
 public:
  explicit fuzzed_wire(std::span<const std::uint8_t> decisions) : left_(decisions) {}

  void carry(bool, tcp_segment&, std::uint64_t now, function_ref<void(std::uint64_t)> arrive) override {
    if (left_.empty()) {
      arrive(now + base_delay_ns);
      return;
    }
    const std::uint8_t b = left_.front();
    left_ = left_.subspan(1);
    const std::uint64_t more = std::uint64_t(b >> 2) * ms;
    switch (b & 3) {
      case 0: arrive(now + base_delay_ns); return;
      case 1: return;
      case 2:
        arrive(now + base_delay_ns);
        arrive(now + base_delay_ns + more);
        return;
      default: arrive(now + base_delay_ns + 2 * more); return;
    }
  }

 private:
  std::span<const std::uint8_t> left_;
};

connection_config base_config(std::uint8_t flags, std::uint8_t mss) {
  connection_config c;
  c.sack = flags & 1;
  c.timestamps = flags & 2;
  c.window_scaling = flags & 4;
  c.no_delay = flags & 8;
  c.congestion = flags & 16 ? congestion_algorithm::new_reno : congestion_algorithm::cubic;
  // Few retransmissions, so that a wire that loses everything ends the
  // connection in minutes of virtual time (RFC 1122 4.2.3.5 R2).
  c.max_retransmissions = 1u + (flags >> 5);
  c.max_syn_retransmissions = 1u + (flags >> 5);
  c.max_synack_retransmissions = 1u + (flags >> 5);
  c.mss = std::uint16_t(200 + 5 * mss);
  return c;
}

void run_one(std::span<const std::uint8_t> in) {
  if (in.size() < 6) return;
  pair_config cfg;
  cfg.a = base_config(in[0], in[1]);
  cfg.b = cfg.a;
  cfg.a.send_buffer = std::size_t(1024) << ((in[2] & 15) % 9);
  cfg.b.recv_buffer = std::size_t(1024) << ((in[2] >> 4) % 9);
  cfg.total = std::size_t(in[3] | in[4] << 8) % (48 * 1024);
  if (in[5] != 0) {
    cfg.read_chunk = std::size_t(in[5]) * 64;
    cfg.read_interval_ns = std::uint64_t(in[5] % 16 + 1) * ms;
  }
  // Virtual time is cheap; only a side that never gives up runs into it.
  cfg.time_limit_ns = 24 * 3600 * 1000 * ms;

  fuzzed_wire wire(in.subspan(6));
  wire_pair p(cfg, wire);
  const pair_outcome outcome = p.run();

  // Whatever happened: B read a prefix of what A sent, byte for byte.
  const auto& got = p.received();
  require(got.size() <= p.sent() && p.sent() <= cfg.total, "B read more than A sent");
  const std::string want = pattern(0, got.size());
  for (std::size_t i = 0; i < got.size(); ++i)
    require(got[i] == std::byte(want[i]), "a byte B read is not the one A sent there");

  if (outcome == pair_outcome::stalled || outcome == pair_outcome::time_limit) {
    // Where it stopped, for the report that follows.
    std::fprintf(stderr, "A: %s\nB: %s\nB read %zu of %zu\n", p.a().describe(p.now()).c_str(),
                 p.has_b() ? p.b().describe(p.now()).c_str() : "none", got.size(), cfg.total);
  }
  switch (outcome) {
    case pair_outcome::done: require(got.size() == cfg.total, "both sides closed but bytes are missing"); break;
    case pair_outcome::error: break;  // the connection said so
    case pair_outcome::stalled: require(false, "the transfer stopped and no side reports an error"); break;
    case pair_outcome::time_limit: require(false, "a day of virtual time and neither done nor an error"); break;
  }
  // Counters that must agree with one another.
  for (const connection* c : {&p.a(), p.has_b() ? &p.b() : nullptr}) {
    if (!c) continue;
    const connection_stats& s = c->stats();
    require(s.retransmitted_segments <= s.segments_sent, "more segments resent than sent");
    require(s.fast_retransmits <= s.retransmitted_segments, "more fast retransmits than retransmissions");
    require(c->receive_buffer() <= std::max(c->config().recv_buffer, c->config().recv_buffer_max),
            "a receive buffer grown past recv_buffer_max");
    require(c->readable() <= c->receive_buffer(), "more bytes held to read than the receive buffer");
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  run_one({data, size});
  // Teardown: every connection and ring buffer freed.
  require(connection::live_count() == 0, "a connection outlived its pair");
  require(ring_buffer::live_bytes() == 0, "a ring buffer outlived its connection");
  return 0;
}
