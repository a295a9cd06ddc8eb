#include "apps/mysql-proxy/proxy.hh"

#include <algorithm>
#include <atomic>
#include <cstdio>

#include <fmt/format.h>

#include "affine/fiber.hh"
#include "apps/common/serve.hh"
#include "apps/mysql-proxy/health.hh"
#include "apps/mysql-proxy/session.hh"
#include "apps/mysql-proxy/stats.hh"

namespace affine_mysql {

namespace {

void print_stats(const proxy_stats& stats, const backend_set& backends) {
  std::string line = "affine-mysql-proxy: " + format_stats(*stats.snapshot());
  for (std::size_t i = 0; i < backends.size(); ++i) line += " | backend " + format_backend(backends.at(i));
  fmt::print("{}\n", line);
  std::fflush(stdout);
}

void print_stats_every(double interval_s, const proxy_stats& stats, const backend_set& backends,
                       const std::function<bool()>& stop) {
  const auto interval_ns = std::uint64_t(interval_s * 1e9);
  std::uint64_t due = affine::now_ns() + interval_ns;
  while (!stop()) {
    const std::uint64_t now = affine::now_ns();
    if (now >= due) {
      print_stats(stats, backends);
      due += interval_ns;
      continue;
    }
    affine::this_fiber::sleep_until(std::min(due, now + affine_apps::stop_check_ns));
  }
}

}  // namespace

int run_proxy(const options& o) {
  using namespace affine;
  affine_apps::stop_on_signals();
  backend_set backends(o.backends);
  proxy_stats stats;
  proxy_context ctx{backends, stats, o.session, [] { return affine_apps::stop_requested(); }};
  auto l = net::listen({.local = o.listen, .backlog = 1024, .accepted = {.no_delay = true}});
  if (!l) {
    fmt::print(stderr, "affine-mysql-proxy: listen on {}: {}\n", o.listen.to_string(), l.error().message());
    return 1;
  }
  fmt::print("affine-mysql-proxy: listening on {}, {} backend(s)\n", l->local().to_string(), backends.size());
  std::fflush(stdout);

  // The helpers end once the sessions have.
  std::atomic<bool> sessions_done{false};
  const std::function<bool()> helpers_stop = [&] { return sessions_done.load(); };
  fiber_handle health;
  if (o.health_checks) health = spawn([&] { run_health_checks(backends, o.health, helpers_stop); });
  fiber_handle printer;
  if (o.stats_interval_s > 0)
    printer = spawn([&] { print_stats_every(o.stats_interval_s, stats, backends, helpers_stop); });

  const auto served = affine_apps::serve_until_stopped(*l, "affine-mysql-proxy",
                                                       [&ctx](net::tcp_stream c) { run_session(std::move(c), ctx); });
  sessions_done = true;
  if (health.joinable()) health.join();
  if (printer.joinable()) printer.join();
  print_stats(stats, backends);
  return served.code;
}

}  // namespace affine_mysql
