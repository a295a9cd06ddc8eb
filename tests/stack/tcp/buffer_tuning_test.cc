// The buffers' auto-tuning (buffer_tuning.cc).
//
// The receive buffer (Linux's dynamic right-sizing) grows while the
// application takes more each round trip, up to recv_buffer_max and the
// process's bound, and never for a peer that merely sends. The peer is a
// sender with a 20 ms round trip that doubles its flight each round (slow
// start) up to `most`. Its segments come evenly spread over the round,
// each sent as the window we offered a round trip before allowed and
// echoing that ACK's TSval; the application reads every segment as it
// comes.
//
// The send buffer grows to twice the congestion window while it is what
// limits sending. The application keeps it full; the peer acknowledges
// each segment a round trip after it left.
//
// MSS 1000, 64 KiB buffers to start.

#include "tests/stack/tcp/harness.hh"

namespace affine::stack::tcp::testing {
namespace {

class RcvSpace : public tcp_test {
 protected:
  static constexpr std::uint64_t rtt_ms = 20;

  RcvSpace() {
    config.window_scaling = true;
    config.recv_buffer = 64 * 1024;
    config.recv_buffer_max = 4 * 1024 * 1024;  // window scale 7
  }
  void handshake() {
    open();
    note(take_emitted());
    tcp_options o{.mss = 1000};
    if (!no_scale_) o.window_scale = 0;
    if (config.timestamps) o.timestamps = tcp_timestamps{peer_ts_, last_tsval_};
    send({.control = syn, .seq = rn, .ack = iss + 1, .options = o});
    note(take_emitted());
    ASSERT_EQ(conn().state(), tcp_state::established);
  }
  // What our segments said, by the time they left: the right edge we
  // offered and our TSval.
  void note(const std::deque<seg>& out) {
    for (const seg& s : out) {
      if (s.ack && s.window && s.control != syn)
        edges_.emplace_back(now, *s.ack + (std::uint32_t(*s.window) << conn().recv_window_scale()));
      if (s.options.timestamps) {
        last_tsval_ = s.options.timestamps->value;
        tsvals_.emplace_back(now, last_tsval_);
      }
    }
  }
  // What the last of `said` before `t` said (the first if none); `t` never
  // goes back, so what is older goes.
  template <class T>
  static T as_of(std::deque<std::pair<std::uint64_t, T>>& said, std::uint64_t t) {
    while (said.size() >= 2 && said[1].first <= t) said.pop_front();
    return said.front().second;
  }
  // One round trip: a slot for each segment of the sender's flight, spread
  // over the round; a segment goes in its slot when the window offered a
  // round trip before lets it, and is read at once when `read`. Returns
  // the bytes sent.
  std::uint32_t round(bool read = true) {
    const std::uint32_t slots = flight_ / 1000;
    const std::uint64_t start = now, rtt = rtt_ms * ms, gap = rtt / slots;
    std::uint32_t n = 0;
    ++peer_ts_;
    for (std::uint32_t i = 0; i < slots; ++i) {
      if (now < start + i * gap) advance_ns(start + i * gap - now);
      note(take_emitted());
      if (rn + 1 + sent_ + 1000 > as_of(edges_, now - rtt)) continue;
      seg s{.seq = rn + 1 + sent_, .ack = iss + 1, .payload = std::string(1000, 'x')};
      if (config.timestamps) s.options.timestamps = tcp_timestamps{peer_ts_, as_of(tsvals_, now - rtt)};
      send(s);
      sent_ += 1000;
      n += 1000;
      if (read) app_read();
      note(take_emitted());
    }
    advance_ns(start + rtt - now);
    note(take_emitted());
    flight_ = std::min(2 * flight_, most);
    return n;
  }
  // The bytes the last of `count` rounds carried.
  std::uint32_t rounds(int count, bool read = true) {
    std::uint32_t last = 0;
    for (int i = 0; i < count; ++i) last = round(read);
    return last;
  }

  std::uint32_t most = 8'000'000;  // 400 MB/s at 20 ms
  bool no_scale_ = false;           // the peer's SYN without window scale
  std::uint32_t flight_ = 10'000;
  std::uint32_t sent_ = 0;
  std::uint32_t last_tsval_ = 0;
  std::deque<std::pair<std::uint64_t, seq32>> edges_;
  std::deque<std::pair<std::uint64_t, std::uint32_t>> tsvals_;
  std::uint32_t peer_ts_ = 100;
};

// Without timestamps the receiver times data past the window it offered.
// The buffer follows the sender's slow start: the fixed 64 KiB buffer
// carries 64 KB a round trip (ASizedBufferIsNotTuned), the tuned one its
// whole 4 MiB maximum by the tenth round.
TEST_P(RcvSpace, AReaderThatKeepsUpGrowsItsBuffer) {
  handshake();
  EXPECT_EQ(conn().recv_window_scale(), 7);
  const std::uint32_t last = rounds(12);
  EXPECT_GT(conn().receive_buffer(), 1024u * 1024) << conn().describe(now);
  EXPECT_LE(conn().receive_buffer(), config.recv_buffer_max);
  EXPECT_GE(last, config.recv_buffer_max * 9 / 10) << conn().describe(now);
  EXPECT_GT(conn().stats().receive_buffer_grown, 0u);
  // Data past the edge offered when the timing began comes a round trip
  // or more after it.
  EXPECT_GE(conn().receive_rtt_ns(), rtt_ms * ms);
  EXPECT_LE(conn().receive_rtt_ns(), 2 * rtt_ms * ms);
}

// With timestamps the round trip is the age of the echoed TSval.
TEST_P(RcvSpace, WithTimestampsTheRoundTripIsTheEchosAge) {
  config.timestamps = true;
  handshake();
  const std::uint32_t last = rounds(12);
  EXPECT_NEAR(double(conn().receive_rtt_ns()), double(rtt_ms * ms), 2.0 * ms);
  EXPECT_GT(conn().receive_buffer(), 1024u * 1024) << conn().describe(now);
  EXPECT_GE(last, config.recv_buffer_max * 9 / 10);
}

// A sender that leaves the window unused (10 segments a round) takes
// many round trips to pass an edge offered: only the echo times it right.
TEST_P(RcvSpace, TimestampsTimeASenderThatLeavesTheWindowUnused) {
  config.timestamps = true;
  most = flight_;
  handshake();
  rounds(12);
  EXPECT_NEAR(double(conn().receive_rtt_ns()), double(rtt_ms * ms), 2.0 * ms);
}

// A peer that sends to an application that does not read fills the
// buffer it has, and no more (timed by the echo all along).
TEST_P(RcvSpace, APeerThatMerelySendsGrowsNothing) {
  config.timestamps = true;
  handshake();
  rounds(12, false);
  EXPECT_GT(conn().readable(), config.recv_buffer - 1000);
  EXPECT_EQ(conn().receive_buffer(), config.recv_buffer);
  EXPECT_EQ(conn().stats().receive_buffer_grown, 0u);
}

// A buffer the application sized (SO_RCVBUF: recv_buffer_max at or below
// recv_buffer) stays as it is, and the window scale fits it.
TEST_P(RcvSpace, ASizedBufferIsNotTuned) {
  config.recv_buffer_max = 0;
  handshake();
  EXPECT_EQ(conn().recv_window_scale(), 1);  // 64 KiB: one more than 16 bits
  EXPECT_LE(rounds(12), 65'000u);
  EXPECT_EQ(conn().receive_buffer(), config.recv_buffer);
}

// A peer whose SYN had no window scale sees at most 64 KiB: the buffer
// grows no further than that.
TEST_P(RcvSpace, WithoutWindowScalingGrowthStopsAtSixtyFourKiB) {
  config.recv_buffer = 16 * 1024;
  no_scale_ = true;
  handshake();
  rounds(12);
  EXPECT_EQ(conn().receive_buffer(), 0xffffu);
}

// The buffer grows to recv_buffer_max and stops there.
TEST_P(RcvSpace, GrowthStopsAtTheMaximum) {
  config.recv_buffer_max = 256 * 1024;
  handshake();
  rounds(12);
  EXPECT_EQ(conn().receive_buffer(), config.recv_buffer_max);
  EXPECT_LE(rounds(2), config.recv_buffer_max);
}

// Past the process's bound on ring memory no buffer grows; the wait is
// counted once.
TEST_P(RcvSpace, GrowthWaitsForTheProcessBound) {
  config.buffer_memory_limit = 100 * 1024;  // the 64 KiB ring and little more
  handshake();
  rounds(12);
  EXPECT_EQ(conn().receive_buffer(), config.recv_buffer);
  EXPECT_EQ(conn().stats().buffer_growth_held, 1u);
  EXPECT_EQ(conn().stats().receive_buffer_grown, 0u);
}

TCP_IN_BOTH_SEQUENCE_SPACES(RcvSpace);

class SndSpace : public tcp_test {
 protected:
  static constexpr std::uint64_t rtt_ms = 20;

  SndSpace() {
    config.window_scaling = true;
    config.send_buffer = 64 * 1024;
    config.send_buffer_max = 4 * 1024 * 1024;
  }
  // The peer offers `window` << 7 (8 MiB by default).
  void handshake(std::uint16_t window = 65535) {
    window_ = window;
    open();
    take_emitted();
    send({.control = syn, .seq = rn, .ack = iss + 1, .window = window_, .options = {.mss = 1000, .window_scale = 7}});
    take_emitted();
    ASSERT_EQ(conn().state(), tcp_state::established);
  }
  // `rounds` round trips, a millisecond at a time: the application tops
  // the buffer up, the peer acknowledges what left a round trip before.
  // Returns the bytes acknowledged in the last round trip.
  std::uint64_t run(int rounds) {
    std::uint64_t acked_before = 0;
    for (std::uint64_t step = 0; step < rounds * rtt_ms; ++step) {
      if (step % rtt_ms == 0) acked_before = acked_;
      if (const std::size_t room = conn().writable(); room > 0) app_write(room);
      for (const seg& s : take_emitted())
        if (!s.payload.empty()) sent_.emplace_back(now, std::uint32_t(s.seq - (iss + 1)) + s.payload.size());
      // An ACK for every second segment, as a receiver sends them.
      for (int n = 1; !sent_.empty() && sent_.front().first + rtt_ms * ms <= now; ++n) {
        const std::uint64_t end = sent_.front().second;
        sent_.pop_front();
        if (end > acked_ && (n % 2 == 0 || sent_.empty() || sent_.front().first + rtt_ms * ms > now)) {
          acked_ = end;
          send({.seq = rn + 1, .ack = iss + 1 + std::uint32_t(acked_), .window = window_});
        }
      }
      advance(1);
    }
    return acked_ - acked_before;
  }

  std::uint16_t window_ = 0;
  std::uint64_t acked_ = 0;
  std::deque<std::pair<std::uint64_t, std::uint64_t>> sent_;  // when, the offset it reached
};

// A fixed 64 KiB buffer sends 64 KB a round trip; the tuned one follows
// slow start's window.
TEST_P(SndSpace, ABufferThatLimitsSendingGrows) {
  handshake();
  const std::uint64_t last = run(12);
  EXPECT_GT(conn().send_buffer(), 1024u * 1024) << conn().describe(now);
  EXPECT_LE(conn().send_buffer(), config.send_buffer_max);
  EXPECT_GE(last, 1'000'000u) << conn().describe(now);
  EXPECT_GT(conn().stats().send_buffer_grown, 0u);
}

TEST_P(SndSpace, ASizedBufferIsNotTuned) {
  config.send_buffer_max = 0;
  handshake();
  EXPECT_LE(run(12), 65'536u);
  EXPECT_EQ(conn().send_buffer(), config.send_buffer);
}

// Held back by the peer's window (64 KiB, all of it in flight), a larger
// buffer would send no more: it stays as it is.
TEST_P(SndSpace, ABufferHeldBackByThePeersWindowStays) {
  handshake(512);  // 512 << 7
  EXPECT_LE(run(12), 65'536u);
  EXPECT_EQ(conn().send_buffer(), config.send_buffer);
  EXPECT_EQ(conn().stats().send_buffer_grown, 0u);
}

TCP_IN_BOTH_SEQUENCE_SPACES(SndSpace);

}  // namespace
}  // namespace affine::stack::tcp::testing
