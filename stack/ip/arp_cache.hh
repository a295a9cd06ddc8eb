#pragma once
// The ARP cache (RFC 826, RFC 1122 2.3.2): IPv4 address -> Ethernet address,
// and the packets that wait while an address is being resolved.
//
// Packets are opaque here: the cache keeps `rte_mbuf*` handles and hands them
// back, never touching what they point to. Every packet given to resolve()
// and taken (queued) comes back exactly once: in on_arp()'s list to
// transmit, or in a list to free from resolve(), expire() or clear(). Those
// lists are spans into arrays the cache allocated at construction, valid
// until the next non-const call.
//
// Time is passed in: the owner calls expire() once next_deadline() has come
// and sends the ARP requests it asks for. Every bound is an arp_config field
// and every bound that is hit is counted. Precondition: one owner at a time
// (the stack's lock); nothing here is thread-safe but changes().

#include <array>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <optional>
#include <span>
#include <vector>

#include "stack/ip/addr_map.hh"
#include "stack/ip/pending_pool.hh"

struct rte_mbuf;

namespace affine::stack {

using mac_address = std::array<std::uint8_t, 6>;  // the same alias as stack/wire/ethernet.hh

struct arp_config {
  std::uint32_t capacity = 256;         // addresses known or being resolved
  std::uint32_t queue_per_entry = 4;    // packets waiting for one address
  std::uint32_t queue_total = 256;      // packets waiting for all addresses together
  std::uint64_t reachable_ns = 60'000'000'000;  // how long an answer is trusted (RFC 1122 2.3.2.1 "timeout")
  std::uint64_t retry_ns = 1'000'000'000;       // RFC 1122 2.3.2.1: at most one request a second per address
  std::uint32_t max_requests = 3;       // requests for one address (the first included) before giving up
};

enum class arp_resolve : std::uint8_t {
  send_request,        // the packet waits; send an ARP request for the address now
  queued,              // the packet waits; a request is already out
  known,               // the address is resolved: the packet was NOT taken; send it to lookup()'s address
  dropped_queue_full,  // every pending-packet place is taken: the packet was NOT taken; free it
};

struct arp_resolution {
  arp_resolve action;
  std::span<rte_mbuf* const> drop;  // packets pushed out to make room: free them
};

struct arp_expiry {
  std::span<rte_mbuf* const> drop;         // packets whose address could not be resolved: free them
  std::span<const std::uint32_t> request;  // addresses to send an ARP request for again
};

class arp_cache {
 public:
  static constexpr std::uint64_t no_deadline = std::numeric_limits<std::uint64_t>::max();

  struct counters {
    std::uint64_t requests = 0;       // ARP requests asked for, first and repeated
    std::uint64_t resolved = 0;       // addresses that were waited for and answered
    std::uint64_t failed = 0;         // resolutions given up after max_requests
    std::uint64_t expired = 0;        // answers older than reachable_ns, forgotten
    std::uint64_t evicted = 0;        // entries pushed out by a full table
    std::uint64_t table_full = 0;     // answers not kept: the table held only pending entries
    std::uint64_t ignored = 0;        // ARP packets with sender address 0.0.0.0 (RFC 5227 probes)
    std::uint64_t drop_queue_entry = 0;  // packets dropped: queue_per_entry reached (the oldest gives way)
    std::uint64_t drop_queue_total = 0;  // packets dropped: queue_total reached
    std::uint64_t drop_failed = 0;       // packets dropped: their address did not answer
    std::uint64_t drop_evicted = 0;      // packets dropped with their entry, evicted
    std::uint64_t drop_cleared = 0;      // packets dropped by clear()
  };

  explicit arp_cache(const arp_config& config = {});
  arp_cache(const arp_cache&) = delete;
  arp_cache& operator=(const arp_cache&) = delete;

  // The Ethernet address of `ip` if an answer is known and fresh.
  std::optional<mac_address> lookup(std::uint32_t ip, std::uint64_t now_ns) const;
  // The same, with the time the answer goes stale.
  struct answer {
    mac_address mac;
    std::uint64_t fresh_until;
  };
  std::optional<answer> lookup_answer(std::uint32_t ip, std::uint64_t now_ns) const;

  // Counts the calls that may have changed an answer (every non-const one).
  // Readable without the owner's lock: a copy of an answer stays good while
  // this count stays the same and the answer is fresh (the stack's per-core
  // copy of its last next hop).
  std::uint64_t changes() const { return changes_.load(std::memory_order_acquire); }

  // Holds `packet` until `ip` answers (call after lookup() failed).
  arp_resolution resolve(std::uint32_t ip, rte_mbuf* packet, std::uint64_t now_ns);

  // An ARP packet (request or reply) from sender_ip/sender_mac arrived;
  // `target_is_us` when its target protocol address is ours. Returns the
  // packets that waited for sender_ip: send them to sender_mac.
  std::span<rte_mbuf* const> on_arp(std::uint32_t sender_ip, const mac_address& sender_mac, bool target_is_us,
                                    std::uint64_t now_ns);

  // Runs what is due at now_ns: repeated requests, failures, expiries.
  arp_expiry expire(std::uint64_t now_ns);

  // When expire() next has work, or no_deadline. May be early (expire()
  // then finds nothing to do), never late.
  std::uint64_t next_deadline() const { return next_deadline_; }

  // Forgets everything (the interface went down); returns every waiting
  // packet to free.
  std::span<rte_mbuf* const> clear();

  std::uint32_t size() const { return entries_.size(); }
  std::uint32_t pending() const { return pool_.size(); }
  const counters& counts() const { return counts_; }

 private:
  enum class state : std::uint8_t { incomplete, reachable };

  // An address and, while it is incomplete, its packets: a FIFO list
  // threaded through the shared pending pool.
  struct entry {
    mac_address mac{};
    state st = state::incomplete;
    std::uint32_t requests = 0;  // requests sent while incomplete
    pending_list waiting;
    std::uint64_t deadline = 0;  // reachable: the answer expires; incomplete: the next request or failure
    std::uint64_t since = 0;     // created or last confirmed: eviction takes the oldest
  };

  entry* add(std::uint32_t ip, bool may_evict_pending);
  bool evict(bool may_evict_pending);
  void arm(entry& e, std::uint64_t deadline);

  void changed() { changes_.store(changes_.load(std::memory_order_relaxed) + 1, std::memory_order_release); }

  arp_config config_;
  std::atomic<std::uint64_t> changes_{0};  // written under the owner's lock
  addr_map<entry> entries_;
  pending_pool pool_;  // queue_total places for every entry's waiting packets, and what a call hands back
  std::vector<std::uint32_t> requests_;  // what expire() asks for (its span points here)
  std::size_t request_count_ = 0;
  std::uint64_t next_deadline_ = no_deadline;
  counters counts_;
};

}  // namespace affine::stack
