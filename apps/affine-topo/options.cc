// Command-line parsing for affine-topo: "--name value" and "--name=value".

#include "apps/affine-topo/options.hh"

#include <charconv>

#include <fmt/format.h>

namespace affine_topo {

namespace {

// More NUMA nodes than hwloc's own bitmaps are sized for by default.
constexpr unsigned max_nodes = 4096;

std::expected<unsigned, std::string> parse_number(std::string_view name, std::string_view text,
                                                  unsigned lo, unsigned hi) {
  unsigned value = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (text.empty() || ec != std::errc{} || end != text.data() + text.size() || value < lo || value > hi) {
    return std::unexpected(fmt::format("{} wants a number from {} to {}, not \"{}\"", name, lo, hi, text));
  }
  return value;
}

std::expected<void, std::string> set_source(options& o, source_kind kind, std::string_view arg) {
  if (o.source != source_kind::system && o.source != kind) {
    return std::unexpected("--synthetic and --xml cannot be combined");
  }
  o.source = kind;
  o.source_arg = arg;
  return {};
}

// Applies one option that takes a value.
std::expected<void, std::string> apply(options& o, std::string_view name, std::string_view value) {
  if (name == "--synthetic") return set_source(o, source_kind::synthetic, value);
  if (name == "--xml") return set_source(o, source_kind::xml, value);
  if (name == "--cores") {
    o.cores = value;
    return {};
  }
  if (name == "--placement") {
    if (value == "local") o.placement = affine::rxq_placement::local;
    else if (value == "spread") o.placement = affine::rxq_placement::spread;
    else return std::unexpected(fmt::format("--placement wants \"local\" or \"spread\", not \"{}\"", value));
    return {};
  }
  if (name == "--queues") {
    auto n = parse_number(name, value, 1, max_queues);
    if (!n) return std::unexpected(n.error());
    o.queues = *n;
    return {};
  }
  if (name == "--config") {
    o.config_path = value;
    return {};
  }
  if (name == "--set") {
    o.sets.emplace_back(value);
    return {};
  }
  if (name == "--nic-node") {
    // The real upper bound is the topology's; the RX plan checks it.
    auto n = parse_number(name, value, 0, max_nodes - 1);
    if (!n) return std::unexpected(n.error());
    o.nic_node = *n;
    return {};
  }
  return std::unexpected(fmt::format("unknown option \"{}\" (try --help)", name));
}

bool takes_value(std::string_view name) {
  for (std::string_view known :
       {"--synthetic", "--xml", "--cores", "--placement", "--queues", "--nic-node", "--config", "--set"}) {
    if (name == known) return true;
  }
  return false;
}

}  // namespace

std::expected<options, std::string> parse_args(std::span<const char* const> args) {
  options o;
  for (std::size_t i = 0; i < args.size(); ++i) {
    std::string_view arg = args[i];
    if (arg == "--help" || arg == "-h") {
      o.help = true;
      continue;
    }
    if (arg == "--json") {
      o.json = true;
      continue;
    }
    const auto eq = arg.find('=');  // "--set=k=v": the first '=' ends the name
    const std::string_view name = arg.substr(0, eq);
    if (!takes_value(name)) {
      return std::unexpected(fmt::format("unknown option \"{}\" (try --help)", arg));
    }
    std::string_view value;
    if (eq != std::string_view::npos) {
      value = arg.substr(eq + 1);
    } else if (i + 1 < args.size()) {
      value = args[++i];
    } else {
      return std::unexpected(fmt::format("{} needs a value", name));
    }
    if (auto r = apply(o, name, value); !r) return std::unexpected(r.error());
  }
  return o;
}

std::string usage() {
  return fmt::format(
      "usage: affine-topo [options]\n"
      "Print the machine topology as affine sees it and the RX-queue -> core plan.\n"
      "\n"
      "  --synthetic DESC     use an hwloc synthetic topology, e.g. \"pack:4 numa:1 l3:8 core:4 pu:1\"\n"
      "  --xml FILE           use an hwloc XML export (lstopo --of xml)\n"
      "  --cores LIST         reactor cores: \"auto\" (default), \"0-7\", \"0,2,4-6\"\n"
      "  --queues N           RX queues, 1-{} (default: one per reactor core, at most {})\n"
      "  --nic-node N         NUMA node of the port (default 0)\n"
      "  --placement MODE     local (default: the NIC's node first) or spread (round-robin over nodes)\n"
      "  --config FILE        take reactor.cores, reactor.rxq_placement and the first [[port]]'s\n"
      "                       queues and NUMA node from an affine configuration file\n"
      "  --set KEY=VALUE      override a configuration key (repeatable)\n"
      "  --json               one JSON object instead of tables\n"
      "  --help               this text\n"
      "\n"
      "Bad input is reported on one line and exits with status 2.\n",
      max_queues, default_queue_cap);
}

}  // namespace affine_topo
