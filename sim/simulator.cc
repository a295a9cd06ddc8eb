// Set-up, the event loop and the results. See simulator.hh for the model.

#include "sim/simulator.hh"

#include <algorithm>
#include <cassert>

#include <fmt/format.h>

namespace affine::sim {

namespace {

constexpr std::size_t socket_capacity = 64;          // unread requests per flow; more are dropped
constexpr std::uint64_t open_stream = 0xa11ce;       // rng stream of the open-loop generator
constexpr std::uint64_t task_stream = 1ULL << 32;    // task i draws from stream task_stream + i

}  // namespace

std::expected<void, std::string> check_params(const sim_params& p) {
  const topology& topo = p.machine.topo;
  if (p.machine.reactor_cores.empty()) return std::unexpected("no reactor cores");
  for (const core_id c : p.machine.reactor_cores) {
    if (c.value >= topo.core_count()) return std::unexpected(fmt::format("core {} is not in the topology", c.value));
  }
  const auto plan = plan_rx_queues(topo, p.nic.node, p.nic.queues, p.machine.reactor_cores, p.nic.placement);
  if (!plan) return std::unexpected(plan.error());
  auto in_reactors = [&](core_id c) {
    return std::binary_search(p.machine.reactor_cores.begin(), p.machine.reactor_cores.end(), c);
  };
  for (const core_id c : p.work.server_cores) {
    if (!in_reactors(c)) return std::unexpected(fmt::format("server core {} runs no reactor", c.value));
  }
  for (const core_id c : p.antagonists.cores) {
    if (!in_reactors(c)) return std::unexpected(fmt::format("antagonist core {} runs no reactor", c.value));
  }
  if (p.antagonists.count > 0 && p.antagonists.cores.empty()) return std::unexpected("antagonists need cores");
  if (p.work.flows == 0) return std::unexpected("no flows");
  if (p.work.open_loop && p.work.open_rate_per_s == 0) return std::unexpected("open loop needs a rate");
  if (auto v = policy::validate(p.policy); !v) return std::unexpected(v.error());
  return {};
}

simulator::simulator(const sim_params& p)
    : p_(p), topo_(p_.machine.topo), open_random_(p.run.seed, open_stream) {
  assert(check_params(p_));
  warmup_end_ = p_.run.warmup_ns;
  end_ = p_.run.warmup_ns + p_.run.duration_ns;

  cores_.resize(topo_.core_count());
  view_cores_.resize(topo_.core_count());
  for (std::uint32_t i = 0; i < cores_.size(); ++i) cores_[i].id = i;
  for (const core_id c : p_.machine.reactor_cores) {
    cores_[c.value].reactor = true;
    view_cores_[c.value].idle = true;
  }

  const auto plan = plan_rx_queues(topo_, p_.nic.node, p_.nic.queues, p_.machine.reactor_cores, p_.nic.placement);
  for (const rxq_assignment& a : *plan) {
    queues_.push_back({a.core.value, ring<packet>(p_.nic.ring_size)});
    cores_[a.core.value].queues.push_back(a.queue);
  }

  build_flows();
  build_tasks();
  const std::size_t backlog_capacity = std::max<std::size_t>(1024, std::size_t{p_.work.flows} * 4);
  for (core& c : cores_) {
    c.rq = ring<std::uint32_t>(tasks_.size());
    c.backlog = ring<handoff>(backlog_capacity);
  }
  events_.reserve(4 * (flows_.size() + tasks_.size() + cores_.size()) + 64);

  // Tasks that start runnable (consumers, antagonists) wake their cores.
  for (std::uint32_t i = 0; i < tasks_.size(); ++i) {
    if (tasks_[i].state == task_state::runnable) enqueue(cores_[tasks_[i].core], i);
  }
  if (p_.work.open_loop) {
    events_.push(0, event_kind::open_arrival);
  } else {
    for (std::uint32_t f = 0; f < flows_.size(); ++f) {
      send_request(f, p_.work.turnaround.sample(flows_[f].random));
    }
  }
  // Periodic balance, staggered over the interval so the cores do not all
  // balance in the same instant.
  const auto& rc = p_.machine.reactor_cores;
  if (p_.machine.balance_interval_ns > 0) {
    for (std::size_t i = 0; i < rc.size(); ++i) {
      const std::uint64_t offset = p_.machine.balance_interval_ns * (i + 1) / rc.size();
      events_.push(offset, event_kind::balance_tick, rc[i].value);
    }
  }
  // The kernel's scheduler tick on every CPU (kernel.cfs), staggered too.
  if (p_.kernel.cfs) {
    for (std::size_t i = 0; i < rc.size(); ++i) {
      events_.push(p_.kernel.tick_ns * (i + 1) / rc.size(), event_kind::sched_tick, rc[i].value);
    }
  }
  events_.push(load_period_ns, event_kind::load_tick);
  events_.push(p_.run.sample_ns, event_kind::sample_tick);
  out_.node_busy_series.assign(topo_.node_count(), {});
}

void simulator::build_flows() {
  flows_.resize(p_.work.flows);
  for (std::uint32_t f = 0; f < flows_.size(); ++f) {
    flow_state& fl = flows_[f];
    // The RSS hash of the flow's 4-tuple: fixed per flow, so every variant
    // and every seed puts a flow on the same queue.
    fl.hash = static_cast<std::uint32_t>(mix64(0x5eed0000ULL + f) >> 32);
    fl.queue = static_cast<std::uint32_t>((std::uint64_t{fl.hash} * queues_.size()) >> 32);
    fl.socket = ring<std::uint64_t>(socket_capacity);
    fl.random = rng(p_.run.seed, f);
  }
}

void simulator::build_tasks() {
  const workload_params& w = p_.work;
  const std::vector<core_id>& start = w.server_cores.empty() ? p_.machine.reactor_cores : w.server_cores;
  const unsigned servers = w.mode == server_mode::blocking ? w.flows : w.consumers;
  const std::size_t flows_per_consumer = (w.flows + w.consumers - 1) / w.consumers;
  for (unsigned i = 0; i < servers; ++i) {
    task t;
    t.kind = w.mode == server_mode::blocking ? task_kind::server : task_kind::consumer;
    t.core = t.last_ran = start[i % start.size()].value;
    t.slice = p_.kernel.cfs ? forever : p_.machine.task_quota_ns;
    if (w.server_pinned) {
      t.pinned = core_id{t.core};
      cpusets_.emplace_back(cores_.size(), false);
      cpusets_.back()[t.core] = true;
      t.cpuset = static_cast<std::int32_t>(cpusets_.size() - 1);
    }
    if (t.kind == task_kind::server) {
      t.flow = i;
      flows_[i].server = i;
    } else {
      t.state = task_state::runnable;
      t.ready = ring<std::uint32_t>(flows_per_consumer * socket_capacity);
    }
    tasks_.push_back(std::move(t));
  }
  if (w.mode == server_mode::polling) {
    for (std::uint32_t f = 0; f < flows_.size(); ++f) flows_[f].server = f % w.consumers;
  }
  if (p_.antagonists.count > 0) {
    cpusets_.emplace_back(cores_.size(), false);
    for (const core_id c : p_.antagonists.cores) cpusets_.back()[c.value] = true;
  }
  for (unsigned i = 0; i < p_.antagonists.count; ++i) {
    task t;
    t.kind = task_kind::antagonist;
    t.state = task_state::runnable;
    t.core = t.last_ran = p_.antagonists.cores[i % p_.antagonists.cores.size()].value;
    t.cpuset = static_cast<std::int32_t>(cpusets_.size() - 1);
    t.slice = p_.kernel.cfs ? forever : p_.antagonists.slice_ns;
    tasks_.push_back(std::move(t));
  }
  for (std::uint32_t i = 0; i < tasks_.size(); ++i) {
    tasks_[i].random = rng(p_.run.seed, task_stream + i);
    tasks_[i].vr_core = tasks_[i].core;
  }
}

bool simulator::allowed(const task& t, std::uint32_t c) const {
  return t.cpuset == none || cpusets_[static_cast<std::size_t>(t.cpuset)][c];
}

std::uint32_t simulator::packets_of(std::uint32_t bytes) {
  constexpr std::uint32_t mss = 1448;  // TCP payload per packet with timestamps, MTU 1500
  return std::max<std::uint32_t>(1, (bytes + mss - 1) / mss);
}

std::uint64_t simulator::wire_ns(std::uint32_t bytes) const {
  // Serialization of payload plus about 66 bytes of headers per packet.
  const std::uint64_t on_wire = std::uint64_t{bytes} + 66ULL * packets_of(bytes);
  return p_.nic.one_way_ns + on_wire * 8 / p_.nic.link_gbps;
}

result simulator::run() {
  while (!events_.empty() && events_.next_time() <= end_) {
    const event e = events_.pop();
    now_ = e.time;
    if (!measuring_ && now_ >= warmup_end_) start_measuring();
    ++out_.count.events;
    dispatch(e);
  }
  now_ = end_;
  if (!measuring_) start_measuring();
  for (core& c : cores_) account(c);
  return collect();
}

void simulator::dispatch(const event& e) {
  switch (e.kind) {
    case event_kind::request_arrive: request_arrive(e.a); break;
    case event_kind::core_done:
      if (cores_[e.a].gen == e.b) finish_segment(cores_[e.a]);
      break;
    case event_kind::core_wake:
      if (cores_[e.a].gen == e.b) core_wake(cores_[e.a]);
      break;
    case event_kind::spin_end:
      if (cores_[e.a].gen == e.b && cores_[e.a].mode == core_mode::spinning) set_mode(cores_[e.a], core_mode::sleeping);
      break;
    case event_kind::poll_check:
      if (cores_[e.a].gen == e.b && cores_[e.a].mode == core_mode::polling) {
        interrupt_task(cores_[e.a]);  // charges the poll to the slice
        poll_recheck(cores_[e.a]);
      }
      break;
    case event_kind::wake_arrive: enqueue(cores_[e.a], e.b); break;
    case event_kind::backlog_arrive: notify(cores_[e.a], true); break;
    case event_kind::balance_tick: balance_tick(cores_[e.a]); break;
    case event_kind::sched_tick: sched_tick(cores_[e.a]); break;
    case event_kind::load_tick:
      load_tick();
      events_.push(now_ + load_period_ns, event_kind::load_tick);
      break;
    case event_kind::sample_tick:
      sample_tick();
      events_.push(now_ + p_.run.sample_ns, event_kind::sample_tick);
      break;
    case event_kind::open_arrival: open_arrival(); break;
  }
}

void simulator::start_measuring() {
  measuring_ = true;
  const std::uint64_t events = out_.count.events;
  out_.count = counters{};
  out_.count.events = events;
  transactions_ = requests_ = 0;
  for (core& c : cores_) {
    account(c);
    c.busy_ns_warm = c.busy_ns;
  }
}

result simulator::collect() {
  const double seconds = static_cast<double>(p_.run.duration_ns) / 1e9;
  out_.measured_s = seconds;
  out_.transactions_per_s = static_cast<double>(transactions_) / seconds;
  out_.requests_per_s = static_cast<double>(requests_) / seconds;
  out_.sample_ms = static_cast<double>(p_.run.sample_ns) / 1e6;
  out_.node_busy_pct.assign(topo_.node_count(), 0.0);
  for (unsigned n = 0; n < topo_.node_count(); ++n) {
    std::uint64_t busy = 0;
    unsigned count = 0;
    for (const core_id c : topo_.cores_in_node(n)) {
      if (!cores_[c.value].reactor) continue;
      busy += cores_[c.value].busy_ns - cores_[c.value].busy_ns_warm;
      ++count;
    }
    if (count > 0) {
      out_.node_busy_pct[n] = 100.0 * static_cast<double>(busy) / (static_cast<double>(p_.run.duration_ns) * count);
    }
  }
  return std::move(out_);
}

std::expected<result, std::string> simulate(const sim_params& p) {
  if (auto ok = check_params(p); !ok) return std::unexpected(ok.error());
  simulator s(p);
  return s.run();
}

}  // namespace affine::sim
