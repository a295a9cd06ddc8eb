// collect_metrics: the scheduler's per-core counters as named samples, and
// whatever affine::run registered (its stacks').

#include <mutex>

#include "affine/stats.hh"
#include "reactor/policy/place.hh"
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

}  // namespace

void detail::set_metrics_source(std::function<void(std::vector<metric_sample>&)> s) {
  std::lock_guard g(source_lock);
  source = std::move(s);
}

std::vector<metric_sample> collect_metrics() {
  std::vector<metric_sample> out;
  detail::runtime_state* rt = detail::current_runtime();
  if (rt == nullptr) return out;
  std::vector<core_counters> cores;
  for (auto& c : rt->cores) cores.push_back(read(*c));

  // One name at a time over every core, so that samples of a name are adjacent.
  using labels = std::vector<std::pair<std::string, std::string>>;
  const auto per_core = [&](std::string_view name, std::string_view help, bool counter, auto value,
                            labels extra = {}) {
    for (std::size_t i = 0; i < cores.size(); ++i) {
      labels l{{"core", std::to_string(i)}};
      l.insert(l.end(), extra.begin(), extra.end());
      out.push_back({std::string(name), std::string(help), counter, std::move(l), value(cores[i])});
    }
  };
  const auto field = [](std::uint64_t core_counters::*f) { return [f](const core_counters& c) { return c.*f; }; };

  per_core("affine_loop_turns_total", "Reactor loop turns.", true, field(&core_counters::loop_turns));
  static constexpr std::array<std::string_view, std::size_t(rung::count_)> rungs{
      "poll", "backlog", "inbox", "timers", "run", "tx_flush", "steal", "spin", "sleep"};
  for (std::size_t r = 0; r < rungs.size(); ++r)
    per_core("affine_rung_work_total", "Items done by each rung of the reactor loop.", true,
             [r](const core_counters& c) { return c.rung_work[r]; }, {{"rung", std::string(rungs[r])}});
  per_core("affine_fiber_runs_total", "Fiber resumes.", true, field(&core_counters::fibers_run));
  per_core("affine_fibers_spawned_total", "Fibers spawned.", true, field(&core_counters::fibers_spawned));
  per_core("affine_migrations_total", "Fibers resumed here after running on another core.", true,
           field(&core_counters::migrations));
  per_core("affine_wakeups_local_total", "Fibers woken onto this core's run queue by this core.", true,
           field(&core_counters::wakeups_local));
  per_core("affine_wakeups_remote_total", "Fibers woken by this core onto another core.", true,
           field(&core_counters::wakeups_remote));
  for (std::size_t r = 0; r < policy::wake_reason_count; ++r)
    per_core("affine_placements_total", "Wakeup placements by the policy's reason (DESIGN.md section 1).", true,
             [r](const core_counters& c) { return c.placements[r]; },
             {{"reason", std::string(policy::to_string(policy::wake_reason(r)))}});
  per_core("affine_placements_idle_sibling_total", "Placements the idle-sibling search moved to another core.",
           true, field(&core_counters::placements_idle_sibling));
  static constexpr std::array<std::string_view, 3> levels{"llc", "node", "machine"};
  for (std::size_t l = 0; l < levels.size(); ++l)
    per_core("affine_steals_total", "Fibers this core stole, by the domain the victim was found in.", true,
             [l](const core_counters& c) { return c.steals[l]; }, {{"domain", std::string(levels[l])}});
  per_core("affine_quota_overruns_total", "Fibers that ran past twice the task quota without yielding.", true,
           field(&core_counters::quota_overruns));
  per_core("affine_sleeps_total", "Times the reactor slept.", true, field(&core_counters::sleeps));
  per_core("affine_kicks_sent_total", "Wakeups of sleeping cores this core sent.", true,
           field(&core_counters::kicks_sent));
  per_core("affine_idle_microseconds_total", "Time with nothing to do, spinning or asleep.", true,
           [](const core_counters& c) { return c.idle_ns / 1'000; });
  per_core("affine_sleep_microseconds_total", "The part of the idle time spent asleep.", true,
           [](const core_counters& c) { return c.sleep_ns / 1'000; });
  per_core("affine_timers_fired_total", "Timers fired.", true, field(&core_counters::timers_fired));

  std::lock_guard g(source_lock);
  if (source) source(out);
  return out;
}

}  // namespace affine
