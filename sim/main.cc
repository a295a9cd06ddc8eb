// affine-sim: runs scenario files and prints one JSON line per variant.
//
//   affine-sim --scenario FILE [--scenario FILE ...] [--set PATH=VALUE ...]
//              [--seed N] [--report DIR]
//   affine-sim --emit-doc docs/simulator.md   (the file, its key reference regenerated)

#include <chrono>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "sim/fidelity.hh"
#include "sim/report.hh"
#include "sim/scenario.hh"
#include "sim/simulator.hh"

namespace {

constexpr std::string_view usage =
    "usage: affine-sim --scenario FILE [--scenario FILE ...] [--set PATH=VALUE ...] [--seed N] [--report DIR]\n"
    "  --scenario FILE   a scenario (sim/scenarios/*.toml); every variant in it is run\n"
    "  --set PATH=VALUE  override a scenario key in every variant, e.g. --set run.duration_ms=200\n"
    "  --seed N          the random seed (run.seed); the same seed gives the same output\n"
    "  --report DIR      also write DIR/report.md and SVG plots\n"
    "  --emit-doc FILE   print FILE with its scenario key reference regenerated, and exit\n";

struct options {
  std::vector<std::string> scenarios;
  std::vector<std::string> sets;
  std::string report;
  std::string emit_doc;
};

// Accepts "--opt value" and "--opt=value".
bool parse(int argc, char** argv, options& o, std::string& error) {
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    std::string value;
    const std::size_t eq = arg.find('=');
    const bool inline_value = arg.starts_with("--") && eq != std::string::npos;
    if (inline_value) {
      value = arg.substr(eq + 1);
      arg.resize(eq);
    }
    if (arg == "--help" || arg == "-h") {
      error.clear();
      return false;
    }
    if (arg != "--scenario" && arg != "--set" && arg != "--seed" && arg != "--report" && arg != "--emit-doc") {
      error = fmt::format("unknown option \"{}\"", argv[i]);
      return false;
    }
    if (!inline_value) {
      if (i + 1 >= argc) {
        error = fmt::format("{} needs a value", arg);
        return false;
      }
      value = argv[++i];
    }
    if (arg == "--scenario") o.scenarios.push_back(value);
    if (arg == "--set") o.sets.push_back(value);
    if (arg == "--seed") o.sets.push_back("run.seed=" + value);
    if (arg == "--report") o.report = value;
    if (arg == "--emit-doc") o.emit_doc = value;
  }
  if (o.scenarios.empty() && o.emit_doc.empty()) error = "give at least one --scenario";
  return error.empty();
}

int emit_doc(const std::string& path) {
  std::ifstream in(path);
  if (!in) {
    fmt::print(stderr, "affine-sim: {}: cannot open\n", path);
    return 1;
  }
  std::ostringstream doc;
  doc << in.rdbuf();
  const auto spliced = affine::config::splice_key_reference(affine::sim::scenario_schema(), doc.str());
  if (!spliced) {
    fmt::print(stderr, "affine-sim: {}: {}\n", path, spliced.error());
    return 1;
  }
  fmt::print("{}", *spliced);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  using namespace affine::sim;
  options o;
  std::string error;
  if (!parse(argc, argv, o, error)) {
    if (!error.empty()) fmt::print(stderr, "affine-sim: {}\n", error);
    fmt::print(error.empty() ? stdout : stderr, "{}", usage);
    return error.empty() ? 0 : 2;
  }
  if (!o.emit_doc.empty()) return emit_doc(o.emit_doc);
  std::vector<scenario> loaded;
  for (const std::string& path : o.scenarios) {
    auto sc = load_scenario(path, o.sets);
    if (!sc) {
      fmt::print(stderr, "affine-sim: {}\n", sc.error());
      return 2;
    }
    loaded.push_back(std::move(*sc));
  }
  std::vector<scenario_run> runs;
  for (const scenario& sc : loaded) {
    scenario_run run{.sc = &sc};
    const auto start = std::chrono::steady_clock::now();
    for (const variant& v : sc.variants) {
      auto r = simulate(v.params);
      if (!r) {
        fmt::print(stderr, "affine-sim: {}: variant {}: {}\n", sc.source, v.name, r.error());
        return 2;
      }
      fmt::print("{}\n", json_line(sc, v, *r));
      std::fflush(stdout);
      run.results.push_back(std::move(*r));
    }
    run.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    runs.push_back(std::move(run));
  }
  // The fidelity table: JSON lines on stdout, the table on stderr.
  const std::vector<fidelity_row> rows = fidelity(runs);
  for (const fidelity_row& r : rows) fmt::print("{}\n", fidelity_json(r));
  if (!rows.empty()) fmt::print(stderr, "\n{}", fidelity_table(rows));
  if (!o.report.empty()) {
    std::string command = "affine-sim";
    for (int i = 1; i < argc; ++i) command += fmt::format(" {}", argv[i]);
    if (auto ok = write_report(o.report, runs, command); !ok) {
      fmt::print(stderr, "affine-sim: {}\n", ok.error());
      return 1;
    }
  }
  return 0;
}
