// The RX path (DESIGN.md 2, 4): Ethernet, ARP, IPv4 and ICMP, then the
// transport; IPv6 goes on in rx_ipv6.cc. Runs on the reactor that polled the packet; never blocks,
// never runs user code; every packet it refuses is counted under its reason.

#include <rte_mbuf.h>

#include <mutex>

#include "affine/fiber.hh"
#include "reactor/here.hh"
#include "stack/family.hh"
#include "stack/per_core.hh"
#include "stack/stack.hh"
#include "stack/wire/arp.hh"
#include "stack/wire/ethernet.hh"
#include "stack/wire/icmp.hh"
#include "stack/wire/udp.hh"

namespace affine::stack {

namespace {

bool ip_checksum_verified(const rte_mbuf* m) {
  return (m->ol_flags & RTE_MBUF_F_RX_IP_CKSUM_MASK) == RTE_MBUF_F_RX_IP_CKSUM_GOOD;
}
bool ip_checksum_bad(const rte_mbuf* m) {
  return (m->ol_flags & RTE_MBUF_F_RX_IP_CKSUM_MASK) == RTE_MBUF_F_RX_IP_CKSUM_BAD;
}
bool l4_checksum_verified(const rte_mbuf* m) {
  return (m->ol_flags & RTE_MBUF_F_RX_L4_CKSUM_MASK) == RTE_MBUF_F_RX_L4_CKSUM_GOOD;
}
bool l4_checksum_bad(const rte_mbuf* m) {
  return (m->ol_flags & RTE_MBUF_F_RX_L4_CKSUM_MASK) == RTE_MBUF_F_RX_L4_CKSUM_BAD;
}

}  // namespace

void stack::receive(unsigned core, unsigned queue, std::span<rte_mbuf*> pkts) {
  if (rps_ && rps_->steers(queue)) pkts = pkts.first(rps_->steer(core, queue, pkts));
  process(core, pkts, int(queue));
}

void stack::process(unsigned core, std::span<rte_mbuf*> pkts, int queue, std::uint64_t now) {
  per_core& pc = *cores_[core];
  pc.rx_queue = queue;
  pc.batch_of_one = pkts.size() == 1;
  for (rte_mbuf* m : pkts) {
    bump(pc.counters.rx_packets);
    frame_in(pc, m, now);
    rte_pktmbuf_free(m);  // what the stack keeps (TCP data, fragments) it has copied
  }
  settle_batch(pc, now);
}

void stack::frame_in(per_core& pc, rte_mbuf* m, std::uint64_t now) {
  if (m->nb_segs != 1) {  // one frame, one mbuf (every packet pool holds a whole frame): a chain is not ours to parse
    pc.counters.count(layer::ethernet, parse_error::unsupported);
    return;
  }
  const std::span<const std::byte> bytes{rte_pktmbuf_mtod(m, const std::byte*), m->data_len};
  auto eth = ethernet_view::parse(bytes);
  if (!eth) {
    pc.counters.count(layer::ethernet, eth.error());
    return;
  }
  const mac_address dst = eth->dst();
  if (dst != mac_ && dst != broadcast_mac && !ipv6_group_mac(dst)) {
    pc.counters.count(drop::not_our_mac);
    return;
  }
  switch (eth->type()) {
    case ether_type::arp:
    case ether_type::ipv4:
      if (!routes_.has_address()) {  // an IPv6-only port: IPv4 is a protocol it does not speak
        pc.counters.count(drop::unknown_ethertype);
        return;
      }
      if (eth->type() == ether_type::arp)
        arp_in(pc, eth->payload(), now);
      else
        ipv4_in(pc, m, eth->payload(), now);
      return;
    case ether_type::ipv6: ipv6_in(pc, eth->payload(), now); return;
    default: pc.counters.count(drop::unknown_ethertype); return;
  }
}

// RFC 826 "Packet Reception": merge the sender into the cache (creating an
// entry only when we are the target, so a gratuitous ARP from a stranger
// adds nothing), send what waited for it, answer requests for our address.
void stack::arp_in(per_core& pc, std::span<const std::byte> bytes, std::uint64_t now) {
  auto a = arp_view::parse(bytes);
  if (!a) {
    pc.counters.count(layer::arp, a.error());
    return;
  }
  const arp_packet p = a->packet();
  const bool for_us = p.target_ip == routes_.address();
  {
    std::lock_guard g(arp_lock_);
    for (rte_mbuf* w : arp_.on_arp(p.sender_ip, p.sender_mac, for_us, now)) {
      mac_field{0}.set({rte_pktmbuf_mtod(w, std::byte*), w->data_len}, p.sender_mac);
      bump(pc.counters.tx_packets);
      pc.tx.send(w);
    }
  }
  if (!for_us) {
    pc.counters.count(drop::arp_not_for_us);
    return;
  }
  if (p.op == arp_op::request) send_arp(pc, true, p.sender_mac, p.sender_ip);
}

void stack::ipv4_in(per_core& pc, rte_mbuf* m, std::span<const std::byte> bytes, std::uint64_t now) {
  if (ip_checksum_bad(m)) {
    pc.counters.count(layer::ipv4, parse_error::bad_checksum);
    return;
  }
  auto ip = ipv4_view::parse(bytes, ip_checksum_verified(m) ? checksum_mode::offload : checksum_mode::software);
  if (!ip) {
    pc.counters.count(layer::ipv4, ip.error());
    return;
  }
  const ipv4_header h = ip->header();
  if (h.dst != routes_.address() && !routes_.is_broadcast(h.dst)) {
    pc.counters.count(drop::not_our_address);
    return;
  }
  if (l4_checksum_bad(m)) {
    pc.counters.count(h.protocol == ip_protocol::udp ? layer::udp : layer::tcp, parse_error::bad_checksum);
    return;
  }
  if (!ip->is_fragment()) {
    transport_in(pc, h, ip->payload(), l4_checksum_verified(m), now);
    if (h.protocol != ip_protocol::icmp && h.protocol != ip_protocol::tcp && h.protocol != ip_protocol::udp) {
      pc.counters.count(drop::unknown_protocol);
      icmp_error(pc, icmp_type::dest_unreachable, std::uint8_t(unreachable_code::protocol), ip->packet(), h.src, now);
    }
    return;
  }
  // RFC 791 3.2, RFC 815: fragments wait in this core's bounded reassembler.
  const fragment_key key{v4_flow(h.src), v4_flow(h.dst), h.id, std::uint8_t(h.protocol)};
  const reassembly_result r = reassemble(pc, key, h.fragment_offset, h.more_fragments, ip->payload(), ip->packet(), now);
  if (r.status != reassembly_status::complete) return;
  ipv4_header whole = h;
  whole.more_fragments = false;
  whole.fragment_offset = 0;
  whole.payload_length = std::uint16_t(r.payload.size());
  transport_in(pc, whole, r.payload, false, now);
  pc.reasm.release(r.slot);
}

// One fragment of either family into this core's reassembler: `payload`
// lies in `packet`, whose bytes before it are the headers a Time Exceeded
// would quote. A new datagram's deadline may come before the timer fiber
// means to wake (it sleeps for good with nothing armed): it is poked.
reassembly_result stack::reassemble(per_core& pc, const fragment_key& key, std::uint32_t offset, bool more,
                                    std::span<const std::byte> payload, std::span<const std::byte> packet,
                                    std::uint64_t now) {
  const reassembly_result r =
      pc.reasm.add(key, offset, more, payload, now, packet.first(std::size_t(payload.data() - packet.data())));
  if (r.status == reassembly_status::dropped) pc.counters.count(drop::fragment);
  if (r.status == reassembly_status::incomplete &&
      pc.reasm.next_deadline() < pc.wake_at.load(std::memory_order_seq_cst))
    poke_timer(pc);
  return r;
}

// RFC 792, RFC 1122 3.3.2 (IPv4: may), RFC 8200 4.5 (IPv6: should): a
// datagram whose reassembly timed out after its first fragment came is
// answered to its source with Time Exceeded, code 1 (fragment reassembly
// time exceeded), quoting that fragment; without the first fragment, with
// nothing. Linux answers both families so (ip_expire, ip6frag_expire_frag_queue).
// Never about a datagram sent to a group or a broadcast (RFC 1122 3.2.2,
// RFC 4443 2.4(e.3)), nor from an IPv6 address still tentative (RFC 4862
// 5.4).
void stack::reassembly_expired(per_core& pc, const fragment_key& key, std::span<const std::byte> first_fragment,
                               std::uint64_t now) {
  if (is_v4(key.src)) {
    const std::uint32_t dst = v4_address(key.dst);
    if (routes_.is_broadcast(dst) || (dst >> 28) == 0xe) return;
    icmp_error(pc, icmp_type::time_exceeded, std::uint8_t(time_exceeded_code::reassembly), first_fragment,
               v4_address(key.src), now);
    return;
  }
  {
    std::lock_guard g(v6_lock_);
    if (v6_->classify(key.dst) != ipv6_interface::match::unicast) return;
  }
  icmpv6_error(pc, icmpv6_type::time_exceeded, 1, 0, first_fragment, now);
}

void stack::transport_in(per_core& pc, const ipv4_header& ip, std::span<const std::byte> payload, bool l4_checked,
                         std::uint64_t now) {
  switch (ip.protocol) {
    case ip_protocol::tcp:
      tcp_in(pc, v4_flow(ip.dst), v4_flow(ip.src), pseudo_header::ipv4(ip.src, ip.dst, 6), payload, l4_checked,
             ip_ecn(ip.tos & 3), now);
      return;
    case ip_protocol::udp: udp_in(pc, ip, payload, l4_checked, now); return;
    case ip_protocol::icmp: icmp_in(pc, ip, payload, now); return;
  }
}

// RFC 792 / RFC 1122 3.2.2.6: echo requests are answered with the same id,
// sequence and data; destination unreachable goes to the connection its
// quote names (rx_icmp.cc), fragmentation-needed to path MTU discovery.
void stack::icmp_in(per_core& pc, const ipv4_header& ip, std::span<const std::byte> bytes, std::uint64_t now) {
  auto v = icmp_view::parse(bytes);
  if (!v) {
    pc.counters.count(layer::icmp, v.error());
    return;
  }
  if (v->type() == icmp_type::echo_request && ip.dst == routes_.address()) {
    icmp_message reply{.type = icmp_type::echo_reply, .id = v->id(), .seq = v->seq(), .data = v->data()};
    bump(pc.counters.icmp_echo_replies);
    send_ipv4(pc, ip.src, ip_protocol::icmp, icmp_view::header_length + reply.data.size(),
              [&](std::span<std::byte> out, bool) -> std::size_t {
                auto n = emit_icmp(reply, out);
                return n ? *n : 0;
              },
              now);
    return;
  }
  if (v->type() == icmp_type::dest_unreachable && ip.dst == routes_.address())
    if (const auto q = v->quote(); q && icmp_error_in(pc, *v, *q, now)) return;
  pc.counters.count(drop::icmp_ignored);
}

// RFC 768 / RFC 1122 4.1.3.5: a datagram goes to the port bound for it
// (copied into its bounded queue); with none bound it is answered with port
// unreachable (RFC 1122 4.1.3.1), never to a broadcast (RFC 1122 3.2.2).
bool stack::udp_deliver(per_core& pc, const flow_address& local, const flow_address& remote, const udp_view& u) {
  udp_socket* s = find_udp(u.dst_port(), local);
  if (s == nullptr) return false;
  s->lock.lock();
  const bool queued = !s->closed && s->push({reported(remote, s->local().addr.is_v6()), u.src_port()}, u.payload());
  // A wakeup from the RX path is sync, as the kernel's sock_def_readable;
  // the placement policy decides whether that counts (seed 000).
  if (queued) s->readers.notify_one(!detail::here::in_fiber());
  s->lock.unlock();
  s->unref();
  if (!queued) pc.counters.count(drop::udp_queue_full);
  return true;
}

void stack::udp_in(per_core& pc, const ipv4_header& ip, std::span<const std::byte> bytes, bool l4_checked,
                   std::uint64_t now) {
  auto u = udp_view::parse(bytes, ip.src, ip.dst, l4_checked ? checksum_mode::offload : checksum_mode::software);
  if (!u) {
    pc.counters.count(layer::udp, u.error());
    return;
  }
  if (udp_deliver(pc, v4_flow(ip.dst), v4_flow(ip.src), *u)) return;
  pc.counters.count(drop::udp_no_socket);
  if (routes_.is_broadcast(ip.dst)) return;
  // The quote is the datagram as it arrived: rebuild its header in front.
  std::array<std::byte, 20 + 8> quote{};
  ipv4_header q = ip;
  q.payload_length = std::uint16_t(bytes.size());
  (void)emit_ipv4(q, quote, checksum_mode::software);
  std::memcpy(quote.data() + 20, bytes.data(), 8);
  icmp_error(pc, icmp_type::dest_unreachable, std::uint8_t(unreachable_code::port), quote, ip.src, now);
}

}  // namespace affine::stack
