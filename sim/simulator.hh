#pragma once
// A discrete-event model of a many-core machine running affine's reactor
// ladder, a NIC and a workload, whose decisions are made by the live
// reactor/policy functions: place_wakeup for every wakeup, rps_target for
// every packet on an RPS queue, steal_from for every newidle and periodic
// balance, busy_poll_continue at every change a busy-polling fiber could see.
//
// One core, one turn (DESIGN.md section 2): RX queues -> RPS backlog ->
// (inbox: remote wakeups join the run queue when they arrive) -> the task the
// RX path interrupted -> run queue -> steal -> spin -> sleep.
//
// The implementation is split by concern: simulator.cc (set-up, event loop,
// results), core.cc (the ladder and accounting), sched.cc (the policy calls),
// cfs.cc (the seeds' kernel scheduler, when kernel.cfs is on), nic.cc
// (packets), workload.cc (what tasks and clients do).

#include <cstdint>
#include <expected>
#include <optional>
#include <string>
#include <vector>

#include "reactor/policy/view.hh"
#include "sim/event_queue.hh"
#include "sim/params.hh"
#include "sim/random.hh"
#include "sim/result.hh"
#include "sim/ring.hh"

namespace affine::sim {

class simulator {
 public:
  // Precondition: check_params(p) holds.
  explicit simulator(const sim_params& p);
  simulator(const simulator&) = delete;
  simulator& operator=(const simulator&) = delete;

  // Runs warmup and measurement; call once.
  result run();

 private:
  static constexpr std::int32_t none = -1;
  static constexpr std::uint64_t forever = std::uint64_t{1} << 62;
  // The reactor updates loads once per millisecond (reactor/loop.cc).
  static constexpr std::uint64_t load_period_ns = 1'000'000;

  enum class core_mode : std::uint8_t { sleeping, waking, spinning, rx, running, polling };
  enum class task_kind : std::uint8_t { server, consumer, antagonist };
  enum class task_state : std::uint8_t { blocked, waking, runnable, running, polling };

  struct packet {
    std::uint32_t flow = 0;
    std::uint64_t sent = 0;     // when the client sent the request (first transmission)
  };
  struct handoff {
    packet p;
    std::uint64_t ready = 0;    // when the IPI reaches the target core
  };

  struct task {
    task_kind kind = task_kind::server;
    task_state state = task_state::blocked;
    std::uint32_t core = 0;       // where it is queued or running
    std::uint32_t last_ran = 0;   // where it last ran ("prev" of a wakeup)
    bool has_run = false;
    bool stolen = false;          // taken by a balancer since it last ran
    bool woken = false;           // blocked and woken since it last ran
    std::optional<core_id> pinned;
    std::int32_t cpuset = none;   // index into cpusets_, none = any core
    std::uint64_t remaining = 0;  // CPU left in the current burst
    std::uint64_t slice_used = 0;
    std::uint64_t slice = 0;
    std::uint64_t poll_start = 0;
    // The request being served: its flow and when the client sent it.
    std::int32_t serving = none;
    std::uint64_t serving_sent = 0;
    std::uint32_t flow = 0;       // blocking server: its flow
    ring<std::uint32_t> ready;    // consumer: flows with a request waiting, one entry per request
    double load = 0;              // decayed runnable average, x load_scale
    std::uint64_t load_since = 0;
    bool load_runnable = false;
    // CFS (kernel.cfs): virtual runtime, in the clock of core vr_core.
    std::uint64_t vruntime = 0;
    std::uint32_t vr_core = 0;
    rng random{0, 0};
  };

  struct flow_state {
    std::uint32_t server = 0;     // task reading it
    std::uint32_t queue = 0;      // RX queue by RSS hash
    std::uint32_t hash = 0;
    std::uint32_t processed_on = 0;  // core whose RX path delivered the latest request
    unsigned done_in_txn = 0;
    std::uint64_t sent_at = 0;    // closed loop: when the outstanding request was first sent
    ring<std::uint64_t> socket;   // send times of delivered, unread requests
    rng random{0, 0};
  };

  struct rx_queue {
    std::uint32_t core = 0;
    ring<packet> packets;
  };

  struct core {
    std::uint32_t id = 0;
    bool reactor = false;
    core_mode mode = core_mode::sleeping;
    std::uint32_t gen = 0;        // bumped to invalidate the pending segment event
    std::int32_t current = none;  // running, busy-polling, or interrupted by RX
    std::int32_t last_task = none;
    ring<std::uint32_t> rq;
    std::vector<std::uint32_t> queues;  // RX queues this core owns
    std::size_t next_queue = 0;
    ring<handoff> backlog;
    bool irq_pending = false;     // the next RX unit pays interrupt entry
    bool resched = false;         // CFS: the current task is to give the core up (need_resched)
    std::uint64_t min_vruntime = 0;
    // The RX unit in progress.
    packet unit;
    std::uint32_t unit_target = 0;
    std::uint64_t seg_start = 0;
    // Accounting.
    std::uint64_t acct_since = 0;
    std::uint64_t nr_ns = 0, busy_ns = 0, rx_ns = 0;  // integrals
    std::uint64_t nr_ns_tick = 0, rx_ns_tick = 0;     // at the last load tick
    std::uint64_t busy_ns_sample = 0, busy_ns_warm = 0;
  };

  // ---- simulator.cc: set-up and the loop
  void build_tasks();
  void build_flows();
  void dispatch(const event& e);
  void start_measuring();
  result collect();
  std::uint64_t wire_ns(std::uint32_t bytes) const;
  static std::uint32_t packets_of(std::uint32_t bytes);
  bool allowed(const task& t, std::uint32_t c) const;

  // ---- core.cc: the ladder and accounting
  std::uint32_t nr_running(const core& c) const;
  void account(core& c);
  void refresh(core& c);
  void set_mode(core& c, core_mode m);
  void notify(core& c, bool interrupt);
  void turn(core& c);
  void run_next(core& c);
  void start_segment(core& c);
  void finish_segment(core& c);
  void interrupt_task(core& c);
  void go_idle(core& c);
  void core_wake(core& c);
  void block(core& c, task& t);
  void enqueue(core& c, std::uint32_t t);
  void load_tick();
  void sample_tick();
  void set_task_runnable(task& t, bool runnable);
  std::uint32_t task_load(task& t);

  // ---- sched.cc: the policy calls
  policy::sched_view view() const;
  void wake_task(std::uint32_t t, std::uint32_t waker, policy::waker_kind kind);
  bool try_steal(core& c);
  void balance_tick(core& c);
  void enter_poll(core& c);
  void poll_recheck(core& c);

  // ---- cfs.cc: the seeds' kernel scheduler (kernel.cfs)
  std::uint64_t current_vruntime(const core& c) const;
  std::uint64_t min_vruntime(core& c);
  void cfs_place(core& c, task& t, bool wakeup);
  bool wakeup_preempts(const core& c, const task& t) const;
  void sched_tick(core& c);
  void preempt(core& c);
  std::size_t pick_next(const core& c) const;

  // ---- nic.cc: packets
  void request_arrive(std::uint32_t flow);
  void lost(std::uint32_t flow);
  std::int32_t polled_queue(const core& c) const;
  bool rx_waiting(const core& c) const;
  bool backlog_ready(const core& c) const;
  void start_rx(core& c);
  void finish_rx(core& c);
  void deliver(std::uint32_t flow, std::uint32_t on, std::uint64_t sent);

  // ---- workload.cc: tasks and clients
  bool begin_work(core& c, task& t);
  void work_done(core& c, task& t);
  bool take_request(core& c, task& t);
  void respond(task& t);
  void send_request(std::uint32_t flow, std::uint64_t at);
  void open_arrival();

  sim_params p_;
  const topology& topo_;
  event_queue events_;
  std::uint64_t now_ = 0;
  std::uint64_t warmup_end_ = 0;
  std::uint64_t end_ = 0;
  bool measuring_ = false;

  std::vector<core> cores_;
  std::vector<policy::core_state> view_cores_;
  std::vector<task> tasks_;
  std::vector<flow_state> flows_;
  std::vector<rx_queue> queues_;
  std::vector<std::vector<bool>> cpusets_;
  rng open_random_;
  std::size_t last_kick_ = 0;  // index in reactor_cores of the last core kicked to balance

  std::uint64_t transactions_ = 0;
  std::uint64_t requests_ = 0;
  result out_;
};

// Whether the parameters describe a machine the simulator can run (reactor
// cores exist, the RX plan works, server and antagonist cores run reactors,
// the policy config is valid). The message names what is wrong.
std::expected<void, std::string> check_params(const sim_params& p);

// Checks, builds, runs.
std::expected<result, std::string> simulate(const sim_params& p);

}  // namespace affine::sim
