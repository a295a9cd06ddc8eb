#include "reactor/from_config.hh"

#include <algorithm>

#include "affine/log.hh"
#include "reactor/auto_cores.hh"

namespace affine::detail {

std::expected<std::vector<core_id>, std::string> reactor_cores_from(const config::table_view& cfg,
                                                                    const topology& topo) {
  const config::core_list& cl = cfg.get_cores("reactor.cores");
  std::expected<std::vector<core_id>, std::string> cores;
  switch (cl.what) {
    case config::core_list::kind::automatic: {
      const double load = load_average_1m();
      const std::vector<core_id> allowed = allowed_cores(topo);
      cores = auto_cores(topo, allowed, load);
      if (cores && cores->size() < topo.core_count())
        AFFINE_LOG_INFO("reactor.cores = \"auto\": {} of {} cores ({} allowed by this process's CPU affinity), "
                        "other processes' load average {:.2f} (\"all\" for one reactor per core)",
                        cores->size(), topo.core_count(), allowed.empty() ? topo.core_count() : allowed.size(),
                        load);
      break;
    }
    case config::core_list::kind::list: cores = parse_core_list(topo, cl.list); break;
    case config::core_list::kind::count: cores = first_cores(topo, unsigned(cl.count)); break;
  }
  if (!cores) return std::unexpected(cfg.error("reactor.cores", cores.error()));
  std::sort(cores->begin(), cores->end());
  return cores;
}

std::expected<runtime_setup, std::string> runtime_setup_from(const config::table_view& cfg,
                                                             const topology& topo) {
  runtime_setup s;
  auto cores = reactor_cores_from(cfg, topo);
  if (!cores) return std::unexpected(cores.error());
  runtime_options& o = s.options;
  o.cores = std::move(*cores);
  const std::string& idle = cfg.get_string("reactor.idle");
  o.idle = idle == "spin" ? idle_mode::spin : idle == "sleep" ? idle_mode::sleep : idle_mode::adaptive;
  o.spin_us = std::uint32_t(cfg.get_int("reactor.spin_us"));
  o.stack_bytes = std::size_t(cfg.get_int("reactor.stack_kib")) * 1024;
  o.task_quota_us = std::uint32_t(cfg.get_int("reactor.task_quota_us"));
  o.preempt = cfg.get_string("reactor.preempt") == "on";
  o.quantum_us = std::uint32_t(cfg.get_int("reactor.quantum_us"));
  o.rx_interrupt_us = std::uint32_t(cfg.get_int("reactor.rx_interrupt_us"));
  o.stall_report_ms = std::uint32_t(cfg.get_int("reactor.stall_report_ms"));
  o.balance_interval_us = std::uint32_t(cfg.get_int("sched.balance_interval_us"));

  policy::policy_config& p = s.policy;
  p.rx_wakeup_sync = cfg.get_bool("sched.rx_wakeup_sync");  // seed 000
  const std::string& wa = cfg.get_string("sched.wake_affine");  // seed 004
  p.wake_affine = wa == "off"      ? policy::wake_affine_mode::off
                  : wa == "always" ? policy::wake_affine_mode::always
                                   : policy::wake_affine_mode::task_only;
  p.steal = cfg.get_bool("sched.steal");
  p.busy_poll_budget_ns = std::uint64_t(cfg.get_int("busy_poll.budget_us")) * 1000;  // seed 001
  p.yield_when_runnable = cfg.get_bool("busy_poll.yield_when_runnable");
  p.busy_poll_adaptive = cfg.get_string("busy_poll.mode") == "adaptive";
  if (auto ok = policy::validate(p); !ok) return std::unexpected(ok.error());
  return s;
}

}  // namespace affine::detail
