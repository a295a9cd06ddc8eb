// LISTEN (RFC 9293 3.10.7.2) and the bounds of a listening port's queues.

#include "stack/tcp/listener.hh"

#include <cassert>

#include "stack/tcp/reset.hh"

namespace affine::stack::tcp {

listener::verdict listener::input(const flow_tuple& tuple, const tcp_segment& seg, std::uint64_t now_ns) {
  // "first check for an RST": "An incoming RST segment could not be valid,
  // since it could not have been sent in response to anything sent by this
  // incarnation of the connection. An incoming RST should be ignored."
  if (seg.control == tcp_control::rst) return {.drop = drop_reason::listen_rst};
  // "second check for an ACK": "Any acknowledgment is bad if it arrives on a
  // connection still in the LISTEN state. An acceptable reset segment should
  // be formed for any arriving ACK-bearing segment": <SEQ=SEG.ACK><CTL=RST>.
  if (seg.ack) {
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
  if (syn_received_ >= cfg_.syn_backlog) {
    ++stats_.syn_queue_full;
    return {.drop = drop_reason::syn_queue_full};
  }
  ++syn_received_;
  ++stats_.syns_accepted;
  // RFC 6528 ISS. The TSval offset (RFC 7323 5.4) is the same keyed hash of
  // the reversed tuple with no clock: fixed per flow, unrelated to the ISS.
  const flow_tuple reversed{tuple.remote_addr, tuple.local_addr, tuple.remote_port, tuple.local_port};
  return {.open = open_params{tuple, isn_.next(tuple, now_ns), isn_.next(reversed, 0).raw()}};
}

bool listener::admit() {
  if (accept_queue_ >= cfg_.accept_backlog) {
    ++stats_.accept_queue_full;
    return false;
  }
  assert(syn_received_ > 0);
  --syn_received_;
  ++accept_queue_;
  return true;
}

void listener::child_gone(bool admitted) {
  std::size_t& n = admitted ? accept_queue_ : syn_received_;
  assert(n > 0);
  if (n > 0) --n;
}

void listener::accepted() {
  assert(accept_queue_ > 0);
  if (accept_queue_ > 0) --accept_queue_;
}

}  // namespace affine::stack::tcp
