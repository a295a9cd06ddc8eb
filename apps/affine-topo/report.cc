// affine-topo's two output forms. The JSON is written by hand: the shape is
// small and fixed, and the tool should need nothing beyond fmt.

#include "apps/affine-topo/report.hh"

#include <iterator>

#include <fmt/format.h>

namespace affine_topo {

namespace {

// A JSON string literal: quotes, backslashes and control characters escaped;
// other bytes (UTF-8) pass through.
std::string json_string(std::string_view s) {
  std::string out = "\"";
  for (char ch : s) {
    const auto byte = static_cast<unsigned char>(ch);
    if (ch == '"' || ch == '\\') {
      out += '\\';
      out += ch;
    } else if (byte < 0x20) {
      out += fmt::format("\\u{:04x}", byte);
    } else {
      out += ch;
    }
  }
  return out + "\"";
}

std::string source_text(const report& r) {
  return r.source_arg.empty() ? r.source : fmt::format("{} \"{}\"", r.source, r.source_arg);
}

}  // namespace

std::string render_table(const report& r) {
  fmt::memory_buffer out;
  auto it = std::back_inserter(out);
  fmt::format_to(it, "topology   {}\n           {}\n\n", source_text(r), r.topo.summary());
  fmt::format_to(it, "{:>6} {:>7} {:>5} {:>5} {:>8}\n", "core", "os_cpu", "llc", "node", "package");
  for (const affine::core_info& c : r.topo.cores()) {
    fmt::format_to(it, "{:>6} {:>7} {:>5} {:>5} {:>8}\n", c.id.value, c.os_cpu, c.llc, c.node, c.package);
  }
  fmt::format_to(it, "\nRX plan    {} queues, NIC on node {}, placement {}, reactor cores {}\n\n",
                 r.plan.size(), r.nic_node, affine::to_string(r.placement),
                 affine::format_core_list(r.reactor_cores));
  fmt::format_to(it, "{:>6} {:>5} {:>5}\n", "queue", "core", "node");
  for (const affine::rxq_assignment& a : r.plan) {
    fmt::format_to(it, "{:>6} {:>5} {:>5}\n", a.queue, a.core.value, r.topo.core(a.core).node);
  }
  return fmt::to_string(out);
}

std::string render_json(const report& r) {
  fmt::memory_buffer out;
  auto it = std::back_inserter(out);
  fmt::format_to(it, "{{\"source\": {}, ", json_string(r.source));
  if (!r.source_arg.empty()) fmt::format_to(it, "\"source_arg\": {}, ", json_string(r.source_arg));
  fmt::format_to(it, "\"summary\": {}, \"cores\": {}, \"nodes\": {}, \"llc_domains\": {}, \"packages\": {}, ",
                 json_string(r.topo.summary()), r.topo.core_count(), r.topo.node_count(),
                 r.topo.llc_count(), r.topo.package_count());
  fmt::format_to(it, "\"core_list\": [");
  for (const affine::core_info& c : r.topo.cores()) {
    fmt::format_to(it, "{}{{\"core\": {}, \"os_cpu\": {}, \"llc\": {}, \"node\": {}, \"package\": {}}}",
                   c.id.value == 0 ? "" : ", ", c.id.value, c.os_cpu, c.llc, c.node, c.package);
  }
  fmt::format_to(it, "], \"rx_plan\": {{\"nic_node\": {}, \"queues\": {}, \"placement\": {}, \"cores\": [",
                 r.nic_node, r.plan.size(), json_string(affine::to_string(r.placement)));
  for (std::size_t i = 0; i < r.reactor_cores.size(); ++i) {
    fmt::format_to(it, "{}{}", i == 0 ? "" : ", ", r.reactor_cores[i].value);
  }
  fmt::format_to(it, "], \"assignments\": [");
  for (const affine::rxq_assignment& a : r.plan) {
    fmt::format_to(it, "{}{{\"queue\": {}, \"core\": {}, \"node\": {}}}", a.queue == 0 ? "" : ", ", a.queue,
                   a.core.value, r.topo.core(a.core).node);
  }
  fmt::format_to(it, "]}}}}\n");
  return fmt::to_string(out);
}

}  // namespace affine_topo
