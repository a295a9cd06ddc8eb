// What the tasks and the clients do. A server serves one flow and sleeps (or
// busy-polls) between requests; a consumer does background work in chunks
// and serves its flows' requests between them (seed 003's "polling mode of
// work"); an antagonist burns CPU in slices. Clients are closed loops (a new
// request a turnaround after each response) or one open-loop Poisson source.

#include "sim/simulator.hh"

namespace affine::sim {

// A task got the core with nothing left of its last burst: its next burst.
bool simulator::begin_work(core& c, task& t) {
  switch (t.kind) {
    case task_kind::server: return take_request(c, t);
    case task_kind::consumer:
      if (!take_request(c, t)) t.remaining = p_.work.background.sample(t.random);
      return true;
    case task_kind::antagonist: t.remaining = forever; return true;
  }
  return false;
}

// The burst that serves the oldest waiting request: reading data another core
// processed (touch), the service time, and sending the response.
bool simulator::take_request(core& c, task& t) {
  std::uint32_t flow = t.flow;
  if (t.kind == task_kind::consumer) {
    if (t.ready.empty()) return false;
    flow = t.ready.pop();
  } else if (flows_[flow].socket.empty()) {
    return false;
  }
  flow_state& f = flows_[flow];
  t.serving = static_cast<std::int32_t>(flow);
  t.serving_sent = f.socket.pop();
  const distance d = topo_.dist(core_id{f.processed_on}, core_id{c.id});
  const std::uint32_t pkts = packets_of(p_.work.response_bytes);
  t.remaining = p_.cost.touch_ns[static_cast<std::size_t>(d)] + p_.work.service.sample(t.random) +
                p_.cost.tx_packet_ns * pkts + p_.cost.tx_per_kib_ns * p_.work.response_bytes / 1024;
  return true;
}

void simulator::work_done(core& c, task& t) {
  switch (t.kind) {
    case task_kind::server:
      respond(t);
      if (take_request(c, t)) {
        turn(c);
      } else {
        enter_poll(c);
      }
      return;
    case task_kind::consumer:
      if (t.serving != none) respond(t);
      if (!take_request(c, t)) t.remaining = p_.work.background.sample(t.random);
      turn(c);
      return;
    case task_kind::antagonist:
      t.remaining = forever;
      turn(c);
      return;
  }
}

// The response leaves now; the client sees it a wire delay later.
void simulator::respond(task& t) {
  const auto flow = static_cast<std::uint32_t>(t.serving);
  t.serving = none;
  flow_state& f = flows_[flow];
  const std::uint64_t received = now_ + wire_ns(p_.work.response_bytes);
  const bool counted = measuring_ && received <= end_;
  if (counted) {
    const std::uint64_t rtt = received - t.serving_sent;
    out_.latency.add(p_.work.half_round_trip ? rtt / 2 : rtt);
    ++requests_;
  }
  if (++f.done_in_txn == p_.work.requests_per_transaction) {
    f.done_in_txn = 0;
    if (counted) ++transactions_;
  }
  if (!p_.work.open_loop) send_request(flow, received + p_.work.turnaround.sample(f.random));
}

void simulator::send_request(std::uint32_t flow, std::uint64_t at) {
  flows_[flow].sent_at = at;
  events_.push(at + wire_ns(p_.work.request_bytes), event_kind::request_arrive, flow);
}

void simulator::open_arrival() {
  const auto flow = static_cast<std::uint32_t>((open_random_.next() >> 32) * flows_.size() >> 32);
  send_request(flow, now_);
  const distribution gap{dist_kind::exponential, 1'000'000'000 / p_.work.open_rate_per_s, 100};
  events_.push(now_ + std::max<std::uint64_t>(1, gap.sample(open_random_)), event_kind::open_arrival);
}

}  // namespace affine::sim
