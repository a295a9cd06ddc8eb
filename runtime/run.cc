// affine::run, the composition root: configuration, topology, reactors, the
// socket API's backend (from [[port]] driver: the userspace stack on dpdk
// ports, runtime/stack_ports.hh, else kernel sockets through io_uring), the
// main fiber, and the periodic stats line ([stats] interval_ms).

#include <fmt/format.h>

#include <cstdio>

#include "affine/affine.hh"
#include "affine/config.hh"
#include "affine/log.hh"
#include "affine/stats.hh"
#include "drivers/uring/install.hh"
#include "reactor/from_config.hh"
#include "runtime/signal_stop.hh"
#include "runtime/stack_ports.hh"

namespace affine {

namespace {

// A fiber logging, every `interval_ms` (0: never), one line per core of the
// scheduler's counters and one per core of each stack's, for as long as this
// object lives.
class stats_line {
 public:
  stats_line(runtime& rt, const detail::running_stacks& stacks, std::uint64_t interval_ms) {
    if (interval_ms == 0) return;
    // Its own (no) stop token: it logs until this object goes.
    auto f = spawn(
        [this, &rt, &stacks, interval_ms] {
          while (!stop_.wait(now_ns() + interval_ms * 1'000'000)) {
            for (unsigned c = 0; c < rt.cores(); ++c) AFFINE_LOG_INFO("stats {}", format_counters(c, rt.counters(c)));
            stacks.log_stats();
          }
        },
        {.stop = std::stop_token{}, .preemptible = false});  // runtime code: never preempted
    if (!f) throw std::system_error(f.error(), "affine: the stats fiber");
    fiber_ = std::move(*f);
  }
  ~stats_line() {
    stop_.set();
    if (fiber_.joinable()) fiber_.join(stop_mode::ignore);
  }
  stats_line(const stats_line&) = delete;
  stats_line& operator=(const stats_line&) = delete;

 private:
  event stop_;
  fiber_handle fiber_;
};

// When the main fiber is done (returned or threw): the fibers it left
// running are told to stop (a stop request on the token they inherited)
// and waited for, up to 10 s, so that none outlives the stacks and
// backends they use. Counted against the fibers alive when it began.
class leftover_fibers {
 public:
  leftover_fibers(runtime& rt, detail::signal_stop& signals)
      : rt_(rt), signals_(signals), baseline_(rt.live_fibers()) {}
  ~leftover_fibers() {
    if (rt_.live_fibers() <= baseline_) return;
    signals_.request_stop();
    this_fiber::stop_scope wait_whatever_comes{std::stop_token{}};
    const std::uint64_t until = now_ns() + 10'000'000'000;
    while (rt_.live_fibers() > baseline_ && now_ns() < until) this_fiber::sleep_for(std::chrono::milliseconds(1));
    if (const std::size_t left = rt_.live_fibers(); left > baseline_)
      AFFINE_LOG_WARN("affine: {} fibers still running 10 s after the main fiber ended", left - baseline_);
  }
  leftover_fibers(const leftover_fibers&) = delete;
  leftover_fibers& operator=(const leftover_fibers&) = delete;

 private:
  runtime& rt_;
  detail::signal_stop& signals_;
  std::size_t baseline_;
};

}  // namespace

int run(int argc, const char* const* argv, main_fn main_fiber) {
  return run(argc, argv, config_schema(),
             [&main_fiber](std::span<const std::string> args, const config::settings&) { return main_fiber(args); });
}

int run(int argc, const char* const* argv, const config::schema& app, main_with_settings_fn main_fiber) {
  auto cl = config::load_command_line(app, argc, argv);
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
  const unsigned reactors = setup->options.cores.empty() ? topo->core_count() : unsigned(setup->options.cores.size());
  // SIGINT, SIGTERM: a stop request on the main fiber's token. Blocked
  // before any thread starts (DPDK's, the reactors), so none of them takes one.
  detail::signal_stop signals;
  auto ports = detail::stack_ports::open(cfg, reactors);  // before the reactors: a bad port is exit code 2
  if (!ports) {
    fmt::print(stderr, "{}\n", ports.error());
    return 2;
  }
  if (auto hook = (*ports)->on_reactor_start()) setup->options.on_reactor_start = std::move(hook);
  auto rt = runtime::start(*topo, setup->options, &setup->policy);
  if (!rt) {
    fmt::print(stderr, "affine: {}\n", rt.error());
    return 1;
  }
  AFFINE_LOG_INFO("affine: {} reactors on {}", (*rt)->cores(), topo->summary());
  const std::uint64_t interval_ms = std::uint64_t(cfg.get_int("stats.interval_ms"));
  try {
    return (*rt)->run([&] {
      this_fiber::stop_scope on_signals(signals.token());  // inherited by every fiber it spawns
      // The socket API's backend: the userspace stack on the first dpdk
      // port, else kernel sockets through io_uring (uring ports, or no port).
      auto net = drivers::uring::install();
      if (!net) throw std::runtime_error(net.error());
      auto stacks = (*ports)->start(**rt, cfg);
      if (!stacks) throw std::runtime_error(stacks.error());
      stats_line stats(**rt, **stacks, interval_ms);
      leftover_fibers leftovers(**rt, signals);
      // Then ~leftovers, ~stats, ~stacks (backend unset first), ~net: also when it throws.
      return main_fiber(cl->args, cl->config);
    });
  } catch (const std::exception& e) {
    fmt::print(stderr, "affine: the main fiber threw: {}\n", e.what());
    return 1;
  }
}

}  // namespace affine
