#include "drivers/dpdk/flow.hh"

#include <rte_byteorder.h>
#include <rte_errno.h>
#include <rte_flow.h>

#include <fmt/format.h>

#include "drivers/dpdk/error.hh"

namespace affine::drivers::dpdk {

namespace {

std::string ip_string(std::uint32_t a) {
  return fmt::format("{}.{}.{}.{}", a >> 24, (a >> 16) & 0xff, (a >> 8) & 0xff, a & 0xff);
}

// The pattern ETH / IPV4 / TCP|UDP / END and the action QUEUE / END, with the
// specs and masks they point to kept together.
struct rule {
  rte_flow_attr attr{};
  rte_flow_item_ipv4 ip_spec{}, ip_mask{};
  rte_flow_item_tcp tcp_spec{}, tcp_mask{};
  rte_flow_item_udp udp_spec{}, udp_mask{};
  rte_flow_item pattern[4]{};
  rte_flow_action_queue queue{};
  rte_flow_action actions[2]{};

  rule(const flow_match& m, std::uint16_t q) {
    attr.ingress = 1;
    pattern[0].type = RTE_FLOW_ITEM_TYPE_ETH;
    pattern[1].type = RTE_FLOW_ITEM_TYPE_IPV4;
    ip_spec.hdr.src_addr = rte_cpu_to_be_32(m.src_ip);
    ip_spec.hdr.dst_addr = rte_cpu_to_be_32(m.dst_ip);
    ip_mask.hdr.src_addr = m.src_ip != 0 ? UINT32_MAX : 0;
    ip_mask.hdr.dst_addr = m.dst_ip != 0 ? UINT32_MAX : 0;
    pattern[1].spec = &ip_spec;
    pattern[1].mask = &ip_mask;
    const rte_be16_t src = rte_cpu_to_be_16(m.src_port), dst = rte_cpu_to_be_16(m.dst_port);
    const rte_be16_t src_mask = m.src_port != 0 ? UINT16_MAX : 0;
    if (m.proto == flow_match::protocol::tcp) {
      pattern[2].type = RTE_FLOW_ITEM_TYPE_TCP;
      tcp_spec.hdr.src_port = src, tcp_spec.hdr.dst_port = dst;
      tcp_mask.hdr.src_port = src_mask, tcp_mask.hdr.dst_port = UINT16_MAX;
      pattern[2].spec = &tcp_spec, pattern[2].mask = &tcp_mask;
    } else {
      pattern[2].type = RTE_FLOW_ITEM_TYPE_UDP;
      udp_spec.hdr.src_port = src, udp_spec.hdr.dst_port = dst;
      udp_mask.hdr.src_port = src_mask, udp_mask.hdr.dst_port = UINT16_MAX;
      pattern[2].spec = &udp_spec, pattern[2].mask = &udp_mask;
    }
    pattern[3].type = RTE_FLOW_ITEM_TYPE_END;
    queue.index = q;
    actions[0].type = RTE_FLOW_ACTION_TYPE_QUEUE;
    actions[0].conf = &queue;
    actions[1].type = RTE_FLOW_ACTION_TYPE_END;
  }
  rule(const rule&) = delete;
  rule& operator=(const rule&) = delete;
};

bool unsupported(int rc) { return rc == -ENOSYS || rc == -ENOTSUP; }

}  // namespace

std::string to_string(const flow_match& m) {
  const char* proto = m.proto == flow_match::protocol::tcp ? "tcp" : "udp";
  if (m.src_ip == 0 && m.dst_ip == 0 && m.src_port == 0) return fmt::format("{} dst port {}", proto, m.dst_port);
  return fmt::format("{} {}:{} -> {}:{}", proto, ip_string(m.src_ip), m.src_port, ip_string(m.dst_ip), m.dst_port);
}

std::expected<rte_flow*, flow_error> create_steering_rule(std::uint16_t port_id, std::string_view port_name,
                                                          const flow_match& m, std::uint16_t queue) {
  const rule r(m, queue);
  rte_flow_error err{};
  log_capture log;
  auto fail = [&](int rc) {
    const flow_failure kind = unsupported(rc) ? flow_failure::unsupported : flow_failure::rejected;
    std::string why = err.message != nullptr ? std::string(err.message) : explain(rc);
    std::string msg = kind == flow_failure::unsupported
                          ? fmt::format("port {}: no rte_flow steering ({}): {} stays with RSS and software RPS",
                                        port_name, why, to_string(m))
                          : fmt::format("port {}: the PMD refused steering {} to queue {}: {}", port_name,
                                        to_string(m), queue, why);
    return std::unexpected(flow_error{kind, std::move(msg)});
  };
  if (const int rc = rte_flow_validate(port_id, &r.attr, r.pattern, r.actions, &err); rc != 0) return fail(rc);
  rte_flow* flow = rte_flow_create(port_id, &r.attr, r.pattern, r.actions, &err);
  if (flow == nullptr) return fail(-rte_errno);
  return flow;
}

void destroy_steering_rule(std::uint16_t port_id, rte_flow* rule) {
  rte_flow_error err{};
  rte_flow_destroy(port_id, rule, &err);
}

bool probe_flow_support(std::uint16_t port_id) {
  auto r = create_steering_rule(port_id, "", {.proto = flow_match::protocol::udp, .dst_port = 9}, 0);
  if (!r) return false;
  destroy_steering_rule(port_id, *r);
  return true;
}

}  // namespace affine::drivers::dpdk
