#pragma once
// One TCP host at virtual time: connections keyed by the remote port (one
// local address and port, one remote address), a listener, its accept
// queue, and the clock passed in. It does with tcp::connection and
// tcp::listener what the stack does with them (stack/rx_tcp_demux.cc:
// a segment goes to its flow's connection, else to the listener, else it
// draws tcp::reset_for's RST; a listener's verdict opens a connection, a
// returning cookie's connection takes the segment that brought it; the
// timer fiber fires each due timer in order and runs output after it).
// What it leaves out is the stack's own: Ethernet, IPv4, the flow table,
// socket locks, the timer wheel, the socket API.
//
// Shared by the state-machine harness (harness.hh) and the fuzz target
// tcp_host (tests/fuzz); no gtest here.

#include <algorithm>
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <span>
#include <utility>

#include "stack/tcp/connection.hh"
#include "stack/tcp/isn.hh"
#include "stack/tcp/listener.hh"
#include "stack/tcp/reset.hh"
#include "stack/tcp/syn_cookie.hh"

namespace affine::stack::tcp::testing {

class host {
 public:
  // Every function taking `emit` hands it the segments the host sends, in order.
  using emit_fn = segment_sink;

  host(const siphash_key& secret, std::uint32_t local_addr, std::uint32_t remote_addr, std::uint16_t local_port)
      : isn_(secret), cookies_(secret), local_addr_(local_addr), remote_addr_(remote_addr), local_port_(local_port) {}
  ~host() { clear(); }
  host(const host&) = delete;
  host& operator=(const host&) = delete;

  flow_tuple tuple_for(std::uint16_t remote_port) const {
    return flow_tuple{v4_flow(local_addr_), v4_flow(remote_addr_), local_port_, remote_port};
  }
  const isn_generator& isn() const { return isn_; }

  void listen(const listener_config& cfg) { listener_ = std::make_unique<listener>(cfg, isn_, &cookies_); }
  bool listening() const { return listener_ != nullptr; }
  listener& lst() { return *listener_; }

  // Active open: a connection in SYN-SENT.
  connection& open(std::uint16_t remote_port, seq32 iss, std::uint32_t ts_offset, const connection_config& cfg,
                   std::uint64_t now) {
    auto& c = flows_[remote_port] = std::make_unique<connection>(open_params{tuple_for(remote_port), iss, ts_offset},
                                                                 cfg, now);
    return *c;
  }

  struct input_result {
    drop_reason drop = drop_reason::none;
    bool no_socket = false;  // neither a connection nor a listener took it (answered by reset_for)
  };
  // A segment from the remote address: to its connection (then that
  // connection's output), else to the listener when it is for our port,
  // else RFC 9293 3.10.7.1's RST.
  input_result input(const tcp_segment& seg, const connection_config& cfg, std::uint64_t now, emit_fn emit) {
    const std::uint16_t peer = seg.src_port;
    std::optional<seq32> reopen_iss;
    if (seg.dst_port == local_port_)
      if (auto it = flows_.find(peer); it != flows_.end()) {
        // What stack::reopen_time_wait does: a SYN newer than a connection
        // in TIME-WAIT ends it and goes to the listener (RFC 6191).
        if (listener_ && (reopen_iss = it->second->reopen_iss(seg))) {
          it->second->end_time_wait();
          reap();
          ++reopened_;
        } else {
          connection::input_result r = it->second->input(seg, now);
          if (r.reply) emit(*r.reply);
          it->second->output(now, emit);
          return {r.drop};
        }
      }
    if (!listener_ || seg.dst_port != local_port_) {
      // RFC 9293 3.10.7.1: CLOSED. An incoming segment other than RST gets a RST.
      if (auto rst = reset_for(seg)) emit(*rst);
      return {drop_reason::none, true};
    }
    // What stack::listen_in does with the verdict.
    listener::verdict v = listener_->input(tuple_for(peer), seg, now, cfg, reopen_iss);
    if (v.reply) emit(*v.reply);
    if (!v.open) return {v.drop};
    auto& c = flows_[peer] = std::make_unique<connection>(*v.open, cfg, v.syn ? *v.syn : seg, now);
    c->set_admission(&admission_);
    children_.insert(c.get());
    if (v.syn) {  // a returning cookie: its SYN-ACK went out, then the ACK that brought it
      c->syn_ack_sent(now);
      connection::input_result r = c->input(seg, now);
      if (r.reply) emit(*r.reply);
      v.drop = r.drop;
    }
    c->output(now, emit);
    return {v.drop};
  }

  // One established flow's segments from one RX burst, as the stack takes
  // them (settle_later, stack/rx_tcp_demux.cc): each to the connection and
  // its reply out, then the connection's output once, after the last.
  void input_burst(std::span<const tcp_segment> segs, std::uint64_t now, emit_fn emit) {
    connection& c = *flows_.at(segs.front().src_port);
    for (const tcp_segment& seg : segs) {
      connection::input_result r = c.input(seg, now);
      if (r.reply) emit(*r.reply);
    }
    c.output(now, emit);
  }

  void output(std::uint64_t now, emit_fn emit) {
    for (auto& [peer, c] : flows_) c->output(now, emit);
  }

  // The earliest deadline of any connection (no_deadline when none runs).
  std::uint64_t next_deadline() const {
    std::uint64_t when = no_deadline;
    for (const auto& [peer, c] : flows_) when = std::min(when, c->next_deadline());
    return when;
  }

  // Fires every timer due up to `target`, in order, output after each, and
  // returns `target` (or `now`, whichever is later): the new time.
  std::uint64_t advance(std::uint64_t now, std::uint64_t target, emit_fn emit) {
    for (;;) {
      connection* next = nullptr;
      std::uint64_t when = target + 1;
      for (auto& [peer, c] : flows_) {
        if (c->next_deadline() < when) {
          when = c->next_deadline();
          next = c.get();
        }
      }
      if (!next) break;
      now = std::max(now, when);
      next->on_timer(now);
      next->output(now, emit);
    }
    return std::max(now, target);
  }

  connection& conn(std::uint16_t remote_port) { return *flows_.at(remote_port); }
  connection* find(std::uint16_t remote_port) {
    const auto it = flows_.find(remote_port);
    return it == flows_.end() ? nullptr : it->second.get();
  }
  bool has(std::uint16_t remote_port) const { return flows_.contains(remote_port); }
  // SYNs that opened a connection from TIME-WAIT (the stack's counter
  // tcp.time_wait_reopened).
  std::size_t reopened() const { return reopened_; }
  std::size_t connections() const { return flows_.size(); }
  template <class F>
  void each(F&& f) const {
    for (const auto& [peer, c] : flows_) f(static_cast<const connection&>(*c));
  }
  // Made by the listener and not admitted; admitted and not accepted.
  std::size_t children() const { return children_.size(); }
  std::size_t accept_queue() const { return accept_queue_.size(); }

  // The oldest connection in the accept queue (as the stack's accept()
  // takes it), or null.
  connection* accept() {
    if (accept_queue_.empty()) return nullptr;
    connection* c = accept_queue_.front();
    accept_queue_.pop_front();
    listener_->accepted();
    return c;
  }

  // Destroys closed connections, as the flow table would (a child of the
  // listener not accepted leaves its queue, as child_settled() does).
  void reap() {
    std::erase_if(flows_, [&](const auto& f) {
      connection* c = f.second.get();
      if (c->state() != tcp_state::closed) return false;
      if (children_.erase(c) != 0 && listener_) listener_->child_gone(false);
      if (const auto it = std::ranges::find(accept_queue_, c); it != accept_queue_.end()) {
        accept_queue_.erase(it);
        if (listener_) listener_->child_gone(true);
      }
      return true;
    });
  }

  // Everything goes, as when the stack is destroyed.
  void clear() {
    accept_queue_.clear();
    children_.clear();
    flows_.clear();
    listener_.reset();
  }

 private:
  // The listener's accept queue as listen_socket keeps it: admitted
  // connections in order, handed out by accept().
  struct child_admission final : admission {
    explicit child_admission(host& owner) : h(owner) {}
    bool admit(connection& c) override {
      if (!h.listener_->admit()) return false;
      h.children_.erase(&c);
      h.accept_queue_.push_back(&c);
      return true;
    }
    host& h;
  };

  isn_generator isn_;
  syn_cookies cookies_;
  std::uint32_t local_addr_, remote_addr_;
  std::uint16_t local_port_;
  std::unique_ptr<listener> listener_;
  child_admission admission_{*this};
  std::set<connection*> children_;        // made by the listener, not admitted
  std::deque<connection*> accept_queue_;  // admitted, not accepted
  std::size_t reopened_ = 0;
  std::map<std::uint16_t, std::unique_ptr<connection>> flows_;
};

}  // namespace affine::stack::tcp::testing
