#pragma once
// The send/expect harness for TCP state-machine tests (STYLE.md "Tests"):
// a fixture owning connections (and a listener) at virtual time, like the
// integration's flow table would (host.hh). The listener is the stack's own
// (tcp::listener, which stack::listen_in runs); what the stack does with
// its verdicts, the host does the same way (send(), accept(), reap()).
//
//   send({.control = syn, .seq = rn, .options = {.mss = 1000}});   // input, then output
//   expect({.control = syn, .seq = iss, .ack = rn + 1, .options = {.mss = 1000}});
//   expect_nothing();
//   advance(200);   // milliseconds: timers fire in order, output after each
//
// expect() compares everything a segment carries: control, PSH, seq, ack,
// window, options and payload bytes. Teardown fails a test that left a
// segment unexpected, a connection alive or a ring buffer allocated.

#include <gtest/gtest.h>

#include <cstdint>
#include <deque>
#include <initializer_list>
#include <optional>
#include <ostream>
#include <source_location>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "stack/tcp/connection.hh"
#include "stack/tcp/isn.hh"
#include "stack/tcp/listener.hh"
#include "tests/stack/tcp/host.hh"
#include "tests/stack/tcp/pattern.hh"

namespace affine::stack::tcp::testing {

inline constexpr tcp_control syn = tcp_control::syn;
inline constexpr tcp_control fin = tcp_control::fin;
inline constexpr tcp_control rst = tcp_control::rst;

// A segment as a test writes it. Ports are the fixture's flow (`peer` names
// another remote port); the window defaults to 65535 for what the test sends
// and to default_window() for what it expects.
struct seg {
  tcp_control control = tcp_control::none;
  seq32 seq{};
  std::optional<seq32> ack{};
  std::optional<std::uint16_t> window{};
  tcp_options options{};
  std::string payload{};
  bool psh = false;
  std::uint16_t peer = 0;
  // RFC 3168: the ECE and CWR flags, and the IP header's ECN field.
  bool ece = false;
  bool cwr = false;
  ip_ecn ecn = ip_ecn::not_ect;
  friend bool operator==(const seg&, const seg&) = default;
};

void PrintTo(const seg& s, std::ostream* os);

// Where the two sequence spaces start: the core suites run in both.
struct seq_variant {
  const char* name;
  std::uint32_t iss;         // ours
  std::uint32_t remote_isn;  // the peer's
};
inline constexpr seq_variant normal_space{"normal", 1000, 5000};
// Both spaces wrap past 2^32 within the first bytes of data.
inline constexpr seq_variant wrapping_space{"wrap", 0xfffffffd, 0xfffffffc};
void PrintTo(const seq_variant& v, std::ostream* os);


class harness : public ::testing::Test {
 protected:
  static constexpr std::uint16_t local_port = 80;
  static constexpr std::uint16_t remote_port = 40000;
  static constexpr std::uint64_t ms = 1'000'000;

  harness();
  ~harness() override;
  void TearDown() override;
  void use(const seq_variant& v);

  // Active open: a connection in SYN-SENT at iss; output runs (the SYN).
  void open();
  // Passive: a listener; the connection its next SYN makes gets ISS `iss`
  // (virtual time is set so that the RFC 6528 clock lands there).
  void listen();
  // open(), the handshake with MSS config.mss (1000 unless the test sets it)
  // both ways, every segment expected.
  void establish();
  // listen(), a SYN with MSS 1000, the handshake, and accept().
  void establish_passive();
  // open() and a handshake with MSS config.mss and SACK-permitted on our SYN (and
  // on the peer's when peer_sack), its SYN,ACK arriving rtt_ms later: the
  // SYN's RTT sample is then SRTT (RFC 6298 2.2).
  void establish_sack(bool peer_sack = true, std::uint64_t rtt_ms = 0);
  // establish_sack() with a round trip of rtt_ms, `segments` full segments
  // written and expected, and one round trip more: the first ACKs are due.
  void sack_flight_out(std::uint32_t segments, std::uint64_t rtt_ms);
  // An ACK from the peer of `acked` bytes of our data with SACK blocks, all
  // given as offsets of our data.
  drop_reason ack_data(std::uint32_t acked, std::initializer_list<std::pair<std::uint32_t, std::uint32_t>> blocks = {},
                       std::source_location loc = std::source_location::current());
  // Our data segment at `offset` (MSS 1000 unless said).
  void expect_data(std::uint32_t offset, std::uint32_t len = 1000, bool psh = false,
                   std::source_location loc = std::source_location::current());
  // The offsets of the data segments emitted and not expected yet; taken.
  std::vector<std::uint32_t> sent_offsets();

  // Feeds a segment (to its connection, else to the listener), then runs
  // output. Returns the drop reason input() gave.
  // Failures name the test's line.
  drop_reason send(const seg& s, std::source_location loc = std::source_location::current());
  // Segments of the established connection's flow that arrive in one RX
  // burst: each input in order, output once after the last (as the stack
  // settles a busy flow once a batch).
  void send_burst(std::initializer_list<seg> segs, std::source_location loc = std::source_location::current());
  void expect(const seg& s, std::source_location loc = std::source_location::current());
  void expect_nothing(std::source_location loc = std::source_location::current());
  // Moves virtual time by `ms_count` milliseconds, firing every timer due on
  // the way (in order, output after each).
  void advance(std::uint64_t ms_count);
  void advance_ns(std::uint64_t ns);

  // The application: writes `n` more bytes of the pattern (or `text`), reads
  // up to `n` bytes; output runs after each, as the integration would.
  std::size_t app_write(std::size_t n);
  std::size_t app_write(std::string_view text);
  std::string app_read(std::size_t n = SIZE_MAX);
  // Right after establish(): writes `count` segments' worth (MSS 1000) of
  // the pattern and expects them all, PSH on the last.
  void write_segments(std::uint32_t count);
  // Established, with nothing outstanding: `bytes` more of the stream
  // (zeros, not the pattern) sent as a bulk sender sends, a send buffer at
  // a time, each flight acknowledged by the peer `rtt_ns` after it left
  // (none kept), until all of it is. It carries the sequence space far
  // from ISS (2^31 bytes and more: RFC 9293 3.4's comparisons are modulo
  // 2^32) in well under a second with a large MSS, and leaves the window
  // grown as a bulk transfer grows it. The peer sends nothing.
  void stream_acked(std::uint64_t bytes, std::uint64_t rtt_ns = 0);
  void app_close();
  void app_shutdown();
  void app_abort();
  void run_output();
  // What was emitted and not expected yet, oldest first; taken.
  std::deque<seg> take_emitted() { return std::exchange(emitted_, {}); }

  connection& conn(std::uint16_t peer = 0);
  bool has_conn(std::uint16_t peer = 0) const;
  listener& lst() { return host_.lst(); }
  // The oldest connection in the accept queue (as the stack's accept()
  // takes it), or null.
  connection* accept() { return host_.accept(); }
  // Destroys closed connections, as the flow table would (a child of the
  // listener not accepted leaves its queue, as child_settled() does).
  void reap() { host_.reap(); }
  std::size_t reopened() const { return host_.reopened(); }
  // The ISS a SYN from `peer` arriving now gets from the listener.
  seq32 iss_for(std::uint16_t peer) const { return host_.isn().next(tuple_for(peer), now); }
  // The flow of `peer` (0: remote_port) as the host keys it.
  flow_tuple tuple_for(std::uint16_t peer) const { return host_.tuple_for(peer ? peer : remote_port); }
  // The window expect() assumes when a test gives none.
  std::uint16_t default_window() const;
  // Our TSval at the current time (RFC 7323 5.4: a 1 ms clock plus the
  // connection's offset).
  std::uint32_t tsval() const;

  connection_config config;
  listener_config listen_config;
  seq32 iss;
  seq32 rn;
  std::uint64_t now = 0;
  std::uint32_t ts_offset = 0;

 private:
  tcp_segment to_segment(const seg& s) const;
  void deliver(const tcp_segment& s);

  host host_;
  std::deque<seg> emitted_;
  std::size_t written_ = 0;
};

// The core suites: each test runs with both sequence spaces.
class tcp_test : public harness, public ::testing::WithParamInterface<seq_variant> {
 protected:
  tcp_test() { use(GetParam()); }
};

std::string variant_name(const ::testing::TestParamInfo<seq_variant>& info);

}  // namespace affine::stack::tcp::testing

#define TCP_IN_BOTH_SEQUENCE_SPACES(suite)                                                                    \
  INSTANTIATE_TEST_SUITE_P(Seq, suite,                                                                       \
                           ::testing::Values(::affine::stack::tcp::testing::normal_space,                    \
                                             ::affine::stack::tcp::testing::wrapping_space),                 \
                           ::affine::stack::tcp::testing::variant_name)
