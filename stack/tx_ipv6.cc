// IPv6 packets out (issue 21): built in one mbuf on the calling core, the
// next hop resolved through the shared neighbor cache (RFC 4861 7.2), sent
// on the core's TX queue. Neighbor Discovery, DAD and MLD messages, and
// ICMPv6 errors (RFC 4443 2.4) with their rate limit.

#include <rte_mbuf.h>

#include <algorithm>
#include <cstring>
#include <mutex>

#include "stack/per_core.hh"
#include "stack/stack.hh"
#include "stack/tx_mbuf.hh"
#include "stack/wire/ethernet.hh"
#include "stack/wire/icmpv6.hh"
#include "stack/wire/ipv6.hh"
#include "stack/wire/mld.hh"
#include "stack/wire/ndp.hh"

namespace affine::stack {

namespace {

constexpr std::size_t eth_len = 14;
constexpr std::size_t ip6_len = ipv6_view::header_length;

}  // namespace

rte_mbuf* stack::ipv6_frame(per_core& pc, const ipv6_header& h, std::size_t l4_bytes, l4_writer write) {
  rte_mbuf* m = rte_pktmbuf_alloc(pc.pool);
  if (m == nullptr) {
    pc.counters.count(drop::no_mbuf);
    return nullptr;
  }
  std::span<std::byte> out = tx_room(m);
  if (eth_len + ip6_len + l4_bytes > out.size()) {
    rte_pktmbuf_free(m);
    pc.counters.count(drop::tx_too_big);
    return nullptr;
  }
  const std::size_t l4 = write(out.subspan(eth_len + ip6_len, l4_bytes), false);
  ipv6_header ih = h;
  ih.payload_length = std::uint16_t(l4);
  (void)emit_ipv6(ih, out.subspan(eth_len));
  (void)emit_ethernet({.dst = {}, .src = mac_, .type = ether_type::ipv6}, out);
  set_frame_length(m, eth_len + ip6_len + l4);
  return m;
}

// A unicast destination's link-layer address comes from this core's copy
// of the last answer (no lock: a flow's segments), else from the neighbor
// cache where it is known, else through resolution (transmit_ipv6).
void stack::send_ipv6(per_core& pc, const ipv6_header& h, std::size_t l4_bytes, l4_writer write, std::uint64_t now,
                      std::optional<mac_address> dst_mac) {
  std::optional<ipv6_bytes> next_hop;
  if (!dst_mac && is_multicast(h.dst)) dst_mac = multicast_mac(h.dst);  // RFC 2464 7
  if (!dst_mac && h.dst == pc.hop6_dst && now < pc.hop6_fresh_until && nd_.changes() == pc.hop6_changes &&
      v6_changes_.load(std::memory_order_acquire) == pc.hop6_v6_changes)
    dst_mac = pc.hop6_mac;
  if (!dst_mac) {
    std::lock_guard g(v6_lock_);
    next_hop = v6_->next_hop(h.dst, now);
    if (next_hop)
      if (const auto a = nd_.lookup(*next_hop, now)) {
        dst_mac = a->mac;
        pc.hop6_dst = h.dst;
        pc.hop6_mac = a->mac;
        pc.hop6_fresh_until = a->fresh_until;
        pc.hop6_changes = nd_.changes();
        pc.hop6_v6_changes = v6_changes_.load(std::memory_order_relaxed);
      }
  }
  if (!dst_mac && !next_hop) {
    pc.counters.count(drop::no_route);
    return;
  }
  rte_mbuf* m = ipv6_frame(pc, h, l4_bytes, write);
  if (m == nullptr) return;
  if (dst_mac) {
    mac_field{0}.set({rte_pktmbuf_mtod(m, std::byte*), m->data_len}, *dst_mac);
    bump(pc.counters.tx_packets);
    pc.tx.send(m);
    return;
  }
  transmit_ipv6(pc, m, *next_hop, now);
}

// RFC 6437 3 (and RFC 8200 6): each transport flow gets a label of its
// own, the same on all its packets (retransmissions too), that no one
// outside can guess: SipHash-2-4 of its connection id and protocol, keyed
// at start, as Linux labels from a flow's hash (auto_flowlabels). Routers
// and LAGs hash it to spread flows over paths without reading past the
// IPv6 header (RFC 6438). Labels are not reflected: a label names the
// sender's flow.
std::uint32_t stack::flow_label(const flow_tuple& t, std::uint8_t proto) const {
  std::array<std::byte, tcp::max_connection_id + 1> id;
  const std::size_t n = tcp::put_connection_id(t, std::span(id).first<tcp::max_connection_id>());
  id[n] = std::byte{proto};
  const auto label = std::uint32_t(tcp::siphash_2_4(flow_label_key_, std::span(id).first(n + 1))) & 0xfffff;
  return label != 0 ? label : 1;  // 0: no label
}

// An ICMPv6 message from `src` to `dst`: written after the IPv6 header by
// `write`, which returns its length.
void stack::send_icmpv6(per_core& pc, const ipv6_bytes& src, const ipv6_bytes& dst, std::uint8_t hop_limit,
                        std::size_t bytes, l4_writer write, std::uint64_t now, std::optional<mac_address> dst_mac) {
  const ipv6_header h{.src = src, .dst = dst, .next = next_header::icmpv6, .hop_limit = hop_limit};
  send_ipv6(pc, h, bytes, write, now, dst_mac);
}

void stack::echo6_reply(per_core& pc, const ipv6_header& ip, const icmpv6_view& v, std::uint64_t now) {
  icmpv6_message reply{.type = icmpv6_type::echo_reply, .id = v.id(), .seq = v.seq(), .data = v.data()};
  bump(pc.counters.icmp_echo_replies);
  send_icmpv6(pc, ip.dst, ip.src, 64, icmpv6_view::header_length + reply.data.size(),
              [&](std::span<std::byte> out, bool) -> std::size_t {
                auto n = emit_icmpv6(reply, ip.dst, ip.src, out);
                return n ? *n : 0;
              },
              now);
}

// RFC 4443 2.4: an error about `packet` (as much as fits in 1280 bytes),
// to its source, from the address it was sent to (or one of ours of its
// scope when that was a group, 2.2); never about an ICMPv6 error, nor to
// an unspecified or multicast source (2.4(e)); at most about
// icmpv6_errors_per_s in all (2.4(f)), each second's budget drawn at
// random as RFC 5961's challenge ACKs are (tcp/challenge_budget.hh).
void stack::icmpv6_error(per_core& pc, icmpv6_type type, std::uint8_t code, std::uint32_t pointer,
                         std::span<const std::byte> packet, std::uint64_t now) {
  auto ip = ipv6_view::parse(packet);
  if (!ip) return;
  const ipv6_header h = ip->header();
  if (is_unspecified(h.src) || is_multicast(h.src)) return;
  if (h.next == next_header::icmpv6 && ip->payload().size() >= 1 && std::uint8_t(ip->payload()[0]) < 128) return;
  if (!icmpv6_errors_.take(now)) {
    pc.counters.count(drop::icmp_rate_limited);
    return;
  }
  std::optional<ipv6_bytes> src = h.dst;
  if (is_multicast(h.dst)) {
    std::lock_guard g(v6_lock_);
    src = v6_->source_for(h.src);
  }
  if (!src) return;
  const std::size_t quote = std::min(packet.size(), icmpv6_error_quote_max);
  icmpv6_message msg{.type = type, .code = code, .pointer = pointer, .data = packet.first(quote)};
  send_icmpv6(pc, *src, h.src, 64, icmpv6_view::header_length + quote,
              [&](std::span<std::byte> out, bool) -> std::size_t {
                auto n = emit_icmpv6(msg, *src, h.src, out);
                return n ? *n : 0;
              },
              now);
}

void stack::send_advertisement(per_core& pc, const neighbor_advertisement& na, const ipv6_bytes& dst,
                               std::optional<mac_address> dst_mac, std::uint64_t now) {
  // From the target itself (RFC 4861 7.2.4: "the Target Address of the
  // solicitation" is one of ours, so it is the source).
  bump(pc.counters.nd_advertisements_sent);
  send_icmpv6(pc, na.target, dst, ndp_hop_limit, 32,
              [&](std::span<std::byte> out, bool) -> std::size_t {
                auto n = emit_neighbor_advertisement(na, na.target, dst, out);
                return n ? *n : 0;
              },
              now, dst_mac);
}

// RFC 4861 7.2.2: to the target's solicited-node group (multicast), or to
// its cached address (unicast, NUD's probe); from an address of ours of
// the target's scope, or from :: for DAD (RFC 4862 5.4.2).
void stack::send_solicitation(per_core& pc, const ipv6_bytes& target, std::optional<mac_address> unicast_to,
                              bool dad, std::uint64_t now) {
  std::optional<ipv6_bytes> src = ipv6_bytes{};
  if (!dad) {
    std::lock_guard g(v6_lock_);
    src = v6_->source_for(target);
  }
  if (!src) return;
  const ipv6_bytes dst = unicast_to ? target : solicited_node(target);
  bump(pc.counters.nd_solicitations_sent);
  send_icmpv6(pc, *src, dst, ndp_hop_limit, 32,
              [&](std::span<std::byte> out, bool) -> std::size_t {
                auto n = emit_neighbor_solicitation(target, mac_, *src, dst, out);
                return n ? *n : 0;
              },
              now, unicast_to ? unicast_to : std::optional<mac_address>{multicast_mac(dst)});
}

// RFC 3810 6.1 / RFC 4862 5.4.2: the groups joined, reported before DAD
// probes (from :: while no link-local address is preferred).
void stack::send_mld_report(per_core& pc) {
  std::vector<mld_record> records;
  ipv6_bytes src{};
  {
    std::lock_guard g(v6_lock_);
    for (const ipv6_bytes& group : v6_->groups())
      if (group != all_nodes) records.push_back(mld_join(group));  // RFC 3810 6: all-nodes is never reported
    for (const auto& e : v6_->addresses())
      if (e.state == ipv6_address_state::preferred && is_link_local(e.address.address)) src = e.address.address;
  }
  if (records.empty()) return;
  rte_mbuf* m = rte_pktmbuf_alloc(pc.pool);
  if (m == nullptr) {
    pc.counters.count(drop::no_mbuf);
    return;
  }
  std::span<std::byte> out = tx_room(m);
  const auto n = emit_mld_report(src, records, out.subspan(eth_len));
  if (!n || eth_len + *n > out.size()) {
    rte_pktmbuf_free(m);
    pc.counters.count(drop::tx_too_big);
    return;
  }
  (void)emit_ethernet({.dst = multicast_mac(all_mldv2_routers), .src = mac_, .type = ether_type::ipv6}, out);
  set_frame_length(m, eth_len + *n);
  bump(pc.counters.tx_packets);
  pc.tx.send(m);
}

}  // namespace affine::stack
