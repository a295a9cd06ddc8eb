// The --report output: report.md with the simulated figures next to the
// seed's, the decisions behind them, and the SVG plots it links.

#include "sim/report.hh"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>

#include <fmt/format.h>

#include "affine/topology.hh"
#include "sim/fidelity.hh"
#include "sim/svg.hh"

namespace affine::sim {

namespace {

bool lower_is_better(std::string_view metric) { return metric.ends_with("_us"); }

std::string number(double v) {
  if (std::fabs(v) >= 1000) return fmt::format("{:.0f}", v);
  if (std::fabs(v) >= 10) return fmt::format("{:.1f}", v);
  return fmt::format("{:.2f}", v);
}

std::string effect(double value, double base) {
  if (base == 0) return "";
  const double ratio = value / base;
  std::string out = fmt::format("{:+.1f}%", (ratio - 1) * 100);
  if (ratio > 2 || ratio < 0.5) out += fmt::format(" (x{})", number(ratio));
  return out;
}

std::string label(const scenario& sc, const variant& v) {
  return v.x && !sc.x_name.empty() ? fmt::format("{} {}={}", v.name, sc.x_name, *v.x) : v.name;
}

// Safe in a file name: letters, digits and '-'.
std::string slug(std::string_view s) {
  std::string out;
  for (const char ch : s) out += std::isalnum(static_cast<unsigned char>(ch)) ? ch : '-';
  return out;
}

std::string per_s(std::uint64_t n, const result& r) {
  return number(static_cast<double>(n) / r.measured_s);
}

// "name rate, name rate" for the non-zero counters of one enum.
template <typename E, std::size_t N>
std::string rates(const std::array<std::uint64_t, N>& counts, const result& r) {
  std::string out;
  for (std::size_t i = 0; i < N; ++i) {
    if (counts[i] == 0) continue;
    if (!out.empty()) out += ", ";
    out += fmt::format("{} {}", to_string(static_cast<E>(i)), per_s(counts[i], r));
  }
  return out.empty() ? "-" : out;
}

// RPS reasons, then where the handed-over batches went ("handoffs same_llc N, ...").
std::string rps_text(const result& r) {
  const std::string reasons = rates<policy::rps_reason>(r.count.rps_reasons, r);
  const std::string handoffs = rates<distance>(r.count.rps_distance, r);
  return handoffs == "-" ? reasons : fmt::format("{}; handoffs {}", reasons, handoffs);
}

const variant* baseline_of(const scenario& sc, const variant& v, std::size_t* index) {
  for (std::size_t i = 0; i < sc.variants.size(); ++i) {
    if (sc.variants[i].name == v.baseline && sc.variants[i].x == v.x) {
      *index = i;
      return &sc.variants[i];
    }
  }
  return nullptr;
}

void figures_table(std::string& out, const scenario_run& run) {
  const scenario& sc = *run.sc;
  const std::size_t nodes = run.results.empty() ? 0 : run.results[0].node_busy_pct.size();
  const bool notes = std::ranges::any_of(sc.variants, [](const variant& v) { return !v.seed_note.empty(); });
  out += fmt::format("| variant |{} {} simulated | seed | effect simulated | effect seed |",
                     sc.x_name.empty() ? "" : fmt::format(" {} |", sc.x_name), sc.metric);
  for (std::size_t n = 0; n < nodes; ++n) out += fmt::format(" node{} busy % |", n);
  out += notes ? " the seed says |\n" : "\n";
  out += "|---|";
  if (!sc.x_name.empty()) out += "---:|";
  out += "---:|---:|---:|---:|";
  for (std::size_t n = 0; n < nodes; ++n) out += "---:|";
  out += notes ? "---|\n" : "\n";
  for (std::size_t i = 0; i < sc.variants.size(); ++i) {
    const variant& v = sc.variants[i];
    const double sim = metric_value(sc.metric, run.results[i]);
    std::string sim_effect, seed_effect;
    std::size_t b = 0;
    if (const variant* base = baseline_of(sc, v, &b)) {
      sim_effect = effect(sim, metric_value(sc.metric, run.results[b])) + " vs " + base->name;
      if (v.seed_value && base->seed_value) seed_effect = effect(*v.seed_value, *base->seed_value);
    }
    out += fmt::format("| {} |", v.name);
    if (!sc.x_name.empty()) out += v.x ? fmt::format(" {} |", *v.x) : " |";
    out += fmt::format(" {} | {} | {} | {} |", number(sim), v.seed_value ? number(*v.seed_value) : "-", sim_effect,
                       seed_effect);
    for (const double pct : run.results[i].node_busy_pct) out += fmt::format(" {:.1f} |", pct);
    out += notes ? fmt::format(" {} |\n", v.seed_note) : "\n";
  }
}

void decisions_table(std::string& out, const scenario_run& run) {
  const scenario& sc = *run.sc;
  out += "\nDecisions per second of simulated time (the live policy functions' reasons):\n\n"
         "| variant | wakeups by reason | steals llc/node/machine | busy-poll exits | RPS | migrations (remote) | "
         "idle kicks |\n|---|---|---|---|---|---|---|\n";
  for (std::size_t i = 0; i < sc.variants.size(); ++i) {
    const result& r = run.results[i];
    const counters& c = r.count;
    out += fmt::format("| {} | {} | {} / {} / {} | {} | {} | {} ({}) | {} |\n", label(sc, sc.variants[i]),
                       rates<policy::wake_reason>(c.wake_reasons, r), per_s(c.steals[0], r), per_s(c.steals[1], r),
                       per_s(c.steals[2], r), rates<policy::poll_exit>(c.poll_exits, r),
                       rps_text(r), per_s(c.migrations, r),
                       per_s(c.remote_migrations, r), per_s(c.idle_kicks, r));
  }
}

struct svg_file {
  std::string name;
  std::string title;
  std::string text;
};

std::vector<svg_file> charts(const scenario_run& run) {
  const scenario& sc = *run.sc;
  std::vector<svg_file> files;
  chart cdf{.title = sc.name + ": latency CDF", .x_label = "latency, us (log scale)", .y_label = "fraction of requests",
            .log_x = true, .y_max = 1.0};
  for (std::size_t i = 0; i < sc.variants.size(); ++i) {
    series s{label(sc, sc.variants[i]), {}};
    const auto points = run.results[i].latency.cdf();
    // Start from zero at the first value, so a distribution in one bucket still shows as a step.
    if (!points.empty()) s.points.emplace_back(points.front().first / 1000, 0.0);
    for (const auto& [ns, frac] : points) s.points.emplace_back(ns / 1000, frac);
    cdf.lines.push_back(std::move(s));
  }
  files.push_back({sc.name + "-latency.svg", "latency CDF", render_svg(cdf)});

  const auto time_series = [&](std::size_t i, std::size_t node) {
    series s{"", {}};
    const result& r = run.results[i];
    for (std::size_t k = 0; k < r.node_busy_series[node].size(); ++k) {
      s.points.emplace_back(static_cast<double>(k + 1) * r.sample_ms, r.node_busy_series[node][k]);
    }
    return s;
  };
  const std::size_t nodes = run.results.empty() ? 0 : run.results[0].node_busy_series.size();
  if (nodes == 1) {
    chart util{.title = sc.name + ": utilization over time", .x_label = "simulated time, ms (warmup included)",
               .y_label = "busy %", .y_max = 100.0};
    for (std::size_t i = 0; i < sc.variants.size(); ++i) {
      util.lines.push_back(time_series(i, 0));
      util.lines.back().name = label(sc, sc.variants[i]);
    }
    files.push_back({sc.name + "-util.svg", "utilization over time", render_svg(util)});
  } else {
    for (std::size_t i = 0; i < sc.variants.size(); ++i) {
      chart util{.title = fmt::format("{}: per-node utilization, {}", sc.name, label(sc, sc.variants[i])),
                 .x_label = "simulated time, ms (warmup included)", .y_label = "busy %", .y_max = 100.0};
      for (std::size_t n = 0; n < nodes; ++n) {
        util.lines.push_back(time_series(i, n));
        util.lines.back().name = fmt::format("node {}", n);
      }
      files.push_back({fmt::format("{}-util-{}.svg", sc.name, slug(label(sc, sc.variants[i]))),
                       "per-node utilization, " + label(sc, sc.variants[i]), render_svg(util)});
    }
  }

  if (!sc.x_name.empty()) {
    chart vs{.title = fmt::format("{}: {} vs {}", sc.name, sc.metric, sc.x_name), .x_label = sc.x_name,
             .y_label = sc.metric};
    std::map<std::string, series> by_name;
    std::vector<std::string> order;
    for (std::size_t i = 0; i < sc.variants.size(); ++i) {
      const variant& v = sc.variants[i];
      if (!v.x) continue;
      if (!by_name.contains(v.name)) order.push_back(v.name);
      by_name[v.name].name = v.name;
      by_name[v.name].points.emplace_back(static_cast<double>(*v.x), metric_value(sc.metric, run.results[i]));
    }
    for (const std::string& name : order) {
      series s = std::move(by_name[name]);
      std::ranges::sort(s.points);
      vs.lines.push_back(std::move(s));
    }
    files.push_back({fmt::format("{}-vs-{}.svg", sc.name, slug(sc.x_name)), sc.metric + " vs " + sc.x_name,
                     render_svg(vs)});
  }
  return files;
}

}  // namespace

std::string markdown(std::span<const scenario_run> runs, std::string_view command) {
  std::string out = fmt::format("# affine-sim report\n\nCommand: `{}`\n", command);
  if (const std::vector<fidelity_row> rows = fidelity(runs); !rows.empty()) {
    out += fmt::format("\n## Fidelity: the seeds' gains and the simulated ones\n\n{}", fidelity_table(rows));
  }
  for (const scenario_run& run : runs) {
    const scenario& sc = *run.sc;
    out += fmt::format("\n## {}\n\n", sc.name);
    if (!sc.summary.empty()) out += sc.summary + "\n\n";
    const sim_params& p = sc.variants.front().params;
    std::uint64_t events = 0;
    for (const result& r : run.results) events += r.count.events;
    out += fmt::format("Seed: `{}`; scenario: `{}`; {} ms measured per variant after {} ms of warmup; wall time {:.1f} s"
                       " for all {} variants ({} events); {} ({}).\n\n",
                       sc.seed_file, sc.source, p.run.duration_ns / 1'000'000, p.run.warmup_ns / 1'000'000, run.wall_s,
                       sc.variants.size(), events, p.machine.topo.summary(),
                       lower_is_better(sc.metric) ? "lower is better" : "higher is better");
    figures_table(out, run);
    decisions_table(out, run);
    out += "\n";
    for (const svg_file& f : charts(run)) out += fmt::format("![{}]({})\n", f.title, f.name);
  }
  return out;
}

std::expected<void, std::string> write_report(const std::string& dir, std::span<const scenario_run> runs,
                                              std::string_view command) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) return std::unexpected(fmt::format("{}: cannot create: {}", dir, ec.message()));
  const auto write = [&](const std::string& name, const std::string& text) -> std::expected<void, std::string> {
    const std::string path = (std::filesystem::path(dir) / name).string();
    std::ofstream f(path);
    f << text;
    if (!f) return std::unexpected(fmt::format("{}: cannot write: {}", path, std::strerror(errno)));
    return {};
  };
  for (const scenario_run& run : runs) {
    for (const svg_file& f : charts(run)) {
      if (auto ok = write(f.name, f.text); !ok) return ok;
    }
  }
  return write("report.md", markdown(runs, command));
}

}  // namespace affine::sim
