// The stack's side of IPv6 neighbors (issue 21): the neighbor cache
// (stack/ip/neighbor_cache.hh, RFC 4861 7.2 and 7.3) fed from Neighbor
// Discovery and holding packets while their next hop resolves, and core
// 0's timers for it and for the interface (DAD, RFC 4862 5.4; routers'
// lifetimes, RFC 4861 6.3.4).

#include <rte_mbuf.h>

#include <mutex>

#include "affine/log.hh"
#include "stack/per_core.hh"
#include "stack/stack.hh"
#include "stack/wire/ethernet.hh"
#include "stack/wire/ndp.hh"

namespace affine::stack {

std::vector<ipv6_interface::address_entry> stack::ipv6_addresses() {
  if (!v6_) return {};
  std::lock_guard g(v6_lock_);
  return {v6_->addresses().begin(), v6_->addresses().end()};
}

ipv6_interface::counters stack::ipv6_counts() {
  if (!v6_) return {};
  std::lock_guard g(v6_lock_);
  return v6_->counts();
}

bool stack::ipv6_group_mac(const mac_address& mac) {
  if (!v6_ || mac[0] != 0x33 || mac[1] != 0x33) return false;
  std::lock_guard g(v6_lock_);
  return v6_->accepts(mac);
}

void stack::learn_neighbor(per_core& pc, const ipv6_bytes& addr, const mac_address& mac, std::uint64_t now,
                           bool from_router) {
  std::lock_guard g(v6_lock_);
  for (rte_mbuf* w : nd_.on_solicitation_or_other(addr, mac, now, from_router)) {
    mac_field{0}.set({rte_pktmbuf_mtod(w, std::byte*), w->data_len}, mac);
    bump(pc.counters.tx_packets);
    pc.tx.send(w);
  }
}

void stack::advertised_neighbor(per_core& pc, const neighbor_advertisement& na, std::uint64_t now) {
  std::lock_guard g(v6_lock_);
  const auto r = nd_.on_advertisement(na.target, na.target_link_layer, na.router, na.solicited, na.override, now);
  if (r.router_cleared) {
    v6_->router_gone(na.target);
    v6_changes_.fetch_add(1, std::memory_order_release);
  }
  if (!r.mac) return;
  for (rte_mbuf* w : r.send) {
    mac_field{0}.set({rte_pktmbuf_mtod(w, std::byte*), w->data_len}, *r.mac);
    bump(pc.counters.tx_packets);
    pc.tx.send(w);
  }
}

// The frame's destination MAC is filled in here: from the neighbor cache,
// or once the next hop answers (the cache holds the frame until then).
void stack::transmit_ipv6(per_core& pc, rte_mbuf* m, const ipv6_bytes& next_hop, std::uint64_t now) {
  std::optional<mac_address> mac;
  neighbor_resolve action = neighbor_resolve::known;
  {
    std::lock_guard g(v6_lock_);
    const neighbor_resolution r = nd_.resolve(next_hop, m, now);
    action = r.action;
    mac = r.mac;
    for (rte_mbuf* d : r.drop) {
      rte_pktmbuf_free(d);
      pc.counters.count(drop::nd_queue_full);
    }
  }
  switch (action) {
    case neighbor_resolve::known:
      mac_field{0}.set({rte_pktmbuf_mtod(m, std::byte*), m->data_len}, *mac);
      bump(pc.counters.tx_packets);
      pc.tx.send(m);
      return;
    case neighbor_resolve::send_solicitation:
      send_solicitation(pc, next_hop, std::nullopt, false, now);
      poke_timer(*cores_[0]);  // core 0's timer fiber repeats it or gives up
      return;
    case neighbor_resolve::queued: return;
    case neighbor_resolve::dropped_queue_full:
      rte_pktmbuf_free(m);
      pc.counters.count(drop::nd_queue_full);
      return;
  }
}

std::uint64_t stack::ipv6_deadline() {
  if (!v6_) return UINT64_MAX;
  std::lock_guard g(v6_lock_);
  return std::min(v6_->next_deadline(), nd_.next_deadline());
}

// RFC 4862 5.4.2: join the groups (an MLD report), then probe; the first
// probe goes out from core 0's timer fiber at once.
void stack::start_ipv6(per_core& pc, std::uint64_t now) {
  if (!v6_) return;
  {
    std::lock_guard g(v6_lock_);
    v6_->start(now);
    v6_changes_.fetch_add(1, std::memory_order_release);
  }
  send_mld_report(pc);
  poke_timer(*cores_[0]);
}

void stack::ipv6_timers(per_core& pc, std::uint64_t now) {
  if (!v6_) return;
  std::vector<ipv6_bytes> probe, ready;
  std::vector<ipv6_bytes> multicast;
  std::vector<std::pair<ipv6_bytes, mac_address>> unicast;
  {
    std::lock_guard g(v6_lock_);
    const ipv6_interface::due d = v6_->expire(now);
    v6_changes_.fetch_add(1, std::memory_order_release);  // DAD may have ended, a router's lifetime too
    probe.assign(d.probe.begin(), d.probe.end());
    ready.assign(d.ready.begin(), d.ready.end());
    const neighbor_expiry e = nd_.expire(now);
    for (rte_mbuf* m : e.drop) {
      rte_pktmbuf_free(m);
      pc.counters.count(drop::nd_unresolved);
    }
    multicast.assign(e.multicast.begin(), e.multicast.end());
    unicast.assign(e.unicast.begin(), e.unicast.end());
  }
  for (const ipv6_bytes& a : probe) send_solicitation(pc, a, std::nullopt, true, now);
  for (const ipv6_bytes& a : multicast) send_solicitation(pc, a, std::nullopt, false, now);
  for (const auto& [a, mac] : unicast) send_solicitation(pc, a, mac, false, now);
  if (ready.empty()) return;
  // RFC 4861 7.2.6: announce the new addresses to all nodes (Override
  // set: this host holds them); the MLD report now from the link-local one.
  for (const ipv6_bytes& a : ready) {
    AFFINE_LOG_INFO("stack on {}: {} assigned (RFC 4862 5.4: no duplicate answered)", port_.name(),
              net::ipv6_address{a}.to_string());
    const neighbor_advertisement na{.override = true, .target = a, .target_link_layer = mac_};
    send_advertisement(pc, na, all_nodes, std::nullopt, now);
  }
  send_mld_report(pc);
}

}  // namespace affine::stack
