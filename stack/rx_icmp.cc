// ICMP destination unreachable to TCP (RFC 1122 4.2.3.9, RFC 5927): the
// quoted header must name one of our connections, and its sequence number
// one in flight, before anything acts on it; fragmentation-needed lowers
// the destination's path MTU (RFC 1191, bounded below by the cache's
// floor) and re-segments what the connection has in flight.
//
// UDP: the socket API has no connected UDP sockets, and an unconnected one
// is told of no ICMP error (as on Linux without IP_RECVERR): such errors
// are counted as ignored.

#include <optional>

#include "stack/per_core.hh"
#include "stack/stack.hh"
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

}  // namespace

bool stack::icmp_error_in(per_core& pc, const icmp_view& v, const ipv4_quote& q, std::uint64_t now) {
  if (q.src != routes_.address() || q.protocol != ip_protocol::tcp) return false;
  const auto error = tcp_error_of(v.code());
  if (!error) return false;
  // The quote's first 8 bytes: our port, theirs, and SEG.SEQ.
  const flow_tuple t{v4_flow(q.src), v4_flow(q.dst), load_be16(q.transport.data()), load_be16(q.transport.data() + 2)};
  const seq32 seq(load_be32(q.transport.data() + 4));
  socket_ref s = flows_.find(t);
  if (!s) return false;
  s->lock.lock();
  if (!s->conn.in_flight(seq)) {  // RFC 5927 4.1: a blind attacker must guess it
    s->lock.unlock();
    pc.counters.count(drop::icmp_out_of_window);
    return true;
  }
  std::uint32_t mtu = 0;
  if (*error == tcp::icmp_error::fragmentation_needed) {
    std::lock_guard g(pmtu_lock_);
    pmtu_.on_frag_needed(q.dst, v.next_hop_mtu(), now);
    mtu = pmtu_.path_mtu(q.dst, now);
  }
  s->conn.on_icmp(*error, seq, mtu, now);
  bump(pc.counters.icmp_errors_taken);
  const settled what = settle(*s, now);
  s->lock.unlock();
  finish(*s, what);
  return true;
}

void stack::apply_path_mtu(tcp::connection& c, const flow_tuple& t, std::uint64_t now) {
  if (!t.v4()) return;  // IPv6's Packet Too Big: not yet (issue 21)
  std::uint32_t mtu;
  {
    std::lock_guard g(pmtu_lock_);
    if (pmtu_.size() == 0) return;
    mtu = pmtu_.path_mtu(v4_address(t.remote_addr), now);
  }
  if (mtu < port_.caps().mtu) c.set_path_mtu(mtu);
}

}  // namespace affine::stack
