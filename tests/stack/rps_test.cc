// Per-RX-queue packet steering (seed 003) on the live stack: b's one RX queue
// is polled by the last core; its mode decides which core processes each
// flow's packets. Asserted on the counters, not on timings.

#include <gtest/gtest.h>

#include <array>
#include <atomic>
#include <chrono>
#include <vector>

#include "affine/fiber.hh"
#include "affine/net.hh"
#include "affine/stats.hh"
#include "reactor/core.hh"
#include "stack/from_config.hh"
#include "stack/rps.hh"
#include "tests/stack/two_stacks.hh"

namespace affine::stack {
namespace {

using testing::a_ip;
using testing::b_ip;

constexpr std::uint64_t ten_s = 10'000'000'000ull;

// ---- the flow hash, from a frame and from a socket ----------------------------

// Ethernet + IPv4 + 4 bytes of TCP or UDP ports, from `src` to `dst`.
std::vector<std::byte> frame(std::uint32_t src, std::uint16_t sport, std::uint32_t dst, std::uint16_t dport,
                             std::uint8_t proto = 6, std::uint16_t frag = 0, bool vlan = false) {
  std::vector<std::byte> f(12, std::byte{0});
  const auto put16 = [&](std::uint16_t v) {
    f.push_back(std::byte(v >> 8));
    f.push_back(std::byte(v));
  };
  const auto put32 = [&](std::uint32_t v) {
    put16(std::uint16_t(v >> 16));
    put16(std::uint16_t(v));
  };
  if (vlan) {
    put16(0x8100);
    put16(7);
  }
  put16(0x0800);
  f.push_back(std::byte{0x45});
  f.push_back(std::byte{0});
  put16(24);
  put16(1);
  put16(frag);
  f.push_back(std::byte{64});
  f.push_back(std::byte{proto});
  put16(0);
  put32(src);
  put32(dst);
  put16(sport);
  put16(dport);
  return f;
}

TEST(rps_flow_hash, AFrameHashesAsTheReceivingSocketsFourTuple) {
  const auto f = frame(a_ip, 40000, b_ip, 80);
  EXPECT_EQ(frame_flow_hash(f), flow_hash(b_ip, 80, a_ip, 40000));
  EXPECT_EQ(frame_flow_hash(frame(a_ip, 40000, b_ip, 80, 6, 0, true)), flow_hash(b_ip, 80, a_ip, 40000));
  EXPECT_EQ(frame_flow_hash(frame(a_ip, 53, b_ip, 5353, 17)), flow_hash(b_ip, 5353, a_ip, 53));
  EXPECT_NE(flow_hash(b_ip, 80, a_ip, 40000), flow_hash(b_ip, 80, a_ip, 40001));
}

TEST(rps_flow_hash, FramesTheRxCoreKeepsHaveNone) {
  EXPECT_FALSE(frame_flow_hash(frame(a_ip, 1, b_ip, 2, 1)));              // ICMP
  EXPECT_FALSE(frame_flow_hash(frame(a_ip, 1, b_ip, 2, 6, 0x2000)));      // first fragment
  EXPECT_FALSE(frame_flow_hash(frame(a_ip, 1, b_ip, 2, 6, 0x0010)));      // a later one
  auto arp = frame(a_ip, 1, b_ip, 2);
  arp[12] = std::byte{0x08};
  arp[13] = std::byte{0x06};
  EXPECT_FALSE(frame_flow_hash(arp));
  const auto f = frame(a_ip, 1, b_ip, 2);
  for (std::size_t n = 0; n < f.size(); ++n)  // every truncation
    EXPECT_FALSE(frame_flow_hash(std::span(f).first(n))) << n << " bytes";
}

// ---- the live stack --------------------------------------------------------------

struct rps_counts {
  std::array<std::uint64_t, policy::rps_reason_count> steered{};
  std::vector<std::uint64_t> backlog_in;  // per core
  std::vector<std::uint64_t> backlog_rung;  // per core: the reactor loop's backlog rung (affine/stats.hh)
  std::uint64_t full = 0;
  std::vector<std::uint64_t> busy_poll_packets;  // per core
  std::uint64_t busy_poll_nothing = 0;           // polls that found nothing to poll (exit "off")
  bool operator==(const rps_counts&) const = default;
  std::uint64_t of(policy::rps_reason r) const { return steered[std::size_t(r)]; }
  std::uint64_t total() const {
    std::uint64_t n = 0;
    for (auto s : steered) n += s;
    return n;
  }
};

// From a fiber: the reactor loops' rungs are read on their own cores.
rps_counts counts_of(const stack& st) {
  rps_counts r;
  for (unsigned c = 0; c < st.cores(); ++c) {
    const core_counters& k = st.counters(c);
    for (std::size_t i = 0; i < policy::rps_reason_count; ++i) r.steered[i] += k.rps_steered[i].load();
    r.backlog_in.push_back(k.rps_backlog_packets.load());
    r.full += k.rps_backlog_full.load();
    r.backlog_rung.push_back(
        submit_to(c, [] { return detail::this_core()->c.rung_work[std::size_t(rung::backlog)]; }));
    r.busy_poll_packets.push_back(k.busy_poll_packets.load());
    r.busy_poll_nothing += k.busy_poll_exits[std::size_t(policy::poll_exit::off)].load();
  }
  return r;
}

// The counts once the wire is quiet: the last ACKs and FINs may still be on
// their way (and in a backlog ring) when the test's fibers have joined, so
// the counts are read until two reads 20 ms apart agree (2 s at most).
rps_counts settled_counts_of(const stack& st) {
  rps_counts r = counts_of(st);
  for (int i = 0; i < 100; ++i) {
    this_fiber::sleep_for(std::chrono::milliseconds(20));
    rps_counts next = counts_of(st);
    if (next == r) break;
    r = std::move(next);
  }
  return r;
}

class rps_live : public testing::two_stacks {
 protected:
  // 16 connections from a to an echo server on b, 50 round trips of 64
  // bytes each; b's readers run pinned on core 0, its RX queue is polled by
  // core 1. Busy polling is off, so every packet goes through the RX path.
  rps_counts traffic(policy::rps_mode mode, std::uint64_t busy_poll_ns = 0) {
    policy::policy_config p;
    p.busy_poll_budget_ns = busy_poll_ns;
    // A fixed budget: every read that finds nothing polls, whether or not
    // other tests share the CPU (the adaptive mode's own tests are in
    // busy_poll_test.cc).
    p.busy_poll_adaptive = false;
    start(p);
    if (cores_ < 2) return {};
    b_rps_ = {mode};
    rps_counts out;
    run({}, [&](stack& a, stack& b) {
      auto l = b.backend().listen({.local = {net::any_address, 7}});
      ASSERT_TRUE(l.has_value());
      net::tcp_listener listener(std::move(*l));
      constexpr int flows = 16;
      auto server = spawn([&] {
        std::vector<fiber_handle> sessions;
        for (int i = 0; i < flows; ++i) {
          auto c = listener.accept(now_ns() + ten_s);
          ASSERT_TRUE(c.has_value());
          sessions.push_back(spawn([c = std::move(*c)]() mutable {
            std::array<std::byte, 64> buf;
            while (c.read_exactly(buf, now_ns() + ten_s)) (void)c.write(buf);
          }, {.core = 0, .pinned = true}).value());
        }
        for (auto& s : sessions) s.join();
      }).value();
      std::vector<fiber_handle> clients;
      for (int i = 0; i < flows; ++i)
        clients.push_back(spawn([&] {
          auto c = a.backend().connect({net::ipv4_address{b_ip}, 7}, now_ns() + ten_s, {});
          ASSERT_TRUE(c.has_value()) << c.error().message();
          net::tcp_stream s(std::move(*c));
          std::array<std::byte, 64> req{}, resp{};
          for (int k = 0; k < 50; ++k) {
            ASSERT_TRUE(s.write(req, now_ns() + ten_s).has_value());
            ASSERT_TRUE(s.read_exactly(resp, now_ns() + ten_s).has_value());
          }
        }).value());
      for (auto& c : clients) c.join();
      server.join();
      out = settled_counts_of(b);
    });
    return out;
  }
};

TEST_F(rps_live, OffLeavesEveryPacketOnItsRxCore) {
  const rps_counts c = traffic(policy::rps_mode::off);
  if (cores_ < 2) GTEST_SKIP() << "needs two cores";
  EXPECT_EQ(c.total(), 0u);
  EXPECT_EQ(c.backlog_in[0] + c.backlog_in[1], 0u);
  EXPECT_EQ(c.backlog_rung[0] + c.backlog_rung[1], 0u);
}

TEST_F(rps_live, HashSpreadsFlowsOverTheCoresAsKernelRpsDoes) {
  const rps_counts c = traffic(policy::rps_mode::hash);
  if (cores_ < 2) GTEST_SKIP() << "needs two cores";
  EXPECT_GT(c.of(policy::rps_reason::hash), 0u);
  EXPECT_EQ(c.total(), c.of(policy::rps_reason::hash));
  EXPECT_GT(c.backlog_in[0], 0u) << "16 flows, none hashed to core 0";
  EXPECT_EQ(c.backlog_in[1], 0u) << "the RX core keeps its own packets";
  // Core 0's backlog is drained by its reactor loop (the backlog rung) or by
  // a reader there before it waits (busy_poll.cc: core 0 has no RX queue).
  EXPECT_GT(c.backlog_rung[0], 0u);
  EXPECT_EQ(c.backlog_rung[0] + c.busy_poll_packets[0], c.backlog_in[0]);
  EXPECT_EQ(c.full, 0u);
}

TEST_F(rps_live, FlowSendsPacketsToTheCoreWhereTheReaderRuns) {
  const rps_counts c = traffic(policy::rps_mode::flow);
  if (cores_ < 2) GTEST_SKIP() << "needs two cores";
  EXPECT_GT(c.of(policy::rps_reason::flow), 0u);
  EXPECT_EQ(c.of(policy::rps_reason::hash), 0u);
  // Before a flow's first read (the handshake) there is no consumer yet.
  EXPECT_EQ(c.total(), c.of(policy::rps_reason::flow) + c.of(policy::rps_reason::no_consumer));
  // Every reader runs on core 0: most packets go there.
  EXPECT_GT(c.backlog_in[0], c.of(policy::rps_reason::flow) / 2);
}

TEST_F(rps_live, IdleChoosesAnIdleCoreInTheReadersLlc_Seed003) {
  const rps_counts c = traffic(policy::rps_mode::idle);
  if (cores_ < 2) GTEST_SKIP() << "needs two cores";
  const std::uint64_t idle_reasons = c.of(policy::rps_reason::idle_consumer) + c.of(policy::rps_reason::idle_llc) +
                                     c.of(policy::rps_reason::idle_none);
  EXPECT_GT(idle_reasons, 0u);
  EXPECT_EQ(c.total(), idle_reasons + c.of(policy::rps_reason::no_consumer));
}

TEST_F(rps_live, ABusyPollingReaderDrainsTheBacklogOfItsOwnCore) {
  // flow: each reader's packets reach its own core through the backlog
  // ring, which the reader polls instead of spinning on nothing (seed 001
  // with seed 003).
  const rps_counts c = traffic(policy::rps_mode::flow, 50'000);
  if (cores_ < 2) GTEST_SKIP() << "needs two cores";
  EXPECT_GT(c.busy_poll_packets[0], 0u);
  EXPECT_EQ(c.busy_poll_nothing, 0u);
}

// ---- the configuration -------------------------------------------------------------

std::expected<stack_config, std::string> port_config(std::string_view rxq_tables, std::string_view before = "") {
  const std::string toml = std::string(before) + std::string(R"([[port]]
driver = "dpdk"
eal = ["--vdev=net_ring0"]
queues = 2
ip = "10.88.0.2/24"
)") + std::string(rxq_tables);
  auto s = config::load_string(config_schema(), toml, "affine.toml");
  if (!s) return std::unexpected(s.error());
  return stack_config_from(*s, s->tables("port")[0], 2);
}

// [tcp] is every connection's default (stack/tcp/config.hh).
TEST(tcp_config, CongestionAndSackReachTheConnectionDefaults) {
  auto plain = port_config("");
  ASSERT_TRUE(plain.has_value()) << plain.error();
  EXPECT_EQ(plain->tcp.congestion, tcp::congestion_algorithm::cubic);
  EXPECT_TRUE(plain->tcp.sack);
  auto reno = port_config("", "[tcp]\ncongestion = \"newreno\"\nsack = false\n");
  ASSERT_TRUE(reno.has_value()) << reno.error();
  EXPECT_EQ(reno->tcp.congestion, tcp::congestion_algorithm::new_reno);
  EXPECT_FALSE(reno->tcp.sack);
  auto bad = port_config("", "[tcp]\ncongestion = \"bbr\"\n");
  ASSERT_FALSE(bad.has_value());
  EXPECT_EQ(bad.error(), "affine.toml:2: tcp.congestion: \"bbr\" is not allowed (allowed: \"cubic\", \"newreno\")");
}

// tcp.max_connections bounds the flow table (a SYN or connect past it is
// refused, drop::tcp_connection_limit); 100k idle connections need more
// than the default.
TEST(tcp_config, MaxConnectionsAndSynCookiesReachTheStack) {
  auto plain = port_config("");
  ASSERT_TRUE(plain.has_value()) << plain.error();
  EXPECT_EQ(plain->max_connections, 65536u);
  auto many = port_config("", "[tcp]\nmax_connections = 200000\n");
  ASSERT_TRUE(many.has_value()) << many.error();
  EXPECT_EQ(many->max_connections, 200000u);
  EXPECT_EQ(plain->syn_cookies, tcp::syn_cookie_mode::automatic);
  auto always = port_config("", "[tcp]\nsyn_cookies = \"always\"\n");
  ASSERT_TRUE(always.has_value()) << always.error();
  EXPECT_EQ(always->syn_cookies, tcp::syn_cookie_mode::always);
  auto never = port_config("", "[tcp]\nsyn_cookies = \"never\"\n");
  ASSERT_TRUE(never.has_value()) << never.error();
  EXPECT_EQ(never->syn_cookies, tcp::syn_cookie_mode::never);
  auto none = port_config("", "[tcp]\nmax_connections = 0\n");
  ASSERT_FALSE(none.has_value());
  EXPECT_EQ(none.error(), "affine.toml:2: tcp.max_connections: 0 is out of range (allowed: 1..16777216)");
}

TEST(rps_config, EachQueueGetsItsOwnMode) {
  auto sc = port_config("[[port.rxq]]\nqueue = 1\nrps = \"idle\"\n");
  ASSERT_TRUE(sc.has_value()) << sc.error();
  ASSERT_EQ(sc->rps.size(), 2u);
  EXPECT_EQ(sc->rps[0], policy::rps_mode::off);
  EXPECT_EQ(sc->rps[1], policy::rps_mode::idle);
  EXPECT_EQ(sc->busy_poll_budget_us, (std::vector<std::int64_t>{-1, -1}));
}

TEST(rps_config, AQueueMayHaveItsOwnBusyPollBudget) {
  auto sc = port_config("[[port.rxq]]\nqueue = 0\nbusy_poll_budget_us = 20\n");
  ASSERT_TRUE(sc.has_value()) << sc.error();
  EXPECT_EQ(sc->busy_poll_budget_us, (std::vector<std::int64_t>{20, -1}));
}

TEST(rps_config, AQueueThatDoesNotExistIsAnError) {
  auto sc = port_config("[[port.rxq]]\nqueue = 2\nrps = \"hash\"\n");
  ASSERT_FALSE(sc.has_value());
  EXPECT_EQ(sc.error(), "affine.toml:7: port[0].rxq[0].queue: RX queue 2 does not exist (the port has 2: 0..1)");
}

TEST(rps_config, TwoTablesForOneQueueAreAnError) {
  auto sc = port_config("[[port.rxq]]\nqueue = 0\nrps = \"hash\"\n[[port.rxq]]\nqueue = 0\nrps = \"flow\"\n");
  ASSERT_FALSE(sc.has_value());
  EXPECT_EQ(sc.error(), "affine.toml:10: port[0].rxq[1].queue: RX queue 0 has a table already");
}

TEST(rps_config, AnUnknownModeNamesTheAllowedOnes) {
  auto sc = port_config("[[port.rxq]]\nqueue = 0\nrps = \"rfs\"\n");
  ASSERT_FALSE(sc.has_value());
  EXPECT_EQ(sc.error(),
            "affine.toml:8: port[0].rxq[0].rps: \"rfs\" is not allowed (allowed: \"off\", \"hash\", \"flow\", \"idle\")");
}

}  // namespace
}  // namespace affine::stack
