// affine::run: configuration, topology, reactors, the main fiber, and the
// periodic stats line ([stats] interval_ms).

#include <fmt/format.h>

#include <cstdio>

#include "affine/affine.hh"
#include "affine/config.hh"
#include "affine/log.hh"
#include "reactor/from_config.hh"

namespace affine {

namespace {

// Logs one line per core every `interval_ms` until `stop` is set.
void stats_loop(runtime& rt, std::uint64_t interval_ms, event& stop) {
  while (!stop.wait(now_ns() + interval_ms * 1'000'000)) {
    for (unsigned c = 0; c < rt.cores(); ++c) AFFINE_LOG_INFO("stats {}", format_counters(c, rt.counters(c)));
  }
}

}  // namespace

int run(int argc, const char* const* argv, main_fn main_fiber) {
  auto cl = config::load_command_line(config_schema(), argc, argv);
  if (!cl) {
    fmt::print(stderr, "{}\n", cl.error());
    return 2;
  }
  if (cl->print_config) {
    fmt::print("{}", config::print_config(cl->config));
    return 0;
  }
  const config::settings& cfg = cl->config;
  if (auto l = log::parse_level(cfg.get_string("log.level"))) log::set_level(*l);
  log::set_ratelimit_per_s(std::uint32_t(cfg.get_int("log.ratelimit_per_s")));

  auto topo = topology::from_system();
  if (!topo) {
    fmt::print(stderr, "affine: topology: {}\n", topo.error());
    return 1;
  }
  auto setup = detail::runtime_setup_from(cfg, *topo);
  if (!setup) {
    fmt::print(stderr, "{}\n", setup.error());
    return 2;
  }
  auto rt = runtime::start(*topo, setup->options, &setup->policy);
  if (!rt) {
    fmt::print(stderr, "affine: {}\n", rt.error());
    return 1;
  }
  AFFINE_LOG_INFO("affine: {} reactors on {}", (*rt)->cores(), topo->summary());
  const std::uint64_t interval_ms = std::uint64_t(cfg.get_int("stats.interval_ms"));
  try {
    return (*rt)->run([&] {
      event stop;
      fiber_handle stats;
      if (interval_ms > 0) stats = spawn([&] { stats_loop(**rt, interval_ms, stop); });
      const int code = main_fiber(cl->args);
      stop.set();
      if (stats.joinable()) stats.join();
      return code;
    });
  } catch (const std::exception& e) {
    fmt::print(stderr, "affine: the main fiber threw: {}\n", e.what());
    return 1;
  }
}

}  // namespace affine
