#pragma once
// rte_flow steering: packets of one flow, or to one destination port, go to
// a chosen RX queue. Where the PMD has no rte_flow (or refuses the rule) the
// result says so and the flow stays where RSS (and software RPS) put it.

#include <cstdint>
#include <expected>
#include <string>
#include <string_view>

struct rte_flow;

namespace affine::drivers::dpdk {

struct flow_match {
  enum class protocol : std::uint8_t { tcp, udp };
  protocol proto = protocol::udp;
  std::uint16_t dst_port = 0;  // host order; always matched
  // The rest of a 5-tuple, host order; 0 matches anything.
  std::uint32_t src_ip = 0;
  std::uint32_t dst_ip = 0;
  std::uint16_t src_port = 0;
};

// "udp dst port 5000", "tcp 10.0.0.1:1234 -> 10.0.0.2:80".
std::string to_string(const flow_match& m);

enum class flow_failure : std::uint8_t {
  unsupported,  // no rte_flow on this PMD, or not this kind of rule: fall back to RSS
  rejected,     // the PMD understood and refused (bad queue, table full)
};

struct flow_error {
  flow_failure kind;
  std::string message;  // one line, naming the port and the rule
};

// Validate, then create, a rule sending `m` to RX queue `queue`.
std::expected<rte_flow*, flow_error> create_steering_rule(std::uint16_t port_id, std::string_view port_name,
                                                          const flow_match& m, std::uint16_t queue);
void destroy_steering_rule(std::uint16_t port_id, rte_flow* rule);

// Whether the port takes steering rules at all: a rule for UDP port 9
// (discard) to queue 0 is created and destroyed again, since some PMDs
// validate rules that they then fail to create.
bool probe_flow_support(std::uint16_t port_id);

}  // namespace affine::drivers::dpdk
