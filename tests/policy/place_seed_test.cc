// place_wakeup() reproducing seeds 004 and 000 in miniature: 2 nodes x 4
// cores, one LLC per node (cores 0-3 node 0, cores 4-7 node 1).

#include <gtest/gtest.h>

#include <array>

#include "reactor/policy/place.hh"
#include "tests/policy/machine.hh"

namespace affine::policy {
namespace {

using testing::cpu;
using testing::grid;
using testing::machine;

policy_config config(bool rx_wakeup_sync, wake_affine_mode mode) {
  policy_config cfg;
  cfg.rx_wakeup_sync = rx_wakeup_sync;
  cfg.wake_affine = mode;
  return cfg;
}

// seed 004: the NIC on node 1, every node-1 core running one antagonist
// (`stress -c 32` on 32 cpus), qperf's previous core idle on node 0, a sync
// wakeup from the RX path on core 5. The seed's kernel still had sync RX
// wakeups, so rx_wakeup_sync is on in these cases.
struct seed004 : ::testing::Test {
  machine m{grid(2, 1, 4)};
  wakeup w{.wakee_prev_core = cpu(0), .waker_core = cpu(5), .kind = waker_kind::rx_path, .sync = true};
  seed004() { m.run_all(4, 7, 1); }
};

TEST_F(seed004, Seed004_RxWakerDoesNotPullAcrossNodes) {
  const placement p = place_wakeup(m.view(), w, config(true, wake_affine_mode::task_only));
  EXPECT_EQ(p.core, cpu(0));
  EXPECT_EQ(p.reason, wake_reason::prev_idle);
  EXPECT_FALSE(p.idle_sibling);
}

TEST_F(seed004, Seed004_AlwaysModePullsRxWakeeOntoAntagonistNode) {
  const placement p = place_wakeup(m.view(), w, config(true, wake_affine_mode::always));
  EXPECT_EQ(p.core, cpu(5));
  EXPECT_EQ(p.reason, wake_reason::affine_sync_waker);
  EXPECT_EQ(m.topo.core(p.core).node, 1u);
}

TEST_F(seed004, Seed004_FiberWakerPullsUnderTaskOnly) {
  // The one runnable fiber on core 5 is now the waker itself, about to sleep.
  w.kind = waker_kind::fiber;
  const placement p = place_wakeup(m.view(), w, config(false, wake_affine_mode::task_only));
  EXPECT_EQ(p.core, cpu(5));
  EXPECT_EQ(p.reason, wake_reason::affine_sync_waker);
}

TEST_F(seed004, Seed004_ThreeAntagonistsPerCoreDoNotPullEvenUnderAlways) {
  // `stress -c 96` on 32 cpus: nr_running == 1 is false, the shortcut is off.
  m.run_all(4, 7, 3);
  const placement p = place_wakeup(m.view(), w, config(true, wake_affine_mode::always));
  EXPECT_EQ(p.core, cpu(0));
  EXPECT_EQ(p.reason, wake_reason::prev_idle);
}

TEST_F(seed004, Seed004_OffSkipsWakeAffineEvenForFiberWakers) {
  w.kind = waker_kind::fiber;
  m.run(cpu(0), 1);  // prev busy, core 1 idle beside it
  const placement p = place_wakeup(m.view(), w, config(false, wake_affine_mode::off));
  EXPECT_EQ(p.core, cpu(1));
  EXPECT_EQ(p.reason, wake_reason::no_affine);
  EXPECT_TRUE(p.idle_sibling);
}

TEST_F(seed004, Seed004_TimerAndCompletionWakersNeverTakeTheShortcut) {
  for (const waker_kind k : {waker_kind::timer, waker_kind::completion}) {
    w.kind = k;
    EXPECT_FALSE(honoured_sync(w, config(true, wake_affine_mode::always))) << to_string(k);
    EXPECT_EQ(place_wakeup(m.view(), w, config(true, wake_affine_mode::always)).core, cpu(0)) << to_string(k);
  }
}

// seed 000: node 0 busy (one fiber per core), node 1 idle; an RX wakeup on
// core 1 of a fiber that last ran on core 6. Under `always` the sync shortcut
// is taken only when RX wakeups count as sync.
struct seed000 : ::testing::Test {
  machine m{grid(2, 1, 4)};
  wakeup w{.wakee_prev_core = cpu(6), .waker_core = cpu(1), .kind = waker_kind::rx_path, .sync = true};
  seed000() { m.run_all(0, 3, 1); }
};

TEST_F(seed000, Seed000_RxWakeupIsNotSyncByDefault) {
  const policy_config cfg = config(false, wake_affine_mode::always);
  EXPECT_FALSE(honoured_sync(w, cfg));
  const placement p = place_wakeup(m.view(), w, cfg);
  EXPECT_EQ(p.core, cpu(6));
  EXPECT_EQ(p.reason, wake_reason::prev_idle);
}

TEST_F(seed000, Seed000_RxWakeupIsSyncWhenConfigured) {
  const policy_config cfg = config(true, wake_affine_mode::always);
  EXPECT_TRUE(honoured_sync(w, cfg));
  const placement p = place_wakeup(m.view(), w, cfg);
  EXPECT_EQ(p.core, cpu(1));
  EXPECT_EQ(p.reason, wake_reason::affine_sync_waker);
}

TEST_F(seed000, Seed000_SyncRxWakeupSubtractsWakerLoadInLoadComparison) {
  // No rung before the load comparison fires: the waker's core holds two
  // fibers, prev two as well. A sync RX wakeup subtracts the waker's load
  // (what the kernel does with the interrupted task) and so pulls.
  m.run_all(4, 7, 1);
  m.run(cpu(1), 2);
  m.run(cpu(6), 2);
  const placement pulled = place_wakeup(m.view(), w, config(true, wake_affine_mode::task_only));
  EXPECT_EQ(pulled.core, cpu(1));
  EXPECT_EQ(pulled.reason, wake_reason::affine_load_this);
  const placement kept = place_wakeup(m.view(), w, config(false, wake_affine_mode::task_only));
  EXPECT_EQ(kept.core, cpu(6));
  EXPECT_EQ(kept.reason, wake_reason::affine_load_prev);
}

// The seed's picture: the NIC on node 0 with its RX queues on cores 0-3,
// which also run one database thread each; node 1 idle. One wakeup per RX
// core, of a fiber that last ran on node 1. Returns the wakees on node 0.
unsigned wakees_pulled_to_nic_node(const policy_config& cfg) {
  machine m{grid(2, 1, 4)};
  m.run_all(0, 3, 1);
  unsigned on_node0 = 0;
  for (std::uint32_t i = 0; i < 4; ++i) {
    const wakeup w{.wakee_prev_core = cpu(4 + i), .waker_core = cpu(i), .kind = waker_kind::rx_path, .sync = true};
    const placement p = place_wakeup(m.view(), w, cfg);
    m.add(p.core);
    on_node0 += m.topo.core(p.core).node == 0 ? 1 : 0;
  }
  return on_node0;
}

TEST(seed000_picture, Seed000_WakeupsSpreadOffTheNicNodeByDefault) {
  EXPECT_EQ(wakees_pulled_to_nic_node(policy_config{}), 0u);
}

TEST(seed000_picture, Seed000_KernelBeforeBothFixesPilesOntoTheNicNode) {
  EXPECT_EQ(wakees_pulled_to_nic_node(config(true, wake_affine_mode::always)), 4u);
}

TEST(seed000_picture, Seed000_EitherFixAloneSpreadsThisPicture) {
  EXPECT_EQ(wakees_pulled_to_nic_node(config(false, wake_affine_mode::always)), 0u);
  EXPECT_EQ(wakees_pulled_to_nic_node(config(true, wake_affine_mode::task_only)), 0u);
}

}  // namespace
}  // namespace affine::policy
