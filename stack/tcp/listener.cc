// LISTEN (RFC 9293 3.10.7.2) and the bounds of a listening port's queues.

#include "stack/tcp/listener.hh"

#include <cassert>

#include "stack/tcp/reset.hh"

namespace affine::stack::tcp {

listener::verdict listener::input(const flow_tuple& tuple, const tcp_segment& seg, std::uint64_t now_ns,
                                  const connection_config& conn, std::optional<seq32> reopen_iss) {
  // "first check for an RST": "An incoming RST segment could not be valid,
  // since it could not have been sent in response to anything sent by this
  // incarnation of the connection. An incoming RST should be ignored."
  if (seg.control == tcp_control::rst) return {.drop = drop_reason::listen_rst};
  // "second check for an ACK": "Any acknowledgment is bad if it arrives on a
  // connection still in the LISTEN state. An acceptable reset segment should
  // be formed for any arriving ACK-bearing segment": <SEQ=SEG.ACK><CTL=RST>.
  // Unless it brings back a SYN cookie.
  if (seg.ack) {
    if (seg.control != tcp_control::syn && cookies_returning(now_ns)) return take_cookie(tuple, seg, now_ns);
    ++stats_.resets_sent;
    return {.reply = reset_for(seg), .drop = drop_reason::listen_ack};
  }
  // "fourth other text or control": "drop the segment and return".
  if (seg.control != tcp_control::syn) return {.drop = drop_reason::listen_no_syn};
  // "third check for a SYN", within this listener's bounds. Linux also drops
  // SYNs while the accept queue is full: their handshakes could not finish.
  if (accept_queue_ >= cfg_.accept_backlog) {
    ++stats_.accept_queue_full;
    return {.drop = drop_reason::accept_queue_full};
  }
  const bool full = syn_received_ >= cfg_.syn_backlog;
  if (cookies_ != nullptr && (cfg_.cookies == syn_cookie_mode::always ||
                              (full && cfg_.cookies == syn_cookie_mode::automatic)))
    return send_cookie(tuple, seg, now_ns, conn);
  if (full) {
    ++stats_.syn_queue_full;
    return {.drop = drop_reason::syn_queue_full};
  }
  ++syn_received_;
  ++stats_.syns_accepted;
  return {.open = open_params{tuple, reopen_iss.value_or(isn_.next(tuple, now_ns)), ts_offset(tuple)}};
}

// RFC 6528 ISS. The TSval offset (RFC 7323 5.4) is the same keyed hash of
// the reversed tuple with no clock: fixed per flow, unrelated to the ISS.
std::uint32_t listener::ts_offset(const flow_tuple& tuple) const {
  return isn_.next({tuple.remote_addr, tuple.local_addr, tuple.remote_port, tuple.local_port}, 0).raw();
}

bool listener::cookies_returning(std::uint64_t now_ns) const {
  if (cookies_ == nullptr || cfg_.cookies == syn_cookie_mode::never) return false;
  if (cfg_.cookies == syn_cookie_mode::always) return true;
  // A cookie sent "after" now was sent by a core whose clock read later
  // than this one's batch did: recent, not 2^64 ns ago.
  return last_cookie_ns_ && (now_ns <= *last_cookie_ns_ || now_ns - *last_cookie_ns_ < 2 * syn_cookies::slot_ns);
}

// The SYN-ACK the connection would send, made by one that lives only for
// it (nothing of it is kept: its ISS is the cookie), from the SYN less
// what a cookie cannot carry.
listener::verdict listener::send_cookie(const flow_tuple& tuple, const tcp_segment& seg, std::uint64_t now_ns,
                                        const connection_config& conn) {
  tcp_segment syn = seg;
  syn.payload = {};  // data on a SYN is not kept either (RFC 4987 3.6)
  const bool ts = conn.timestamps && syn.options.timestamps;
  if (!ts) {
    // Nothing the cookie could not bring back is agreed: the connection
    // made from it could not know (RFC 3168 6.1.1 for ECN).
    syn.options.window_scale.reset();
    syn.options.sack_permitted = false;
    syn.ece = syn.cwr = false;
  }
  open_params p{tuple, cookies_->make(tuple, seg.seq, seg.options.mss.value_or(tuple.v4() ? 536 : 1220), now_ns), ts_offset(tuple)};
  if (ts) {
    const auto ticks = std::uint32_t(now_ns / connection::ts_tick_ns);
    // What the SYN asked of ECN, not what was agreed: the connection made
    // from the cookie decides again, by the same rule and configuration.
    const cookie_ts_options o{.window_scale = conn.window_scaling ? syn.options.window_scale : std::nullopt,
                              .sack_permitted = conn.sack && syn.options.sack_permitted,
                              .ecn = syn.ece && syn.cwr};
    p.ts_offset = syn_cookies::encode_ts(ticks + p.ts_offset, o) - ticks;
  }
  verdict v{.cookie_sent = true};
  connection c(p, conn, syn, now_ns);
  c.output(now_ns, [&](const tcp_segment& out) {
    if (!v.reply) v.reply = out;
  });
  last_cookie_ns_ = now_ns;
  ++stats_.cookies_sent;
  return v;
}

// RFC 4987 3.6: SEG.ACK - 1 is the cookie, SEG.SEQ - 1 the peer's ISN.
listener::verdict listener::take_cookie(const flow_tuple& tuple, const tcp_segment& seg, std::uint64_t now_ns) {
  const seq32 peer_isn = seg.seq - 1;
  const seq32 cookie = *seg.ack - 1;
  const std::optional<std::uint16_t> mss = cookies_->check(tuple, peer_isn, cookie, now_ns);
  if (!mss) {
    ++stats_.cookies_invalid;
    return {.drop = drop_reason::syn_cookie_invalid};
  }
  if (accept_queue_ >= cfg_.accept_backlog) {  // no room: the peer's next ACK may find some
    ++stats_.accept_queue_full;
    return {.drop = drop_reason::accept_queue_full};
  }
  tcp_segment syn;
  syn.src_port = seg.src_port;
  syn.dst_port = seg.dst_port;
  syn.control = tcp_control::syn;
  syn.seq = peer_isn;
  syn.window = seg.window;
  syn.options.mss = *mss;
  if (seg.options.timestamps)
    if (const auto o = syn_cookies::decode_ts(seg.options.timestamps->echo)) {
      syn.options.timestamps = tcp_timestamps{seg.options.timestamps->value, 0};
      syn.options.window_scale = o->window_scale;
      syn.options.sack_permitted = o->sack_permitted;
      syn.ece = syn.cwr = o->ecn;
    }
  ++cookie_children_;
  ++stats_.cookies_accepted;
  return {.open = open_params{tuple, cookie, ts_offset(tuple)}, .syn = syn};
}

bool listener::admit() {
  if (accept_queue_ >= cfg_.accept_backlog) {
    ++stats_.accept_queue_full;
    return false;
  }
  child_leaves_syn_received();
  ++accept_queue_;
  return true;
}

void listener::child_leaves_syn_received() {
  std::size_t& n = cookie_children_ > 0 ? cookie_children_ : syn_received_;
  assert(n > 0);
  if (n > 0) --n;
}

void listener::child_gone(bool admitted) {
  if (!admitted) return child_leaves_syn_received();
  assert(accept_queue_ > 0);
  if (accept_queue_ > 0) --accept_queue_;
}

void listener::accepted() {
  assert(accept_queue_ > 0);
  if (accept_queue_ > 0) --accept_queue_;
}

}  // namespace affine::stack::tcp
