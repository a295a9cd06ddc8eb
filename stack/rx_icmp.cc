// ICMP destination unreachable to TCP (RFC 1122 4.2.3.9, RFC 5927), and
// ICMPv6 destination unreachable and Packet Too Big (RFC 4443 3.1, 3.2):
// the quoted header must name one of our connections, and its sequence
// number one in flight, before anything acts on it; fragmentation-needed
// and Packet Too Big lower the destination's path MTU (RFC 1191, RFC 8201,
// bounded below by the cache's floor) and re-segment what the connection
// has in flight.
//
// UDP: the socket API has no connected UDP sockets, and an unconnected one
// is told of no ICMP error (as on Linux without IP_RECVERR): such errors
// are counted as ignored, but for fragmentation-needed and Packet Too Big,
// which lower the path MTU that the socket's next send_to keeps to.

#include <algorithm>
#include <mutex>
#include <optional>

#include "stack/per_core.hh"
#include "stack/stack.hh"
#include "stack/udp_socket.hh"
#include "stack/wire/endian.hh"

namespace affine::stack {

namespace {

std::optional<tcp::icmp_error> tcp_error_of(std::uint8_t code) {
  switch (unreachable_code(code)) {
    case unreachable_code::net: return tcp::icmp_error::net_unreachable;
    case unreachable_code::host: return tcp::icmp_error::host_unreachable;
    case unreachable_code::protocol: return tcp::icmp_error::protocol_unreachable;
    case unreachable_code::port: return tcp::icmp_error::port_unreachable;
    case unreachable_code::fragmentation_needed: return tcp::icmp_error::fragmentation_needed;
    default: return std::nullopt;  // source route failed and the rest: nothing to do
  }
}

// RFC 4443 3.1's codes, as Linux's icmpv6_err_convert reads them.
std::optional<tcp::icmp_error> tcp_error_of(const icmpv6_view& v) {
  if (v.type() == icmpv6_type::packet_too_big) return tcp::icmp_error::fragmentation_needed;
  if (v.type() != icmpv6_type::dest_unreachable) return std::nullopt;
  switch (v.code()) {
    case 0: return tcp::icmp_error::net_unreachable;   // no route to destination
    case 1:                                            // communication administratively prohibited
    case 3: return tcp::icmp_error::host_unreachable;  // address unreachable
    case 4: return tcp::icmp_error::port_unreachable;
    default: return std::nullopt;  // beyond the scope of the source address, policy, reject route
  }
}

}  // namespace

bool stack::icmp_error_in(per_core& pc, const icmp_view& v, const ipv4_quote& q, std::uint64_t now) {
  if (q.src != routes_.address()) return false;
  if (q.protocol == ip_protocol::udp && unreachable_code(v.code()) == unreachable_code::fragmentation_needed)
    return udp_too_big_in(pc, v4_flow(q.src), v4_flow(q.dst), q.transport, v.next_hop_mtu(), now);
  if (q.protocol != ip_protocol::tcp) return false;
  const auto error = tcp_error_of(v.code());
  if (!error) return false;
  // The quote's first 8 bytes: our port, theirs, and SEG.SEQ.
  const flow_tuple t{v4_flow(q.src), v4_flow(q.dst), load_be16(q.transport.data()), load_be16(q.transport.data() + 2)};
  return icmp_to_tcp(pc, t, seq32(load_be32(q.transport.data() + 4)), *error, v.next_hop_mtu(), now);
}

bool stack::icmpv6_error_in(per_core& pc, const icmpv6_view& v, const ipv6_quote& q, std::uint64_t now) {
  if (q.protocol == next_header::udp && v.type() == icmpv6_type::packet_too_big && is_ours(q.header.src))
    return udp_too_big_in(pc, q.header.src, q.header.dst, q.transport, v.mtu(), now);
  if (q.protocol != next_header::tcp || q.transport.size() < 8) return false;
  const auto error = tcp_error_of(v);
  if (!error) return false;
  const flow_tuple t{q.header.src, q.header.dst, load_be16(q.transport.data()), load_be16(q.transport.data() + 2)};
  return icmp_to_tcp(pc, t, seq32(load_be32(q.transport.data() + 4)), *error, v.mtu(), now);
}

// `mtu`: the next-hop MTU a fragmentation-needed or Packet Too Big gave.
bool stack::icmp_to_tcp(per_core& pc, const flow_tuple& t, seq32 seq, tcp::icmp_error error, std::uint32_t mtu,
                        std::uint64_t now) {
  socket_ref s = flows_.find(t);
  if (!s) return false;
  s->lock.lock();
  if (!s->conn.in_flight(seq)) {  // RFC 5927 4.1: a blind attacker must guess it
    s->lock.unlock();
    pc.counters.count(drop::icmp_out_of_window);
    return true;
  }
  std::uint32_t path = 0;
  if (error == tcp::icmp_error::fragmentation_needed) {
    lower_path_mtu(t.remote_addr, mtu, now);
    path = path_mtu_to(t.remote_addr, now);
  }
  s->conn.on_icmp(error, seq, path, now);
  bump(pc.counters.icmp_errors_taken);
  const settled what = settle(*s, now);
  s->lock.unlock();
  finish(*s, what);
  return true;
}

// RFC 1191 and RFC 8201 for datagrams: the stack never fragments a
// datagram itself (udp_socket.cc), so a router's "too big" for one
// lowers that path's estimate, and the socket's next send_to past it is
// message_size, as on a Linux socket with IP_PMTUDISC_DO. A datagram has
// no sequence number to check the quote by (RFC 5927 4.1); as Linux's UDP
// error handler, the quote must name a port bound here, and the estimate
// keeps to its floor (route.hh) whoever forged it.
bool stack::udp_too_big_in(per_core& pc, const flow_address& src, const flow_address& dst,
                           std::span<const std::byte> transport, std::uint32_t mtu, std::uint64_t now) {
  if (transport.size() < 8) return false;
  udp_socket* s = find_udp(load_be16(transport.data()), src);
  if (s == nullptr) return false;
  s->unref();
  lower_path_mtu(dst, mtu, now);
  bump(pc.counters.icmp_errors_taken);
  return true;
}

// An IPv4 path that reports an MTU under the floor keeps the floor as its
// estimate (a forged tiny MTU must not make a connection crawl, RFC 5927
// 7) and gets its datagrams without DF from then on, so that the narrow
// hop fragments them: Linux "locks" such a route's MTU at min_pmtu and
// clears DF the same way. narrow_paths_ tells the TX path to look.
void stack::lower_path_mtu(const flow_address& dst, std::uint32_t mtu, std::uint64_t now) {
  std::lock_guard g(pmtu_lock_);
  if (!is_v4(dst)) {
    if (pmtu6_.on_frag_needed(dst, mtu, now)) paths_lowered_.store(true, std::memory_order_relaxed);
    return;
  }
  if (!pmtu_.on_frag_needed(v4_address(dst), mtu, now)) return;
  paths_lowered_.store(true, std::memory_order_relaxed);
  if (pmtu_.may_fragment(v4_address(dst), now)) narrow_paths_.fetch_add(1, std::memory_order_relaxed);
}

// Every UDP send asks: while no path was ever lowered, it takes no lock.
std::uint32_t stack::path_mtu_to(const flow_address& dst, std::uint64_t now) {
  std::uint32_t mtu = port_.caps().mtu;
  if (!paths_lowered_.load(std::memory_order_relaxed)) return mtu;
  std::lock_guard g(pmtu_lock_);
  if (is_v4(dst))
    mtu = std::min(mtu, pmtu_.path_mtu(v4_address(dst), now));
  else
    mtu = std::min(mtu, pmtu6_.path_mtu(dst, now));
  return mtu;
}

void stack::apply_path_mtu(tcp::connection& c, const flow_tuple& t, std::uint64_t now) {
  if (const std::uint32_t mtu = path_mtu_to(t.remote_addr, now); mtu < port_.caps().mtu) c.set_path_mtu(mtu);
}

}  // namespace affine::stack
