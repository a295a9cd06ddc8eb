// Loading a scenario: the file through the schema, then each variant's
// overrides, then the conversion to sim_params with the checks that need the
// topology (cores, nodes). Every error names the file, line and key.

#include "sim/scenario.hh"

#include <algorithm>
#include <charconv>
#include <filesystem>

#include <fmt/format.h>

#include "sim/simulator.hh"

namespace affine::sim {

namespace {

using config::table_view;

template <typename T>
T get(const table_view& s, std::string_view key) {
  return static_cast<T>(s.get_int(key));
}

std::expected<topology, std::string> load_topology(const table_view& s, const std::string& base_dir) {
  const std::string& synthetic = s.get_string("machine.topology");
  const std::string& xml = s.get_string("machine.xml");
  if (synthetic.empty() == xml.empty()) {
    return std::unexpected(s.error(xml.empty() ? "machine.topology" : "machine.xml",
                                   "give exactly one of machine.topology and machine.xml"));
  }
  auto topo = xml.empty() ? topology::from_synthetic(synthetic)
                          : topology::from_xml((std::filesystem::path(base_dir) / xml).string());
  if (!topo) return std::unexpected(s.error(xml.empty() ? "machine.topology" : "machine.xml", topo.error()));
  return topo;
}

// A core_list key against the topology, ascending. "auto" means `all`.
std::expected<std::vector<core_id>, std::string> resolve_cores(const topology& topo, const table_view& s,
                                                               std::string_view key, std::span<const core_id> all) {
  const config::core_list& c = s.get_cores(key);
  std::vector<core_id> out;
  switch (c.what) {
    case config::core_list::kind::automatic: out.assign(all.begin(), all.end()); break;
    case config::core_list::kind::list: {
      auto parsed = parse_core_list(topo, c.list);
      if (!parsed) return std::unexpected(s.error(key, parsed.error()));
      out = std::move(*parsed);
      break;
    }
    case config::core_list::kind::count: {
      auto first = first_cores(topo, static_cast<unsigned>(c.count));
      if (!first) return std::unexpected(s.error(key, first.error()));
      out = std::move(*first);
      break;
    }
  }
  std::ranges::sort(out);
  for (const core_id id : out) {
    if (!std::ranges::binary_search(all, id)) {
      return std::unexpected(s.error(key, fmt::format("core {} runs no reactor (machine.cores)", id.value)));
    }
  }
  return out;
}

distribution get_distribution(const table_view& s, std::string_view kind, std::string_view mean,
                              std::string_view cv) {
  const std::string& k = s.get_string(kind);
  return {.kind = k == "fixed" ? dist_kind::fixed : k == "exponential" ? dist_kind::exponential : dist_kind::lognormal,
          .mean_ns = get<std::uint64_t>(s, mean),
          .cv_pct = get<std::uint32_t>(s, cv)};
}

policy::policy_config get_policy(const table_view& s) {
  policy::policy_config p;
  p.rx_wakeup_sync = s.get_bool("sched.rx_wakeup_sync");
  const std::string& wa = s.get_string("sched.wake_affine");
  p.wake_affine = wa == "off"         ? policy::wake_affine_mode::off
                  : wa == "task-only" ? policy::wake_affine_mode::task_only
                                      : policy::wake_affine_mode::always;
  p.wake_affine_allowance_pct = get<std::uint32_t>(s, "sched.wake_affine_allowance_pct");
  p.steal = s.get_bool("sched.steal");
  p.steal_min_imbalance = {get<std::uint32_t>(s, "sched.steal_llc"), get<std::uint32_t>(s, "sched.steal_node"),
                           get<std::uint32_t>(s, "sched.steal_machine")};
  p.busy_poll_budget_ns = get<std::uint64_t>(s, "busy_poll.budget_us") * 1000;
  p.yield_when_runnable = s.get_bool("busy_poll.yield_when_runnable");
  p.rps_idle_max_rx_share = get<std::uint32_t>(s, "nic.rps_idle_max_rx_share_pct") * policy::load_scale / 100;
  return p;
}

// policy::validate names the level in its message; the key follows from it.
std::string policy_error(const table_view& s, const std::string& what) {
  for (const auto& [level, key] : {std::pair{"for llc ", "sched.steal_llc"}, std::pair{"for node ", "sched.steal_node"},
                                   std::pair{"for machine ", "sched.steal_machine"}}) {
    if (what.find(level) != std::string::npos) return s.error(key, what);
  }
  return s.error("sched.wake_affine_allowance_pct", what);
}

std::expected<sim_params, std::string> to_params(const table_view& s, const std::string& base_dir) {
  sim_params p;
  auto topo = load_topology(s, base_dir);
  if (!topo) return std::unexpected(topo.error());
  p.machine.topo = std::move(*topo);
  const topology& t = p.machine.topo;
  auto reactors = resolve_cores(t, s, "machine.cores", t.all_cores());
  if (!reactors) return std::unexpected(reactors.error());
  p.machine.reactor_cores = std::move(*reactors);
  p.machine.rx_interrupt = s.get_string("machine.rx") == "interrupt";
  p.machine.task_quota_ns = get<std::uint64_t>(s, "machine.task_quota_us") * 1000;
  p.machine.spin_ns = get<std::uint64_t>(s, "machine.spin_us") * 1000;
  p.machine.balance_interval_ns = get<std::uint64_t>(s, "machine.balance_interval_us") * 1000;
  p.machine.idle_kick = s.get_bool("machine.idle_kick");

  kernel_params& k = p.kernel;
  k.cfs = s.get_bool("kernel.cfs");
  k.tick_ns = 1'000'000'000 / get<std::uint64_t>(s, "kernel.hz");
  k.latency_ns = get<std::uint64_t>(s, "kernel.latency_us") * 1000;
  k.min_granularity_ns = get<std::uint64_t>(s, "kernel.min_granularity_us") * 1000;
  k.wakeup_granularity_ns = get<std::uint64_t>(s, "kernel.wakeup_granularity_us") * 1000;
  k.wakeup_preemption = s.get_bool("kernel.wakeup_preemption");
  k.sleeper_credit = s.get_bool("kernel.sleeper_credit");
  k.tick_preemption = s.get_bool("kernel.tick_preemption");
  k.softirq_idle = s.get_bool("kernel.softirq_idle");
  k.busy_poll_socket_queue = s.get_bool("kernel.busy_poll_socket_queue");

  p.policy = get_policy(s);
  if (auto ok = policy::validate(p.policy); !ok) return std::unexpected(policy_error(s, ok.error()));

  p.nic.node = get<unsigned>(s, "nic.node");
  if (p.nic.node >= t.node_count()) {
    return std::unexpected(
        s.error("nic.node", fmt::format("node {} does not exist: this machine has nodes 0-{}", p.nic.node,
                                        t.node_count() - 1)));
  }
  p.nic.queues = get<unsigned>(s, "nic.queues");
  p.nic.placement = s.get_string("nic.placement") == "local" ? rxq_placement::local : rxq_placement::spread;
  const std::string& rps = s.get_string("nic.rps");
  p.nic.rps = rps == "off"    ? policy::rps_mode::off
              : rps == "hash" ? policy::rps_mode::hash
              : rps == "flow" ? policy::rps_mode::flow
                              : policy::rps_mode::idle;
  p.nic.ring_size = get<std::uint32_t>(s, "nic.ring_size");
  p.nic.one_way_ns = get<std::uint64_t>(s, "nic.one_way_ns");
  p.nic.link_gbps = get<std::uint32_t>(s, "nic.link_gbps");

  costs& c = p.cost;
  c.rx_irq_ns = get<std::uint64_t>(s, "costs.rx_irq_ns");
  c.rx_driver_ns = get<std::uint64_t>(s, "costs.rx_driver_ns");
  c.rx_protocol_ns = get<std::uint64_t>(s, "costs.rx_protocol_ns");
  c.rx_per_kib_ns = get<std::uint64_t>(s, "costs.rx_per_kib_ns");
  c.rps_enqueue_ns = get<std::uint64_t>(s, "costs.rps_enqueue_ns");
  c.tx_packet_ns = get<std::uint64_t>(s, "costs.tx_packet_ns");
  c.tx_per_kib_ns = get<std::uint64_t>(s, "costs.tx_per_kib_ns");
  c.switch_ns = get<std::uint64_t>(s, "costs.switch_ns");
  c.wakeup_ns = get<std::uint64_t>(s, "costs.wakeup_ns");
  c.wake_remote_ns = get<std::uint64_t>(s, "costs.wake_remote_ns");
  c.idle_exit_ns = get<std::uint64_t>(s, "costs.idle_exit_ns");
  c.steal_ns = get<std::uint64_t>(s, "costs.steal_ns");
  c.migrate_ns = {0, get<std::uint64_t>(s, "costs.migrate_llc_ns"), get<std::uint64_t>(s, "costs.migrate_node_ns"),
                  get<std::uint64_t>(s, "costs.migrate_remote_ns")};
  c.touch_ns = {0, get<std::uint64_t>(s, "costs.touch_llc_ns"), get<std::uint64_t>(s, "costs.touch_node_ns"),
                get<std::uint64_t>(s, "costs.touch_remote_ns")};

  workload_params& w = p.work;
  w.open_loop = s.get_string("clients.mode") == "open";
  w.flows = get<unsigned>(s, "clients.count");
  w.requests_per_transaction = get<unsigned>(s, "clients.requests_per_transaction");
  w.turnaround = get_distribution(s, "clients.turnaround", "clients.turnaround_ns", "clients.turnaround_cv_pct");
  w.open_rate_per_s = get<std::uint64_t>(s, "clients.rate_per_s");
  if (w.open_loop && w.open_rate_per_s == 0) {
    return std::unexpected(s.error("clients.rate_per_s", "an open loop needs a rate above 0"));
  }
  w.request_bytes = get<std::uint32_t>(s, "clients.request_bytes");
  w.response_bytes = get<std::uint32_t>(s, "clients.response_bytes");
  w.half_round_trip = s.get_string("clients.latency") == "half-round-trip";
  w.mode = s.get_string("server.mode") == "blocking" ? server_mode::blocking : server_mode::polling;
  w.consumers = get<unsigned>(s, "server.consumers");
  auto server_cores = resolve_cores(t, s, "server.cores", p.machine.reactor_cores);
  if (!server_cores) return std::unexpected(server_cores.error());
  w.server_cores = std::move(*server_cores);
  w.server_pinned = s.get_bool("server.pinned");
  w.service = get_distribution(s, "server.service", "server.service_ns", "server.service_cv_pct");
  w.background = get_distribution(s, "server.background", "server.background_ns", "server.background_cv_pct");
  if (w.mode == server_mode::polling && w.background.mean_ns == 0) {
    return std::unexpected(s.error("server.background_ns", "polling consumers need background work above 0 ns"));
  }

  p.antagonists.count = get<unsigned>(s, "antagonists.count");
  auto antagonist_cores = resolve_cores(t, s, "antagonists.cores", p.machine.reactor_cores);
  if (!antagonist_cores) return std::unexpected(antagonist_cores.error());
  p.antagonists.cores = std::move(*antagonist_cores);
  p.antagonists.slice_ns = get<std::uint64_t>(s, "antagonists.slice_us") * 1000;

  p.run.duration_ns = get<std::uint64_t>(s, "run.duration_ms") * 1'000'000;
  p.run.warmup_ns = get<std::uint64_t>(s, "run.warmup_ms") * 1'000'000;
  p.run.seed = get<std::uint64_t>(s, "run.seed");
  p.run.sample_ns = get<std::uint64_t>(s, "run.sample_ms") * 1'000'000;
  return p;
}

// A calibration file's [costs] as overrides, "costs.switch_ns=30".
std::expected<std::vector<std::string>, std::string> calibration_costs(const std::string& path) {
  auto file = config::load_file(calibration_schema(), path);
  if (!file) return std::unexpected(file.error());
  std::vector<std::string> sets;
  for (const std::string_view key : cost_key_names()) {
    sets.push_back(fmt::format("costs.{}={}", key, file->get_int(fmt::format("costs.{}", key))));
  }
  return sets;
}

// An error from a variant's settings names the variant's `set` line when the
// value at fault came from an override rather than from the file.
std::string in_variant(const table_view& v, std::string_view source, const std::string& what) {
  if (what.starts_with(fmt::format("{}:", source))) return what;
  return v.error("set", what);
}

std::expected<scenario, std::string> build(const config::settings& file, std::string_view source,
                                           std::span<const std::string> sets, const std::string& base_dir) {
  config::settings checked = file;
  if (auto ok = config::apply_sets(checked, sets); !ok) return std::unexpected(ok.error());
  scenario sc;
  sc.name = file.get_string("scenario.name");
  sc.source = std::string(source);
  sc.seed_file = file.get_string("scenario.seed_file");
  sc.summary = file.get_string("scenario.summary");
  sc.metric = file.get_string("scenario.metric");
  sc.x_name = file.get_string("scenario.x_name");

  std::vector<table_view> tables = file.tables("variant");
  const bool implicit = tables.empty();
  const std::size_t count = implicit ? 1 : tables.size();
  for (std::size_t i = 0; i < count; ++i) {
    variant v;
    config::settings s = file;
    if (!implicit) {
      const table_view& vt = tables[i];
      v.name = vt.get_string("name");
      if (const std::int64_t x = vt.get_int("x"); x >= 0) v.x = x;
      for (std::size_t j = 0; j < i; ++j) {
        if (sc.variants[j].name == v.name && sc.variants[j].x == v.x) {
          return std::unexpected(
              vt.error("name", fmt::format("\"{}\" with this x is variant[{}] too", v.name, j)));
        }
      }
      v.baseline = vt.get_string("baseline");
      v.seed_note = vt.get_string("seed_note");
      if (const std::string& seed = vt.get_string("seed"); !seed.empty()) {
        double d = 0;
        std::from_chars(seed.data(), seed.data() + seed.size(), d);
        v.seed_value = d;
      }
      if (const std::string& from = vt.get_string("costs_from"); !from.empty()) {
        auto costs = calibration_costs((std::filesystem::path(base_dir) / from).string());
        if (!costs) return std::unexpected(vt.error("costs_from", costs.error()));
        (void)config::apply_sets(s, *costs);  // the same keys, already checked against their ranges
      }
      if (auto ok = config::apply_sets(s, vt.get_strings("set")); !ok) {
        return std::unexpected(vt.error("set", ok.error()));
      }
    } else {
      v.name = "default";
    }
    (void)config::apply_sets(s, sets);  // checked above
    auto params = to_params(s, base_dir);
    if (!params) return std::unexpected(implicit ? params.error() : in_variant(tables[i], source, params.error()));
    if (auto ok = check_params(*params); !ok) {
      return std::unexpected(implicit ? fmt::format("{}: {}", source, ok.error()) : tables[i].error("set", ok.error()));
    }
    v.params = std::move(*params);
    sc.variants.push_back(std::move(v));
  }
  for (std::size_t i = 0; i < tables.size(); ++i) {
    const std::string& base = sc.variants[i].baseline;
    if (base.empty()) continue;
    const bool found = std::ranges::any_of(sc.variants, [&](const variant& v) { return v.name == base; });
    if (!found || base == sc.variants[i].name) {
      return std::unexpected(tables[i].error("baseline", fmt::format("\"{}\" is not another variant's name", base)));
    }
  }
  return sc;
}

}  // namespace

std::expected<scenario, std::string> load_scenario(const std::string& path, std::span<const std::string> sets) {
  auto file = config::load_file(scenario_schema(), path);
  if (!file) return std::unexpected(file.error());
  return build(*file, path, sets, std::filesystem::path(path).parent_path().string());
}

std::expected<scenario, std::string> load_scenario_string(std::string_view text, std::string_view source_name,
                                                          std::span<const std::string> sets,
                                                          const std::string& base_dir) {
  auto file = config::load_string(scenario_schema(), text, source_name);
  if (!file) return std::unexpected(file.error());
  return build(*file, source_name, sets, base_dir);
}

}  // namespace affine::sim
