// Segments to connections (the flow table) or to listeners (RFC 9293
// 3.10.7.2), on the RX path. The connection runs under its socket's lock;
// what it sends goes out on this core.

#include <mutex>
#include <utility>

#include "affine/log.hh"
#include "stack/per_core.hh"
#include "stack/stack.hh"
#include "stack/tcp/reset.hh"
#include "stack/wire/tcp.hh"

namespace affine::stack {

namespace {

// RFC 9293 3.1's checksum of a segment for a connection, summed as its
// payload is copied to where the connection keeps in-order data, when it
// can go there (one pass over the bytes instead of two); the segment then
// names the copy, which input() keeps where it lies.
bool verify_into_place(tcp::connection& c, tcp_segment& seg, const pseudo_header& ph,
                       std::span<const std::byte> bytes) {
  const std::span<std::byte> to = c.landing(seg.seq, seg.payload.size());
  if (to.empty()) return ph.verifies(bytes);
  checksum_accumulator sum = ph.with_length(std::uint32_t(bytes.size()));
  sum.add(bytes.first(bytes.size() - seg.payload.size()));
  // The segment names the copy before it is made: a span stored just
  // before input() loads it whole would stall on store forwarding. A bad
  // sum drops the segment, copy and all.
  const std::span<const std::byte> payload = std::exchange(seg.payload, to);
  sum.copy_and_add(to.data(), payload);
  return sum.verifies();
}

}  // namespace

void stack::tcp_in(per_core& pc, const flow_address& local, const flow_address& remote, const pseudo_header& ph,
                   std::span<const std::byte> bytes, bool l4_checked, ip_ecn ecn, std::uint64_t now) {
  // The checksum, unless the NIC checked it, is checked below: for a
  // connection's segment in the pass that copies its payload.
  auto v = tcp_view::parse(bytes, ph, checksum_mode::offload);
  if (!v) {
    pc.counters.count(layer::tcp, v.error());
    return;
  }
  tcp_segment seg = v->segment();
  seg.ecn = ecn;
  const flow_tuple t{local, remote, seg.dst_port, seg.src_port};
  if (tcp_socket* s = lock_flow(pc, t)) {
    if (!l4_checked && !verify_into_place(s->conn, seg, ph, bytes)) {
      s->lock.unlock();
      pc.counters.count(layer::tcp, parse_error::bad_checksum);
      return;
    }
    bump(pc.counters.tcp_segments_in);
    if (s->conn.state() == tcp::tcp_state::time_wait && reopen_time_wait(pc, *s, t, local, seg, now)) return;
    if (s->rx_core.load(std::memory_order_relaxed) != int(pc.index)) s->rx_core.store(int(pc.index), std::memory_order_relaxed);
    if (s->rx_queue.load(std::memory_order_relaxed) != pc.rx_queue) s->rx_queue.store(pc.rx_queue, std::memory_order_relaxed);
    const auto r = s->conn.input(seg, now);
    if (r.drop != tcp::drop_reason::none) pc.counters.count(r.drop);
    if (r.reply) send_tcp(pc, t, *r.reply, now);
    // In-order data and ACKs of an established flow: its ACK, its new data
    // and its wakeups go once, after the RX batch (settle_later). Anything
    // owed per segment (RFC 5681 4.2's immediate ACKs), any change of state
    // and a batch of one (a request-response flow's usual case: no second
    // lock and reference) are settled now.
    if (!pc.batch_of_one && s->conn.state() == tcp::tcp_state::established && !s->conn.owes_ack_now()) {
      settle_later(pc, *s, now);
      return;
    }
    const settled what = settle(*s, now);
    s->lock.unlock();
    finish(*s, what);
    return;
  }
  if (!l4_checked && !ph.verifies(bytes)) {
    pc.counters.count(layer::tcp, parse_error::bad_checksum);
    return;
  }
  bump(pc.counters.tcp_segments_in);
  if (listen_socket* l = listener_for(pc, t, local)) {
    listen_in(pc, *l, t, seg, now);
    l->unref();
    return;
  }
  // RFC 9293 3.10.7.1: CLOSED. An incoming segment other than RST gets a RST.
  pc.counters.count(drop::tcp_no_socket);
  if (t.v4() && routes_.is_broadcast(v4_address(local))) return;
  if (auto rst = tcp::reset_for(seg)) send_tcp(pc, t, *rst, now);
}

listen_socket* stack::listener_for(per_core& pc, const flow_tuple& t, const flow_address& local) {
  // IPv4 also reaches here for broadcasts; IPv6 only for our unicast
  // addresses (rx_ipv6.cc).
  const bool v4 = t.v4();
  if (v4 && v4_address(local) != routes_.address()) return nullptr;
  listen_socket* l = (v4 ? listeners_ : listeners6_).find(pc.index, t.local_port);
  if (l != nullptr && !l->bound.takes(local)) {
    l->unref();
    return nullptr;
  }
  return l;
}

// RFC 9293 3.6.1 MAY-2, RFC 6191: where the connection says the SYN is
// newer than its last incarnation and a listener takes the port, that
// incarnation leaves the table (TIME-WAIT ended) before the listener makes
// the next under the same tuple.
bool stack::reopen_time_wait(per_core& pc, tcp_socket& s, const flow_tuple& t, const flow_address& local,
                             const tcp_segment& seg, std::uint64_t now) {
  const std::optional<seq32> iss = s.conn.reopen_iss(seg);
  if (!iss) return false;
  listen_socket* l = listener_for(pc, t, local);
  if (l == nullptr) return false;
  s.conn.end_time_wait();
  const settled what = settle(s, now);
  s.lock.unlock();
  finish(s, what);
  bump(pc.counters.time_wait_reopened);
  listen_in(pc, *l, t, seg, now, iss);
  l->unref();
  return true;
}

// The socket of `t`, locked, or null. A flow's segments come in runs, so
// the core remembers the last flow it found (with a reference): a hit
// costs no shard lock, no table lookup and no reference count. The entry is
// good while its socket is in the table (in_table, read under the socket's
// lock); a socket that left it is forgotten and the table asked again.
tcp_socket* stack::lock_flow(per_core& pc, const flow_tuple& t) {
  if (tcp_socket* s = pc.last_flow; s != nullptr && pc.last_tuple == t) {
    s->lock.lock();
    if (s->in_table) return s;
    s->lock.unlock();
    forget_flow(pc);
  }
  socket_ref found = flows_.find(t);
  if (!found) return nullptr;
  forget_flow(pc);
  pc.last_tuple = t;
  pc.last_flow = found.release();  // the reference moves to the cache
  pc.last_flow->lock.lock();
  return pc.last_flow;
}

void stack::forget_flow(per_core& pc) {
  if (pc.last_flow == nullptr) return;
  pc.last_flow->unref();
  pc.last_flow = nullptr;
}

// A bulk receiver whose RX burst holds 32 of a flow's segments sends one
// ACK for them rather than 16, and wakes its reader once; a sender whose
// burst holds ACKs sends the data they allow in one go. One socket waits at
// a time: another flow's segment settles the first (its lock is not held
// meanwhile, so the application may settle it first: settling twice is
// harmless).
void stack::settle_later(per_core& pc, tcp_socket& s, std::uint64_t now) {
  s.lock.unlock();
  if (pc.batched == &s) return;
  settle_batch(pc, now);
  s.ref();
  pc.batched = &s;
}

void stack::settle_batch(per_core& pc, std::uint64_t now) {
  tcp_socket* s = std::exchange(pc.batched, nullptr);
  if (s == nullptr) return;
  s->lock.lock();
  const settled what = settle(*s, now);
  s->lock.unlock();
  finish(*s, what);
  s->unref();
}

// RFC 9293 3.10.7.2: LISTEN, as tcp::listener decides it.
void stack::listen_in(per_core& pc, listen_socket& l, const flow_tuple& t, const tcp_segment& seg,
                      std::uint64_t now, std::optional<seq32> reopen_iss) {
  const tcp::connection_config cfg = connection_config(l.accepted_options(), t);
  tcp::listener::verdict v;
  {
    std::lock_guard g(l.lock);
    if (l.closed) return;
    v = l.queue.input(t, seg, now, cfg, reopen_iss);
  }
  if (v.drop != tcp::drop_reason::none) pc.counters.count(v.drop);
  if (v.cookie_sent) bump(pc.counters.syn_cookies_sent);
  if (v.reply) send_tcp(pc, t, *v.reply, now);
  if (!v.open) return;
  // A returning SYN cookie: the connection its SYN stands for, whose
  // SYN-ACK went out already, then the segment that brought the cookie.
  auto* s = new tcp_socket(*this, pc.index, *v.open, cfg, v.syn ? *v.syn : seg, now);
  apply_path_mtu(s->conn, t, now);
  l.ref();
  s->parent = &l;
  s->conn.set_admission(&l);
  if (!flows_.insert(t, s)) {
    pc.counters.count(drop::tcp_connection_limit);
    {
      std::lock_guard g(l.lock);
      l.queue.child_gone(false);
    }
    s->conn.set_admission(nullptr);
    s->parent = nullptr;
    l.unref();
    s->unref();
    return;
  }
  home(s);
  s->lock.lock();
  s->in_table = true;
  if (v.syn) {
    bump(pc.counters.syn_cookies_accepted);
    s->conn.syn_ack_sent(now);
    const auto r = s->conn.input(seg, now);
    if (r.drop != tcp::drop_reason::none) pc.counters.count(r.drop);
    if (r.reply) send_tcp(pc, t, *r.reply, now);
  }
  const settled what = settle(*s, now);  // the SYN-ACK, or what the cookie's ACK asks
  s->lock.unlock();
  finish(*s, what);
  s->unref();  // the table and the timer list hold it now
}

}  // namespace affine::stack
