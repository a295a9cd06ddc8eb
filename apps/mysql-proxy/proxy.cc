#include "apps/mysql-proxy/proxy.hh"

#include <algorithm>
#include <array>
#include <map>
#include <atomic>
#include <cstdio>
#include <optional>
#include <stop_token>
#include <vector>

#include <fmt/format.h>

#include "affine/fiber.hh"
#include "apps/common/serve.hh"
#include "affine/stats.hh"
#include "apps/mysql-proxy/health.hh"
#include "apps/mysql-proxy/http.hh"
#include "apps/mysql-proxy/metrics.hh"
#include "apps/mysql-proxy/session.hh"
#include "apps/mysql-proxy/stats.hh"

namespace affine_mysql {

namespace {

// The scheduler's and the stack's decisions per core, from the runtime's
// counters: " | sched c0 placements.waker_on_prev=120 busy_poll_exits.data=80 ...".
std::string format_decisions(std::span<const affine::metric_sample> samples) {
  static constexpr std::array<std::pair<std::string_view, std::string_view>, 4> decisions{{
      {"affine_placements_total", "place"},
      {"affine_steals_total", "steal"},
      {"affine_stack_busy_poll_exits_total", "busy_poll"},
      {"affine_stack_rps_steered_total", "rps"},
  }};
  std::map<std::string, std::string> by_core;
  for (const affine::metric_sample& m : samples) {
    if (m.value == 0) continue;
    for (const auto& [name, shown] : decisions) {
      if (m.name != name) continue;
      std::string core, what;
      for (const auto& [k, v] : m.labels) {
        if (k == "core") core = v;
        if (k == "reason" || k == "domain") what = v;
      }
      by_core[core] += fmt::format(" {}.{}={}", shown, what, m.value);
    }
  }
  std::string out;
  for (const auto& [core, text] : by_core) out += fmt::format(" | sched c{}{}", core, text);
  return out;
}

void print_stats(const proxy_stats& stats, const backend_set& backends) {
  std::string line = "affine-mysql-proxy: " + format_stats(*stats.snapshot());
  for (std::size_t i = 0; i < backends.size(); ++i) line += " | backend " + format_backend(backends.at(i));
  line += format_decisions(affine::collect_metrics());
  fmt::print("{}\n", line);
  std::fflush(stdout);
}

// Until a stop request on the fiber's token (which ends the sleep at once).
void print_stats_every(double interval_s, const proxy_stats& stats, const backend_set& backends) {
  const auto interval_ns = std::uint64_t(interval_s * 1e9);
  for (std::uint64_t due = affine::now_ns() + interval_ns; affine::this_fiber::sleep_until(due); due += interval_ns)
    print_stats(stats, backends);
}

}  // namespace

int run_proxy(const options& o) {
  using namespace affine;
  backend_set backends(o.backends);
  proxy_stats stats;
  // SIGINT, SIGTERM: a stop request on this fiber's token (affine::run),
  // which the sessions inherit: their waits end at once, and they tell
  // their clients (1053).
  proxy_context ctx{backends, stats, o.session, [] { return affine::this_fiber::stop_requested(); }};
  auto l = net::listen({.local = *o.listen, .backlog = 1024, .accepted = {.no_delay = true}});
  if (!l) {
    fmt::print(stderr, "affine-mysql-proxy: listen on {}: {}\n", o.listen->to_string(), l.error().message());
    return 1;
  }
  std::optional<net::tcp_listener> metrics_listener;
  if (o.metrics) {
    auto ml = net::listen({.local = *o.metrics});
    if (!ml) {
      fmt::print(stderr, "affine-mysql-proxy: metrics listen on {}: {}\n", o.metrics->to_string(),
                 ml.error().message());
      return 1;
    }
    metrics_listener = std::move(*ml);
  }
  fmt::print("affine-mysql-proxy: listening on {}, {} backend(s)\n", l->local().to_string(), backends.size());
  if (metrics_listener) fmt::print("affine-mysql-proxy: metrics on http://{}/metrics\n", metrics_listener->local().to_string());
  std::fflush(stdout);

  // The helpers follow a token of their own: they end once the sessions have.
  std::stop_source helpers;
  std::vector<fiber_handle> helper_fibers;
  auto start_helper = [&](std::string_view what, std::move_only_function<void()> fn) {
    auto f = spawn(std::move(fn), {.stop = helpers.get_token()});
    if (f) {
      helper_fibers.push_back(std::move(*f));
    } else {
      fmt::print(stderr, "affine-mysql-proxy: no fiber for the {}: {}\n", what, f.error().message());
    }
  };
  if (o.health_checks) start_helper("health checks", [&] { run_health_checks(backends, o.health); });
  if (o.stats_interval_s > 0)
    start_helper("stats line", [&] { print_stats_every(o.stats_interval_s, stats, backends); });
  // The Prometheus endpoint stays up until the sessions have ended.
  if (metrics_listener)
    start_helper("metrics endpoint", [&] {
      serve_http(*metrics_listener, [&] { return prometheus_text(*stats.snapshot(), backends, collect_metrics()); });
    });

  const auto served = affine_apps::serve_until_stopped(*l, "affine-mysql-proxy",
                                                       [&ctx](net::tcp_stream c) { run_session(std::move(c), ctx); });
  helpers.request_stop();
  for (fiber_handle& h : helper_fibers) h.join(stop_mode::ignore);
  print_stats(stats, backends);
  return served.code;
}

}  // namespace affine_mysql
