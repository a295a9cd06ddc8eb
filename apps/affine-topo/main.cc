// affine-topo: show the machine as affine's scheduler sees it, and where the
// RX queues of a port would be polled.
//
// Exit status: 0 success, 2 bad input (one line on stderr), 1 anything else.

#include <cstdio>
#include <exception>

#include <fmt/format.h>

#include "apps/affine-topo/from_config.hh"
#include "apps/affine-topo/options.hh"
#include "apps/affine-topo/report.hh"

namespace {

using namespace affine_topo;

std::expected<affine::topology, std::string> load(const options& o) {
  switch (o.source) {
    case source_kind::synthetic: return affine::topology::from_synthetic(o.source_arg);
    case source_kind::xml: return affine::topology::from_xml(o.source_arg);
    case source_kind::system: break;
  }
  return affine::topology::from_system();
}

std::string_view source_name(source_kind k) {
  switch (k) {
    case source_kind::synthetic: return "synthetic";
    case source_kind::xml: return "xml";
    case source_kind::system: break;
  }
  return "system";
}

// Everything after option parsing; an error here is bad input.
std::expected<std::string, std::string> run(const options& o) {
  auto topo = load(o);
  if (!topo) return std::unexpected(topo.error());
  auto plan_in = resolve(o, *topo);
  if (!plan_in) return std::unexpected(plan_in.error());
  auto plan = affine::plan_rx_queues(*topo, plan_in->nic_node, plan_in->queues, plan_in->cores,
                                     plan_in->placement);
  if (!plan) return std::unexpected(plan.error());
  const report r{*topo, std::string(source_name(o.source)), o.source_arg, std::move(plan_in->cores),
                 plan_in->nic_node, plan_in->placement, std::move(*plan)};
  return o.json ? render_json(r) : render_table(r);
}

int bad_input(std::string_view message) {
  fmt::print(stderr, "affine-topo: {}\n", message);
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    const auto opts = parse_args({argv + 1, static_cast<std::size_t>(argc > 0 ? argc - 1 : 0)});
    if (!opts) return bad_input(opts.error());
    if (opts->help) {
      fmt::print("{}", usage());
      return 0;
    }
    const auto out = run(*opts);
    if (!out) return bad_input(out.error());
    fmt::print("{}", *out);
    return 0;
  } catch (const std::exception& e) {
    fmt::print(stderr, "affine-topo: internal error: {}\n", e.what());
    return 1;
  }
}
