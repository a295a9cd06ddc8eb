// The names and the checks of the policy knobs.

#include "reactor/policy/config.hh"

#include <fmt/format.h>

namespace affine::policy {

std::string_view to_string(wake_affine_mode m) {
  switch (m) {
    case wake_affine_mode::off: return "off";
    case wake_affine_mode::task_only: return "task-only";
    case wake_affine_mode::always: return "always";
  }
  return "unknown";
}

std::expected<void, std::string> validate(const policy_config& cfg) {
  std::uint32_t inner = 2;
  for (const domain_level l : {domain_level::llc, domain_level::node, domain_level::machine}) {
    const std::uint32_t t = cfg.steal_threshold(l);
    if (t < inner) {
      return std::unexpected(fmt::format("steal threshold for {} is {}: allowed {} or more{}", to_string(l), t,
                                         inner, l == domain_level::llc ? "" : " (not below the inner level's)"));
    }
    inner = t;
  }
  if (cfg.wake_affine_allowance_pct > 100) {
    return std::unexpected(
        fmt::format("wake_affine_allowance_pct is {}: allowed 0 to 100", cfg.wake_affine_allowance_pct));
  }
  if (cfg.rps_idle_max_rx_share > load_scale) {
    return std::unexpected(fmt::format("rps_idle_max_rx_share is {}: allowed 0 to {}", cfg.rps_idle_max_rx_share,
                                       load_scale));
  }
  return {};
}

}  // namespace affine::policy
