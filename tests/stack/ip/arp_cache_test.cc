// The ARP cache: RFC 826's merge rule, RFC 1122 2.3.2's pending queue,
// retries and timeouts, at virtual time. Every packet handed to the cache is
// checked back exactly once (teardown), so a lost or doubled packet fails.

#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <map>
#include <vector>

#include "stack/ip/arp_cache.hh"

namespace affine::stack {
namespace {

constexpr std::uint64_t ms = 1'000'000;
constexpr std::uint64_t sec = 1'000 * ms;

constexpr std::uint32_t ip_a = 0x0a000001;  // 10.0.0.1
constexpr std::uint32_t ip_b = 0x0a000002;
constexpr std::uint32_t ip_c = 0x0a000003;
constexpr std::uint32_t ip_d = 0x0a000004;
constexpr mac_address mac_1{0x02, 0, 0, 0, 0, 1};
constexpr mac_address mac_2{0x02, 0, 0, 0, 0, 2};

using packets = std::vector<rte_mbuf*>;

class arp : public ::testing::Test {
 protected:
  void make(const arp_config& config) { cache_.emplace(config); }

  // Packets are opaque handles: distinct addresses nobody dereferences.
  rte_mbuf* p(int i) { return reinterpret_cast<rte_mbuf*>(&handles_[std::size_t(i)]); }

  struct outcome {
    arp_resolve action;
    packets drop;
  };
  // resolve(), keeping the books: the packet is out with the cache when it
  // was taken; what the cache pushed out is back.
  outcome resolve(std::uint32_t ip, int i, std::uint64_t now) {
    const arp_resolution r = cache().resolve(ip, p(i), now);
    if (r.action == arp_resolve::send_request || r.action == arp_resolve::queued) ++held_[p(i)];
    return {r.action, returned(r.drop)};
  }
  packets on_arp(std::uint32_t ip, const mac_address& mac, bool target_is_us, std::uint64_t now) {
    return returned(cache().on_arp(ip, mac, target_is_us, now));
  }
  packets expire_drops(std::uint64_t now, std::vector<std::uint32_t>* requests = nullptr) {
    const arp_expiry e = cache().expire(now);
    if (requests != nullptr) requests->assign(e.request.begin(), e.request.end());
    return returned(e.drop);
  }
  packets returned(std::span<rte_mbuf* const> list) {
    for (rte_mbuf* m : list) EXPECT_EQ(--held_[m], 0) << "a packet came back that the cache did not hold";
    return {list.begin(), list.end()};
  }

  // A pending pool of two places, both taken by packets 0 and 1 for ip_a.
  void fill_a_pool_of_two() {
    make({.queue_per_entry = 4, .queue_total = 2});
    resolve(ip_a, 0, 0);
    resolve(ip_a, 1, 0);
  }

  arp_cache& cache() {
    if (!cache_) cache_.emplace();
    return *cache_;
  }

  void TearDown() override {
    returned(cache().clear());
    EXPECT_EQ(cache().pending(), 0u);
    for (const auto& [m, n] : held_) EXPECT_EQ(n, 0) << "a packet never came back";
  }

 private:
  std::array<char, 64> handles_{};
  std::map<rte_mbuf*, int> held_;
  std::optional<arp_cache> cache_;
};

TEST_F(arp, FirstPacketToAnUnknownAddressAsksForARequestAndWaits) {
  EXPECT_EQ(resolve(ip_a, 0, 0).action, arp_resolve::send_request);
  EXPECT_EQ(resolve(ip_a, 1, 10 * ms).action, arp_resolve::queued);
  EXPECT_FALSE(cache().lookup(ip_a, 10 * ms));
  EXPECT_EQ(cache().pending(), 2u);
  EXPECT_EQ(cache().counts().requests, 1u);
}

TEST_F(arp, Rfc1122ReplyReleasesTheWaitingPacketsInOrder) {
  resolve(ip_a, 0, 0);
  resolve(ip_a, 1, 0);
  resolve(ip_a, 2, 0);
  EXPECT_EQ(on_arp(ip_a, mac_1, true, 5 * ms), (packets{p(0), p(1), p(2)}));
  EXPECT_EQ(cache().lookup(ip_a, 5 * ms), mac_1);
  EXPECT_EQ(cache().pending(), 0u);
  EXPECT_EQ(cache().counts().resolved, 1u);
}

TEST_F(arp, ResolveOfAKnownAddressDoesNotTakeThePacket) {
  on_arp(ip_a, mac_1, true, 0);
  const outcome r = resolve(ip_a, 0, 1 * sec);
  EXPECT_EQ(r.action, arp_resolve::known);
  EXPECT_TRUE(r.drop.empty());
  EXPECT_EQ(cache().pending(), 0u);
}

TEST_F(arp, Rfc826PacketAddressedToUsAddsTheSender) {
  EXPECT_TRUE(on_arp(ip_a, mac_1, true, 0).empty());
  EXPECT_EQ(cache().lookup(ip_a, 0), mac_1);
  EXPECT_EQ(cache().size(), 1u);
}

TEST_F(arp, Rfc826GratuitousArpFromAnUnknownHostCreatesNothing) {
  on_arp(ip_a, mac_1, false, 0);
  EXPECT_FALSE(cache().lookup(ip_a, 0));
  EXPECT_EQ(cache().size(), 0u);
}

TEST_F(arp, Rfc826MergeUpdatesAnExistingEntryEvenWhenNotTargeted) {
  on_arp(ip_a, mac_1, true, 0);
  on_arp(ip_a, mac_2, false, 1 * sec);  // a gratuitous ARP: the host moved
  EXPECT_EQ(cache().lookup(ip_a, 1 * sec), mac_2);
}

TEST_F(arp, Rfc826MergeResolvesAPendingAddressFromAnUntargetedPacket) {
  resolve(ip_a, 0, 0);
  EXPECT_EQ(on_arp(ip_a, mac_1, false, 1 * ms), (packets{p(0)}));
  EXPECT_EQ(cache().lookup(ip_a, 1 * ms), mac_1);
}

TEST_F(arp, Rfc5227ProbeWithZeroSenderIsIgnored) {
  on_arp(0, mac_1, true, 0);
  EXPECT_EQ(cache().size(), 0u);
  EXPECT_EQ(cache().counts().ignored, 1u);
}

TEST_F(arp, Rfc1122FullEntryQueueKeepsTheLatestPacket) {
  make({.queue_per_entry = 2});
  resolve(ip_a, 0, 0);
  resolve(ip_a, 1, 0);
  const outcome r = resolve(ip_a, 2, 0);
  EXPECT_EQ(r.action, arp_resolve::queued);
  EXPECT_EQ(r.drop, (packets{p(0)}));
  EXPECT_EQ(cache().counts().drop_queue_entry, 1u);
  EXPECT_EQ(on_arp(ip_a, mac_1, true, 0), (packets{p(1), p(2)}));
}

TEST_F(arp, FullPendingPoolRefusesANewAddressWithoutARequest) {
  fill_a_pool_of_two();
  const outcome r = resolve(ip_b, 2, 0);
  EXPECT_EQ(r.action, arp_resolve::dropped_queue_full);
  EXPECT_TRUE(r.drop.empty());
  EXPECT_EQ(cache().size(), 1u);
  EXPECT_EQ(cache().counts().requests, 1u);
  EXPECT_EQ(cache().counts().drop_queue_total, 1u);
}

TEST_F(arp, FullPendingPoolStillKeepsTheLatestPacketOfAWaitingAddress) {
  fill_a_pool_of_two();
  const outcome r = resolve(ip_a, 2, 0);
  EXPECT_EQ(r.action, arp_resolve::queued);
  EXPECT_EQ(r.drop, (packets{p(0)}));
  EXPECT_EQ(cache().counts().drop_queue_total, 1u);
  EXPECT_EQ(cache().pending(), 2u);
}

TEST_F(arp, Rfc1122RepeatsTheRequestOncePerSecondThenGivesUpAfterThree) {
  resolve(ip_a, 0, 0);
  resolve(ip_a, 1, 0);
  std::vector<std::uint32_t> requests;
  EXPECT_EQ(cache().next_deadline(), 1 * sec);
  EXPECT_TRUE(expire_drops(1 * sec - 1, &requests).empty());
  EXPECT_TRUE(requests.empty());
  EXPECT_TRUE(expire_drops(1 * sec, &requests).empty());
  EXPECT_EQ(requests, std::vector<std::uint32_t>{ip_a});
  EXPECT_EQ(cache().next_deadline(), 2 * sec);
  EXPECT_TRUE(expire_drops(2 * sec, &requests).empty());
  EXPECT_EQ(requests, std::vector<std::uint32_t>{ip_a});
  EXPECT_EQ(cache().counts().requests, 3u);
  // The third request had its second: no answer, the packets are dropped.
  EXPECT_EQ(expire_drops(3 * sec, &requests), (packets{p(0), p(1)}));
  EXPECT_TRUE(requests.empty());
  EXPECT_EQ(cache().size(), 0u);
  EXPECT_EQ(cache().counts().failed, 1u);
  EXPECT_EQ(cache().counts().drop_failed, 2u);
  EXPECT_EQ(cache().next_deadline(), arp_cache::no_deadline);
}

TEST_F(arp, Rfc1122RepeatedRequestsAreASecondApartEvenWhenExpireRunsLate) {
  resolve(ip_a, 0, 0);
  std::vector<std::uint32_t> requests;
  expire_drops(1500 * ms, &requests);
  EXPECT_EQ(requests.size(), 1u);
  EXPECT_EQ(cache().next_deadline(), 2500 * ms);
  expire_drops(2499 * ms, &requests);
  EXPECT_TRUE(requests.empty());
}

TEST_F(arp, FailedAddressMayBeAskedForAgainAtOnce) {
  resolve(ip_a, 0, 0);
  for (std::uint64_t t = 1; t <= 3; ++t) expire_drops(t * sec);
  EXPECT_EQ(resolve(ip_a, 1, 3 * sec).action, arp_resolve::send_request);
}

TEST_F(arp, Rfc1122AnswerExpiresAfterSixtySeconds) {
  on_arp(ip_a, mac_1, true, 0);
  EXPECT_EQ(cache().next_deadline(), 60 * sec);
  EXPECT_EQ(cache().lookup(ip_a, 60 * sec - 1), mac_1);
  EXPECT_FALSE(cache().lookup(ip_a, 60 * sec));
  expire_drops(60 * sec);
  EXPECT_EQ(cache().size(), 0u);
  EXPECT_EQ(cache().counts().expired, 1u);
}

TEST_F(arp, Rfc1122FreshArpRestartsTheTimeout) {
  on_arp(ip_a, mac_1, true, 0);
  on_arp(ip_a, mac_1, false, 30 * sec);
  expire_drops(60 * sec);  // early: nothing is due
  EXPECT_EQ(cache().lookup(ip_a, 89 * sec), mac_1);
  EXPECT_EQ(cache().next_deadline(), 90 * sec);
}

TEST_F(arp, StaleAnswerIsResolvedAgainBeforeExpireRuns) {
  on_arp(ip_a, mac_1, true, 0);
  EXPECT_EQ(resolve(ip_a, 0, 61 * sec).action, arp_resolve::send_request);
  EXPECT_EQ(on_arp(ip_a, mac_2, true, 61 * sec + 1), (packets{p(0)}));
}

TEST_F(arp, FullTableEvictsTheOldestResolvedEntry) {
  make({.capacity = 3});
  on_arp(ip_a, mac_1, true, 1 * sec);
  on_arp(ip_b, mac_1, true, 2 * sec);
  on_arp(ip_c, mac_1, true, 3 * sec);
  on_arp(ip_a, mac_2, false, 4 * sec);  // confirmed again: now the youngest
  EXPECT_EQ(resolve(ip_d, 0, 5 * sec).action, arp_resolve::send_request);
  EXPECT_FALSE(cache().lookup(ip_b, 5 * sec));
  EXPECT_TRUE(cache().lookup(ip_a, 5 * sec));
  EXPECT_TRUE(cache().lookup(ip_c, 5 * sec));
  EXPECT_EQ(cache().counts().evicted, 1u);
}

TEST_F(arp, EvictionPrefersAResolvedEntryToAnOlderPendingOne) {
  make({.capacity = 2});
  resolve(ip_a, 0, 0);
  on_arp(ip_b, mac_1, true, 1 * sec);
  const outcome r = resolve(ip_c, 1, 2 * sec);
  EXPECT_TRUE(r.drop.empty());
  EXPECT_FALSE(cache().lookup(ip_b, 2 * sec));
  EXPECT_EQ(on_arp(ip_a, mac_1, true, 2 * sec), (packets{p(0)}));
}

TEST_F(arp, TableOfPendingEntriesEvictsTheOldestAndDropsItsPackets) {
  make({.capacity = 2});
  resolve(ip_a, 0, 0);
  resolve(ip_a, 1, 0);
  resolve(ip_b, 2, 1 * sec);
  const outcome r = resolve(ip_c, 3, 2 * sec);
  EXPECT_EQ(r.action, arp_resolve::send_request);
  EXPECT_EQ(r.drop, (packets{p(0), p(1)}));
  EXPECT_EQ(cache().counts().drop_evicted, 2u);
  EXPECT_EQ(cache().counts().evicted, 1u);
}

TEST_F(arp, UnaskedAnswerDoesNotPushOutAPendingEntry) {
  make({.capacity = 1});
  resolve(ip_a, 0, 0);
  on_arp(ip_b, mac_1, true, 1 * ms);
  EXPECT_FALSE(cache().lookup(ip_b, 1 * ms));
  EXPECT_EQ(cache().counts().table_full, 1u);
  EXPECT_EQ(cache().pending(), 1u);
}

TEST_F(arp, ClearHandsBackEveryWaitingPacket) {
  resolve(ip_a, 0, 0);
  resolve(ip_b, 1, 0);
  on_arp(ip_c, mac_1, true, 0);
  const packets back = returned(cache().clear());
  EXPECT_EQ(back.size(), 2u);
  EXPECT_EQ(cache().size(), 0u);
  EXPECT_EQ(cache().counts().drop_cleared, 2u);
  EXPECT_EQ(cache().next_deadline(), arp_cache::no_deadline);
}

}  // namespace
}  // namespace affine::stack
