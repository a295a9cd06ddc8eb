// affine::run: configuration, topology, reactors, the socket API's backend
// (from [[port]] driver), the main fiber, and the periodic stats line
// ([stats] interval_ms).

#include <fmt/format.h>

#include <cstdio>

#include "affine/affine.hh"
#include "affine/config.hh"
#include "affine/log.hh"
#include "affine/stats.hh"
#include "drivers/dpdk/eal.hh"
#include "drivers/dpdk/from_config.hh"
#include "drivers/uring/install.hh"
#include "stack/from_config.hh"
#include "stack/stack.hh"
#include "reactor/from_config.hh"

namespace affine {

namespace {

// A fiber logging, every `interval_ms` (0: never), one line per core of the
// scheduler's counters and one per core of each stack's, for as long as this
// object lives.
class stats_line {
 public:
  stats_line(runtime& rt, const std::vector<std::unique_ptr<stack::stack>>& stacks, std::uint64_t interval_ms) {
    if (interval_ms == 0) return;
    fiber_ = spawn([this, &rt, &stacks, interval_ms] {
      while (!stop_.wait(now_ns() + interval_ms * 1'000'000)) {
        for (unsigned c = 0; c < rt.cores(); ++c) AFFINE_LOG_INFO("stats {}", format_counters(c, rt.counters(c)));
        for (std::size_t i = 0; i < stacks.size(); ++i)
          for (unsigned c = 0; c < stacks[i]->cores(); ++c)
            AFFINE_LOG_INFO("stats port{} {}", i, stack::format_counters(c, stacks[i]->counters(c)));
      }
    });
  }
  ~stats_line() {
    stop_.set();
    if (fiber_.joinable()) fiber_.join();
  }
  stats_line(const stats_line&) = delete;
  stats_line& operator=(const stats_line&) = delete;

 private:
  event stop_;
  fiber_handle fiber_;
};

// Every [[port]] with driver = "dpdk", opened (EAL first).
std::expected<std::vector<std::unique_ptr<drivers::dpdk::dpdk_port>>, std::string> open_dpdk_ports(
    const config::settings& cfg, unsigned reactors) {
  std::vector<std::unique_ptr<drivers::dpdk::dpdk_port>> ports;
  for (const config::table_view& port : cfg.tables("port")) {
    if (port.get_string("driver") != "dpdk") continue;
    if (auto eal = drivers::dpdk::init_eal_from_config(cfg); !eal) return std::unexpected(eal.error());
    auto p = drivers::dpdk::open_port_from_config(port, reactors);
    if (!p) return std::unexpected(p.error());
    ports.push_back(std::move(*p));
  }
  return ports;
}

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
  // DPDK ports open before the reactors start, so that a configuration
  // naming a missing PMD, a bad vdev or more queues than the device has
  // ends start-up with its file, line and key (exit code 2).
  const unsigned reactors = setup->options.cores.empty() ? topo->core_count() : unsigned(setup->options.cores.size());
  auto ports = open_dpdk_ports(cfg, reactors);
  if (!ports) {
    fmt::print(stderr, "{}\n", ports.error());
    return 2;
  }
  for (const config::table_view& port : cfg.tables("port"))
    if (port.get_string("driver") == "dpdk")
      if (auto sc = stack::stack_config_from(port); !sc) {
        fmt::print(stderr, "{}\n", sc.error());
        return 2;
      }
  if (!ports->empty()) setup->options.on_reactor_start = drivers::dpdk::register_reactor;
  auto rt = runtime::start(*topo, setup->options, &setup->policy);
  if (!rt) {
    fmt::print(stderr, "affine: {}\n", rt.error());
    return 1;
  }
  AFFINE_LOG_INFO("affine: {} reactors on {}", (*rt)->cores(), topo->summary());
  const std::uint64_t interval_ms = std::uint64_t(cfg.get_int("stats.interval_ms"));
  try {
    return (*rt)->run([&] {
      // The socket API's backend: the userspace stack on the first dpdk
      // port, else kernel sockets through io_uring (uring ports, or no port).
      auto net = drivers::uring::install();
      if (!net) throw std::runtime_error(net.error());
      auto stacks = stack::start_stacks(**rt, cfg, *ports);
      if (!stacks) throw std::runtime_error(stacks.error());
      if (!stacks->empty()) net::detail::set_backend(&stacks->front()->backend());
      if (!stacks->empty())
        detail::set_metrics_source([&s = *stacks](std::vector<metric_sample>& out) {
          for (std::size_t i = 0; i < s.size(); ++i) {
            std::vector<const stack::core_counters*> cores;
            for (unsigned c = 0; c < s[i]->cores(); ++c) cores.push_back(&s[i]->counters(c));
            stack::append_metrics(out, unsigned(i), cores);
          }
        });
      stats_line stats(**rt, *stacks, interval_ms);
      struct unset_backend {  // before the stacks go
        bool active;
        ~unset_backend() {
          if (!active) return;
          net::detail::set_backend(nullptr);
          detail::set_metrics_source({});
        }
      } unset{!stacks->empty()};
      return main_fiber(cl->args, cl->config);  // then ~stats, ~stacks, ~net: also when it throws
    });
  } catch (const std::exception& e) {
    fmt::print(stderr, "affine: the main fiber threw: {}\n", e.what());
    return 1;
  }
}

}  // namespace affine
