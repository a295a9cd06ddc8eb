// Two connections through an in-memory wire at virtual time: everything at
// once (handshake, bulk data, loss recovery, reordering, flow control, both
// closes), judged by the bytes that arrive. The wire drops and delays
// segments from a seed, so a failure replays.

#include <gtest/gtest.h>

#include <cstdint>
#include <map>
#include <memory>
#include <vector>

#include "base/xoshiro.hh"
#include "stack/tcp/connection.hh"
#include "stack/tcp/listener.hh"
#include "stack/tcp/ring_buffer.hh"
#include "tests/stack/tcp/harness.hh"

namespace affine::stack::tcp::testing {
namespace {

constexpr std::uint64_t ms = 1'000'000;

struct scenario {
  const char* name;
  double loss = 0;                   // probability a segment is dropped
  std::uint64_t delay_ns = 5 * ms;   // one way
  std::uint64_t jitter_ns = 0;       // extra delay drawn per segment: reordering
  std::size_t read_chunk = SIZE_MAX; // bytes the receiver reads per read_interval
  std::uint64_t read_interval_ns = ms;
  std::size_t total = 1 << 20;
  std::uint64_t seed = 1;
};

void PrintTo(const scenario& s, std::ostream* os) { *os << s.name; }

class wire_pair {
 public:
  explicit wire_pair(const scenario& sc)
      : sc_(sc), rng_({mix64(sc.seed), mix64(sc.seed + 1), mix64(sc.seed + 2), mix64(sc.seed + 3)}),
        isn_(siphash_key{9, 8, 7}), listener_(listener_config{}, isn_) {
    a_ = std::make_unique<connection>(open_params{a_tuple, seq32(0xfffff000), 1}, connection_config{}, now_);
  }

  // Runs until both sides are done; false if it stalls or takes too long.
  bool run() {
    const std::uint64_t limit = now_ + 600'000 * ms;
    while (now_ < limit) {
      application();
      flush();
      if (done()) return true;
      std::uint64_t next = std::min(a_->next_deadline(), b_ ? b_->next_deadline() : no_deadline);
      if (!wire_.empty()) next = std::min(next, wire_.begin()->first);
      if (b_ && !b_eof_ && sc_.read_chunk != SIZE_MAX) next = std::min(next, next_read_);
      if (next == no_deadline) return false;  // stalled: nothing will ever happen again
      now_ = std::max(now_, next);
      deliver_due();
      if (a_->next_deadline() <= now_) a_->on_timer(now_);
      if (b_ && b_->next_deadline() <= now_) b_->on_timer(now_);
    }
    return false;
  }

  const std::vector<std::byte>& received() const { return received_; }
  connection& a() { return *a_; }
  connection& b() { return *b_; }
  bool has_b() const { return b_ != nullptr; }

 private:
  static constexpr flow_tuple a_tuple{0x0a000001, 0x0a000002, 40000, 80};
  static constexpr flow_tuple b_tuple{0x0a000002, 0x0a000001, 80, 40000};

  struct packet {
    bool to_b;
    tcp_segment seg;
    std::vector<std::byte> bytes;
  };

  bool done() const {
    const auto finished = [](const connection& c) {
      return c.state() == tcp_state::closed || c.state() == tcp_state::time_wait;
    };
    return b_ && b_eof_ && finished(*a_) && finished(*b_);
  }

  void application() {
    // A writes the stream, then closes; B reads at its pace, closes at EOF.
    while (sent_ < sc_.total && a_->writable() > 0) {
      const std::string chunk = pattern(sent_, std::min<std::size_t>(a_->writable(), sc_.total - sent_));
      sent_ += a_->send({reinterpret_cast<const std::byte*>(chunk.data()), chunk.size()}).value_or(0);
    }
    if (sent_ == sc_.total && !a_closed_) {
      a_->close(now_);
      a_closed_ = true;
    }
    if (!b_ || b_eof_) return;
    if (sc_.read_chunk != SIZE_MAX && now_ < next_read_) return;
    next_read_ = now_ + sc_.read_interval_ns;
    std::vector<std::byte> buf(std::min(sc_.read_chunk, b_->readable()));
    const std::size_t n = b_->recv(buf).value_or(0);
    received_.insert(received_.end(), buf.begin(), buf.begin() + std::ptrdiff_t(n));
    if (b_->eof()) {
      b_eof_ = true;
      b_->close(now_);
    }
  }

  void flush() {
    a_->output(now_, [this](const tcp_segment& s) { transmit(true, s); });
    if (b_) b_->output(now_, [this](const tcp_segment& s) { transmit(false, s); });
  }

  void transmit(bool to_b, const tcp_segment& s) {
    if (rng_.chance(sc_.loss)) return;
    packet p{to_b, s, {s.payload.begin(), s.payload.end()}};
    const std::uint64_t at = now_ + sc_.delay_ns + rng_.below(sc_.jitter_ns + 1);
    wire_.emplace(at, std::move(p));
  }

  void deliver_due() {
    while (!wire_.empty() && wire_.begin()->first <= now_) {
      packet p = std::move(wire_.begin()->second);
      wire_.erase(wire_.begin());
      p.seg.payload = p.bytes;
      // A reply goes back the way the segment came.
      std::optional<tcp_segment> reply;
      if (!p.to_b) {
        reply = a_->input(p.seg, now_).reply;
      } else if (b_) {
        reply = b_->input(p.seg, now_).reply;
      } else {
        listener::verdict v = listener_.input(b_tuple, p.seg, now_, connection_config{});
        reply = v.reply;
        if (v.open) b_ = std::make_unique<connection>(*v.open, connection_config{}, p.seg, now_);
      }
      if (reply) transmit(!p.to_b, *reply);
      flush();
    }
  }

  scenario sc_;
  xoshiro256ss rng_;
  isn_generator isn_;
  listener listener_;
  std::uint64_t now_ = 1'000 * ms;
  std::unique_ptr<connection> a_;
  std::unique_ptr<connection> b_;
  std::multimap<std::uint64_t, packet> wire_;
  std::size_t sent_ = 0;
  bool a_closed_ = false;
  bool b_eof_ = false;
  std::uint64_t next_read_ = 0;
  std::vector<std::byte> received_;
};

class Pair : public ::testing::TestWithParam<scenario> {
 protected:
  void TearDown() override {
    EXPECT_EQ(connection::live_count(), 0u);
    EXPECT_EQ(ring_buffer::live_bytes(), 0u);
  }
};

TEST_P(Pair, StreamArrivesWholeAndBothSidesClose) {
  const scenario& sc = GetParam();
  wire_pair p(sc);
  ASSERT_TRUE(p.run()) << "stalled or too slow: A " << to_string(p.a().state()) << " " << p.a().error().message()
                       << ", B " << (p.has_b() ? to_string(p.b().state()) : "none") << ", received "
                       << p.received().size();
  const std::string want = pattern(0, sc.total);
  ASSERT_EQ(p.received().size(), want.size());
  EXPECT_TRUE(std::equal(want.begin(), want.end(), p.received().begin(),
                         [](char c, std::byte b) { return std::byte(c) == b; }));
  EXPECT_FALSE(p.a().error());
  EXPECT_FALSE(p.b().error());
}

INSTANTIATE_TEST_SUITE_P(
    Wire, Pair,
    ::testing::Values(scenario{.name = "clean"},
                      scenario{.name = "loss1pct", .loss = 0.01, .seed = 2},
                      scenario{.name = "loss5pct_reorder", .loss = 0.05, .jitter_ns = 3 * ms, .seed = 3},
                      scenario{.name = "slow_reader", .read_chunk = 4000, .read_interval_ns = ms, .total = 1 << 19},
                      scenario{.name = "stalling_reader", .read_chunk = 1 << 30, .read_interval_ns = 300 * ms},
                      scenario{.name = "slow_reader_loss", .loss = 0.03, .read_chunk = 8000, .total = 1 << 19,
                               .seed = 4}),
    [](const ::testing::TestParamInfo<scenario>& info) { return std::string(info.param.name); });

}  // namespace
}  // namespace affine::stack::tcp::testing
