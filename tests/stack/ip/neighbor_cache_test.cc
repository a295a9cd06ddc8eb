// The IPv6 neighbor cache at virtual time, read against RFC 4861: a test a
// transition of 7.3.3 (Appendix C), a row of 7.2.5's advertisement table,
// 7.2.3's entries from solicitations, ReachableTime (6.3.2, 6.3.4), and the
// bounds. Every packet handed to the cache is checked back exactly once
// (teardown), so a lost or doubled packet fails.

#include <gtest/gtest.h>

#include <array>
#include <map>
#include <ostream>
#include <set>
#include <utility>
#include <vector>

#include "base/xoshiro.hh"
#include "stack/ip/neighbor_cache.hh"

namespace affine::stack {
namespace {

constexpr std::uint64_t ms = 1'000'000;
constexpr std::uint64_t sec = 1'000 * ms;
constexpr std::uint64_t t0 = 100 * sec;  // late enough to have been DELAY for DELAY_FIRST_PROBE_TIME

// Link-local neighbors: one prefix, interface identifiers that differ in
// their last byte.
constexpr ipv6_bytes addr(std::uint8_t last) { return {0xfe, 0x80, 0, 0, 0, 0, 0, 0, 2, 0, 0, 0, 0, 0, 0, last}; }
const ipv6_bytes a = addr(1), b = addr(2), c = addr(3), d = addr(4);
constexpr mac_address mac_1{0x02, 0, 0, 0, 0, 1};
constexpr mac_address mac_2{0x02, 0, 0, 0, 0, 2};

using packets = std::vector<rte_mbuf*>;
using addresses = std::vector<ipv6_bytes>;

// A Neighbor Advertisement as 7.2.5 reads it: the Target Link-Layer
// Address option and the R, S and O flags.
struct advert {
  std::optional<mac_address> lladdr = std::nullopt;
  bool router = false;
  bool solicited = false;
  bool override = false;
};

class neighbors : public ::testing::Test {
 protected:
  void make(const neighbor_config& config) { cache_.emplace(config); }
  neighbor_cache& cache() {
    if (!cache_) cache_.emplace();
    return *cache_;
  }

  // Packets are opaque handles: distinct addresses nobody dereferences.
  rte_mbuf* p(int i) { return reinterpret_cast<rte_mbuf*>(&handles_[std::size_t(i)]); }

  // The cache's calls, keeping the books: a packet taken is out with the
  // cache until a list hands it back.
  struct outcome {
    neighbor_resolve action;
    std::optional<mac_address> mac;
    packets drop;
  };
  outcome resolve(const ipv6_bytes& x, int i, std::uint64_t now) {
    const neighbor_resolution r = cache().resolve(x, p(i), now);
    if (r.action == neighbor_resolve::send_solicitation || r.action == neighbor_resolve::queued) ++held_[p(i)];
    return {r.action, r.mac, returned(r.drop)};
  }
  struct update {
    packets send;
    std::optional<mac_address> mac;
    bool router_cleared;
  };
  update advertise(const ipv6_bytes& x, const advert& na, std::uint64_t now) {
    const neighbor_update u = cache().on_advertisement(x, na.lladdr, na.router, na.solicited, na.override, now);
    return {returned(u.send), u.mac, u.router_cleared};
  }
  packets solicited_by(const ipv6_bytes& x, const mac_address& mac, std::uint64_t now, bool from_router = false) {
    return returned(cache().on_solicitation_or_other(x, mac, now, from_router));
  }
  struct expiry {
    packets drop;
    addresses multicast;
    std::vector<std::pair<ipv6_bytes, mac_address>> unicast;
    addresses failed;
  };
  expiry expire(std::uint64_t now) {
    const neighbor_expiry e = cache().expire(now);
    return {returned(e.drop), {e.multicast.begin(), e.multicast.end()}, {e.unicast.begin(), e.unicast.end()},
            {e.failed.begin(), e.failed.end()}};
  }
  packets returned(std::span<rte_mbuf* const> list) {
    for (rte_mbuf* m : list) EXPECT_EQ(--held_[m], 0) << "a packet came back that the cache did not hold";
    return {list.begin(), list.end()};
  }

  std::optional<neighbor_state> state(const ipv6_bytes& x) {
    const auto e = cache().find(x);
    if (!e) return std::nullopt;
    return e->state;
  }
  std::optional<mac_address> mac_of(const ipv6_bytes& x) {
    const auto e = cache().find(x);
    if (!e) return std::nullopt;
    return e->mac;
  }

  // Brings `x` into `st` at `now`, its cached address mac_1 (INCOMPLETE:
  // the lowest packet not held waits). PROBE was DELAY since now -
  // DELAY_FIRST_PROBE_TIME.
  void enter(const ipv6_bytes& x, neighbor_state st, std::uint64_t now) {
    const int i = unheld();
    switch (st) {
      case neighbor_state::incomplete: ASSERT_EQ(resolve(x, i, now).action, neighbor_resolve::send_solicitation); break;
      case neighbor_state::reachable:
        ASSERT_EQ(resolve(x, i, now).action, neighbor_resolve::send_solicitation);
        ASSERT_EQ(advertise(x, {.lladdr = mac_1, .solicited = true}, now).send, packets{p(i)});
        break;
      case neighbor_state::stale: ASSERT_TRUE(solicited_by(x, mac_1, now).empty()); break;
      case neighbor_state::delay:
        enter(x, neighbor_state::stale, now);
        ASSERT_EQ(resolve(x, 63, now).action, neighbor_resolve::known);
        break;
      case neighbor_state::probe:
        enter(x, neighbor_state::delay, now - 5 * sec);
        ASSERT_EQ(expire(now).unicast.size(), 1u);
        break;
    }
    ASSERT_EQ(state(x), st);
  }

  // A packet the cache does not hold now.
  int unheld() {
    int i = 0;
    while (held_[p(i)] != 0) ++i;
    return i;
  }

  void TearDown() override {
    (void)returned(cache().clear());
    EXPECT_EQ(cache().pending(), 0u);
    for (const auto& [m, n] : held_) EXPECT_EQ(n, 0) << "a packet the cache took never came back";
  }

 private:
  std::array<char, 64> handles_{};
  std::map<rte_mbuf*, int> held_;
  std::optional<neighbor_cache> cache_;
};

// --- 7.2.2: address resolution ---------------------------------------------

TEST_F(neighbors, FirstPacketCreatesAnIncompleteEntryAndASolicitation_RFC4861_7_2_2) {
  const outcome r = resolve(a, 0, t0);
  EXPECT_EQ(r.action, neighbor_resolve::send_solicitation);
  EXPECT_FALSE(r.mac);
  EXPECT_EQ(state(a), neighbor_state::incomplete);
  EXPECT_EQ(cache().pending(), 1u);
  EXPECT_EQ(cache().counts().solicitations, 1u);
  EXPECT_EQ(cache().next_deadline(), t0 + 1 * sec);  // RetransTimer
}

TEST_F(neighbors, IncompleteQueuesFurtherPacketsWithoutSoliciting_RFC4861_7_2_2) {
  enter(a, neighbor_state::incomplete, t0);
  EXPECT_EQ(resolve(a, 1, t0 + 10 * ms).action, neighbor_resolve::queued);
  EXPECT_EQ(cache().pending(), 2u);
  EXPECT_EQ(cache().counts().solicitations, 1u);
}

TEST_F(neighbors, IncompleteSolicitsAgainEveryRetransTimer_RFC4861_7_2_2) {
  enter(a, neighbor_state::incomplete, t0);
  EXPECT_TRUE(expire(t0 + 1 * sec - 1).multicast.empty());
  EXPECT_EQ(expire(t0 + 1500 * ms).multicast, addresses{a});  // late: the next one a RetransTimer later
  EXPECT_EQ(cache().next_deadline(), t0 + 2500 * ms);
  EXPECT_TRUE(expire(t0 + 2499 * ms).multicast.empty());
  EXPECT_EQ(cache().counts().solicitations, 2u);
}

TEST_F(neighbors, IncompleteFailsAfterMaxMulticastSolicitAndDropsItsPackets_RFC4861_7_2_2) {
  enter(a, neighbor_state::incomplete, t0);
  (void)resolve(a, 1, t0);
  EXPECT_EQ(expire(t0 + 1 * sec).multicast, addresses{a});
  EXPECT_EQ(expire(t0 + 2 * sec).multicast, addresses{a});
  const expiry e = expire(t0 + 3 * sec);  // the third solicitation had its RetransTimer
  EXPECT_TRUE(e.multicast.empty());
  EXPECT_EQ(e.drop, (packets{p(0), p(1)}));
  EXPECT_EQ(e.failed, addresses{a});
  EXPECT_FALSE(state(a));
  EXPECT_EQ(cache().counts().solicitations, 3u);
  EXPECT_EQ(cache().counts().failed, 1u);
  EXPECT_EQ(cache().counts().drop_failed, 2u);
  EXPECT_EQ(cache().next_deadline(), neighbor_cache::no_deadline);
  // A later packet starts over.
  EXPECT_EQ(resolve(a, 2, t0 + 3 * sec).action, neighbor_resolve::send_solicitation);
}

// --- 7.2.3: solicitations (and RAs, Redirects) carrying an address ---------

TEST_F(neighbors, SolicitationFromAnUnknownSenderCreatesAStaleEntry_RFC4861_7_2_3) {
  EXPECT_TRUE(solicited_by(a, mac_1, t0).empty());
  EXPECT_EQ(state(a), neighbor_state::stale);
  EXPECT_EQ(mac_of(a), mac_1);
  EXPECT_FALSE(cache().find(a)->router);
}

TEST_F(neighbors, SolicitationCompletesAnIncompleteEntryAndItsPacketsStartDelay_RFC4861_7_2_3) {
  enter(a, neighbor_state::incomplete, t0);
  (void)resolve(a, 1, t0);
  EXPECT_EQ(solicited_by(a, mac_2, t0 + 1 * ms), (packets{p(0), p(1)}));
  // STALE (7.2.3), and the packets just sent to it make it DELAY (7.3.3).
  EXPECT_EQ(state(a), neighbor_state::delay);
  EXPECT_EQ(mac_of(a), mac_2);
  EXPECT_EQ(cache().counts().resolved, 1u);
  EXPECT_TRUE(expire(t0 + 1 * ms + 5 * sec - 1).unicast.empty());  // DELAY_FIRST_PROBE_TIME
  EXPECT_EQ(expire(t0 + 1 * ms + 5 * sec).unicast.size(), 1u);
}

TEST_F(neighbors, SolicitationWithTheCachedAddressChangesNothing_RFC4861_7_2_3) {
  enter(a, neighbor_state::reachable, t0);
  EXPECT_TRUE(solicited_by(a, mac_1, t0 + 1 * sec).empty());
  EXPECT_EQ(state(a), neighbor_state::reachable);
}

TEST_F(neighbors, SolicitationWithAnotherAddressMakesTheEntryStale_RFC4861_7_2_3) {
  std::uint64_t at = t0;
  for (const neighbor_state st : {neighbor_state::reachable, neighbor_state::delay, neighbor_state::probe}) {
    SCOPED_TRACE(int(st));
    at += 100 * sec;
    enter(a, st, at);
    EXPECT_TRUE(solicited_by(a, mac_2, at + 1 * ms).empty());
    EXPECT_EQ(state(a), neighbor_state::stale);
    EXPECT_EQ(mac_of(a), mac_2);
    (void)returned(cache().clear());
  }
}

TEST_F(neighbors, RouterAdvertisementOrRedirectMarksTheSenderARouter_RFC4861_6_3_4) {
  EXPECT_TRUE(solicited_by(a, mac_1, t0, true).empty());  // a new entry from an RA
  EXPECT_TRUE(cache().find(a)->router);
  enter(b, neighbor_state::reachable, t0);
  (void)solicited_by(b, mac_1, t0, true);  // an existing one (8.3: a Redirect's target)
  EXPECT_TRUE(cache().find(b)->router);
  EXPECT_EQ(state(b), neighbor_state::reachable);
  (void)solicited_by(b, mac_1, t0);  // a solicitation says nothing of IsRouter
  EXPECT_TRUE(cache().find(b)->router);
}

// --- 7.2.5: advertisements, Appendix C's table row by row -----------------

struct row {
  const char* name;
  neighbor_state from;  // cached address mac_1 (none while INCOMPLETE)
  advert na;
  neighbor_state to;
  mac_address mac;  // the cached address afterwards
};
void PrintTo(const row& r, std::ostream* os) { *os << r.name; }

using enum neighbor_state;
const row advertisement_rows[] = {
    // INCOMPLETE: no address, discarded; else REACHABLE if solicited, else
    // STALE, and the packets sent to it make it DELAY (7.3.3).
    {"Incomplete_NoAddress_Discarded", incomplete, {.solicited = true, .override = true}, incomplete, {}},
    {"Incomplete_Solicited_Reachable", incomplete, {.lladdr = mac_2, .solicited = true}, reachable, mac_2},
    {"Incomplete_Unsolicited_StaleThenDelay", incomplete, {.lladdr = mac_2, .override = true}, delay, mac_2},
    // Override clear, another address: (a) REACHABLE -> STALE, address
    // kept; (b) otherwise ignored.
    {"Reachable_OverrideClearOtherAddressSolicited_Stale", reachable, {.lladdr = mac_2, .solicited = true}, stale,
     mac_1},
    {"Reachable_OverrideClearOtherAddressUnsolicited_Stale", reachable, {.lladdr = mac_2}, stale, mac_1},
    {"Stale_OverrideClearOtherAddressSolicited_Ignored", stale, {.lladdr = mac_2, .solicited = true}, stale, mac_1},
    {"Stale_OverrideClearOtherAddressUnsolicited_Ignored", stale, {.lladdr = mac_2}, stale, mac_1},
    {"Delay_OverrideClearOtherAddressSolicited_Ignored", delay, {.lladdr = mac_2, .solicited = true}, delay, mac_1},
    {"Delay_OverrideClearOtherAddressUnsolicited_Ignored", delay, {.lladdr = mac_2}, delay, mac_1},
    {"Probe_OverrideClearOtherAddressSolicited_Ignored", probe, {.lladdr = mac_2, .solicited = true}, probe, mac_1},
    {"Probe_OverrideClearOtherAddressUnsolicited_Ignored", probe, {.lladdr = mac_2}, probe, mac_1},
    // Override set, another address: taken; REACHABLE if solicited, else STALE.
    {"Reachable_OverrideOtherAddressSolicited_Reachable", reachable,
     {.lladdr = mac_2, .solicited = true, .override = true}, reachable, mac_2},
    {"Reachable_OverrideOtherAddressUnsolicited_Stale", reachable, {.lladdr = mac_2, .override = true}, stale, mac_2},
    {"Stale_OverrideOtherAddressSolicited_Reachable", stale, {.lladdr = mac_2, .solicited = true, .override = true},
     reachable, mac_2},
    {"Stale_OverrideOtherAddressUnsolicited_Stale", stale, {.lladdr = mac_2, .override = true}, stale, mac_2},
    {"Delay_OverrideOtherAddressSolicited_Reachable", delay, {.lladdr = mac_2, .solicited = true, .override = true},
     reachable, mac_2},
    {"Delay_OverrideOtherAddressUnsolicited_Stale", delay, {.lladdr = mac_2, .override = true}, stale, mac_2},
    {"Probe_OverrideOtherAddressSolicited_Reachable", probe, {.lladdr = mac_2, .solicited = true, .override = true},
     reachable, mac_2},
    {"Probe_OverrideOtherAddressUnsolicited_Stale", probe, {.lladdr = mac_2, .override = true}, stale, mac_2},
    // The same address, or none, whatever Override says: REACHABLE if
    // solicited, else the state stays.
    {"Reachable_SameAddressSolicited_Reachable", reachable, {.lladdr = mac_1, .solicited = true}, reachable, mac_1},
    {"Reachable_SameAddressUnsolicited_Unchanged", reachable, {.lladdr = mac_1, .override = true}, reachable, mac_1},
    {"Reachable_NoAddressSolicited_Reachable", reachable, {.solicited = true}, reachable, mac_1},
    {"Reachable_NoAddressUnsolicited_Unchanged", reachable, {.override = true}, reachable, mac_1},
    {"Stale_SameAddressSolicited_Reachable", stale, {.lladdr = mac_1, .solicited = true}, reachable, mac_1},
    {"Stale_SameAddressUnsolicited_Unchanged", stale, {.lladdr = mac_1, .override = true}, stale, mac_1},
    {"Stale_NoAddressSolicited_Reachable", stale, {.solicited = true}, reachable, mac_1},
    {"Stale_NoAddressUnsolicited_Unchanged", stale, {}, stale, mac_1},
    {"Delay_SameAddressSolicited_Reachable", delay, {.lladdr = mac_1, .solicited = true}, reachable, mac_1},
    {"Delay_SameAddressUnsolicited_Unchanged", delay, {.lladdr = mac_1}, delay, mac_1},
    {"Delay_NoAddressSolicited_Reachable", delay, {.solicited = true, .override = true}, reachable, mac_1},
    {"Delay_NoAddressUnsolicited_Unchanged", delay, {.override = true}, delay, mac_1},
    {"Probe_SameAddressSolicited_Reachable", probe, {.lladdr = mac_1, .solicited = true}, reachable, mac_1},
    {"Probe_SameAddressUnsolicited_Unchanged", probe, {.lladdr = mac_1, .override = true}, probe, mac_1},
    {"Probe_NoAddressSolicited_Reachable", probe, {.solicited = true}, reachable, mac_1},
    {"Probe_NoAddressUnsolicited_Unchanged", probe, {}, probe, mac_1},
};

class advertisement_table : public neighbors, public ::testing::WithParamInterface<row> {};

TEST_P(advertisement_table, Applies) {
  const row& r = GetParam();
  enter(a, r.from, t0);
  const std::uint64_t now = t0 + 1 * ms;
  const std::uint64_t resolved = cache().counts().resolved;
  const update u = advertise(a, r.na, now);
  EXPECT_EQ(state(a), r.to);
  EXPECT_EQ(mac_of(a), r.mac);
  // Only an INCOMPLETE entry's packets wait, and they go once it is complete.
  const bool completed = r.from == incomplete && r.to != incomplete;
  EXPECT_EQ(u.send, completed ? packets{p(0)} : packets{});
  EXPECT_EQ(cache().counts().resolved - resolved, completed ? 1u : 0u);
  // A solicited advertisement starts ReachableTime again; an unsolicited
  // one leaves a REACHABLE entry's timer as it was.
  if (r.to == reachable) {
    (void)expire(now + cache().reachable_ns() - 1);
    EXPECT_EQ(state(a), r.na.solicited ? reachable : stale);
  }
}

INSTANTIATE_TEST_SUITE_P(RFC4861_7_2_5, advertisement_table, ::testing::ValuesIn(advertisement_rows),
                         [](const ::testing::TestParamInfo<row>& info) { return std::string(info.param.name); });

TEST_F(neighbors, AdvertisementWithoutAnEntryIsDiscarded_RFC4861_7_2_5) {
  const update u = advertise(a, {.lladdr = mac_1, .solicited = true, .override = true}, t0);
  EXPECT_FALSE(u.mac);
  EXPECT_FALSE(state(a));
  EXPECT_EQ(cache().size(), 0u);
  EXPECT_EQ(cache().counts().ignored, 1u);
}

TEST_F(neighbors, IsRouterFollowsTheRouterFlagAndItsLossIsReported_RFC4861_7_2_5) {
  enter(a, neighbor_state::incomplete, t0);
  EXPECT_EQ(advertise(a, {.lladdr = mac_1, .router = true, .solicited = true}, t0).send, packets{p(0)});
  EXPECT_TRUE(cache().find(a)->router);
  EXPECT_FALSE(advertise(a, {.lladdr = mac_1, .router = true}, t0 + 1 * ms).router_cleared);
  // An advertisement that may not update the entry leaves IsRouter too.
  EXPECT_FALSE(advertise(a, {.lladdr = mac_2}, t0 + 2 * ms).router_cleared);
  EXPECT_TRUE(cache().find(a)->router);
  // From true to false: the owner removes the router from its list.
  EXPECT_TRUE(advertise(a, {.lladdr = mac_1}, t0 + 3 * ms).router_cleared);
  EXPECT_FALSE(cache().find(a)->router);
  EXPECT_FALSE(advertise(a, {.lladdr = mac_1}, t0 + 4 * ms).router_cleared);
}

// --- 7.3.3: Neighbor Unreachability Detection -----------------------------

TEST_F(neighbors, PacketToAReachableEntryIsNotTaken_RFC4861_7_3_3) {
  enter(a, neighbor_state::reachable, t0);
  const outcome r = resolve(a, 1, t0 + 1 * sec);
  EXPECT_EQ(r.action, neighbor_resolve::known);
  EXPECT_EQ(r.mac, mac_1);
  EXPECT_EQ(state(a), neighbor_state::reachable);
  EXPECT_EQ(cache().pending(), 0u);
}

TEST_F(neighbors, ReachableGoesStaleAfterReachableTime_RFC4861_7_3_3) {
  enter(a, neighbor_state::reachable, t0);
  const std::uint64_t until = t0 + cache().reachable_ns();
  (void)expire(until - 1);
  EXPECT_EQ(state(a), neighbor_state::reachable);
  (void)expire(until);
  EXPECT_EQ(state(a), neighbor_state::stale);
  EXPECT_EQ(mac_of(a), mac_1);
}

TEST_F(neighbors, PacketToAStaleEntryIsSentAndStartsDelay_RFC4861_7_3_3) {
  enter(a, neighbor_state::stale, t0);
  const outcome r = resolve(a, 1, t0 + 1 * sec);
  EXPECT_EQ(r.action, neighbor_resolve::known);
  EXPECT_EQ(r.mac, mac_1);
  EXPECT_EQ(state(a), neighbor_state::delay);
  EXPECT_EQ(cache().next_deadline(), t0 + 6 * sec);  // DELAY_FIRST_PROBE_TIME
}

TEST_F(neighbors, PacketAfterReachableTimeStartsDelayBeforeExpireRuns_RFC4861_7_3_3) {
  enter(a, neighbor_state::reachable, t0);
  const std::uint64_t later = t0 + cache().reachable_ns();
  EXPECT_EQ(resolve(a, 1, later).mac, mac_1);
  EXPECT_EQ(state(a), neighbor_state::delay);
  EXPECT_EQ(expire(later + 5 * sec).unicast.size(), 1u);
}

TEST_F(neighbors, PacketToADelayOrProbeEntryChangesNothing_RFC4861_7_3_3) {
  enter(a, neighbor_state::delay, t0);
  EXPECT_EQ(resolve(a, 1, t0 + 4 * sec).mac, mac_1);  // the timer is not restarted
  EXPECT_EQ(state(a), neighbor_state::delay);
  (void)expire(t0 + 5 * sec);
  EXPECT_EQ(state(a), neighbor_state::probe);
  EXPECT_EQ(resolve(a, 2, t0 + 5 * sec + 500 * ms).mac, mac_1);
  EXPECT_EQ(state(a), neighbor_state::probe);
  EXPECT_EQ(cache().next_deadline(), t0 + 6 * sec);
}

TEST_F(neighbors, DelayBecomesProbeWithAUnicastSolicitation_RFC4861_7_3_3) {
  enter(a, neighbor_state::delay, t0);
  EXPECT_TRUE(expire(t0 + 5 * sec - 1).unicast.empty());
  const expiry e = expire(t0 + 5 * sec);
  EXPECT_EQ(e.unicast, (std::vector{std::pair{a, mac_1}}));  // to the cached address
  EXPECT_TRUE(e.multicast.empty());
  EXPECT_EQ(state(a), neighbor_state::probe);
  EXPECT_EQ(cache().counts().probes, 1u);
  EXPECT_EQ(cache().next_deadline(), t0 + 6 * sec);  // RetransTimer
}

TEST_F(neighbors, ProbeSolicitsAgainEveryRetransTimer_RFC4861_7_3_3) {
  enter(a, neighbor_state::probe, t0);
  EXPECT_TRUE(expire(t0 + 1 * sec - 1).unicast.empty());
  EXPECT_EQ(expire(t0 + 1 * sec).unicast.size(), 1u);
  EXPECT_EQ(expire(t0 + 2 * sec).unicast.size(), 1u);
  EXPECT_EQ(state(a), neighbor_state::probe);
  EXPECT_EQ(cache().counts().probes, 3u);
}

TEST_F(neighbors, ProbeDeletesTheEntryAfterMaxUnicastSolicit_RFC4861_7_3_3) {
  enter(a, neighbor_state::probe, t0);
  (void)expire(t0 + 1 * sec);
  (void)expire(t0 + 2 * sec);
  const expiry e = expire(t0 + 3 * sec);
  EXPECT_TRUE(e.unicast.empty());
  EXPECT_EQ(e.failed, addresses{a});
  EXPECT_FALSE(state(a));
  EXPECT_EQ(cache().counts().unreachable, 1u);
  EXPECT_EQ(resolve(a, 1, t0 + 3 * sec).action, neighbor_resolve::send_solicitation);  // resolved afresh
}

TEST_F(neighbors, UpperLayerConfirmationMakesAnEntryReachable_RFC4861_7_3_1) {
  std::uint64_t at = t0;
  for (const neighbor_state st : {reachable, stale, delay, probe}) {
    SCOPED_TRACE(int(st));
    at += 100 * sec;
    enter(a, st, at);
    cache().confirm(a, at + 1 * sec);
    EXPECT_EQ(state(a), neighbor_state::reachable);
    // ReachableTime counts from the confirmation.
    (void)expire(at + 1 * sec + cache().reachable_ns() - 1);
    EXPECT_EQ(state(a), neighbor_state::reachable);
    (void)returned(cache().clear());
  }
  // An INCOMPLETE entry has no address to confirm.
  enter(a, neighbor_state::incomplete, at);
  cache().confirm(a, at);
  EXPECT_EQ(state(a), neighbor_state::incomplete);
}

TEST_F(neighbors, StaleEntryUnusedForGcStaleTimeIsForgotten) {
  enter(a, neighbor_state::stale, t0);
  EXPECT_EQ(cache().next_deadline(), t0 + 60 * sec);
  (void)expire(t0 + 60 * sec - 1);
  EXPECT_EQ(state(a), neighbor_state::stale);
  (void)expire(t0 + 60 * sec);
  EXPECT_FALSE(state(a));
  EXPECT_EQ(cache().counts().forgotten, 1u);
}

// --- 6.3.2, 6.3.4: ReachableTime and RetransTimer --------------------------

TEST_F(neighbors, ReachableTimeIsDrawnBetweenHalfAndOneAndAHalfBase_RFC4861_6_3_2) {
  std::set<std::uint64_t> seen;
  for (std::uint64_t seed = 1; seed <= 50; ++seed) {
    const neighbor_cache n({.seed = seed});
    EXPECT_GE(n.reachable_ns(), 15 * sec);
    EXPECT_LE(n.reachable_ns(), 45 * sec);
    seen.insert(n.reachable_ns());
  }
  EXPECT_GT(seen.size(), 40u);  // neighbors do not probe in step
  EXPECT_EQ(neighbor_cache({.seed = 7}).reachable_ns(), neighbor_cache({.seed = 7}).reachable_ns());
}

TEST_F(neighbors, ReachableTimeIsDrawnAgainEveryFewHours_RFC4861_6_3_4) {
  make({.redraw_reachable_ns = 3600 * sec});
  const std::uint64_t first = cache().reachable_ns();
  enter(a, neighbor_state::reachable, 0);
  cache().confirm(a, 3600 * sec - 1);
  EXPECT_EQ(cache().reachable_ns(), first);
  cache().confirm(a, 3600 * sec);
  EXPECT_NE(cache().reachable_ns(), first);
  (void)expire(3600 * sec + cache().reachable_ns() - 1);  // the entry has the new ReachableTime
  EXPECT_EQ(state(a), neighbor_state::reachable);
  (void)expire(3600 * sec + cache().reachable_ns());
  EXPECT_EQ(state(a), neighbor_state::stale);
}

TEST_F(neighbors, RouterAdvertisementTimersApply_RFC4861_6_3_4) {
  const std::uint64_t first = cache().reachable_ns();
  cache().set_timers(30 * sec, 0);  // the same BaseReachableTime: nothing drawn
  EXPECT_EQ(cache().reachable_ns(), first);
  cache().set_timers(10 * sec, 2 * sec);
  EXPECT_GE(cache().reachable_ns(), 5 * sec);
  EXPECT_LE(cache().reachable_ns(), 15 * sec);
  enter(a, neighbor_state::incomplete, t0);
  EXPECT_EQ(cache().next_deadline(), t0 + 2 * sec);  // RetransTimer from the advertisement
  cache().set_timers(0, 0);  // unspecified: both stay
  EXPECT_LE(cache().reachable_ns(), 15 * sec);
  EXPECT_EQ(expire(t0 + 2 * sec).multicast, addresses{a});
  EXPECT_EQ(cache().next_deadline(), t0 + 4 * sec);
}

// --- Bounds -----------------------------------------------------------------

TEST_F(neighbors, FullEntryQueueKeepsTheLatestPackets_RFC4861_7_2_2) {
  make({.queue_per_entry = 2});
  enter(a, neighbor_state::incomplete, t0);
  (void)resolve(a, 1, t0);
  const outcome r = resolve(a, 2, t0);
  EXPECT_EQ(r.action, neighbor_resolve::queued);
  EXPECT_EQ(r.drop, packets{p(0)});  // "the new arrival SHOULD replace the oldest entry"
  EXPECT_EQ(cache().counts().drop_queue_entry, 1u);
  EXPECT_EQ(advertise(a, {.lladdr = mac_1, .solicited = true}, t0).send, (packets{p(1), p(2)}));
}

TEST_F(neighbors, FullPendingPoolRefusesANewAddressWithoutASolicitation) {
  make({.queue_total = 2});
  enter(a, neighbor_state::incomplete, t0);
  (void)resolve(a, 1, t0);
  const outcome r = resolve(b, 2, t0);
  EXPECT_EQ(r.action, neighbor_resolve::dropped_queue_full);  // not taken: the caller frees it
  EXPECT_TRUE(r.drop.empty());
  EXPECT_FALSE(state(b));
  EXPECT_EQ(cache().counts().solicitations, 1u);
  EXPECT_EQ(cache().counts().drop_queue_total, 1u);
}

TEST_F(neighbors, FullPendingPoolStillKeepsTheLatestPacketOfAWaitingAddress) {
  make({.queue_total = 2});
  enter(a, neighbor_state::incomplete, t0);
  (void)resolve(a, 1, t0);
  const outcome r = resolve(a, 2, t0);
  EXPECT_EQ(r.action, neighbor_resolve::queued);
  EXPECT_EQ(r.drop, packets{p(0)});
  EXPECT_EQ(cache().counts().drop_queue_total, 1u);
  EXPECT_EQ(cache().pending(), 2u);
}

TEST_F(neighbors, FullTableEvictsTheOldestStaleEntryFirst) {
  make({.capacity = 3});
  enter(a, neighbor_state::reachable, t0);  // the oldest, but known reachable
  enter(b, neighbor_state::stale, t0 + 1 * sec);
  enter(c, neighbor_state::stale, t0 + 2 * sec);
  EXPECT_EQ(resolve(d, 1, t0 + 3 * sec).action, neighbor_resolve::send_solicitation);
  EXPECT_FALSE(state(b));
  EXPECT_EQ(state(a), neighbor_state::reachable);
  EXPECT_EQ(state(c), neighbor_state::stale);
  EXPECT_EQ(cache().counts().evicted, 1u);
}

TEST_F(neighbors, FullTableEvictsAKnownEntryBeforeAnIncompleteOne) {
  make({.capacity = 2});
  enter(a, neighbor_state::incomplete, t0);
  enter(b, neighbor_state::reachable, t0 + 1 * sec);
  const outcome r = resolve(c, 1, t0 + 2 * sec);
  EXPECT_TRUE(r.drop.empty());
  EXPECT_FALSE(state(b));
  EXPECT_EQ(state(a), neighbor_state::incomplete);
}

TEST_F(neighbors, TableOfIncompleteEntriesEvictsTheOldestAndDropsItsPackets) {
  make({.capacity = 2});
  enter(a, neighbor_state::incomplete, t0);
  (void)resolve(a, 1, t0);
  (void)resolve(b, 2, t0 + 1 * sec);
  const outcome r = resolve(c, 3, t0 + 2 * sec);
  EXPECT_EQ(r.action, neighbor_resolve::send_solicitation);
  EXPECT_EQ(r.drop, (packets{p(0), p(1)}));
  EXPECT_EQ(cache().counts().drop_evicted, 2u);
  EXPECT_EQ(cache().counts().evicted, 1u);
}

// A stranger's solicitation pushes out only a STALE entry: a flood from
// made-up sources never flushes the neighbors in use.
TEST_F(neighbors, SendersMessagePushesOutOnlyAStaleEntry_RFC4861_7_2_3) {
  make({.capacity = 2});
  enter(a, neighbor_state::incomplete, t0);
  enter(b, neighbor_state::reachable, t0);
  (void)solicited_by(c, mac_2, t0 + 1 * sec);
  EXPECT_FALSE(state(c));
  EXPECT_EQ(cache().counts().table_full, 1u);
  (void)returned(cache().clear());
  enter(a, neighbor_state::incomplete, t0 + 2 * sec);
  enter(b, neighbor_state::stale, t0 + 2 * sec);
  (void)solicited_by(c, mac_2, t0 + 3 * sec);
  EXPECT_EQ(state(c), neighbor_state::stale);
  EXPECT_FALSE(state(b));
  EXPECT_EQ(state(a), neighbor_state::incomplete);
}

TEST_F(neighbors, ClearHandsBackEveryWaitingPacket) {
  enter(a, neighbor_state::incomplete, t0);
  (void)resolve(b, 1, t0);
  enter(c, neighbor_state::stale, t0);
  EXPECT_EQ(returned(cache().clear()).size(), 2u);
  EXPECT_EQ(cache().size(), 0u);
  EXPECT_EQ(cache().counts().drop_cleared, 2u);
  EXPECT_EQ(cache().next_deadline(), neighbor_cache::no_deadline);
}

// --- The owner's copy of an answer -----------------------------------------

TEST_F(neighbors, LookupAnswersWhereSendingChangesNothing) {
  enter(a, neighbor_state::incomplete, t0);
  EXPECT_FALSE(cache().lookup(a, t0));
  (void)advertise(a, {.lladdr = mac_1, .solicited = true}, t0);
  const auto fresh = cache().lookup(a, t0);
  ASSERT_TRUE(fresh);
  EXPECT_EQ(fresh->mac, mac_1);
  EXPECT_EQ(fresh->fresh_until, t0 + cache().reachable_ns());
  EXPECT_FALSE(cache().lookup(a, fresh->fresh_until));  // STALE by then: resolve() starts DELAY
  enter(b, neighbor_state::stale, t0);
  EXPECT_FALSE(cache().lookup(b, t0));
  (void)resolve(b, 1, t0);
  EXPECT_EQ(cache().lookup(b, t0)->mac, mac_1);  // DELAY
}

TEST_F(neighbors, ChangesMoveWithEveryCallThatMayChangeAnAnswer) {
  std::uint64_t last = cache().changes();
  const auto moved = [&] {
    const bool m = cache().changes() != last;
    last = cache().changes();
    return m;
  };
  (void)resolve(a, 0, t0);
  EXPECT_TRUE(moved());
  (void)advertise(a, {.lladdr = mac_1, .solicited = true}, t0);
  EXPECT_TRUE(moved());
  (void)cache().lookup(a, t0);
  EXPECT_FALSE(moved());
  cache().confirm(a, t0);
  EXPECT_TRUE(moved());
  (void)solicited_by(a, mac_2, t0);
  EXPECT_TRUE(moved());
  (void)expire(t0);
  EXPECT_TRUE(moved());
  cache().set_timers(10 * sec, 0);
  EXPECT_TRUE(moved());
  (void)returned(cache().clear());
  EXPECT_TRUE(moved());
}

// Random traffic at virtual time: expire() before next_deadline() never
// has work (the deadline is never late), and the books balance throughout.
TEST_F(neighbors, NextDeadlineIsNeverLate) {
  make({.capacity = 4, .queue_per_entry = 2, .queue_total = 6});
  xoshiro256ss rng({5, 6, 7, 8});
  const std::array targets{a, b, c, d, addr(5), addr(6)};
  std::uint64_t now = 0;
  for (int step = 0; step < 5000; ++step) {
    now += rng.below(800 * ms);
    const ipv6_bytes& x = targets[rng.below(targets.size())];
    const mac_address mac = rng.chance(0.5) ? mac_1 : mac_2;
    switch (rng.below(5)) {
      case 0: {
        const outcome r = resolve(x, unheld(), now);
        EXPECT_EQ(r.action == neighbor_resolve::known, r.mac.has_value());
        break;
      }
      case 1:
        (void)advertise(x, {.lladdr = mac, .router = rng.chance(0.5), .solicited = rng.chance(0.5),
                            .override = rng.chance(0.5)},
                        now);
        break;
      case 2: (void)solicited_by(x, mac, now); break;
      case 3: cache().confirm(x, now); break;
      case 4: {
        const std::uint64_t due = cache().next_deadline();
        if (due > now && due != neighbor_cache::no_deadline) {
          std::vector<std::optional<neighbor_state>> before;
          for (const ipv6_bytes& y : targets) before.push_back(state(y));
          const expiry early = expire(due - 1);
          EXPECT_TRUE(early.drop.empty() && early.multicast.empty() && early.unicast.empty() && early.failed.empty());
          for (std::size_t i = 0; i < targets.size(); ++i) ASSERT_EQ(state(targets[i]), before[i]) << "step " << step;
          now = std::max(now, due);
        }
        (void)expire(now);
        break;
      }
    }
  }
}

}  // namespace
}  // namespace affine::stack
