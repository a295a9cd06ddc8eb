// The IPv6 neighbor cache at virtual time: the transitions of RFC 4861
// 7.3.3 and Appendix C, the rows of 7.2.5's advertisement table, 7.2.3's
// entries from solicitations, and the bounds. Every packet handed to the
// cache is checked back exactly once (teardown), so a lost or doubled
// packet fails.

#include <gtest/gtest.h>

#include <array>
#include <map>
#include <vector>

#include "stack/ip/neighbor_cache.hh"

namespace affine::stack {
namespace {

constexpr std::uint64_t sec = 1'000'000'000;

constexpr ipv6_bytes addr(std::uint8_t last) { return {0xfe, 0x80, 0, 0, 0, 0, 0, 0, 2, 0, 0, 0, 0, 0, 0, last}; }
const ipv6_bytes a = addr(1), b = addr(2), c = addr(3);
constexpr mac_address mac_1{0x02, 0, 0, 0, 0, 1};
constexpr mac_address mac_2{0x02, 0, 0, 0, 0, 2};

using packets = std::vector<rte_mbuf*>;

class neighbors : public ::testing::Test {
 protected:
  void make(const neighbor_config& config) { cache_.emplace(config); }
  neighbor_cache& cache() {
    if (!cache_) cache_.emplace(neighbor_config{});
    return *cache_;
  }
  rte_mbuf* p(int i) { return reinterpret_cast<rte_mbuf*>(&handles_[std::size_t(i)]); }

  neighbor_resolution resolve(const ipv6_bytes& x, int i, std::uint64_t now) {
    const neighbor_resolution r = cache().resolve(x, p(i), now);
    if (r.action == neighbor_resolve::send_solicitation || r.action == neighbor_resolve::queued) ++held_[p(i)];
    (void)returned(r.drop);
    return r;
  }
  packets returned(std::span<rte_mbuf* const> list) {
    for (rte_mbuf* m : list) EXPECT_EQ(--held_[m], 0) << "a packet came back that the cache did not hold";
    return {list.begin(), list.end()};
  }
  neighbor_expiry expire(std::uint64_t now) {
    const neighbor_expiry e = cache().expire(now);
    (void)returned(e.drop);
    return e;
  }
  // A REACHABLE entry for `x` at `now`: solicited, answered.
  void reachable(const ipv6_bytes& x, std::uint64_t now) {
    ASSERT_EQ(resolve(x, 9, now).action, neighbor_resolve::send_solicitation);
    const auto u = cache().on_advertisement(x, mac_1, false, true, true, now);
    EXPECT_EQ(returned(u.send), packets{p(9)});
    ASSERT_EQ(cache().state(x), neighbor_state::reachable);
  }

  void TearDown() override {
    if (cache_) (void)returned(cache_->clear());
    for (auto& [m, n] : held_) EXPECT_EQ(n, 0) << "a packet the cache took never came back";
  }

  std::optional<neighbor_cache> cache_;
  std::array<int, 16> handles_{};
  std::map<rte_mbuf*, int> held_;
};

// 7.2.2: the first packet creates an INCOMPLETE entry and a multicast
// solicitation; solicitations repeat every RetransTimer, MAX_MULTICAST_SOLICIT
// in all, then the entry and its packets go.
TEST_F(neighbors, IncompleteSolicitsThreeTimesThenDropsItsPackets) {
  EXPECT_EQ(resolve(a, 0, 0).action, neighbor_resolve::send_solicitation);
  EXPECT_EQ(resolve(a, 1, 0).action, neighbor_resolve::queued);
  EXPECT_EQ(cache().state(a), neighbor_state::incomplete);
  EXPECT_EQ(cache().next_deadline(), 1 * sec);
  auto e = expire(1 * sec);
  ASSERT_EQ(e.multicast.size(), 1u);
  EXPECT_EQ(e.multicast[0], a);
  e = expire(2 * sec);
  EXPECT_EQ(e.multicast.size(), 1u);
  const neighbor_expiry last = cache().expire(3 * sec);
  EXPECT_TRUE(last.multicast.empty());
  EXPECT_EQ(returned(last.drop), (packets{p(0), p(1)}));
  EXPECT_FALSE(cache().state(a).has_value());
  EXPECT_EQ(cache().counts().solicitations, 3u);
  EXPECT_EQ(cache().counts().failed, 1u);
  EXPECT_EQ(cache().counts().drop_failed, 2u);
}

// 7.2.5, INCOMPLETE: with a link-layer address the entry is REACHABLE when
// solicited, STALE otherwise, and what waited goes out; without one the
// advertisement is discarded.
TEST_F(neighbors, AnAdvertisementCompletesAnIncompleteEntry) {
  (void)resolve(a, 0, 0);
  EXPECT_TRUE(cache().on_advertisement(a, std::nullopt, false, true, true, 0).send.empty());
  EXPECT_EQ(cache().state(a), neighbor_state::incomplete);
  const auto u = cache().on_advertisement(a, mac_1, false, true, false, 0);
  EXPECT_EQ(returned(u.send), packets{p(0)});
  EXPECT_EQ(u.mac, mac_1);
  EXPECT_EQ(cache().state(a), neighbor_state::reachable);
  (void)resolve(b, 1, 0);
  (void)returned(cache().on_advertisement(b, mac_2, false, false, false, 0).send);
  EXPECT_EQ(cache().state(b), neighbor_state::stale);
  // No entry: discarded, none created.
  (void)cache().on_advertisement(c, mac_1, false, true, true, 0);
  EXPECT_FALSE(cache().state(c).has_value());
}

// 7.2.5, not INCOMPLETE, Override clear and a different address: REACHABLE
// goes STALE and the address is kept; other states ignore it.
TEST_F(neighbors, ANonOverrideWithAnotherAddressOnlyMakesReachableStale) {
  reachable(a, 0);
  (void)cache().on_advertisement(a, mac_2, false, true, false, 1);
  EXPECT_EQ(cache().state(a), neighbor_state::stale);
  EXPECT_EQ(resolve(a, 0, 2).mac, mac_1);  // the old address is still used
  EXPECT_EQ(cache().state(a), neighbor_state::delay);
  (void)cache().on_advertisement(a, mac_2, false, false, false, 3);
  EXPECT_EQ(cache().state(a), neighbor_state::delay);
}

// 7.2.5: Override set (or the same address): the address is taken, and
// the entry is REACHABLE when solicited, STALE when the address changed
// unsolicited, else as it was.
TEST_F(neighbors, AnOverrideOrTheSameAddressUpdatesTheEntry) {
  reachable(a, 0);
  (void)cache().on_advertisement(a, mac_2, false, false, true, 1);  // unsolicited override, new address
  EXPECT_EQ(cache().state(a), neighbor_state::stale);
  EXPECT_EQ(resolve(a, 0, 2).mac, mac_2);
  (void)cache().on_advertisement(a, mac_2, false, false, false, 3);  // unsolicited, same address: no change
  EXPECT_EQ(cache().state(a), neighbor_state::delay);
  (void)cache().on_advertisement(a, std::nullopt, false, true, false, 4);  // solicited, no address: confirmed
  EXPECT_EQ(cache().state(a), neighbor_state::reachable);
}

// 7.2.5 last paragraph: IsRouter going from true to false is reported.
TEST_F(neighbors, ARouterThatSaysItIsNoneIsReported) {
  (void)resolve(a, 0, 0);
  (void)returned(cache().on_advertisement(a, mac_1, true, true, true, 0).send);
  EXPECT_FALSE(cache().on_advertisement(a, mac_1, true, true, true, 1).router_cleared);
  EXPECT_TRUE(cache().on_advertisement(a, mac_1, false, true, true, 2).router_cleared);
  EXPECT_FALSE(cache().on_advertisement(a, mac_1, false, true, true, 3).router_cleared);
}

// 7.3.3: REACHABLE lasts ReachableTime, then STALE; the first packet to a
// STALE entry starts DELAY; DELAY_FIRST_PROBE_TIME later PROBE sends
// unicast solicitations, MAX_UNICAST_SOLICIT, then the entry is deleted.
TEST_F(neighbors, NudGoesStaleDelayProbeAndGivesUp) {
  reachable(a, 0);
  const std::uint64_t t = cache().reachable_ns();
  EXPECT_GE(t, 15 * sec);  // 6.3.2: 0.5 to 1.5 times BaseReachableTime (30 s)
  EXPECT_LE(t, 45 * sec);
  (void)expire(t);
  EXPECT_EQ(cache().state(a), neighbor_state::stale);
  EXPECT_EQ(resolve(a, 0, t + 1).action, neighbor_resolve::known);
  EXPECT_EQ(cache().state(a), neighbor_state::delay);
  EXPECT_TRUE(expire(t + 5 * sec).unicast.empty());
  auto e = expire(t + 1 + 5 * sec);
  ASSERT_EQ(e.unicast.size(), 1u);
  EXPECT_EQ(e.unicast[0], (std::pair{a, mac_1}));
  EXPECT_EQ(cache().state(a), neighbor_state::probe);
  EXPECT_EQ(expire(t + 1 + 6 * sec).unicast.size(), 1u);
  EXPECT_EQ(expire(t + 1 + 7 * sec).unicast.size(), 1u);
  e = expire(t + 1 + 8 * sec);
  EXPECT_TRUE(e.unicast.empty());
  EXPECT_FALSE(cache().state(a).has_value());
  EXPECT_EQ(cache().counts().probes, 3u);
  EXPECT_EQ(cache().counts().unreachable, 1u);
}

// 7.3.3: a solicited advertisement while probing, or an upper layer's
// confirmation (7.3.1), makes the entry REACHABLE again.
TEST_F(neighbors, AnAnswerOrAConfirmationEndsTheProbing) {
  reachable(a, 0);
  cache().confirm(a, 10 * sec);
  (void)expire(10 * sec + cache().reachable_ns() - 1);  // the confirmation restarted ReachableTime
  EXPECT_EQ(cache().state(a), neighbor_state::reachable);
  (void)cache().on_advertisement(a, mac_1, false, false, true, 11 * sec);  // stays: same address, unsolicited
  const std::uint64_t t = 11 * sec + cache().reachable_ns();
  (void)expire(t);
  (void)resolve(a, 0, t);
  (void)expire(t + 5 * sec);
  EXPECT_EQ(cache().state(a), neighbor_state::probe);
  (void)cache().on_advertisement(a, mac_1, false, true, false, t + 6 * sec);
  EXPECT_EQ(cache().state(a), neighbor_state::reachable);
}

// 7.2.3: a solicitation with a source link-layer address makes a STALE
// entry, completes an INCOMPLETE one (its packets go out) and updates a
// changed address.
TEST_F(neighbors, SolicitationsTeachTheSendersAddress) {
  EXPECT_TRUE(cache().on_solicitation_or_other(a, mac_1, 0).empty());
  EXPECT_EQ(cache().state(a), neighbor_state::stale);
  (void)resolve(b, 0, 0);
  EXPECT_EQ(returned(cache().on_solicitation_or_other(b, mac_2, 0)), packets{p(0)});
  EXPECT_EQ(cache().state(b), neighbor_state::stale);
  reachable(c, 0);
  (void)cache().on_solicitation_or_other(c, mac_1, 1);  // same address: still REACHABLE
  EXPECT_EQ(cache().state(c), neighbor_state::reachable);
  (void)cache().on_solicitation_or_other(c, mac_2, 2);
  EXPECT_EQ(cache().state(c), neighbor_state::stale);
  EXPECT_EQ(resolve(c, 1, 3).mac, mac_2);
  // STALE and unused: forgotten after gc_stale_ns.
  (void)expire(61 * sec);
  EXPECT_FALSE(cache().state(a).has_value());
  EXPECT_EQ(cache().counts().forgotten, 2u);  // a and b; c went DELAY and PROBE meanwhile
}

TEST_F(neighbors, PendingPacketsAreBoundedPerEntryAndInAll) {
  make({.queue_per_entry = 2, .queue_total = 3});
  (void)resolve(a, 0, 0);
  (void)resolve(a, 1, 0);
  const auto r = resolve(a, 2, 0);  // the oldest of a gives way
  EXPECT_EQ(r.action, neighbor_resolve::queued);
  EXPECT_EQ(cache().counts().drop_queue_entry, 1u);
  (void)resolve(b, 3, 0);  // the last place
  const neighbor_resolution full = cache().resolve(c, p(4), 0);
  EXPECT_EQ(full.action, neighbor_resolve::dropped_queue_full);  // not taken
  EXPECT_EQ(cache().counts().drop_queue_total, 1u);
  EXPECT_EQ(cache().pending(), 3u);
}

TEST_F(neighbors, AFullTableEvictsStaleThenReachableEntriesBeforeAResolution) {
  make({.capacity = 3});
  const ipv6_bytes d = addr(4);
  reachable(d, 0);                                      // the oldest, but known reachable
  (void)resolve(a, 0, 0);                               // INCOMPLETE with a packet
  (void)cache().on_solicitation_or_other(b, mac_2, 1);  // STALE
  (void)resolve(c, 1, 2);                               // pushes out b, not d nor a
  EXPECT_FALSE(cache().state(b).has_value());
  EXPECT_EQ(cache().state(d), neighbor_state::reachable);
  EXPECT_EQ(cache().state(a), neighbor_state::incomplete);
  cache().confirm(c, 2);  // c is INCOMPLETE: a confirmation does not complete it
  EXPECT_EQ(cache().state(c), neighbor_state::incomplete);
  (void)returned(cache().on_advertisement(c, mac_1, false, true, true, 2).send);
  (void)returned(cache().on_advertisement(d, mac_1, false, false, true, 0).send);
  cache().confirm(d, 0);  // keeps d the oldest REACHABLE one
  EXPECT_EQ(cache().counts().evicted, 1u);
  // With no STALE entry the oldest REACHABLE one goes, never the
  // resolution with packets waiting.
  (void)cache().on_solicitation_or_other(b, mac_2, 3);
  EXPECT_FALSE(cache().state(d).has_value());
  EXPECT_EQ(cache().state(a), neighbor_state::incomplete);
  EXPECT_EQ(cache().counts().evicted, 2u);
}

// 7.2.3 creates entries for strangers; they never push out a resolution
// that packets wait for. A packet may, the oldest one's packets dropped.
TEST_F(neighbors, AStrangersSolicitationNeverPushesOutAResolution) {
  make({.capacity = 1});
  (void)resolve(a, 0, 0);
  (void)cache().on_solicitation_or_other(b, mac_2, 1);
  EXPECT_FALSE(cache().state(b).has_value());
  EXPECT_EQ(cache().counts().table_full, 1u);
  (void)resolve(b, 1, 2);
  EXPECT_FALSE(cache().state(a).has_value());
  EXPECT_EQ(cache().counts().drop_evicted, 1u);
}

TEST_F(neighbors, ARouterAdvertisementsTimersApply) {
  make({.seed = 7});
  cache().set_timers(10 * sec, 2 * sec);
  EXPECT_GE(cache().reachable_ns(), 5 * sec);
  EXPECT_LE(cache().reachable_ns(), 15 * sec);
  (void)resolve(a, 0, 0);
  EXPECT_EQ(cache().next_deadline(), 2 * sec);  // RetransTimer from the advertisement
}

}  // namespace
}  // namespace affine::stack
