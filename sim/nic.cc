// Packets: a request reaches its RSS queue, the queue's core processes it
// (or hands it to another core's backlog, as rps_target decides), and the
// processing core delivers it to the reading task's socket.

#include "reactor/policy/rps.hh"
#include "sim/simulator.hh"

namespace affine::sim {

namespace {

// A closed-loop client whose request was dropped sends it again after TCP's
// minimum retransmission timeout (Linux TCP_RTO_MIN, 200 ms).
constexpr std::uint64_t rto_ns = 200'000'000;

}  // namespace

void simulator::request_arrive(std::uint32_t flow) {
  rx_queue& q = queues_[flows_[flow].queue];
  const std::uint64_t sent = p_.work.open_loop ? now_ - wire_ns(p_.work.request_bytes) : flows_[flow].sent_at;
  if (!q.packets.push({flow, sent})) {
    lost(flow);
    return;
  }
  // A reader busy-polling this queue from another core takes the packet
  // itself, without an interrupt (kernel.busy_poll_socket_queue).
  const task& reader = tasks_[flows_[flow].server];
  if (reader.state == task_state::polling && polled_queue(cores_[reader.core]) == static_cast<std::int32_t>(flows_[flow].queue)) {
    notify(cores_[reader.core], false);
    return;
  }
  notify(cores_[q.core], true);
}

void simulator::lost(std::uint32_t flow) {
  ++out_.count.drops;
  if (!p_.work.open_loop) {
    events_.push(now_ + rto_ns + wire_ns(p_.work.request_bytes), event_kind::request_arrive, flow);
  }
}

// The queue a busy-polling server on core c polls besides the core's own,
// with kernel.busy_poll_socket_queue: its socket's. none otherwise.
std::int32_t simulator::polled_queue(const core& c) const {
  if (!p_.kernel.busy_poll_socket_queue || c.current == none) return none;
  const task& t = tasks_[static_cast<std::size_t>(c.current)];
  if (t.kind != task_kind::server || t.state != task_state::polling) return none;
  return static_cast<std::int32_t>(flows_[t.flow].queue);
}

bool simulator::rx_waiting(const core& c) const {
  for (const std::uint32_t q : c.queues) {
    if (!queues_[q].packets.empty()) return true;
  }
  const std::int32_t polled = polled_queue(c);
  return polled != none && !queues_[static_cast<std::size_t>(polled)].packets.empty();
}

bool simulator::backlog_ready(const core& c) const {
  return !c.backlog.empty() && c.backlog.front().ready <= now_;
}

// One request's worth of RX work. The queue's core always pays the driver
// part; the protocol part is paid where the request is processed: here, or
// on the core rps_target names, after an IPI (rps_enqueue_ns here).
void simulator::start_rx(core& c) {
  const std::uint32_t pkts = packets_of(p_.work.request_bytes);
  const std::uint64_t protocol =
      p_.cost.rx_protocol_ns * pkts + p_.cost.rx_per_kib_ns * p_.work.request_bytes / 1024;
  std::uint64_t cost = 0;
  if (c.irq_pending) cost += p_.cost.rx_irq_ns;
  c.irq_pending = false;
  if (rx_waiting(c)) {
    // The polled socket's queue first, then round robin over the queues
    // this core owns.
    const std::int32_t polled = polled_queue(c);
    std::uint32_t q = 0;
    if (polled != none && !queues_[static_cast<std::size_t>(polled)].packets.empty()) {
      q = static_cast<std::uint32_t>(polled);
    } else {
      for (std::size_t i = 0; i < c.queues.size(); ++i) {
        q = c.queues[(c.next_queue + i) % c.queues.size()];
        if (!queues_[q].packets.empty()) {
          c.next_queue = (c.next_queue + i + 1) % c.queues.size();
          break;
        }
      }
    }
    c.unit = queues_[q].packets.pop();
    c.unit_target = c.id;
    cost += p_.cost.rx_driver_ns * pkts;
    if (p_.nic.rps != policy::rps_mode::off) {
      const flow_state& f = flows_[c.unit.flow];
      const task& reader = tasks_[f.server];
      const std::optional<core_id> consumer =
          reader.has_run ? std::optional<core_id>(core_id{reader.last_ran}) : std::nullopt;
      const policy::rps_choice choice =
          policy::rps_target(view(), core_id{c.id}, consumer, f.hash, p_.nic.rps, p_.policy);
      ++out_.count.rps_reasons[static_cast<std::size_t>(choice.reason)];
      c.unit_target = choice.core.value;
      if (c.unit_target != c.id) {
        ++out_.count.rps_distance[static_cast<std::size_t>(policy::handoff_distance(view(), core_id{c.id}, choice))];
        cost += p_.cost.rps_enqueue_ns * pkts;
      }
    }
    if (c.unit_target == c.id) cost += protocol;
  } else {
    const handoff h = c.backlog.pop();
    c.unit = h.p;
    c.unit_target = c.id;
    cost += protocol;
  }
  set_mode(c, core_mode::rx);
  c.seg_start = now_;
  ++c.gen;
  events_.push(now_ + cost, event_kind::core_done, c.id, c.gen);
}

void simulator::finish_rx(core& c) {
  if (c.unit_target == c.id) {
    deliver(c.unit.flow, c.id, c.unit.sent);
    return;
  }
  core& target = cores_[c.unit_target];
  const std::uint64_t ready = now_ + p_.cost.wake_remote_ns;
  if (!target.backlog.push({c.unit, ready})) {
    lost(c.unit.flow);
    return;
  }
  events_.push(ready, event_kind::backlog_arrive, target.id);
}

// The request is in the socket: a blocked reader is woken from the RX path
// (place_wakeup decides where), a busy-polling one sees it at its next look,
// a consumer finds it at its next check.
void simulator::deliver(std::uint32_t flow, std::uint32_t on, std::uint64_t sent) {
  flow_state& f = flows_[flow];
  if (!f.socket.push(sent)) {
    lost(flow);
    return;
  }
  f.processed_on = on;
  task& t = tasks_[f.server];
  if (t.kind == task_kind::consumer) {
    (void)t.ready.push(flow);  // sized for every flow's socket
    return;
  }
  if (t.state == task_state::blocked) {
    wake_task(f.server, on, policy::waker_kind::rx_path);
  } else if (t.state == task_state::polling) {
    notify(cores_[t.core], false);
  }
}

}  // namespace affine::sim
