#pragma once
// Two stacks joined by the in-process wire (drivers/wire), on one runtime:
// a at 10.88.0.1 with its RX queue on core 0, b at 10.88.0.2 with its RX
// queue on the last core. For tests that need a peer that is affine too.

#include <gtest/gtest.h>

#include <algorithm>
#include <functional>
#include <memory>
#include <string_view>
#include <vector>

#include <fmt/format.h>

#include "affine/runtime.hh"
#include "drivers/dpdk/eal.hh"
#include "drivers/wire/wire.hh"
#include "reactor/policy/config.hh"
#include "stack/stack.hh"
#include "stack/tcp/connection.hh"
#include "stack/tcp/ring_buffer.hh"
#include "stack/tcp_totals.hh"

namespace affine::stack::testing {

inline constexpr std::uint32_t a_ip = 0x0a580001;  // 10.88.0.1
inline constexpr std::uint32_t b_ip = 0x0a580002;  // 10.88.0.2
// With ipv6_ set: fd88::1/64 and fd88::2/64 besides, no DAD, no link-local.
inline constexpr ipv6_bytes a_ip6 = {0xfd, 0x88, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1};
inline constexpr ipv6_bytes b_ip6 = {0xfd, 0x88, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2};

// What `st`'s connections counted as `name` (stack/tcp_totals.hh), summed
// over its cores.
inline std::uint64_t tcp_counted(const stack& st, std::string_view name) {
  const auto it = std::ranges::find(tcp_totals, name, &tcp_total::name);
  EXPECT_NE(it, tcp_totals.end()) << name;
  if (it == tcp_totals.end()) return 0;
  std::uint64_t sum = 0;
  for (unsigned core = 0; core < st.cores(); ++core)
    sum += st.counters(core).tcp_counted[std::size_t(it - tcp_totals.begin())].load(std::memory_order_relaxed);
  return sum;
}

class two_stacks : public ::testing::Test {
 protected:
  // Starts the runtime (both cores where there are two) with `policy`.
  void start(const policy::policy_config& policy = {}) {
    auto eal = drivers::dpdk::init_eal_for_tests();
    ASSERT_TRUE(eal.has_value()) << eal.error();
    auto topo = topology::from_system();
    ASSERT_TRUE(topo.has_value()) << topo.error();
    topo_ = std::make_unique<topology>(std::move(*topo));
    cores_ = topo_->core_count() >= 2 ? 2 : 1;
    runtime_options o;
    for (unsigned c = 0; c < cores_; ++c) o.cores.push_back(core_id{c});
    o.on_reactor_start = drivers::dpdk::register_reactor;
    policy_ = policy;
    auto rt = runtime::start(*topo_, o, &policy_);
    ASSERT_TRUE(rt.has_value()) << rt.error();
    rt_ = std::move(*rt);
  }

  void TearDown() override {
    rt_.reset();
    link_.reset();
    EXPECT_EQ(tcp::connection::live_count(), 0u);
    EXPECT_EQ(tcp::ring_buffer::live_bytes(), 0u);
  }

  // Runs `body(a, b)` in a fiber with both stacks up on a link made from
  // `lc` (its ends' TX queues set here).
  void run(drivers::wire::link_config lc, const std::function<void(stack& a, stack& b)>& body) {
    lc.a.tx_queues = cores_;
    lc.b.tx_queues = cores_;
    auto link = drivers::wire::link::create(lc);
    ASSERT_TRUE(link.has_value()) << link.error();
    link_ = std::move(*link);
    rt_->run([&] {
      stack_config ca, cb;
      ca.address = a_ip;
      cb.address = b_ip;
      cb.rps = b_rps_;
      ca.tcp.pacing = cb.tcp.pacing = pacing_;
      ca.busy_poll_budget_us = a_busy_poll_budget_us_;
      if (ipv6_) {
        ca.ipv6 = {{a_ip6, 64}};
        cb.ipv6 = {{b_ip6, 64}};
        ca.dad_transmits = cb.dad_transmits = 0;
      }
      auto sa = stack::create(*rt_, link_->a(), ca, std::vector<rxq_assignment>{{0, core_id{0}}});
      auto sb = stack::create(*rt_, link_->b(), cb, std::vector<rxq_assignment>{{0, core_id{cores_ - 1}}});
      ASSERT_TRUE(sa.has_value()) << sa.error();
      ASSERT_TRUE(sb.has_value()) << sb.error();
      body(**sa, **sb);
      sa->reset();
      sb->reset();
    });
  }

  std::unique_ptr<topology> topo_;
  unsigned cores_ = 1;
  policy::policy_config policy_;
  std::unique_ptr<runtime> rt_;
  std::unique_ptr<drivers::wire::link> link_;
  std::vector<policy::rps_mode> b_rps_;  // b's RX queue steering (seed 003)
  std::vector<std::int64_t> a_busy_poll_budget_us_;  // a's per-queue busy-poll budgets (seed 001)
  bool ipv6_ = false;  // the stacks hold a_ip6 and b_ip6 too
  bool pacing_ = false;  // both stacks' tcp.pacing
};

}  // namespace affine::stack::testing
