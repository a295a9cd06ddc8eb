// Frames out: IPv4 datagrams built in one mbuf on the calling core, the next
// hop resolved through the shared ARP cache (or the core's copy of its last
// answer), sent on the core's TX queue.

#include <rte_mbuf.h>

#include <cstring>
#include <mutex>

#include "stack/per_core.hh"
#include "stack/stack.hh"
#include "stack/tx_mbuf.hh"
#include "stack/tcp/reset.hh"
#include "stack/wire/arp.hh"
#include "stack/wire/ethernet.hh"
#include "stack/wire/icmp.hh"
#include "stack/wire/ipv6.hh"
#include "stack/wire/tcp.hh"

namespace affine::stack {

namespace {

constexpr std::size_t eth_len = 14;
constexpr std::size_t ip_len = 20;
// RFC 8200 3 leaves it to the host; Linux's default (net.ipv6.conf.*.hop_limit).
constexpr std::uint8_t unicast_hop_limit = 64;

}  // namespace

void stack::send_ipv4(per_core& pc, std::uint32_t dst, ip_protocol proto, std::size_t l4_bytes, l4_writer write,
                      std::uint64_t now, ip_ecn ecn) {
  const auto next_hop = routes_.next_hop(dst);
  if (!next_hop) {
    pc.counters.count(drop::no_route);
    return;
  }
  rte_mbuf* m = rte_pktmbuf_alloc(pc.pool);
  if (m == nullptr) {
    pc.counters.count(drop::no_mbuf);
    return;
  }
  std::span<std::byte> out = tx_room(m);
  if (eth_len + ip_len + l4_bytes > out.size()) {
    rte_pktmbuf_free(m);
    pc.counters.count(drop::tx_too_big);
    return;
  }
  const bool l4_offload = tx_l4_offload_ && proto != ip_protocol::icmp;
  const std::size_t l4 = write(out.subspan(eth_len + ip_len, l4_bytes), l4_offload);
  ipv4_header ih;
  ih.src = routes_.address();
  ih.dst = dst;
  ih.protocol = proto;
  ih.tos = std::uint8_t(ecn);
  ih.id = pc.ip_id++;
  ih.dont_fragment = dont_fragment(pc, dst, now);  // RFC 1191; this stack never fragments itself
  ih.payload_length = std::uint16_t(l4);
  (void)emit_ipv4(ih, out.subspan(eth_len), tx_ip_offload_ ? checksum_mode::offload : checksum_mode::software);
  (void)emit_ethernet({.dst = {}, .src = mac_, .type = ether_type::ipv4}, out);
  set_frame_length(m, eth_len + ip_len + l4);
  if (tx_ip_offload_) {
    m->l2_len = eth_len;
    m->l3_len = ip_len;
    m->ol_flags |= RTE_MBUF_F_TX_IPV4 | RTE_MBUF_F_TX_IP_CKSUM;
    if (l4_offload) m->ol_flags |= proto == ip_protocol::tcp ? RTE_MBUF_F_TX_TCP_CKSUM : RTE_MBUF_F_TX_UDP_CKSUM;
  }
  transmit(pc, m, *next_hop, now);
}

// Each core keeps its last destination's answer for a second, or until
// another path is reported narrow: one relaxed load a datagram while none
// ever was.
bool stack::dont_fragment(per_core& pc, std::uint32_t dst, std::uint64_t now) {
  const std::uint32_t narrow = narrow_paths_.load(std::memory_order_relaxed);
  if (narrow == 0) return true;
  if (dst != pc.df_dst || narrow != pc.df_narrow || now >= pc.df_fresh_until) {
    {
      std::lock_guard g(pmtu_lock_);
      pc.df_clear = pmtu_.may_fragment(dst, now);
    }
    pc.df_dst = dst;
    pc.df_narrow = narrow;
    pc.df_fresh_until = now + 1'000'000'000;
  }
  return !pc.df_clear;
}

// The frame's destination MAC is filled in here: from the ARP cache, or once
// the next hop answers (the cache holds the frame until then).
void stack::transmit(per_core& pc, rte_mbuf* m, std::uint32_t next_hop, std::uint64_t now) {
  std::span<std::byte> frame{rte_pktmbuf_mtod(m, std::byte*), m->data_len};
  const bool broadcast = routes_.is_broadcast(next_hop);
  std::optional<mac_address> mac;
  if (broadcast)
    mac = broadcast_mac;
  else if (next_hop == pc.hop_ip && now < pc.hop_fresh_until && arp_.changes() == pc.hop_changes)
    mac = pc.hop_mac;  // this core's copy of the answer: no lock
  arp_resolution r{arp_resolve::known, {}};
  if (!mac) {
    std::lock_guard g(arp_lock_);
    if (const auto a = arp_.lookup_answer(next_hop, now)) {
      mac = a->mac;
      pc.hop_ip = next_hop;
      pc.hop_mac = a->mac;
      pc.hop_fresh_until = a->fresh_until;
      pc.hop_changes = arp_.changes();
    }
    if (!mac) {
      r = arp_.resolve(next_hop, m, now);
      for (rte_mbuf* d : r.drop) {
        rte_pktmbuf_free(d);
        pc.counters.count(drop::arp_queue_full);
      }
      if (r.action == arp_resolve::known) mac = arp_.lookup(next_hop, now);
    }
  }
  if (mac) {
    mac_field{0}.set(frame, *mac);
    bump(pc.counters.tx_packets);
    pc.tx.send(m);
    return;
  }
  switch (r.action) {
    case arp_resolve::send_request:
      send_arp(pc, false, broadcast_mac, next_hop);
      poke_timer(*cores_[0]);  // core 0's timer fiber repeats the request or gives up
      break;
    case arp_resolve::queued: break;
    case arp_resolve::dropped_queue_full:
    case arp_resolve::known:  // known and gone again at once: cannot happen under the lock
      rte_pktmbuf_free(m);
      pc.counters.count(drop::arp_queue_full);
      break;
  }
}

void stack::send_ip(per_core& pc, const flow_tuple& t, std::uint8_t proto, std::size_t l4_bytes, l4_writer write,
                    std::uint64_t now, ip_ecn ecn) {
  if (t.v4()) {
    send_ipv4(pc, v4_address(t.remote_addr), ip_protocol(proto), l4_bytes, write, now, ecn);
    return;
  }
  if (pc.label == 0 || proto != pc.label_protocol || t != pc.label_flow) {
    pc.label = flow_label(t, proto);
    pc.label_flow = t;
    pc.label_protocol = proto;
  }
  send_ipv6(pc,
            {.src = t.local_addr, .dst = t.remote_addr, .traffic_class = std::uint8_t(ecn), .flow_label = pc.label,
             .next = proto, .hop_limit = unicast_hop_limit},
            l4_bytes, write, now);
}

void stack::send_tcp(per_core& pc, const flow_tuple& t, const tcp_segment& seg, std::uint64_t now) {
  // Exact: a full-sized segment at a jumbo MTU fills its mbuf to the byte.
  const std::size_t len = tcp_view::min_header_length + tcp_options_length(seg.options) + seg.payload.size();
  bump(pc.counters.tcp_segments_out);
  const pseudo_header ph = outbound_pseudo(t, next_header::tcp);
  send_ip(pc, t, next_header::tcp, len,
          [&](std::span<std::byte> out, bool offload) -> std::size_t {
            auto n = emit_tcp(seg, ph, out, offload ? checksum_mode::offload : checksum_mode::software);
            return n ? *n : 0;
          },
          now, seg.ecn);
}

void stack::send_arp(per_core& pc, bool reply, const mac_address& dst_mac, std::uint32_t target_ip) {
  rte_mbuf* m = rte_pktmbuf_alloc(pc.pool);
  if (m == nullptr) {
    pc.counters.count(drop::no_mbuf);
    return;
  }
  std::span<std::byte> out = tx_room(m);
  (void)emit_ethernet({.dst = dst_mac, .src = mac_, .type = ether_type::arp}, out);
  arp_packet p{.op = reply ? arp_op::reply : arp_op::request,
               .sender_mac = mac_,
               .sender_ip = routes_.address(),
               .target_mac = reply ? dst_mac : mac_address{},
               .target_ip = target_ip};
  (void)emit_arp(p, out.subspan(eth_len));
  set_frame_length(m, 60);  // the Ethernet minimum (without FCS); the tail is padding
  std::memset(out.data() + eth_len + arp_view::length, 0, 60 - eth_len - arp_view::length);
  bump(reply ? pc.counters.arp_replies_sent : pc.counters.arp_requests_sent);
  bump(pc.counters.tx_packets);
  pc.tx.send(m);
}

// RFC 792, RFC 1122 3.2.2: an error about `datagram` (its header and the
// first 8 bytes after it), to its source; never about an ICMP error, nor
// to a source that is not one host (RFC 1122 3.2.2: zero, a broadcast, a
// multicast group, a loopback address).
void stack::icmp_error(per_core& pc, icmp_type type, std::uint8_t code, std::span<const std::byte> datagram,
                       std::uint32_t to, std::uint64_t now) {
  if (to == 0 || routes_.is_broadcast(to) || (to >> 28) == 0xe || (to >> 24) == 127) return;
  if (auto ip = ipv4_view::parse(datagram); ip && ip->header().protocol == ip_protocol::icmp &&
                                             ip->header().fragment_offset == 0 && !ip->payload().empty()) {
    const auto t = icmp_type(ip->payload()[0]);
    if (t != icmp_type::echo_request && t != icmp_type::echo_reply) return;
  }
  const std::size_t quote = std::min<std::size_t>(datagram.size(), 60 + 8);
  icmp_message msg{.type = type, .code = code, .data = datagram.first(quote)};
  send_ipv4(pc, to, ip_protocol::icmp, icmp_view::header_length + quote,
            [&](std::span<std::byte> out, bool) -> std::size_t {
              auto n = emit_icmp(msg, out);
              return n ? *n : 0;
            },
            now);
}

}  // namespace affine::stack
