#include "stack/ip/arp_cache.hh"

#include <algorithm>
#include <cassert>
#include <utility>

namespace affine::stack {

arp_cache::arp_cache(const arp_config& config)
    : config_(config),
      entries_(config.capacity),
      pool_(config.queue_total),
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
  pool_.begin_call();
  entry* e = entries_.find(ip);
  if (e != nullptr && e->st == state::reachable && now_ns < e->deadline) return {arp_resolve::known, {}};
  if (e != nullptr && e->st == state::incomplete) {
    // RFC 1122 2.3.2.2: "SHOULD save at least one (the latest) packet": when
    // a bound is reached the oldest waiting packet of this address gives way.
    // An incomplete entry always holds one, so this never fails.
    pool_.enqueue(e->waiting, packet, config_.queue_per_entry, counts_.drop_queue_entry, counts_.drop_queue_total);
    return {arp_resolve::queued, pool_.handed_back()};
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
  return {arp_resolve::send_request, pool_.handed_back()};
}

std::span<rte_mbuf* const> arp_cache::on_arp(std::uint32_t sender_ip, const mac_address& sender_mac,
                                              bool target_is_us, std::uint64_t now_ns) {
  changed();
  pool_.begin_call();
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
    pool_.release(e->waiting);
  }
  // RFC 826 "Packet Reception": an existing pair is always updated (the
  // merge flag), which also refreshes its timeout (RFC 1122 2.3.2.1).
  e->mac = sender_mac;
  e->st = state::reachable;
  e->since = now_ns;
  arm(*e, now_ns + config_.reachable_ns);
  return pool_.handed_back();
}

arp_expiry arp_cache::expire(std::uint64_t now_ns) {
  changed();
  pool_.begin_call();
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
    counts_.drop_failed += pool_.release(e.waiting);
    return true;
  });
  return {pool_.handed_back(), {requests_.data(), request_count_}};
}

std::span<rte_mbuf* const> arp_cache::clear() {
  changed();
  pool_.begin_call();
  entries_.erase_if([&](std::uint32_t, entry& e) {
    counts_.drop_cleared += pool_.release(e.waiting);
    return true;
  });
  next_deadline_ = no_deadline;
  return pool_.handed_back();
}

arp_cache::entry* arp_cache::add(std::uint32_t ip, bool may_evict_pending) {
  if (entries_.full() && !evict(may_evict_pending)) return nullptr;
  return entries_.insert(ip);
}

// A full table gives up its oldest resolved entry (it costs one request to
// learn again); only when every entry is still being resolved, and the
// caller allows it, the oldest of those goes, its packets dropped and counted.
bool arp_cache::evict(bool may_evict_pending) {
  const auto victim = entries_.first_by([](const entry& a, const entry& b) {
    return std::pair(a.st != state::reachable, a.since) < std::pair(b.st != state::reachable, b.since);
  });
  entry* e = victim ? entries_.find(*victim) : nullptr;
  if (e == nullptr || (e->st == state::incomplete && !may_evict_pending)) return false;
  counts_.drop_evicted += pool_.release(e->waiting);
  entries_.erase(*victim);
  ++counts_.evicted;
  return true;
}

void arp_cache::arm(entry& e, std::uint64_t deadline) {
  e.deadline = deadline;
  next_deadline_ = std::min(next_deadline_, deadline);
}

}  // namespace affine::stack
