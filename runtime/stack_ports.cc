// affine built with DPDK: every [[port]] with driver = "dpdk" opened (EAL
// first) before the reactors start, a stack on each once they run, the first
// one the socket API's backend, their counters in the stats line and in
// collect_metrics().

#include "runtime/stack_ports.hh"

#include <vector>

#include "affine/log.hh"
#include "affine/stats.hh"
#include "drivers/dpdk/eal.hh"
#include "drivers/dpdk/from_config.hh"
#include "drivers/dpdk/port.hh"
#include "stack/from_config.hh"
#include "stack/stack.hh"

namespace affine::detail {

namespace {

using port_list = std::vector<std::unique_ptr<drivers::dpdk::dpdk_port>>;

// One stack per opened port, in order (ports[i] from the i-th dpdk table).
std::expected<std::vector<std::unique_ptr<stack::stack>>, std::string> start_stacks(runtime& rt,
                                                                                    const config::settings& cfg,
                                                                                    const port_list& ports) {
  std::vector<std::unique_ptr<stack::stack>> stacks;
  std::vector<core_id> reactors;
  for (unsigned r = 0; r < rt.cores(); ++r) reactors.push_back(rt.topology_core(r));
  const rxq_placement placement = cfg.get_string("reactor.rxq_placement") == "spread"
                                             ? rxq_placement::spread
                                             : rxq_placement::local;
  std::size_t i = 0;
  for (const config::table_view& table : cfg.tables("port")) {
    if (table.get_string("driver") != "dpdk") continue;
    drivers::dpdk::dpdk_port& port = *ports[i++];
    auto sc = stack::stack_config_from(cfg, table, port.rx_queue_count());
    if (!sc) return std::unexpected(sc.error());
    auto plan = plan_rx_queues(rt.topo(), port.numa_node(), port.rx_queue_count(), reactors, placement);
    if (!plan) return std::unexpected(table.error("queues", plan.error()));
    auto st = stack::stack::create(rt, port, *sc, *plan);
    if (!st) return std::unexpected(table.error("ip", st.error()));
    stacks.push_back(std::move(*st));
  }
  return stacks;
}

class dpdk_stacks final : public running_stacks {
 public:
  explicit dpdk_stacks(std::vector<std::unique_ptr<stack::stack>> stacks) : stacks_(std::move(stacks)) {
    if (stacks_.empty()) return;
    net::detail::set_backend(&stacks_.front()->backend());
    detail::set_metrics_source([&s = stacks_](std::vector<metric_sample>& out) {
      for (std::size_t i = 0; i < s.size(); ++i) {
        std::vector<const stack::core_counters*> cores;
        for (unsigned c = 0; c < s[i]->cores(); ++c) cores.push_back(&s[i]->counters(c));
        stack::append_metrics(out, unsigned(i), cores);
        out.push_back({.name = "affine_stack_tcp_connections",
                       .help = "TCP connections in the stack's flow table (SYN-RECEIVED to TIME-WAIT).",
                       .counter = false,
                       .labels = {{"port", std::to_string(i)}},
                       .value = s[i]->connections()});
        out.push_back({.name = "affine_stack_tcp_syn_received",
                       .help = "TCP connections in SYN-RECEIVED: what the listeners' SYN queues hold.",
                       .counter = false,
                       .labels = {{"port", std::to_string(i)}},
                       .value = s[i]->syn_received()});
      }
      // The mbufs held, against the pools' sizes: what a flood may not keep.
      for (const auto& p : drivers::dpdk::packet_pool_usage()) {
        const std::vector<std::pair<std::string, std::string>> labels{{"node", std::to_string(p.node)},
                                                                      {"room", std::to_string(p.room)}};
        out.push_back({.name = "affine_packet_pool_in_use", .help = "Packet pool mbufs in use (not free, not cached).",
                       .counter = false, .labels = labels, .value = p.in_use});
        out.push_back({.name = "affine_packet_pool_size", .help = "Packet pool mbufs in all.", .counter = false,
                       .labels = labels, .value = p.size});
      }
    });
  }
  ~dpdk_stacks() override {
    if (stacks_.empty()) return;
    net::detail::set_backend(nullptr);  // before the stacks go
    detail::set_metrics_source({});
  }
  void log_stats() const override {
    for (std::size_t i = 0; i < stacks_.size(); ++i)
      for (unsigned c = 0; c < stacks_[i]->cores(); ++c)
        AFFINE_LOG_INFO("stats port{} {}", i, stack::format_counters(c, stacks_[i]->counters(c)));
  }

 private:
  std::vector<std::unique_ptr<stack::stack>> stacks_;
};

class dpdk_ports final : public stack_ports {
 public:
  explicit dpdk_ports(port_list ports) : ports_(std::move(ports)) {}
  std::function<void(unsigned)> on_reactor_start() const override {
    if (ports_.empty()) return {};
    return drivers::dpdk::register_reactor;  // packet pools' per-core caches
  }
  std::expected<std::unique_ptr<running_stacks>, std::string> start(runtime& rt,
                                                                   const config::settings& cfg) override {
    auto stacks = start_stacks(rt, cfg, ports_);
    if (!stacks) return std::unexpected(stacks.error());
    return std::make_unique<dpdk_stacks>(std::move(*stacks));
  }

 private:
  port_list ports_;
};

}  // namespace

std::expected<std::unique_ptr<stack_ports>, std::string> stack_ports::open(const config::settings& cfg,
                                                                         unsigned reactors) {
  // The devices first (the EAL, then each port: a missing device or PMD is
  // the first thing to say), then each stack's own keys.
  port_list ports;
  for (const config::table_view& port : cfg.tables("port")) {
    if (port.get_string("driver") != "dpdk") continue;
    if (auto eal = drivers::dpdk::init_eal_from_config(cfg); !eal) return std::unexpected(eal.error());
    auto p = drivers::dpdk::open_port_from_config(port, reactors);
    if (!p) return std::unexpected(p.error());
    ports.push_back(std::move(*p));
  }
  std::size_t i = 0;
  for (const config::table_view& port : cfg.tables("port"))
    if (port.get_string("driver") == "dpdk")
      if (auto sc = stack::stack_config_from(cfg, port, ports[i++]->rx_queue_count()); !sc)
        return std::unexpected(sc.error());
  return std::make_unique<dpdk_ports>(std::move(ports));
}

}  // namespace affine::detail
