// The IPv6 RX path (issue 21): the header and its extension chain (RFC
// 8200 4), ICMPv6 (RFC 4443) and Neighbor Discovery (RFC 4861, with DAD,
// RFC 4862 5.4). Like the IPv4 path it runs on the reactor that polled the
// packet, never blocks and counts every packet it refuses under its reason.

#include <rte_mbuf.h>

#include <mutex>

#include "affine/log.hh"
#include "stack/per_core.hh"
#include "stack/stack.hh"
#include "stack/wire/icmpv6.hh"
#include "stack/wire/ipv6.hh"
#include "stack/wire/ndp.hh"
#include "stack/wire/udp.hh"

namespace affine::stack {

void stack::ipv6_in(per_core& pc, std::span<const std::byte> bytes, std::uint64_t now) {
  if (!v6_) {
    pc.counters.count(drop::unknown_ethertype);
    return;
  }
  auto ip = ipv6_view::parse(bytes);
  if (!ip) {
    pc.counters.count(layer::ipv6, ip.error());
    return;
  }
  const ipv6_header h = ip->header();
  // RFC 4291 2.7: a multicast address is never a source (an answer to one
  // would go to a whole group).
  // RFC 4291 2.5.5.2: nor an IPv4-mapped one, which stands for IPv4 inside
  // a host and never travels as IPv6 (flows use it for IPv4, flow.hh).
  if (is_multicast(h.src) || is_v4(h.src)) {
    pc.counters.count(layer::ipv6, parse_error::bad_source);
    return;
  }
  // RFC 4291 2.5.2: the unspecified address is never a destination (no
  // group or address of ours is ::); RFC 4862 5.4 lets only DAD's
  // messages use it as a source, which ND's validation checks.
  // A flow's packets come to one address: this core remembers the last
  // one that was ours (no lock while v6_ has not changed).
  ipv6_interface::match to;
  const std::uint64_t changes = v6_changes_.load(std::memory_order_acquire);
  if (h.dst == pc.ours6 && changes == pc.ours6_v6_changes) {
    to = ipv6_interface::match::unicast;
  } else {
    std::lock_guard g(v6_lock_);
    to = v6_->classify(h.dst);
    if (to == ipv6_interface::match::unicast) {
      pc.ours6 = h.dst;
      pc.ours6_v6_changes = changes;
    }
  }
  if (to == ipv6_interface::match::none) {
    pc.counters.count(drop::not_our_address);
    return;
  }
  auto up = walk_ipv6_chain(*ip);
  if (!up) {
    pc.counters.count(layer::ipv6, up.error().reason);
    // RFC 4443 2.4(e.3): no error in answer to a packet sent to multicast,
    // except Parameter Problem code 2 where its option asked for one.
    if (const auto code = up.error().icmp_code; code && (to != ipv6_interface::match::multicast || *code == 2))
      icmpv6_error(pc, icmpv6_type::parameter_problem, *code, up.error().pointer, ip->packet(), now);
    return;
  }
  if (up->fragment && !up->fragment->atomic()) {
    // RFC 8200 4.5: into this core's bounded reassembler (shared with
    // IPv4's; overlaps drop the datagram, RFC 5722), then on as one packet.
    // The key holds the Next Header too: fragments that disagree on it
    // (RFC 8200 lets them, taking the first's) never join, and time out.
    const fragment_key key{h.src, h.dst, up->fragment->id, up->protocol};
    const reassembly_result r =
        reassemble(pc, key, up->fragment->offset, up->fragment->more, up->payload, ip->packet(), now);
    if (r.status != reassembly_status::complete) return;
    if (to == ipv6_interface::match::tentative) {
      pc.counters.count(drop::not_our_address);
    } else if (const std::span<const std::byte> first = r.first_fragment; !first.empty()) {
      // The extension headers after the Fragment header (Destination
      // Options, RFC 8200 4.1), which the first fragment's walk checked,
      // are stepped over; an error about the datagram quotes that fragment
      // as it came, its pointer into it.
      const auto data = std::size_t(r.payload.data() - first.data());
      const ipv6_chain_end e = skip_ipv6_chain(first, up->protocol, data - 8, data);
      if (e.how == ipv6_chain_end::stop::upper && e.at <= first.size())
        upper_in(pc, h, e.protocol, e.protocol_field, r.payload.subspan(e.at - data), first, to, now);
      else
        pc.counters.count(drop::fragment);  // cannot be: the first fragment's walk refused such a chain
    } else if (is_extension(up->protocol)) {
      // Its first fragment's headers were too long to keep
      // (reassembly::max_first_headers), and the chain with them.
      pc.counters.count(drop::fragment);
    } else {
      upper_in(pc, h, up->protocol, up->protocol_field, r.payload, ip->packet(), to, now);
    }
    pc.reasm.release(r.slot);
    return;
  }
  // RFC 4862 5.4: a tentative address takes Neighbor Discovery only.
  if (to == ipv6_interface::match::tentative && up->protocol != next_header::icmpv6) {
    pc.counters.count(drop::not_our_address);
    return;
  }
  upper_in(pc, h, up->protocol, up->protocol_field, up->payload, ip->packet(), to, now);
}

// The upper layer of a packet for us (`packet`: as it came, for errors).
void stack::upper_in(per_core& pc, const ipv6_header& h, std::uint8_t protocol, std::size_t protocol_field,
                     std::span<const std::byte> payload, std::span<const std::byte> packet, ipv6_interface::match to,
                     std::uint64_t now) {
  switch (protocol) {
    case next_header::icmpv6: icmpv6_in(pc, h, payload, to, now); return;
    case next_header::none: pc.counters.count(drop::unknown_protocol); return;  // RFC 8200 4.7: nothing follows
    case next_header::tcp:
      // TCP is unicast (RFC 9293 3.10.7.1 drops what comes to a group).
      if (to != ipv6_interface::match::unicast) {
        pc.counters.count(drop::not_our_address);
        return;
      }
      tcp_in(pc, h.dst, h.src, ipv6_pseudo(h.src, h.dst, next_header::tcp), payload, false,
             ip_ecn(h.traffic_class & 3), now);
      return;
    case next_header::udp: udp6_in(pc, h, payload, packet, to, now); return;
    default:
      // Like any protocol this host does not carry: RFC 8200 4, code 1 at
      // the Next Header field that names it.
      pc.counters.count(drop::unknown_protocol);
      if (to != ipv6_interface::match::multicast)
        icmpv6_error(pc, icmpv6_type::parameter_problem, 1, std::uint32_t(protocol_field), packet, now);
      return;
  }
}

void stack::icmpv6_in(per_core& pc, const ipv6_header& ip, std::span<const std::byte> bytes,
                      ipv6_interface::match to, std::uint64_t now) {
  auto v = icmpv6_view::parse(bytes, ip.src, ip.dst);
  if (!v) {
    pc.counters.count(layer::icmpv6, v.error());
    return;
  }
  switch (v->type()) {
    case icmpv6_type::echo_request:
      // RFC 4443 4.1: answered from the address it was sent to; to a
      // multicast group only where a host chooses to (this one does not,
      // as Linux's icmp_echo_ignore_multicast).
      if (to != ipv6_interface::match::unicast || is_unspecified(ip.src)) break;  // no one to answer
      echo6_reply(pc, ip, *v, now);
      return;
    case icmpv6_type::neighbor_solicitation: solicitation_in(pc, ip, *v, now); return;
    case icmpv6_type::neighbor_advertisement: advertisement_in(pc, ip, *v, now); return;
    case icmpv6_type::router_advertisement: router_advertisement_in(pc, ip, *v, now); return;
    case icmpv6_type::redirect:
      if (to != ipv6_interface::match::unicast) break;  // sent to the packet's source (8.2)
      redirect_in(pc, ip, *v, now);
      return;
    case icmpv6_type::dest_unreachable:
    case icmpv6_type::packet_too_big:
      if (to != ipv6_interface::match::unicast) break;
      if (const auto q = v->quote(); q && icmpv6_error_in(pc, *v, *q, now)) return;
      break;
    default: break;
  }
  pc.counters.count(drop::icmp_ignored);
}

// RFC 4861 7.2.3 and RFC 4862 5.4.3: a solicitation for one of our
// addresses is answered; one from the unspecified address is another
// node's DAD, which makes our tentative address a duplicate.
void stack::solicitation_in(per_core& pc, const ipv6_header& ip, const icmpv6_view& v, std::uint64_t now) {
  auto ns = parse_neighbor_solicitation(v, ip);
  if (!ns) {
    pc.counters.count(layer::ndp, ns.error());
    return;
  }
  ipv6_interface::match target;
  bool duplicate = false;
  {
    std::lock_guard g(v6_lock_);
    target = v6_->classify(ns->target);
    if (target == ipv6_interface::match::tentative && is_unspecified(ip.src)) {
      duplicate = v6_->claimed(ns->target);
      v6_changes_.fetch_add(1, std::memory_order_release);
    }
  }
  if (duplicate) {
    bump(pc.counters.ipv6_duplicates);
    AFFINE_LOG_RATELIMITED(warn, "stack on {}: {} is in use by another node (RFC 4862 5.4.3): not assigned", port_.name(),
              net::ipv6_address{ns->target}.to_string());
    return;
  }
  if (target != ipv6_interface::match::unicast) {
    // Not ours, or tentative and solicited by a node that is not doing DAD
    // (RFC 4862 5.4.3: silently discarded).
    pc.counters.count(drop::nd_not_for_us);
    return;
  }
  const bool dad = is_unspecified(ip.src);
  if (!dad && ns->source_link_layer) learn_neighbor(pc, ip.src, *ns->source_link_layer, now);
  // RFC 4861 7.2.4: Solicited set, Override set (we hold the address, no
  // anycast), Router clear; to the source, or to all-nodes answering DAD.
  const neighbor_advertisement na{.router = false, .solicited = !dad, .override = true, .target = ns->target,
                                  .target_link_layer = mac_};
  send_advertisement(pc, na, dad ? all_nodes : ip.src, dad ? std::optional<mac_address>{} : ns->source_link_layer, now);
}

// RFC 4861 7.2.5: an advertisement updates the neighbor cache; for our
// tentative address it means the address is taken (RFC 4862 5.4.4).
void stack::advertisement_in(per_core& pc, const ipv6_header& ip, const icmpv6_view& v, std::uint64_t now) {
  auto na = parse_neighbor_advertisement(v, ip);
  if (!na) {
    pc.counters.count(layer::ndp, na.error());
    return;
  }
  bool duplicate = false;
  bool ours = false;
  {
    std::lock_guard g(v6_lock_);
    const auto t = v6_->classify(na->target);
    duplicate = t == ipv6_interface::match::tentative && v6_->claimed(na->target);
    if (duplicate) v6_changes_.fetch_add(1, std::memory_order_release);
    ours = t == ipv6_interface::match::unicast;
  }
  if (duplicate) {
    bump(pc.counters.ipv6_duplicates);
    AFFINE_LOG_RATELIMITED(warn, "stack on {}: {} is in use by another node (RFC 4862 5.4.4): not assigned", port_.name(),
              net::ipv6_address{na->target}.to_string());
    return;
  }
  if (ours) {
    // Someone claims an address DAD gave us: theirs is the duplicate.
    pc.counters.count(drop::nd_not_for_us);
    return;
  }
  advertised_neighbor(pc, *na, now);
}

// RFC 4861 6.3.4: a router's lifetime as a default router, and its
// link-layer address.
void stack::router_advertisement_in(per_core& pc, const ipv6_header& ip, const icmpv6_view& v, std::uint64_t now) {
  auto ra = parse_router_advertisement(v, ip);
  if (!ra) {
    pc.counters.count(layer::ndp, ra.error());
    return;
  }
  {
    std::lock_guard g(v6_lock_);
    v6_->on_router_advertisement(ip.src, ra->router_lifetime, now);
    v6_changes_.fetch_add(1, std::memory_order_release);
    // Its Reachable Time and Retrans Timer (milliseconds; 0: unspecified).
    nd_.set_timers(std::uint64_t(ra->reachable_time) * 1'000'000, std::uint64_t(ra->retrans_timer) * 1'000'000);
  }
  if (ra->source_link_layer) learn_neighbor(pc, ip.src, *ra->source_link_layer, now, true);
  poke_timer(*cores_[0]);  // the router's lifetime is a deadline of core 0's
}

// RFC 4861 8.3: a valid Redirect from the current first hop for its
// destination sends that destination's packets to its target from now on
// (ipv6_interface::on_redirect); the target's link-layer address, where
// the Redirect gives it, goes to the neighbor cache as an unsolicited one
// does (STALE where it is new or changed), as a router's where the target
// is not the destination. The Redirected Header is not read. This host
// sends none (a host MUST NOT, 8.2).
void stack::redirect_in(per_core& pc, const ipv6_header& ip, const icmpv6_view& v, std::uint64_t now) {
  auto r = parse_redirect(v, ip);
  if (!r) {
    pc.counters.count(layer::ndp, r.error());
    return;
  }
  {
    std::lock_guard g(v6_lock_);
    if (!v6_->on_redirect(ip.src, r->destination, r->target, now)) {
      pc.counters.count(layer::ndp, parse_error::bad_source);  // 8.1: not from the first hop
      return;
    }
    v6_changes_.fetch_add(1, std::memory_order_release);
  }
  bump(pc.counters.ipv6_redirects);
  // A target other than the destination is a router (IsRouter set).
  if (r->target_link_layer) learn_neighbor(pc, r->target, *r->target_link_layer, now, r->target != r->destination);
}

// RFC 768 over IPv6 (RFC 8200 8.1: the checksum is mandatory): a datagram
// goes to the port bound for it; with none, port unreachable (RFC 4443
// 3.1, code 4), never about a datagram sent to a group (2.4(e.3)).
void stack::udp6_in(per_core& pc, const ipv6_header& ip, std::span<const std::byte> bytes,
                    std::span<const std::byte> packet, ipv6_interface::match to, std::uint64_t now) {
  auto u = udp_view::parse(bytes, ipv6_pseudo(ip.src, ip.dst, next_header::udp));
  if (!u) {
    pc.counters.count(layer::udp, u.error());
    return;
  }
  if (udp_deliver(pc, ip.dst, ip.src, *u)) return;
  pc.counters.count(drop::udp_no_socket);
  if (to == ipv6_interface::match::multicast) return;
  icmpv6_error(pc, icmpv6_type::dest_unreachable, 4, 0, packet, now);
}

}  // namespace affine::stack
