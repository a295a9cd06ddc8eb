#include "stack/ip/arp_cache.hh"

#include <algorithm>
#include <cassert>

namespace affine::stack {

arp_cache::arp_cache(const arp_config& config)
    : config_(config),
      entries_(config.capacity),
      pool_(config.queue_total),
      out_(config.queue_total),
      requests_(config.capacity) {
  assert(config.queue_per_entry > 0 && config.queue_total > 0 && config.max_requests > 0);
}

std::optional<mac_address> arp_cache::lookup(std::uint32_t ip, std::uint64_t now_ns) const {
  if (auto a = lookup_answer(ip, now_ns)) return a->mac;
  return std::nullopt;
}

std::optional<arp_cache::answer> arp_cache::lookup_answer(std::uint32_t ip, std::uint64_t now_ns) const {
  const entry* e = entries_.find(ip);
  if (e == nullptr || e->st != state::reachable || now_ns >= e->deadline) return std::nullopt;
  return answer{e->mac, e->deadline};
}

arp_resolution arp_cache::resolve(std::uint32_t ip, rte_mbuf* packet, std::uint64_t now_ns) {
  changed();
  out_count_ = 0;
  entry* e = entries_.find(ip);
  if (e != nullptr && e->st == state::reachable && now_ns < e->deadline) return {arp_resolve::known, {}};
  if (e != nullptr && e->st == state::incomplete) {
    enqueue(*e, packet);
    return {arp_resolve::queued, out()};
  }
  // A new resolution: no entry, or an answer gone stale. It needs a place
  // in the pool that no other address gives up.
  if (pool_.full()) {
    ++counts_.drop_queue_total;
    return {arp_resolve::dropped_queue_full, {}};
  }
  if (e == nullptr) e = add(ip, true);
  e->st = state::incomplete;
  e->requests = 1;
  e->since = now_ns;
  arm(*e, now_ns + config_.retry_ns);
  ++counts_.requests;
  pool_.push(e->waiting, packet);
  return {arp_resolve::send_request, out()};
}

std::span<rte_mbuf* const> arp_cache::on_arp(std::uint32_t sender_ip, const mac_address& sender_mac,
                                              bool target_is_us, std::uint64_t now_ns) {
  changed();
  out_count_ = 0;
  // RFC 5227 2.1.1: a probe's sender address is 0.0.0.0; it maps nothing.
  if (sender_ip == 0) {
    ++counts_.ignored;
    return {};
  }
  entry* e = entries_.find(sender_ip);
  if (e == nullptr) {
    // RFC 826 "Packet Reception": a new pair is added only when we are the
    // target, so ARP broadcasts between other hosts (and gratuitous ARP
    // from unknown hosts) fill nothing. Pending resolutions are not pushed
    // out for it: the pair will be learnt when it is needed.
    if (!target_is_us) return {};
    e = add(sender_ip, false);
    if (e == nullptr) {
      ++counts_.table_full;
      return {};
    }
  } else if (e->st == state::incomplete) {
    // RFC 1122 2.3.2.2: the saved packets go out once the address is known.
    ++counts_.resolved;
    while (e->waiting.queued > 0) out_[out_count_++] = pool_.pop(e->waiting);
  }
  // RFC 826 "Packet Reception": an existing pair is always updated (the
  // merge flag), which also refreshes its timeout (RFC 1122 2.3.2.1).
  e->mac = sender_mac;
  e->st = state::reachable;
  e->since = now_ns;
  arm(*e, now_ns + config_.reachable_ns);
  return out();
}

arp_expiry arp_cache::expire(std::uint64_t now_ns) {
  changed();
  out_count_ = 0;
  request_count_ = 0;
  next_deadline_ = no_deadline;
  entries_.erase_if([&](std::uint32_t ip, entry& e) {
    if (now_ns < e.deadline) {
      arm(e, e.deadline);
      return false;
    }
    // RFC 1122 2.3.2.1 (timeout): an answer is not trusted for ever.
    if (e.st == state::reachable) {
      ++counts_.expired;
      return true;
    }
    // RFC 1122 2.3.2.1: ask again, at most once per retry_ns ...
    if (e.requests < config_.max_requests) {
      ++e.requests;
      ++counts_.requests;
      requests_[request_count_++] = ip;
      arm(e, now_ns + config_.retry_ns);
      return false;
    }
    // ... and give up after max_requests; the waiting packets are dropped.
    ++counts_.failed;
    drop_all(e, counts_.drop_failed);
    return true;
  });
  return {out(), {requests_.data(), request_count_}};
}

std::span<rte_mbuf* const> arp_cache::clear() {
  changed();
  out_count_ = 0;
  entries_.erase_if([&](std::uint32_t, entry& e) {
    drop_all(e, counts_.drop_cleared);
    return true;
  });
  next_deadline_ = no_deadline;
  return out();
}

arp_cache::entry* arp_cache::add(std::uint32_t ip, bool may_evict_pending) {
  if (entries_.full() && !evict(may_evict_pending)) return nullptr;
  return entries_.insert(ip);
}

// A full table gives up its oldest resolved entry (it costs one request to
// learn again); only when every entry is still being resolved, and the
// caller allows it, the oldest of those goes, its packets dropped and counted.
bool arp_cache::evict(bool may_evict_pending) {
  std::uint32_t victim = 0;
  const entry* oldest = nullptr;
  entries_.for_each([&](std::uint32_t ip, const entry& e) {
    const bool better = oldest == nullptr || (e.st == state::reachable && oldest->st != state::reachable) ||
                        (e.st == oldest->st && e.since < oldest->since);
    if (better) {
      victim = ip;
      oldest = &e;
    }
  });
  if (oldest == nullptr || (oldest->st == state::incomplete && !may_evict_pending)) return false;
  drop_all(*entries_.find(victim), counts_.drop_evicted);
  entries_.erase(victim);
  ++counts_.evicted;
  return true;
}

void arp_cache::arm(entry& e, std::uint64_t deadline) {
  e.deadline = deadline;
  next_deadline_ = std::min(next_deadline_, deadline);
}

void arp_cache::enqueue(entry& e, rte_mbuf* packet) {
  // RFC 1122 2.3.2.2: "SHOULD save at least one (the latest) packet": when
  // a bound is reached the oldest waiting packet of this address gives way.
  // An incomplete entry always holds one, so this never fails.
  const auto out = pool_.enqueue(e.waiting, packet, config_.queue_per_entry);
  if (out.reason != pending_pool::bound::none)
    drop(out.packet, out.reason == pending_pool::bound::per_entry ? counts_.drop_queue_entry : counts_.drop_queue_total);
}

void arp_cache::drop_all(entry& e, std::uint64_t& reason) {
  while (e.waiting.queued > 0) drop(pool_.pop(e.waiting), reason);
}

// Every dropped packet passes here: counted by its reason, handed back to free.
void arp_cache::drop(rte_mbuf* packet, std::uint64_t& reason) {
  ++reason;
  out_[out_count_++] = packet;
}

}  // namespace affine::stack
