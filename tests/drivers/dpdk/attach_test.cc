// A dpdk_port on a running runtime: per-core RX pollers placed by the
// RX-queue plan, per-core TX batches, the owner try-lock, and what attach
// refuses. net_ring loops TX queue q back to RX queue q, so a frame sent on
// core r's TX queue must arrive on the core the plan gives RX queue r.

#include <fmt/format.h>

#include "affine/fiber.hh"
#include "affine/runtime.hh"
#include "drivers/attach.hh"
#include "drivers/dpdk/port.hh"
#include "tests/drivers/dpdk/collect_sink.hh"
#include "tests/drivers/dpdk/dpdk_fixture.hh"

namespace affine::drivers::dpdk::test {
namespace {

using namespace std::chrono_literals;

const topology& test_topology(bool* pinnable) {
  static const auto sys = topology::from_system();
  static const auto syn = topology::from_synthetic("pack:1 numa:1 l3:1 core:2 pu:1");
  *pinnable = sys && sys->core_count() >= 2;
  return *pinnable ? *sys : *syn;
}

class attach_test : public dpdk_test {
 protected:
  void start(unsigned cores, unsigned rx_queues) {
    bool pinnable = false;
    const topology& topo = test_topology(&pinnable);
    runtime_options o;
    for (unsigned c = 0; c < cores; ++c) o.cores.push_back(core_id{c});
    o.pin_threads = pinnable;
    o.on_reactor_start = register_reactor;
    auto rt = runtime::start(topo, std::move(o));
    ASSERT_TRUE(rt.has_value()) << rt.error();
    rt_ = std::move(*rt);
    auto port = dpdk_port::open(
        {.device = "net_ring0", .rx_queues = rx_queues, .tx_queues = 2, .rx_descriptors = 64, .tx_descriptors = 64});
    ASSERT_TRUE(port.has_value()) << port.error();
    port_ = std::move(*port);
    const std::vector<core_id> all{core_id{0}, core_id{1}};
    auto plan = plan_rx_queues(topo, 0, rx_queues, std::span(all).first(cores), rxq_placement::local);
    ASSERT_TRUE(plan.has_value()) << plan.error();
    plan_ = std::move(*plan);
  }

  void attach_ok() {
    auto a = attach(*rt_, *port_, plan_, sink_);
    ASSERT_TRUE(a.has_value()) << a.error();
    att_ = std::move(*a);
  }

  // Send `bytes` on reactor `core`'s TX queue, from a fiber on that core.
  void send_from(unsigned core, const std::vector<std::uint8_t>& bytes) {
    rte_mbuf* m = frame(bytes);
    ASSERT_NE(m, nullptr);
    rt_->run([&] { submit_to(core, [&] { att_->tx(core).send(m); }); });
  }

  unsigned core_of_queue(unsigned q) const {
    for (const auto& a : plan_)
      if (a.queue == q)
        for (unsigned r = 0; r < rt_->cores(); ++r)
          if (rt_->topology_core(r) == a.core) return r;
    return ~0u;
  }

  void TearDown() override {
    att_.reset();  // before the runtime: it takes the pollers off the reactors
    if (rt_) {
      EXPECT_EQ(rt_->live_fibers(), 0u);
    }
    rt_.reset();
    port_.reset();
    dpdk_test::TearDown();
  }

  std::unique_ptr<runtime> rt_;
  std::unique_ptr<dpdk_port> port_;
  std::vector<rxq_assignment> plan_;
  collect_sink sink_;
  std::unique_ptr<port_attachment> att_;
};

TEST_F(attach_test, frames_arrive_on_the_core_the_plan_gives_their_queue) {
  start(2, 2);
  attach_ok();
  const auto a = ipv4_frame(0x0a000001, 0x0a000002, 6, 1111, 80);
  const auto b = ipv4_frame(0x0a000003, 0x0a000002, 6, 2222, 80);
  send_from(0, a);
  send_from(1, b);
  const auto got = sink_.wait_for(2);
  ASSERT_EQ(got.size(), 2u);
  for (const auto& r : got) {
    const unsigned q = r.bytes == a ? 0 : 1;
    EXPECT_EQ(r.core, core_of_queue(q)) << "queue " << q;
    EXPECT_TRUE(r.has_flow);
  }
  att_.reset();
  EXPECT_EQ(port_->stats().rx_packets, 2u);
}

TEST_F(attach_test, one_core_polls_every_queue_when_the_plan_says_so) {
  start(2, 2);
  for (auto& a : plan_) a.core = core_id{1};
  attach_ok();
  EXPECT_TRUE(att_->poller(0).queues().empty());
  EXPECT_EQ(att_->poller(1).queues().size(), 2u);
  send_from(0, ipv4_frame(1, 2, 17, 3, 4));
  send_from(1, ipv4_frame(1, 2, 17, 3, 5));
  const auto got = sink_.wait_for(2);
  ASSERT_EQ(got.size(), 2u);
  EXPECT_EQ(got[0].core, 1u);
  EXPECT_EQ(got[1].core, 1u);
}

TEST_F(attach_test, a_queue_held_by_a_busy_poller_is_skipped_until_released) {
  start(2, 2);
  attach_ok();
  const rx_poller& owner_core = att_->poller(core_of_queue(0));
  ASSERT_TRUE(port_->owner(0).try_lock());
  send_from(0, ipv4_frame(1, 2, 17, 3, 4));
  EXPECT_TRUE(sink_.wait_for(1, 50ms).empty());
  EXPECT_GT(owner_core.counts().busy_skips.load(), 0u);
  EXPECT_EQ(owner_core.counts().packets.load(), 0u);
  port_->owner(0).unlock();
  EXPECT_EQ(sink_.wait_for(1).size(), 1u);
  EXPECT_EQ(owner_core.counts().packets.load(), 1u);
}

TEST_F(attach_test, a_malformed_frame_is_delivered_without_a_flow) {
  start(2, 2);
  attach_ok();
  send_from(1, {0xde, 0xad, 0x00});
  const auto got = sink_.wait_for(1);
  ASSERT_EQ(got.size(), 1u);
  EXPECT_EQ(got[0].bytes.size(), 3u);
  EXPECT_FALSE(got[0].has_flow);
}

TEST_F(attach_test, refuses_a_plan_that_leaves_a_queue_unpolled) {
  start(2, 2);
  plan_.pop_back();
  auto a = attach(*rt_, *port_, plan_, sink_);
  ASSERT_FALSE(a.has_value());
  EXPECT_EQ(a.error(), "port net_ring0: RX queue 1 is not in the plan, so no core would poll it");
}

TEST_F(attach_test, refuses_a_queue_on_a_core_without_a_reactor) {
  start(1, 2);
  plan_[1].core = core_id{1};
  auto a = attach(*rt_, *port_, plan_, sink_);
  ASSERT_FALSE(a.has_value());
  EXPECT_EQ(a.error(), "port net_ring0: RX queue 1 is planned on core 1, which runs no reactor");
}

TEST_F(attach_test, refuses_a_queue_planned_twice) {
  start(2, 2);
  plan_[1].queue = 0;
  auto a = attach(*rt_, *port_, plan_, sink_);
  ASSERT_FALSE(a.has_value());
  EXPECT_EQ(a.error(), "port net_ring0: the plan gives RX queue 0 twice");
}

TEST_F(attach_test, refuses_a_port_with_fewer_tx_queues_than_reactors) {
  start(2, 1);
  port_.reset();
  auto port = dpdk_port::open({.device = "net_ring0", .rx_descriptors = 64, .tx_descriptors = 64});
  ASSERT_TRUE(port.has_value()) << port.error();
  port_ = std::move(*port);
  auto a = attach(*rt_, *port_, plan_, sink_);
  ASSERT_FALSE(a.has_value());
  EXPECT_EQ(a.error(), "port net_ring0: 1 TX queues for 2 reactor cores (one each is needed)");
}

// tx_batch without a runtime: the test thread is the only writer.
TEST_F(attach_test, tx_batch_sends_full_batches_at_once_and_the_rest_on_flush) {
  auto port = dpdk_port::open({.device = "net_ring0", .rx_descriptors = 64, .tx_descriptors = 64});
  ASSERT_TRUE(port.has_value()) << port.error();
  {
    tx_batch tx(**port, 0);
    for (unsigned i = 0; i < tx_batch::capacity + 6; ++i) tx.send(frame(ipv4_frame(1, 2, 17, 3, 4)));
    EXPECT_EQ(tx.pending(), 6u);
    EXPECT_EQ(tx.sent(), tx_batch::capacity);
    EXPECT_EQ(tx.flush(), 6u);
    EXPECT_EQ(tx.pending(), 0u);
    tx.send(frame(ipv4_frame(1, 2, 17, 3, 4)));  // never flushed: the destructor frees it
  }
  std::array<rte_mbuf*, 32> got;
  unsigned n = 0;
  while (const std::uint16_t k = (*port)->rx_burst(0, got.data(), 32)) {
    n += k;
    rte_pktmbuf_free_bulk(got.data(), k);
  }
  EXPECT_EQ(n, tx_batch::capacity + 6);
}

}  // namespace
}  // namespace affine::drivers::dpdk::test
