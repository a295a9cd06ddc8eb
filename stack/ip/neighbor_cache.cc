#include "stack/ip/neighbor_cache.hh"

#include <algorithm>
#include <cassert>

namespace affine::stack {

neighbor_cache::neighbor_cache(const neighbor_config& config)
    : config_(config),
      entries_(config.capacity),
      pool_(config.queue_total),
      rng_({mix64(config.seed), mix64(config.seed + 1), mix64(config.seed + 2), mix64(config.seed + 3)}),
      out_(config.queue_total),
      multicast_(config.capacity),
      unicast_(config.capacity) {
  assert(config.queue_per_entry > 0 && config.max_multicast_solicit > 0 && config.max_unicast_solicit > 0);
  draw_reachable();
}

// RFC 4861 6.3.2: ReachableTime is BaseReachableTime times a factor drawn
// uniformly from [MIN_RANDOM_FACTOR, MAX_RANDOM_FACTOR] = [0.5, 1.5], so
// that neighbors do not probe in step.
void neighbor_cache::draw_reachable() {
  reachable_ns_ = std::uint64_t(double(config_.base_reachable_ns) * (0.5 + rng_.uniform()));
}

void neighbor_cache::set_timers(std::uint64_t base_reachable_ns, std::uint64_t retrans_ns) {
  if (base_reachable_ns != 0 && base_reachable_ns != config_.base_reachable_ns) {
    config_.base_reachable_ns = base_reachable_ns;
    draw_reachable();
  }
  if (retrans_ns != 0) config_.retrans_ns = retrans_ns;
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

neighbor_resolution neighbor_cache::resolve(const ipv6_bytes& addr, rte_mbuf* packet, std::uint64_t now_ns) {
  out_count_ = 0;
  entry* e = entries_.find(addr);
  if (e != nullptr) {
    switch (e->st) {
      case neighbor_state::incomplete: {
        const auto pushed = pool_.enqueue(e->waiting, packet, config_.queue_per_entry);
        if (pushed.reason != pending_pool::bound::none)
          drop(pushed.packet, pushed.reason == pending_pool::bound::per_entry ? counts_.drop_queue_entry
                                                                             : counts_.drop_queue_total);
        return {neighbor_resolve::queued, std::nullopt, out()};
      }
      case neighbor_state::reachable:
        // ReachableTime passed without confirmation: STALE (7.3.3), and
        // this packet starts the delay before a probe.
        if (now_ns >= e->deadline) enter(*e, neighbor_state::delay, now_ns);
        return {neighbor_resolve::known, e->mac, {}};
      case neighbor_state::stale:
        enter(*e, neighbor_state::delay, now_ns);  // 7.3.3: the first packet sent to a STALE entry
        return {neighbor_resolve::known, e->mac, {}};
      case neighbor_state::delay:
      case neighbor_state::probe: return {neighbor_resolve::known, e->mac, {}};
    }
  }
  // A new resolution (7.2.2): an entry and a place in the pool that no
  // other address gives up.
  if (pool_.full()) {
    ++counts_.drop_queue_total;
    return {neighbor_resolve::dropped_queue_full, std::nullopt, {}};
  }
  e = add(addr, true);
  if (e == nullptr) {
    ++counts_.table_full;
    return {neighbor_resolve::dropped_queue_full, std::nullopt, out()};
  }
  e->since = now_ns;
  e->probes = 1;
  enter(*e, neighbor_state::incomplete, now_ns);
  ++counts_.solicitations;
  pool_.push(e->waiting, packet);
  return {neighbor_resolve::send_solicitation, std::nullopt, out()};
}

neighbor_update neighbor_cache::on_advertisement(const ipv6_bytes& target, std::optional<mac_address> lladdr,
                                                 bool router, bool solicited, bool override, std::uint64_t now_ns) {
  out_count_ = 0;
  entry* e = entries_.find(target);
  if (e == nullptr) return {};  // 7.2.5: no entry, the advertisement is silently discarded
  if (e->st == neighbor_state::incomplete) {
    if (!lladdr) return {};  // 7.2.5: without a target link-layer address it is discarded
    e->mac = *lladdr;
    e->router = router;
    enter(*e, solicited ? neighbor_state::reachable : neighbor_state::stale, now_ns);
    ++counts_.resolved;
    send_all(*e);
    return {out(), e->mac, false};
  }
  const bool differs = lladdr && *lladdr != e->mac;
  if (!override && differs) {
    // 7.2.5: not an override and a different address: a REACHABLE entry
    // becomes STALE, nothing else changes.
    if (e->st == neighbor_state::reachable) enter(*e, neighbor_state::stale, now_ns);
    return {};
  }
  if (differs) e->mac = *lladdr;
  if (solicited)
    enter(*e, neighbor_state::reachable, now_ns);
  else if (differs)
    enter(*e, neighbor_state::stale, now_ns);
  const bool cleared = e->router && !router;
  e->router = router;
  return {{}, e->mac, cleared};
}

std::span<rte_mbuf* const> neighbor_cache::on_solicitation_or_other(const ipv6_bytes& source,
                                                                    const mac_address& lladdr, std::uint64_t now_ns) {
  out_count_ = 0;
  entry* e = entries_.find(source);
  if (e == nullptr) {
    // 7.2.3: create a STALE entry; it never pushes out a resolution with
    // packets waiting.
    e = add(source, false);
    if (e == nullptr) {
      ++counts_.table_full;
      return {};
    }
    e->mac = lladdr;
    e->since = now_ns;
    enter(*e, neighbor_state::stale, now_ns);
    return {};
  }
  if (e->st == neighbor_state::incomplete) {
    e->mac = lladdr;
    enter(*e, neighbor_state::stale, now_ns);
    ++counts_.resolved;
    send_all(*e);
    return out();
  }
  if (e->mac != lladdr) {
    e->mac = lladdr;
    enter(*e, neighbor_state::stale, now_ns);
  }
  return {};
}

void neighbor_cache::confirm(const ipv6_bytes& addr, std::uint64_t now_ns) {
  entry* e = entries_.find(addr);
  if (e != nullptr && e->st != neighbor_state::incomplete) enter(*e, neighbor_state::reachable, now_ns);
}

neighbor_expiry neighbor_cache::expire(std::uint64_t now_ns) {
  out_count_ = 0;
  std::size_t m = 0, u = 0;
  next_deadline_ = no_deadline;
  entries_.erase_if([&](const ipv6_bytes& addr, entry& e) {
    if (now_ns < e.deadline) {
      arm(e, e.deadline);
      return false;
    }
    switch (e.st) {
      case neighbor_state::incomplete:
        if (e.probes < config_.max_multicast_solicit) {  // 7.2.2: again every RetransTimer
          ++e.probes;
          ++counts_.solicitations;
          multicast_[m++] = addr;
          arm(e, now_ns + config_.retrans_ns);
          return false;
        }
        // 7.2.2: no answer after MAX_MULTICAST_SOLICIT: the packets are
        // dropped (the owner may answer them with address unreachable).
        ++counts_.failed;
        drop_all(e, counts_.drop_failed);
        return true;
      case neighbor_state::reachable: enter(e, neighbor_state::stale, now_ns); return false;
      case neighbor_state::stale: ++counts_.forgotten; return true;
      case neighbor_state::delay:
        // 7.3.3: no confirmation within DELAY_FIRST_PROBE_TIME: probe.
        e.probes = 1;
        ++counts_.probes;
        unicast_[u++] = {addr, e.mac};
        enter(e, neighbor_state::probe, now_ns);
        return false;
      case neighbor_state::probe:
        if (e.probes < config_.max_unicast_solicit) {
          ++e.probes;
          ++counts_.probes;
          unicast_[u++] = {addr, e.mac};
          arm(e, now_ns + config_.retrans_ns);
          return false;
        }
        ++counts_.unreachable;  // 7.3.3: the entry is deleted
        return true;
    }
    return false;
  });
  return {out(), {multicast_.data(), m}, {unicast_.data(), u}};
}

std::span<rte_mbuf* const> neighbor_cache::clear() {
  out_count_ = 0;
  entries_.erase_if([&](const ipv6_bytes&, entry& e) {
    drop_all(e, counts_.drop_cleared);
    return true;
  });
  next_deadline_ = no_deadline;
  return out();
}

std::optional<neighbor_state> neighbor_cache::state(const ipv6_bytes& addr) const {
  const entry* e = entries_.find(addr);
  if (e == nullptr) return std::nullopt;
  return e->st;
}

neighbor_cache::entry* neighbor_cache::add(const ipv6_bytes& addr, bool may_evict_incomplete) {
  if (entries_.full() && !evict(may_evict_incomplete)) return nullptr;
  return entries_.insert(addr);
}

// A full table gives up its oldest entry that is not being resolved (STALE
// first, as the least known); only when every entry is INCOMPLETE, and the
// caller allows it, the oldest of those goes, its packets dropped and counted.
bool neighbor_cache::evict(bool may_evict_incomplete) {
  const auto rank = [](neighbor_state s) {
    return s == neighbor_state::stale ? 0 : s == neighbor_state::incomplete ? 2 : 1;
  };
  ipv6_bytes victim{};
  const entry* oldest = nullptr;
  entries_.for_each([&](const ipv6_bytes& addr, const entry& e) {
    const bool better = oldest == nullptr || rank(e.st) < rank(oldest->st) ||
                        (rank(e.st) == rank(oldest->st) && e.since < oldest->since);
    if (better) {
      victim = addr;
      oldest = &e;
    }
  });
  if (oldest == nullptr || (oldest->st == neighbor_state::incomplete && !may_evict_incomplete)) return false;
  drop_all(*entries_.find(victim), counts_.drop_evicted);
  entries_.erase(victim);
  ++counts_.evicted;
  return true;
}

void neighbor_cache::send_all(entry& e) {
  while (e.waiting.queued > 0) out_[out_count_++] = pool_.pop(e.waiting);
}

void neighbor_cache::drop_all(entry& e, std::uint64_t& reason) {
  while (e.waiting.queued > 0) drop(pool_.pop(e.waiting), reason);
}

void neighbor_cache::drop(rte_mbuf* packet, std::uint64_t& reason) {
  ++reason;
  out_[out_count_++] = packet;
}

}  // namespace affine::stack
