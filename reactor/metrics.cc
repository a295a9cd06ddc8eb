// collect_metrics: the scheduler's per-core counters as named samples, and
// whatever affine::run registered (its stacks').

#include <array>
#include <mutex>
#include <span>

#include "affine/stats.hh"
#include "reactor/policy/place.hh"
#include "reactor/policy/spin.hh"
#include "reactor/runtime_state.hh"
#include "reactor/core.hh"

namespace affine {

namespace {

std::mutex source_lock;
std::function<void(std::vector<metric_sample>&)> source;

core_counters read(detail::core_ctx& c) {
  core_counters out;
  auto* dst = reinterpret_cast<std::uint64_t*>(&out);
  const auto& src = c.published.v;
  for (std::size_t i = 0; i < std::size(src); ++i) dst[i] = src[i].load(std::memory_order_relaxed);
  return out;
}

// One counter sample a core. Out of line and with plain arguments, so that
// no caller's frame holds the temporaries of every series (under ASan at -O0
// those frames outgrow a 64 KiB fiber stack).
[[gnu::noinline]] void emit(std::vector<metric_sample>& out, std::string_view name, std::string_view help,
                            std::span<const std::uint64_t> per_core, std::string_view key, std::string_view label) {
  for (std::size_t i = 0; i < per_core.size(); ++i) {
    metric_sample m;
    m.name = name;
    m.help = help;
    m.labels.emplace_back("core", std::to_string(i));
    if (!key.empty()) m.labels.emplace_back(std::string(key), std::string(label));
    m.value = per_core[i];
    out.push_back(std::move(m));
  }
}

}  // namespace

void detail::set_metrics_source(std::function<void(std::vector<metric_sample>&)> s) {
  std::lock_guard g(source_lock);
  source = std::move(s);
}

std::vector<metric_sample> collect_metrics() {
  const detail::no_preempt guard;  // the source runs under a mutex
  std::vector<metric_sample> out;
  detail::runtime_state* rt = detail::current_runtime();
  if (rt == nullptr) return out;
  std::vector<core_counters> cores;
  for (auto& c : rt->cores) cores.push_back(read(*c));

  // One name at a time over every core, so that samples of a name are adjacent.
  std::vector<std::uint64_t> v(cores.size());
  const auto per_core = [&](std::string_view name, std::string_view help, auto value, std::string_view key = {},
                            std::string_view label = {}) {
    for (std::size_t i = 0; i < cores.size(); ++i) v[i] = value(cores[i]);
    emit(out, name, help, v, key, label);
  };
  const auto field = [](std::uint64_t core_counters::*f) { return [f](const core_counters& c) { return c.*f; }; };

  per_core("affine_loop_turns_total", "Reactor loop turns.", field(&core_counters::loop_turns));
  static constexpr std::array<std::string_view, std::size_t(rung::count_)> rungs{
      "poll", "backlog", "inbox", "timers", "run", "tx_flush", "steal", "spin", "sleep"};
  for (std::size_t r = 0; r < rungs.size(); ++r)
    per_core("affine_rung_work_total", "Items done by each rung of the reactor loop.",
             [r](const core_counters& c) { return c.rung_work[r]; }, "rung", rungs[r]);
  per_core("affine_fiber_runs_total", "Fiber resumes.", field(&core_counters::fibers_run));
  per_core("affine_fibers_spawned_total", "Fibers spawned.", field(&core_counters::fibers_spawned));
  per_core("affine_migrations_total", "Fibers resumed here after running on another core.",
           field(&core_counters::migrations));
  per_core("affine_wakeups_local_total", "Fibers woken onto this core's run queue by this core.",
           field(&core_counters::wakeups_local));
  per_core("affine_wakeups_remote_total", "Fibers woken by this core onto another core.",
           field(&core_counters::wakeups_remote));
  for (std::size_t r = 0; r < policy::wake_reason_count; ++r)
    per_core("affine_placements_total", "Wakeup placements by the policy's reason (DESIGN.md section 1).",
             [r](const core_counters& c) { return c.placements[r]; }, "reason",
             policy::to_string(policy::wake_reason(r)));
  per_core("affine_placements_idle_sibling_total", "Placements the idle-sibling search moved to another core.",
           field(&core_counters::placements_idle_sibling));
  static constexpr std::array<std::string_view, 3> levels{"llc", "node", "machine"};
  for (std::size_t l = 0; l < levels.size(); ++l)
    per_core("affine_steals_total", "Fibers this core stole, by the domain the victim was found in.",
             [l](const core_counters& c) { return c.steals[l]; }, "domain", levels[l]);
  per_core("affine_quota_overruns_total", "Fibers that ran past twice the task quota without yielding.",
           field(&core_counters::quota_overruns));
  per_core("affine_preemptions_total", "Fibers preempted past their quantum (reactor.preempt).",
           field(&core_counters::preemptions));
  per_core("affine_rx_interrupts_total",
           "Running fibers left for one poll turn of their core (reactor.rx_interrupt_us).",
           field(&core_counters::rx_interrupts));
  static constexpr std::array<std::string_view, 3> refusals{"runtime", "outside", "switching"};
  for (std::size_t r = 0; r < refusals.size(); ++r)
    per_core("affine_preemptions_refused_total",
             "Preemptions that were due but refused (retried at the next tick), by reason.",
             [r](const core_counters& c) { return c.preempt_refused[r]; }, "reason", refusals[r]);
  per_core("affine_stalls_total", "Fibers that held their core past reactor.stall_report_ms without yielding.",
           field(&core_counters::stalls));
  per_core("affine_sleeps_total", "Times the reactor slept.", field(&core_counters::sleeps));
  per_core("affine_kicks_sent_total", "Wakeups of sleeping cores this core sent.", field(&core_counters::kicks_sent));
  per_core("affine_idle_microseconds_total", "Time with nothing to do, spinning or asleep.",
           [](const core_counters& c) { return c.idle_ns / 1'000; });
  per_core("affine_sleep_microseconds_total", "The part of the idle time spent asleep.",
           [](const core_counters& c) { return c.sleep_ns / 1'000; });
  per_core("affine_timers_fired_total", "Timers fired.", field(&core_counters::timers_fired));
  for (std::size_t r = 0; r < policy::spin_reason_count; ++r)
    per_core("affine_spin_plans_total", "Idle spins planned, by reason (reactor.idle; docs/tuning.md).",
             [r](const core_counters& c) { return c.spin_plans[r]; }, "reason",
             policy::to_string(policy::spin_reason(r)));
  for (std::size_t r = 0; r < policy::spin_reason_count; ++r)
    per_core("affine_busy_poll_plans_total", "Busy polls planned, by reason (busy_poll.mode; docs/tuning.md).",
             [r](const core_counters& c) { return c.busy_poll_plans[r]; }, "reason",
             policy::to_string(policy::spin_reason(r)));
  per_core("affine_cpu_wait_microseconds_total",
           "Time the reactor thread waited for its CPU while runnable (another task had it).",
           [](const core_counters& c) { return c.cpu_wait_ns / 1'000; });
  per_core("affine_cpu_shared_samples_total", "CPU-share samples that found another task waiting for the CPU.",
           field(&core_counters::cpu_shared_samples));
  {
    const std::size_t first = out.size();
    per_core("affine_wake_nanoseconds", "The measured cost of a sleep and wake: a decaying mean.",
             field(&core_counters::wake_ns));
    for (std::size_t i = first; i < out.size(); ++i) out[i].counter = false;
  }

  std::lock_guard g(source_lock);
  if (source) source(out);
  return out;
}

}  // namespace affine
