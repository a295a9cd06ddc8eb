// LISTEN (RFC 9293 3.10.7.2) and the queues of a listening port.

#include "stack/tcp/listener.hh"

#include "stack/tcp/reset.hh"

namespace affine::stack::tcp {

void connection_list::push_back(connection& c) {
  c.link_list_ = this;
  c.link_prev_ = tail_;
  c.link_next_ = nullptr;
  (tail_ ? tail_->link_next_ : head_) = &c;
  tail_ = &c;
  ++size_;
}

void connection_list::remove(connection& c) {
  (c.link_prev_ ? c.link_prev_->link_next_ : head_) = c.link_next_;
  (c.link_next_ ? c.link_next_->link_prev_ : tail_) = c.link_prev_;
  c.link_prev_ = c.link_next_ = nullptr;
  c.link_list_ = nullptr;
  --size_;
}

listener::listener(const listener_config& cfg, const isn_generator& isn) : cfg_(cfg), isn_(isn) {}

listener::~listener() {
  // Not yet accepted: nobody will; reset them. Accepted: the application
  // keeps them, they only forget this listener.
  detach(syn_queue_, true);
  detach(accept_queue_, true);
  detach(accepted_, false);
}

void listener::detach(connection_list& list, bool abort_them) {
  while (connection* c = list.front()) {
    list.remove(*c);
    c->listener_ = nullptr;
    if (abort_them) c->abort();
  }
}

listener::input_result listener::input(const flow_tuple& tuple, const tcp_segment& seg, std::uint64_t now_ns) {
  // "first check for an RST": "An incoming RST segment could not be valid,
  // since it could not have been sent in response to anything sent by this
  // incarnation of the connection. An incoming RST should be ignored."
  if (seg.control == tcp_control::rst) return {std::nullopt, drop_reason::listen_rst, nullptr};
  // "second check for an ACK": "Any acknowledgment is bad if it arrives on a
  // connection still in the LISTEN state. An acceptable reset segment should
  // be formed for any arriving ACK-bearing segment": <SEQ=SEG.ACK><CTL=RST>.
  if (seg.ack) {
    ++stats_.resets_sent;
    return {reset_for(seg), drop_reason::listen_ack, nullptr};
  }
  // "fourth other text or control": "drop the segment and return".
  if (seg.control != tcp_control::syn) return {std::nullopt, drop_reason::listen_no_syn, nullptr};
  // "third check for a SYN", within this listener's bounds. Linux also drops
  // SYNs while the accept queue is full: their handshakes could not finish.
  // (SYN cookies, a later step, would answer instead when the SYN queue is full.)
  if (accept_queue_.size() >= cfg_.accept_backlog) {
    ++stats_.accept_queue_full;
    return {std::nullopt, drop_reason::accept_queue_full, nullptr};
  }
  if (syn_queue_.size() >= cfg_.syn_backlog) {
    ++stats_.syn_queue_full;
    return {std::nullopt, drop_reason::syn_queue_full, nullptr};
  }
  if (connection_count() >= cfg_.max_connections) {
    ++stats_.connection_limit;
    return {std::nullopt, drop_reason::connection_limit, nullptr};
  }
  // RFC 6528 ISS. The TSval offset (RFC 7323 5.4) is the same keyed hash of
  // the reversed tuple with no clock: fixed per flow, unrelated to the ISS.
  const flow_tuple reversed{tuple.remote_addr, tuple.local_addr, tuple.remote_port, tuple.local_port};
  const open_params p{tuple, isn_.next(tuple, now_ns), isn_.next(reversed, 0).raw()};
  auto c = std::make_unique<connection>(p, cfg_.connection, seg, now_ns);
  c->listener_ = this;
  syn_queue_.push_back(*c);
  ++stats_.syns_accepted;
  return {std::nullopt, drop_reason::none, std::move(c)};
}

connection* listener::accept() {
  connection* c = accept_queue_.front();
  if (!c) return nullptr;
  accept_queue_.remove(*c);
  accepted_.push_back(*c);
  return c;
}

bool listener::admit(connection& c) {
  if (accept_queue_.size() >= cfg_.accept_backlog) {
    ++stats_.accept_queue_full;
    return false;
  }
  c.link_list_->remove(c);
  accept_queue_.push_back(c);
  return true;
}

void listener::release(connection& c) {
  if (c.link_list_) c.link_list_->remove(c);
  c.listener_ = nullptr;
}

}  // namespace affine::stack::tcp
