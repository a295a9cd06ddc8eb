#include "stack/ip/neighbor_cache.hh"

#include <algorithm>
#include <cassert>
#include <utility>

namespace affine::stack {

neighbor_cache::neighbor_cache(const neighbor_config& config)
    : config_(config),
      entries_(config.capacity),
      pool_(config.queue_total),
      rng_({mix64(config.seed), mix64(config.seed + 1), mix64(config.seed + 2), mix64(config.seed + 3)}),
      multicast_(config.capacity),
      unicast_(config.capacity),
      failed_(config.capacity) {
  assert(config.queue_per_entry > 0 && config.max_multicast_solicit > 0 && config.max_unicast_solicit > 0);
  draw_reachable();
  redraw_at_ = config.redraw_reachable_ns;
}

// RFC 4861 6.3.2: ReachableTime is BaseReachableTime times a factor drawn
// uniformly from [MIN_RANDOM_FACTOR, MAX_RANDOM_FACTOR] = [0.5, 1.5], so
// that neighbors do not probe in step.
void neighbor_cache::draw_reachable() {
  reachable_ns_ = std::uint64_t(double(config_.base_reachable_ns) * (0.5 + rng_.uniform()));
}

void neighbor_cache::set_timers(std::uint64_t base_reachable_ns, std::uint64_t retrans_ns) {
  changed();
  // RFC 4861 6.3.4: "If the new value differs from the previous value, the
  // host SHOULD re-compute a new random ReachableTime value."
  if (base_reachable_ns != 0 && base_reachable_ns != config_.base_reachable_ns) {
    config_.base_reachable_ns = base_reachable_ns;
    draw_reachable();
  }
  if (retrans_ns != 0) config_.retrans_ns = retrans_ns;
}

std::optional<neighbor_cache::answer> neighbor_cache::lookup(const ipv6_bytes& addr, std::uint64_t now_ns) const {
  const entry* e = entries_.find(addr);
  if (e == nullptr) return std::nullopt;
  switch (e->st) {
    case neighbor_state::reachable:
      if (now_ns >= e->deadline) return std::nullopt;  // STALE by now: resolve() starts DELAY
      return answer{e->mac, e->deadline};
    case neighbor_state::delay:
    case neighbor_state::probe: return answer{e->mac, no_deadline};  // expire() moves changes()
    case neighbor_state::incomplete:
    case neighbor_state::stale: return std::nullopt;
  }
  return std::nullopt;
}

neighbor_resolution neighbor_cache::resolve(const ipv6_bytes& addr, rte_mbuf* packet, std::uint64_t now_ns) {
  changed();
  pool_.begin_call();
  entry* e = entries_.find(addr);
  if (e != nullptr) {
    switch (e->st) {
      case neighbor_state::incomplete:
        // 7.2.2: the packet waits; "When a queue overflows, the new arrival
        // SHOULD replace the oldest entry." An INCOMPLETE entry always holds
        // one, so this never fails.
        pool_.enqueue(e->waiting, packet, config_.queue_per_entry, counts_.drop_queue_entry,
                      counts_.drop_queue_total);
        return {neighbor_resolve::queued, std::nullopt, pool_.handed_back()};
      case neighbor_state::reachable:
        // 7.3.3: ReachableTime passed without confirmation makes it STALE
        // (expire() may not have run yet), and this packet starts DELAY.
        if (now_ns >= e->deadline) enter(*e, neighbor_state::delay, now_ns);
        return {neighbor_resolve::known, e->mac, {}};
      case neighbor_state::stale:
        // 7.3.3: "The first time a node sends a packet to a neighbor whose
        // entry is STALE, the sender changes the state to DELAY".
        enter(*e, neighbor_state::delay, now_ns);
        return {neighbor_resolve::known, e->mac, {}};
      case neighbor_state::delay:
      case neighbor_state::probe: return {neighbor_resolve::known, e->mac, {}};
    }
  }
  // A new resolution (7.2.2) needs a place in the pool that no other
  // address gives up.
  if (pool_.full()) {
    ++counts_.drop_queue_total;
    return {neighbor_resolve::dropped_queue_full, std::nullopt, {}};
  }
  e = add(addr, evict_for::packet);
  assert(e != nullptr);  // a full table holds an entry a packet may push out
  e->since = now_ns;
  e->probes = 1;
  enter(*e, neighbor_state::incomplete, now_ns);
  ++counts_.solicitations;
  pool_.push(e->waiting, packet);
  return {neighbor_resolve::send_solicitation, std::nullopt, pool_.handed_back()};
}

neighbor_update neighbor_cache::on_advertisement(const ipv6_bytes& target, std::optional<mac_address> lladdr,
                                                 bool router, bool solicited, bool override, std::uint64_t now_ns) {
  changed();
  pool_.begin_call();
  entry* e = entries_.find(target);
  // 7.2.5: "If no entry exists, the advertisement SHOULD be silently discarded."
  if (e == nullptr) return ignore();
  if (e->st == neighbor_state::incomplete) {
    // 7.2.5: without a Target Link-Layer Address option it is discarded.
    if (!lladdr) return ignore();
    // 7.2.5: REACHABLE when solicited, STALE otherwise; IsRouter from the R
    // flag; the packets that waited go out.
    e->router = router;
    complete(*e, *lladdr, solicited ? neighbor_state::reachable : neighbor_state::stale, now_ns);
    return {pool_.handed_back(), e->mac, false};
  }
  const bool other_address = lladdr && *lladdr != e->mac;
  if (!override && other_address) {
    // 7.2.5 (a): a REACHABLE entry goes STALE, "but do not update the entry
    // in any other way"; (b) otherwise the advertisement "MUST NOT update
    // the cache".
    if (e->st != neighbor_state::reachable) return ignore();
    enter(*e, neighbor_state::stale, now_ns);
    return {};
  }
  // 7.2.5: Override set, the same address, or none: the address is
  // inserted if it differs; REACHABLE when solicited, STALE when unsolicited
  // and the address changed, else the state stays.
  if (other_address) e->mac = *lladdr;
  if (solicited)
    enter(*e, neighbor_state::reachable, now_ns);
  else if (other_address)
    enter(*e, neighbor_state::stale, now_ns);
  // 7.2.5: IsRouter follows the R flag; from true to false the owner drops
  // the router from its Default Router List.
  const bool cleared = e->router && !router;
  e->router = router;
  return {{}, e->mac, cleared};
}

std::span<rte_mbuf* const> neighbor_cache::on_solicitation_or_other(const ipv6_bytes& source,
                                                                    const mac_address& lladdr, std::uint64_t now_ns,
                                                                    bool from_router) {
  changed();
  pool_.begin_call();
  entry* e = entries_.find(source);
  if (e == nullptr) {
    // 7.2.3, 6.3.4, 8.3: a new entry is STALE. A sender's message pushes
    // out only a STALE entry: a flood of solicitations from made-up
    // sources never flushes the neighbors in use.
    e = add(source, evict_for::sender);
    if (e == nullptr) {
      ++counts_.table_full;
      return {};
    }
    e->mac = lladdr;
    e->since = now_ns;
    e->router = from_router;
    enter(*e, neighbor_state::stale, now_ns);
    return {};
  }
  if (from_router) e->router = true;  // 6.3.4, 8.3: IsRouter MUST be set
  // 7.2.3 via 7.3.3: an INCOMPLETE entry learns the address, goes STALE and
  // its packets go out.
  if (e->st == neighbor_state::incomplete) {
    complete(*e, lladdr, neighbor_state::stale, now_ns);
    return pool_.handed_back();
  }
  // 7.2.3: another address replaces the cached one and the entry "MUST be
  // set to STALE"; the same address changes nothing.
  if (e->mac != lladdr) {
    e->mac = lladdr;
    enter(*e, neighbor_state::stale, now_ns);
  }
  return {};
}

void neighbor_cache::confirm(const ipv6_bytes& addr, std::uint64_t now_ns) {
  changed();
  entry* e = entries_.find(addr);
  // 7.3.1: forward progress proves the path; an INCOMPLETE entry has no
  // address to confirm.
  if (e != nullptr && e->st != neighbor_state::incomplete) enter(*e, neighbor_state::reachable, now_ns);
}

neighbor_expiry neighbor_cache::expire(std::uint64_t now_ns) {
  changed();
  pool_.begin_call();
  std::size_t m = 0, u = 0, f = 0;
  next_deadline_ = no_deadline;
  entries_.erase_if([&](const ipv6_bytes& addr, entry& e) {
    if (now_ns < e.deadline) {
      arm(e, e.deadline);
      return false;
    }
    switch (e.st) {
      case neighbor_state::incomplete:
        // 7.2.2: the solicitation again every RetransTimer ...
        if (e.probes < config_.max_multicast_solicit) {
          ++e.probes;
          ++counts_.solicitations;
          multicast_[m++] = addr;
          arm(e, now_ns + config_.retrans_ns);
          return false;
        }
        // ... and after MAX_MULTICAST_SOLICIT "address resolution has
        // failed": the packets are dropped (the owner answers them with
        // address unreachable).
        ++counts_.failed;
        counts_.drop_failed += pool_.release(e.waiting);
        failed_[f++] = addr;
        return true;
      case neighbor_state::reachable:
        // 7.3.3: ReachableTime passed since the last confirmation.
        enter(e, neighbor_state::stale, now_ns);
        return false;
      case neighbor_state::stale:
        // Unused for gc_stale_ns: nothing needs it.
        ++counts_.forgotten;
        return true;
      case neighbor_state::delay:
        // 7.3.3: no confirmation within DELAY_FIRST_PROBE_TIME: PROBE, a
        // unicast solicitation to the cached address.
        e.probes = 1;
        ++counts_.probes;
        unicast_[u++] = {addr, e.mac};
        enter(e, neighbor_state::probe, now_ns);
        return false;
      case neighbor_state::probe:
        // 7.3.3: again every RetransTimer, then after MAX_UNICAST_SOLICIT
        // "the entry SHOULD be deleted".
        if (e.probes < config_.max_unicast_solicit) {
          ++e.probes;
          ++counts_.probes;
          unicast_[u++] = {addr, e.mac};
          arm(e, now_ns + config_.retrans_ns);
          return false;
        }
        ++counts_.unreachable;
        failed_[f++] = addr;
        return true;
    }
    return false;
  });
  return {pool_.handed_back(), {multicast_.data(), m}, {unicast_.data(), u}, {failed_.data(), f}};
}

std::span<rte_mbuf* const> neighbor_cache::clear() {
  changed();
  pool_.begin_call();
  entries_.erase_if([&](const ipv6_bytes&, entry& e) {
    counts_.drop_cleared += pool_.release(e.waiting);
    return true;
  });
  next_deadline_ = no_deadline;
  return pool_.handed_back();
}

std::optional<neighbor_entry> neighbor_cache::find(const ipv6_bytes& addr) const {
  const entry* e = entries_.find(addr);
  if (e == nullptr) return std::nullopt;
  return neighbor_entry{e->st, e->mac, e->router};
}

// Each state's timer (7.3.3): INCOMPLETE and PROBE retransmit every
// RetransTimer, REACHABLE lasts ReachableTime, DELAY ends after
// DELAY_FIRST_PROBE_TIME, STALE is forgotten after gc_stale_ns.
void neighbor_cache::enter(entry& e, neighbor_state st, std::uint64_t now_ns) {
  e.st = st;
  switch (st) {
    case neighbor_state::incomplete:
    case neighbor_state::probe: arm(e, now_ns + config_.retrans_ns); return;
    case neighbor_state::reachable:
      // 6.3.4: ReachableTime drawn again "at least every few hours".
      if (now_ns >= redraw_at_) {
        draw_reachable();
        redraw_at_ = now_ns + config_.redraw_reachable_ns;
      }
      e.since = now_ns;
      arm(e, now_ns + reachable_ns_);
      return;
    case neighbor_state::stale: arm(e, now_ns + config_.gc_stale_ns); return;
    case neighbor_state::delay: arm(e, now_ns + config_.delay_first_probe_ns); return;
  }
}

void neighbor_cache::arm(entry& e, std::uint64_t deadline) {
  e.deadline = deadline;
  next_deadline_ = std::min(next_deadline_, deadline);
}

// An INCOMPLETE entry learns its address: the packets that waited go out
// to the entry in state `st`. Sent to a STALE one, they start DELAY (7.3.3:
// "The first time a node sends a packet to a neighbor whose entry is
// STALE"), so an answer that came unasked is probed once traffic flows.
void neighbor_cache::complete(entry& e, const mac_address& mac, neighbor_state st, std::uint64_t now_ns) {
  e.mac = mac;
  ++counts_.resolved;
  const std::uint32_t sent = pool_.release(e.waiting);
  assert(sent > 0);  // an INCOMPLETE entry holds at least the packet that made it
  enter(e, st == neighbor_state::stale ? neighbor_state::delay : st, now_ns);
}

neighbor_update neighbor_cache::ignore() {
  ++counts_.ignored;
  return {};
}

neighbor_cache::entry* neighbor_cache::add(const ipv6_bytes& addr, evict_for who) {
  if (entries_.full() && !evict(who)) return nullptr;
  return entries_.insert(addr);
}

// A full table gives up its oldest STALE entry (the least known, 7.3.2);
// for a packet to send, failing that, the oldest REACHABLE, DELAY or PROBE
// one (one solicitation learns it again), and only when every entry is
// INCOMPLETE the oldest of those, its packets dropped and counted.
bool neighbor_cache::evict(evict_for who) {
  const auto rank = [](neighbor_state s) {
    return s == neighbor_state::stale ? 0 : s == neighbor_state::incomplete ? 2 : 1;
  };
  const auto victim = entries_.first_by(
      [&](const entry& a, const entry& b) { return std::pair(rank(a.st), a.since) < std::pair(rank(b.st), b.since); });
  entry* e = victim ? entries_.find(*victim) : nullptr;
  if (e == nullptr || (e->st != neighbor_state::stale && who == evict_for::sender)) return false;
  counts_.drop_evicted += pool_.release(e->waiting);
  entries_.erase(*victim);
  ++counts_.evicted;
  return true;
}

}  // namespace affine::stack
