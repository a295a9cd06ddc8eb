// mpsc_inbox (reactor/inbox.hh), the reactor's remote-wakeup queue, with a
// producer that stops between its two steps, as the OS or the hypervisor
// stops a thread now and then: the owner must never see an empty inbox
// while a node published before it looked waits in it. A reactor that did
// slept with the node queued, and no kick came (the producer had kicked
// while the reactor was still awake): a hang of
// sync_api.MutexSerialisesFibersOnBothCores in 1 of some 100 runs.

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <thread>
#include <vector>

#include "reactor/inbox.hh"

namespace affine::detail {
namespace {

TEST(inbox, PopsInOrderAndIsEmptyWhenDrained) {
  mpsc_inbox q;
  EXPECT_TRUE(q.empty());
  EXPECT_EQ(q.pop(), nullptr);
  inbox_node a, b, c;
  EXPECT_TRUE(q.push(&a));  // looked empty
  EXPECT_FALSE(q.push(&b));
  EXPECT_FALSE(q.empty());
  EXPECT_EQ(q.pop(), &a);
  q.push(&c);
  EXPECT_EQ(q.pop(), &b);
  EXPECT_FALSE(q.empty());
  EXPECT_EQ(q.pop(), &c);
  EXPECT_EQ(q.pop(), nullptr);
  EXPECT_TRUE(q.empty());
}

TEST(inbox, ANodeWhoseProducerStoppedMidPushKeepsTheInboxNonEmpty) {
  mpsc_inbox q;
  inbox_node a, b;
  q.push(&a);
  inbox_node* prev = q.publish(&b);  // the producer stops here
  EXPECT_EQ(q.pop(), nullptr);       // a waits for its link to b
  EXPECT_FALSE(q.empty());
  mpsc_inbox::link(prev, &b);
  EXPECT_EQ(q.pop(), &a);
  EXPECT_EQ(q.pop(), &b);
  EXPECT_TRUE(q.empty());
}

// The race itself: the consumer's pop() finds one node and puts the stub
// back behind it just as a producer publishes the next one. It happens
// within a few thousand pushes here; the test gives it a second of them.
TEST(inbox, TheOwnerNeverSeesAnEmptyInboxWhileAPublishedNodeWaits) {
  constexpr std::size_t nodes_n = 1'000'000;
  std::vector<inbox_node> nodes(nodes_n);
  mpsc_inbox q;
  std::atomic<std::uint64_t> published{0};
  std::atomic<bool> stop{false};
  std::thread producer([&] {
    const auto end = std::chrono::steady_clock::now() + std::chrono::seconds(1);
    for (std::size_t i = 0; i < nodes_n && !stop.load(std::memory_order_relaxed); ++i) {
      inbox_node* prev = q.publish(&nodes[i]);
      published.fetch_add(1, std::memory_order_seq_cst);
      for (unsigned k = 0; k < (i % 7) * 20; ++k) __builtin_ia32_pause();  // stopped between the steps
      mpsc_inbox::link(prev, &nodes[i]);
      if ((i & 1023) == 0 && std::chrono::steady_clock::now() > end) break;
    }
    stop.store(true, std::memory_order_seq_cst);
  });
  std::uint64_t popped = 0, lies = 0, checks = 0;
  for (;;) {
    const bool last = stop.load(std::memory_order_seq_cst);
    const std::uint64_t before = published.load(std::memory_order_seq_cst);
    while (q.pop() != nullptr) ++popped;
    ++checks;
    if (q.empty() && popped < before) ++lies;
    if (last && popped == published.load(std::memory_order_seq_cst)) break;
  }
  producer.join();
  EXPECT_EQ(lies, 0u) << "empty() said so with a published node waiting, " << lies << " times in " << checks
                      << " checks of " << popped << " nodes";
  EXPECT_TRUE(q.empty());
}

}  // namespace
}  // namespace affine::detail
