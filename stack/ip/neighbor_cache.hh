#pragma once
// The IPv6 neighbor cache (RFC 4861 5.1, 7.2, 7.3): IPv6 address ->
// Ethernet address with Neighbor Unreachability Detection's states, and
// the packets that wait while an address is resolved.
//
// States (7.3.2): INCOMPLETE (solicited, no answer yet), REACHABLE (heard
// from within ReachableTime), STALE (no longer known to be reachable;
// used, and probed once traffic flows), DELAY (used while STALE: a probe
// follows DELAY_FIRST_PROBE_TIME later unless the upper layer confirms),
// PROBE (unicast solicitations until an answer or MAX_UNICAST_SOLICIT).
//
// As arp_cache: packets are opaque handles, every packet resolve() took
// comes back exactly once (to send from on_advertisement() or
// on_solicitation_or_other(), or in a list to free from resolve(),
// expire() or clear()); the spans returned point into arrays allocated at
// construction and stay valid until the next non-const call. Time is passed
// in: the owner calls expire() once next_deadline() has come and sends the
// solicitations it asks for. Every bound is a neighbor_config field and
// every bound that is hit is counted. Precondition: one owner at a time
// (the stack's lock); nothing here is thread-safe but changes().

#include <array>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <optional>
#include <span>
#include <utility>
#include <vector>

#include "base/xoshiro.hh"
#include "stack/ip/addr_map.hh"
#include "stack/ip/pending_pool.hh"
#include "stack/wire/ipv6.hh"

struct rte_mbuf;

namespace affine::stack {

using mac_address = std::array<std::uint8_t, 6>;  // the same alias as stack/wire/ethernet.hh

struct neighbor_config {
  std::uint32_t capacity = 256;        // neighbors known or being resolved
  std::uint32_t queue_per_entry = 4;   // packets waiting for one address (7.2.2: at least one)
  std::uint32_t queue_total = 256;     // packets waiting for all addresses together
  // RFC 4861 10: BaseReachableTime and RetransTimer (both may come from a
  // Router Advertisement, 6.3.4: set_timers()), DELAY_FIRST_PROBE_TIME,
  // MAX_MULTICAST_SOLICIT and MAX_UNICAST_SOLICIT.
  std::uint64_t base_reachable_ns = 30'000'000'000;
  std::uint64_t retrans_ns = 1'000'000'000;
  std::uint64_t delay_first_probe_ns = 5'000'000'000;
  std::uint32_t max_multicast_solicit = 3;
  std::uint32_t max_unicast_solicit = 3;
  // A STALE entry unused this long is forgotten (Linux's gc_stale_time).
  std::uint64_t gc_stale_ns = 60'000'000'000;
  // RFC 4861 6.3.4: ReachableTime is drawn again "at least every few hours".
  std::uint64_t redraw_reachable_ns = 7'200'000'000'000;
  std::uint64_t seed = 1;  // ReachableTime's random factor (6.3.2)
};

enum class neighbor_state : std::uint8_t { incomplete, reachable, stale, delay, probe };

// What the cache holds for one neighbor (for tests and stats).
struct neighbor_entry {
  neighbor_state state;
  mac_address mac;  // zero while INCOMPLETE
  bool router;      // IsRouter (5.1)
};

enum class neighbor_resolve : std::uint8_t {
  send_solicitation,   // the packet waits; send a multicast Neighbor Solicitation now
  queued,              // the packet waits; a solicitation is already out
  known,               // the packet was NOT taken: send it to `mac`
  dropped_queue_full,  // every pending-packet place is taken: the packet was NOT taken; free it
};

struct neighbor_resolution {
  neighbor_resolve action;
  std::optional<mac_address> mac;   // with known
  std::span<rte_mbuf* const> drop;  // packets pushed out to make room: free them
};

struct neighbor_update {
  std::span<rte_mbuf* const> send;  // packets that waited: send them to `mac`
  std::optional<mac_address> mac;   // the entry's address when the advertisement updated it
  bool router_cleared = false;      // 7.2.5: IsRouter went from true to false
};

struct neighbor_expiry {
  std::span<rte_mbuf* const> drop;                              // unresolved: free them (7.2.2: address unreachable)
  std::span<const ipv6_bytes> multicast;                        // solicit again, to the solicited-node group
  std::span<const std::pair<ipv6_bytes, mac_address>> unicast;  // NUD probes, to the cached address
  std::span<const ipv6_bytes> failed;                           // entries deleted: no answer (INCOMPLETE or PROBE)
};

class neighbor_cache {
 public:
  static constexpr std::uint64_t no_deadline = std::numeric_limits<std::uint64_t>::max();

  struct counters {
    std::uint64_t solicitations = 0;  // multicast solicitations asked for, first and repeated
    std::uint64_t probes = 0;         // unicast NUD probes asked for
    std::uint64_t resolved = 0;       // INCOMPLETE entries answered
    std::uint64_t failed = 0;         // INCOMPLETE entries given up after max_multicast_solicit
    std::uint64_t unreachable = 0;    // PROBE entries given up after max_unicast_solicit
    std::uint64_t forgotten = 0;      // STALE entries unused for gc_stale_ns
    std::uint64_t ignored = 0;        // advertisements that changed nothing (7.2.5's discards)
    std::uint64_t evicted = 0;        // entries pushed out by a full table
    std::uint64_t table_full = 0;     // senders not kept: the table held no STALE entry to push out
    std::uint64_t drop_queue_entry = 0;  // packets dropped: queue_per_entry reached (the oldest gives way)
    std::uint64_t drop_queue_total = 0;  // packets dropped: queue_total reached
    std::uint64_t drop_failed = 0;       // packets dropped: their address did not answer
    std::uint64_t drop_evicted = 0;      // packets dropped with their entry, evicted
    std::uint64_t drop_cleared = 0;      // packets dropped by clear()
  };

  explicit neighbor_cache(const neighbor_config& config = {});
  neighbor_cache(const neighbor_cache&) = delete;
  neighbor_cache& operator=(const neighbor_cache&) = delete;

  // The address to send to `addr` without calling resolve(): while the
  // entry is REACHABLE (until its ReachableTime ends), DELAY or PROBE,
  // sending changes nothing. A copy stays good while changes() stays the
  // same and now < fresh_until.
  struct answer {
    mac_address mac;
    std::uint64_t fresh_until;
  };
  std::optional<answer> lookup(const ipv6_bytes& addr, std::uint64_t now_ns) const;

  // Counts the calls that may have changed an answer (every non-const one).
  // Readable without the owner's lock (the stack's per-core copy of its
  // last next hop).
  std::uint64_t changes() const { return changes_.load(std::memory_order_acquire); }

  // A packet for `addr` to send (7.2.2, 7.3.3).
  neighbor_resolution resolve(const ipv6_bytes& addr, rte_mbuf* packet, std::uint64_t now_ns);

  // A Neighbor Advertisement for `target` (7.2.5), with its Target
  // Link-Layer Address option if any and its R, S and O flags.
  neighbor_update on_advertisement(const ipv6_bytes& target, std::optional<mac_address> lladdr, bool router,
                                   bool solicited, bool override, std::uint64_t now_ns);

  // A Neighbor Solicitation (7.2.3), Router Advertisement (6.3.4) or
  // Redirect (8.3) naming `source`'s link-layer address. `from_router`: the
  // message says `source` is a router (an RA's sender; a Redirect's target
  // other than its destination) and IsRouter is set. Returns the packets
  // that waited for `source`: send them to `lladdr`.
  std::span<rte_mbuf* const> on_solicitation_or_other(const ipv6_bytes& source, const mac_address& lladdr,
                                                      std::uint64_t now_ns, bool from_router = false);

  // An upper layer's hint of forward progress (7.3.1): REACHABLE again.
  void confirm(const ipv6_bytes& addr, std::uint64_t now_ns);

  // A Router Advertisement's Reachable Time and Retrans Timer (6.3.4; 0
  // leaves a value as it is). A new BaseReachableTime draws ReachableTime
  // again; both apply from the next timer set.
  void set_timers(std::uint64_t base_reachable_ns, std::uint64_t retrans_ns);

  // Runs what is due at now_ns: solicitations repeated, probes, failures,
  // REACHABLE entries gone STALE, STALE entries forgotten.
  neighbor_expiry expire(std::uint64_t now_ns);

  // When expire() next has work, or no_deadline. May be early (expire()
  // then finds nothing to do), never late.
  std::uint64_t next_deadline() const { return next_deadline_; }

  // Forgets everything (the interface went down); returns every waiting
  // packet to free.
  std::span<rte_mbuf* const> clear();

  // What the cache holds for `addr`, if anything (for tests and stats).
  std::optional<neighbor_entry> find(const ipv6_bytes& addr) const;
  std::uint64_t reachable_ns() const { return reachable_ns_; }
  std::uint32_t size() const { return entries_.size(); }
  std::uint32_t pending() const { return pool_.size(); }
  const counters& counts() const { return counts_; }

 private:
  struct entry {
    mac_address mac{};
    neighbor_state st = neighbor_state::incomplete;
    bool router = false;         // IsRouter (5.1)
    std::uint32_t probes = 0;    // solicitations sent in INCOMPLETE or PROBE
    std::uint64_t deadline = 0;  // the state's timer (see enter())
    std::uint64_t since = 0;     // created or last known reachable: eviction takes the oldest
    pending_list waiting;
  };

  // Who may push an entry out of a full table.
  enum class evict_for : std::uint8_t { sender, packet };

  entry* add(const ipv6_bytes& addr, evict_for who);
  bool evict(evict_for who);
  void enter(entry& e, neighbor_state st, std::uint64_t now_ns);
  void arm(entry& e, std::uint64_t deadline);
  void complete(entry& e, const mac_address& mac, neighbor_state st, std::uint64_t now_ns);
  neighbor_update ignore();
  void draw_reachable();

  void changed() { changes_.store(changes_.load(std::memory_order_relaxed) + 1, std::memory_order_release); }

  neighbor_config config_;
  std::atomic<std::uint64_t> changes_{0};  // written under the owner's lock
  addr_map<entry, ipv6_bytes> entries_;
  pending_pool pool_;  // queue_total places for every entry's waiting packets, and what a call hands back
  xoshiro256ss rng_;
  std::uint64_t reachable_ns_ = 0;  // ReachableTime (6.3.2)
  std::uint64_t redraw_at_ = 0;     // ReachableTime is drawn again at the first REACHABLE from then
  // What expire() asks for (its spans point here).
  std::vector<ipv6_bytes> multicast_;
  std::vector<std::pair<ipv6_bytes, mac_address>> unicast_;
  std::vector<ipv6_bytes> failed_;
  std::uint64_t next_deadline_ = no_deadline;
  counters counts_;
};

}  // namespace affine::stack
