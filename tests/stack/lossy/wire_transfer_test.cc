// Stack to stack over the impairing in-process wire (drivers/wire): 1% loss,
// 1% duplication and 1% reordering in both directions, a transfer each way
// at once, checked byte for byte, for 20 seeds (issue 5, "stack to stack").
// The wire runs on the monotonic clock; each stack has its own RX core.
// The lossy profile runs over IPv6 too (5 seeds, issue 21).

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "affine/net.hh"
#include "affine/runtime.hh"
#include "drivers/dpdk/eal.hh"
#include "drivers/wire/wire.hh"
#include "stack/stack.hh"
#include "stack/tcp/connection.hh"
#include "stack/tcp/ring_buffer.hh"
#include "tests/stack/byte_pattern.hh"
#include "tests/stack/two_stacks.hh"

namespace affine::stack {
namespace {

using testing::b_ip;

// Bytes each way per seed: 64 MiB (the figure) unless
// AFFINE_LOSSY_MIB says otherwise.
std::size_t transfer_bytes() {
  if (const char* m = std::getenv("AFFINE_LOSSY_MIB")) return std::size_t(std::atoi(m)) << 20;
  return std::size_t(64) << 20;
}

struct outcome {
  std::size_t sent = 0, received = 0;
  bool same = true;
  std::string error;
};

// Writes `total` bytes of pattern `seed` on `s`, half-closes, and reads the
// peer's stream to its end, checking it against pattern `peer_seed`.
void exchange(net::tcp_stream& s, std::size_t total, std::uint64_t seed, std::uint64_t peer_seed, outcome& out) {
  const std::uint64_t deadline = now_ns() + 120'000'000'000ull;
  auto writer = spawn([&] {
    const testing::byte_pattern p{seed};
    std::vector<std::byte> chunk(64 * 1024);
    for (std::size_t off = 0; off < total; off += chunk.size()) {
      const std::size_t n = std::min(chunk.size(), total - off);
      p.fill(off, {chunk.data(), n});
      if (auto w = s.write({chunk.data(), n}, deadline); !w) {
        out.error = "write: " + w.error().message();
        return;
      }
      out.sent += n;
    }
    (void)s.shutdown_write();
  }).value();
  const testing::byte_pattern p{peer_seed};
  std::vector<std::byte> buf(64 * 1024);
  for (;;) {
    auto n = s.read(buf, deadline);
    if (!n) {
      out.error = "read: " + n.error().message();
      break;
    }
    if (*n == 0) break;
    out.same = out.same && p.check(out.received, {buf.data(), *n});
    out.received += *n;
  }
  writer.join();
}

// Both ends' outcomes and the stacks' nonzero drop counters after a
// transfer each way at once.
struct both_ways {
  outcome at_a, at_b;
  std::vector<std::pair<std::string, std::uint64_t>> drops;
};

class wire_transfer : public testing::two_stacks {
 protected:
  void SetUp() override { start(); }

  // b listens on `port`, a connects (over IPv6 with ipv6_); each writes
  // `total` bytes of its own pattern and checks the other's. A stall names
  // every connection's state.
  both_ways transfer(const drivers::wire::link_config& lc, std::uint16_t port, std::size_t total) {
    both_ways r;
    const net::address to = ipv6_ ? net::address(net::ipv6_address{testing::b_ip6}) : net::ipv4_address{b_ip};
    run(lc, [&](stack& sa, stack& sb) {
      const net::address any = ipv6_ ? net::address(net::any_address_v6) : net::address(net::any_address);
      auto l = sb.backend().listen({.local = {any, port}, .v6_only = ipv6_});
      ASSERT_TRUE(l.has_value());
      net::tcp_listener listener(std::move(*l));
      auto server = spawn([&] {
        auto c = listener.accept(now_ns() + 30'000'000'000ull);
        if (!c) {
          r.at_b.error = "accept: " + c.error().message();
          return;
        }
        exchange(*c, total, 2, 1, r.at_b);
      }).value();
      auto c = sa.backend().connect({to, port}, now_ns() + 30'000'000'000ull, {});
      ASSERT_TRUE(c.has_value()) << c.error().message();
      net::tcp_stream client(std::move(*c));
      EXPECT_EQ(client.remote().addr, to);
      exchange(client, total, 1, 2, r.at_a);
      server.join();
      if (!r.at_a.error.empty() || !r.at_b.error.empty())
        for (stack* st : {&sa, &sb})
          for (const std::string& line : st->describe_connections()) ADD_FAILURE() << "stalled: " << line;
      if (std::getenv("AFFINE_TEST_VERBOSE"))
        for (stack* st : {&sa, &sb})
          for (const std::string& line : st->describe_connections()) fmt::print(stderr, "  {}\n", line);
      client.close();
      listener.close();
      for (stack* st : {&sa, &sb})
        for (unsigned k = 0; k < st->cores(); ++k)
          for (auto& d : st->counters(k).nonzero()) r.drops.push_back(d);
    });
    EXPECT_EQ(r.at_a.error, "");
    EXPECT_EQ(r.at_b.error, "");
    EXPECT_EQ(r.at_a.received, total);
    EXPECT_EQ(r.at_b.received, total);
    EXPECT_TRUE(r.at_a.same && r.at_b.same) << "a stream differs from what was sent";
    return r;
  }
};

// Both directions impaired alike, the draws seeded.
drivers::wire::link_config profile_link(std::string_view name, std::uint64_t seed,
                                        const drivers::wire::impairments& imp) {
  drivers::wire::link_config lc;
  lc.name = fmt::format("{}{}", name, seed);
  lc.seed = seed;
  lc.clock = drivers::wire::clock_kind::monotonic;
  lc.a_to_b = imp;
  lc.b_to_a = imp;
  return lc;
}

// 1% loss, duplication and reordering (3 frames deep, 200 us late).
drivers::wire::impairments lossy_profile() {
  drivers::wire::impairments imp;
  imp.loss = 0.01;
  imp.duplicate = 0.01;
  imp.reorder = 0.01;
  imp.reorder_gap = 3;
  imp.reorder_delay_ns = 200'000;
  return imp;
}

class lossy_wire : public wire_transfer, public ::testing::WithParamInterface<std::uint64_t> {};

TEST_P(lossy_wire, SixtyFourMiBEachWayArriveIntactThroughLossDuplicationAndReordering) {
  const both_ways r = transfer(profile_link("lossy", GetParam(), lossy_profile()), 5001, transfer_bytes());
  const auto ab = link_->stats(drivers::wire::side::a);
  EXPECT_GT(ab.drops(drivers::wire::drop_reason::loss), 0u) << "the wire lost nothing: the test proves little";
  EXPECT_GT(ab.duplicated, 0u);
  EXPECT_GT(ab.reordered, 0u);
  if (std::getenv("AFFINE_TEST_VERBOSE"))
    for (auto& [k, v] : r.drops) fmt::print(stderr, "  {} = {}\n", k, v);
}

INSTANTIATE_TEST_SUITE_P(seeds, lossy_wire, ::testing::Range<std::uint64_t>(1, 21));

// Harsher profiles, both ends CUBIC with SACK (the defaults): reordering
// deep enough to look like loss to three duplicate ACKs, and losses that
// come in bursts (Gilbert-Elliott, mean burst 2 frames) that take out
// several segments of one window.
std::size_t profile_bytes() { return std::min(transfer_bytes(), std::size_t(16) << 20); }

class harsh_wire : public wire_transfer, public ::testing::WithParamInterface<std::uint64_t> {};

TEST_P(harsh_wire, SixteenMiBEachWayArriveIntactThroughHeavyReordering) {
  drivers::wire::impairments imp;
  imp.reorder = 0.05;
  imp.reorder_gap = 5;
  imp.reorder_delay_ns = 500'000;
  imp.delay_ns = 100'000;
  imp.jitter_ns = 20'000;
  imp.loss = 0.002;
  transfer(profile_link("reorder", GetParam(), imp), 5003, profile_bytes());
  EXPECT_GT(link_->stats(drivers::wire::side::a).reordered, 0u);
}

TEST_P(harsh_wire, SixteenMiBEachWayArriveIntactThroughBurstLoss) {
  drivers::wire::impairments imp;
  imp.burst = drivers::wire::gilbert_elliott{.good_to_bad = 0.003, .bad_to_good = 0.5};
  imp.delay_ns = 100'000;
  transfer(profile_link("burst", GetParam(), imp), 5004, profile_bytes());
  EXPECT_GT(link_->stats(drivers::wire::side::a).drops(drivers::wire::drop_reason::burst_loss), 0u);
}

INSTANTIATE_TEST_SUITE_P(seeds, harsh_wire, ::testing::Range<std::uint64_t>(1, 6));

// The same over IPv6 (issue 21): Neighbor Discovery resolves each end
// through the impaired wire, then the lossy profile above.
class lossy_wire_ipv6 : public wire_transfer, public ::testing::WithParamInterface<std::uint64_t> {
 protected:
  void SetUp() override {
    ipv6_ = true;
    wire_transfer::SetUp();
  }
};

TEST_P(lossy_wire_ipv6, SixtyFourMiBEachWayArriveIntactOverIpv6ThroughLossDuplicationAndReordering) {
  transfer(profile_link("lossy6-", GetParam(), lossy_profile()), 5006, transfer_bytes());
  const auto ab = link_->stats(drivers::wire::side::a);
  EXPECT_GT(ab.drops(drivers::wire::drop_reason::loss), 0u);
  EXPECT_GT(ab.reordered, 0u);
}

INSTANTIATE_TEST_SUITE_P(seeds, lossy_wire_ipv6, ::testing::Range<std::uint64_t>(1, 6));

// stream_options::congestion picks each connection's controller; what the
// configuration says ([tcp] congestion, CUBIC by default) otherwise.
using congestion_option = wire_transfer;

TEST_F(congestion_option, EachConnectionGetsTheControllerItsOptionsName) {
  drivers::wire::link_config lc;
  lc.name = "cc";
  lc.clock = drivers::wire::clock_kind::monotonic;
  std::vector<std::string> at_a, at_b;
  run(lc, [&](stack& sa, stack& sb) {
    auto l = sb.backend().listen(
        {.local = {net::any_address, 5005}, .accepted = {.congestion = net::congestion_control::newreno}});
    ASSERT_TRUE(l.has_value());
    net::tcp_listener listener(std::move(*l));
    const std::uint64_t deadline = now_ns() + 10'000'000'000ull;
    std::vector<net::tcp_stream> opened, accepted;
    for (auto cc : {net::congestion_control::configured, net::congestion_control::newreno,
                    net::congestion_control::cubic}) {
      auto c = sa.backend().connect({net::ipv4_address{b_ip}, 5005}, deadline, {.congestion = cc});
      ASSERT_TRUE(c.has_value()) << c.error().message();
      opened.emplace_back(std::move(*c));
    }
    for (int i = 0; i < 3; ++i) {
      auto c = listener.accept(deadline);
      ASSERT_TRUE(c.has_value()) << c.error().message();
      accepted.push_back(std::move(*c));
    }
    at_a = sa.describe_connections();
    at_b = sb.describe_connections();
    for (auto& s : opened) s.abort();
    for (auto& s : accepted) s.abort();
    listener.close();
  });
  const auto count = [](const std::vector<std::string>& lines, std::string_view cc) {
    return std::count_if(lines.begin(), lines.end(),
                         [&](const std::string& l) { return l.find(cc) != std::string::npos; });
  };
  EXPECT_EQ(count(at_a, " cc=cubic "), 2) << fmt::format("{}", fmt::join(at_a, "\n"));
  EXPECT_EQ(count(at_a, " cc=newreno "), 1);
  EXPECT_EQ(count(at_b, " cc=newreno "), 3) << fmt::format("{}", fmt::join(at_b, "\n"));
}

// Jumbo frames: both ends at MTU 9000 (MSS 8960), frames of up to 9014
// bytes, more than a default 2 KiB packet buffer holds, through 1% loss:
// every segment goes out whole, every frame arrives whole, retransmissions
// included.
using jumbo_wire = wire_transfer;

TEST_F(jumbo_wire, EightMiBEachWayArriveIntactInFullSizedSegments) {
  drivers::wire::link_config lc;
  lc.name = "jumbo";
  lc.clock = drivers::wire::clock_kind::monotonic;
  lc.a.mtu = lc.b.mtu = 9000;
  lc.a_to_b.loss = lc.b_to_a.loss = 0.01;
  constexpr std::size_t total = std::size_t(8) << 20;
  const both_ways r = transfer(lc, 5002, total);
  for (auto& [name, n] : r.drops)
    EXPECT_TRUE(name.find("unsupported") == std::string::npos && name.find("too_big") == std::string::npos)
        << name << " = " << n;
  // Each way: 8 MiB in segments of up to 8960 bytes, and the ACKs.
  for (auto from : {drivers::wire::side::a, drivers::wire::side::b}) {
    const auto st = link_->stats(from);
    EXPECT_EQ(st.drops(drivers::wire::drop_reason::oversize), 0u);
    EXPECT_GT(st.sent_bytes, total);
    EXPECT_GT(st.sent_bytes / st.sent, 3000u) << "frames of " << st.sent_bytes / st.sent << " bytes on average";
  }
}

// The listener table (stack/port_table.hh): SYNs find their listener with
// no lock while another core opens and closes it; a closed listener is
// freed only once no RX lookup can still be taking a reference. 300 rounds
// of listen, a connect that must be accepted, close; and a SYN storm from a
// second fiber meanwhile, each connect accepted, refused or reset, nothing leaked
// (TearDown) and nothing touched after free (the ASan and TSan builds).
using listener_table = wire_transfer;

TEST_F(listener_table, SynsMeetListenersOpenedAndClosedMeanwhile) {
  drivers::wire::link_config lc;
  lc.name = "listen";
  lc.clock = drivers::wire::clock_kind::monotonic;
  run(lc, [&](stack& sa, stack& sb) {
    constexpr std::uint16_t port = 5006;
    std::atomic<bool> done{false};
    std::size_t storm_accepted = 0, storm_refused = 0;
    auto storm = spawn([&] {
      while (!done.load()) {
        auto c = sa.backend().connect({net::ipv4_address{b_ip}, port}, now_ns() + 5'000'000'000ull, {});
        if (c) {
          ++storm_accepted;
          net::tcp_stream(std::move(*c)).abort();
        } else {
          // Refused (no listener), or reset: established by a listener that
          // closed before this fiber saw it, which resets what it never
          // accepted (Linux's connect() can fail so too).
          EXPECT_TRUE(c.error() == std::make_error_code(std::errc::connection_refused) ||
                      c.error() == std::make_error_code(std::errc::connection_reset))
              << c.error().message();
          ++storm_refused;
        }
      }
    }).value();
    for (int round = 0; round < 300; ++round) {
      auto l = sb.backend().listen({.local = {net::any_address, port}});
      ASSERT_TRUE(l.has_value()) << "round " << round << ": " << l.error().message();
      net::tcp_listener listener(std::move(*l));
      auto c = sa.backend().connect({net::ipv4_address{b_ip}, port}, now_ns() + 5'000'000'000ull, {});
      ASSERT_TRUE(c.has_value()) << "round " << round << ": " << c.error().message();
      net::tcp_stream(std::move(*c)).abort();
      listener.close();
    }
    done = true;
    storm.join();
    EXPECT_GT(storm_accepted + storm_refused, 0u);
  });
}

// Timers that scale (issue 19 item 4): idle connections with keepalive on
// are each one entry on their home core's timer wheel, two hours out. The
// timer fibers then wake at most every 10 ms and visit nothing: no entry
// fires, and nothing scans the sockets (stack/timer_fiber.cc). 50,000
// connections, both ends in this process: 100,000 armed timers. A client
// address has 16,384 ephemeral ports per remote endpoint (RFC 6056's
// dynamic range), so the connections go to four listening ports.
using idle_timers = wire_transfer;

TEST_F(idle_timers, AHundredThousandIdleKeepalivesCostTheTimerFibersNothing) {
  constexpr int connections = 50'000;
  constexpr std::uint16_t ports = 4;
  constexpr std::uint16_t first_port = 5007;
  drivers::wire::link_config lc;
  lc.name = "idle";
  lc.clock = drivers::wire::clock_kind::monotonic;
  run(lc, [&](stack& sa, stack& sb) {
    const net::stream_options small{.keepalive = true, .send_buffer = 4096, .receive_buffer = 4096};
    std::vector<net::tcp_listener> listeners;
    for (std::uint16_t p = 0; p < ports; ++p) {
      auto l = sb.backend().listen({.local = {net::any_address, std::uint16_t(first_port + p)}, .backlog = 64, .accepted = small});
      ASSERT_TRUE(l.has_value()) << l.error().message();
      listeners.emplace_back(std::move(*l));
    }
    std::vector<net::tcp_stream> streams;
    streams.reserve(2 * connections);
    const std::uint64_t deadline = now_ns() + 120'000'000'000ull;
    for (int i = 0; i < connections; ++i) {
      const std::uint16_t p = std::uint16_t(i % ports);
      auto c = sa.backend().connect({net::ipv4_address{b_ip}, std::uint16_t(first_port + p)}, deadline, small);
      ASSERT_TRUE(c.has_value()) << i << ": " << c.error().message();
      streams.emplace_back(std::move(*c));
      auto a = listeners[p].accept(deadline);
      ASSERT_TRUE(a.has_value()) << i << ": " << a.error().message();
      streams.emplace_back(std::move(*a));
    }
    const auto totals = [&] {
      stack::timer_counts t;
      for (stack* st : {&sa, &sb})
        for (unsigned c = 0; c < st->cores(); ++c) {
          const stack::timer_counts k = st->timers(c);
          t.wakeups += k.wakeups;
          t.fired += k.fired;
          t.armed += k.armed;
        }
      return t;
    };
    // Entries armed for a deadline that has since moved later (the SYN's
    // 1 s RTO, now a 2 h keepalive) fire once, find it moved, and move: one
    // visit per change, not per wakeup. Those are over after a second.
    ASSERT_TRUE(this_fiber::sleep_for(std::chrono::milliseconds(1200)));
    const stack::timer_counts before = totals();
    ASSERT_TRUE(this_fiber::sleep_for(std::chrono::milliseconds(300)));
    const stack::timer_counts after = totals();
    EXPECT_GE(after.armed, 2u * connections);      // every socket's keepalive on a wheel
    EXPECT_LE(after.fired - before.fired, 10u);    // none of them due
    // At most one wakeup per 10 ms tick and fiber (two stacks, up to two cores each), and slack.
    EXPECT_LE(after.wakeups - before.wakeups, 4u * 30u + 40u);
    if (std::getenv("AFFINE_TEST_VERBOSE"))
      fmt::print(stderr, "  armed {} fired {} wakeups {} in 300 ms\n", after.armed, after.fired - before.fired,
                 after.wakeups - before.wakeups);
    for (auto& s : streams) s.abort();
    for (auto& l : listeners) l.close();
  });
}

}  // namespace
}  // namespace affine::stack
