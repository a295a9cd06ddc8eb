// spin_governor: the ski-rental window and the pay rule (spin.hh).

#include "reactor/policy/spin.hh"

namespace affine::policy {

std::string_view to_string(spin_reason r) {
  switch (r) {
    case spin_reason::fixed: return "fixed";
    case spin_reason::paying: return "paying";
    case spin_reason::probe: return "probe";
    case spin_reason::shared: return "shared";
    case spin_reason::not_paying: return "not_paying";
    case spin_reason::off: return "off";
  }
  return "unknown";
}

spin_plan spin_governor::plan(std::uint64_t cap_ns, std::uint64_t sleep_cost_ns, bool cpu_shared) noexcept {
  window_ = spin_window(cap_ns, sleep_cost_ns);
  if (window_ == 0) return {0, spin_reason::off};
  // seed 001: nr_running_this_cpu() < 2 counts every task on the CPU, other
  // processes included; a spinner would only delay the one that waits.
  if (cpu_shared) return {0, spin_reason::shared};
  if (paying_) return {window_, spin_reason::paying};
  if (++since_probe_ >= probe_every) {
    since_probe_ = 0;
    return {window_, spin_reason::probe};
  }
  return {0, spin_reason::not_paying};
}

void spin_governor::record(std::uint64_t wait_ns) noexcept {
  if (window_ == 0) return;  // nothing was at stake
  const std::uint32_t hit = wait_ns <= window_ ? scale : 0;
  rate_ = rate_ - rate_ / 8 + hit / 8;
  if (paying_ && rate_ < stop_rate) paying_ = false;
  else if (!paying_ && rate_ >= pay_rate) paying_ = true;
}

}  // namespace affine::policy
