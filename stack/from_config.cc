#include "stack/from_config.hh"

#include <fmt/format.h>

namespace affine::stack {

std::expected<stack_config, std::string> stack_config_from(const config::table_view& root,
                                                          const config::table_view& port) {
  stack_config sc;
  sc.tcp.congestion =
      root.get_string("tcp.congestion") == "newreno" ? tcp::congestion_algorithm::new_reno : tcp::congestion_algorithm::cubic;
  sc.tcp.sack = root.get_bool("tcp.sack");
  sc.max_connections = std::size_t(root.get_int("tcp.max_connections"));
  sc.challenge_acks_per_s = std::uint32_t(root.get_int("tcp.challenge_acks_per_s"));
  sc.max_time_wait = std::size_t(root.get_int("tcp.max_time_wait"));
  const std::string& cookies = root.get_string("tcp.syn_cookies");
  sc.syn_cookies = cookies == "always"  ? tcp::syn_cookie_mode::always
                   : cookies == "never" ? tcp::syn_cookie_mode::never
                                        : tcp::syn_cookie_mode::automatic;
  const std::string& ip = port.get_string("ip");
  if (ip.empty())
    return std::unexpected(port.error("ip", "a dpdk port carries the userspace stack and needs an address, like "
                                            "ip = \"10.77.0.2/24\""));
  const auto slash = ip.find('/');  // the schema checked the shape
  auto addr = net::ipv4_address::parse(ip.substr(0, slash));
  if (!addr) return std::unexpected(port.error("ip", addr.error()));
  sc.address = addr->value;
  sc.prefix_length = std::uint8_t(std::stoi(ip.substr(slash + 1)));
  if (const std::string& gw = port.get_string("gateway"); !gw.empty()) {
    auto g = net::ipv4_address::parse(gw);
    if (!g) return std::unexpected(port.error("gateway", g.error()));
    sc.gateway = g->value;
  }
  sc.tcp.mss = std::uint16_t(port.get_int("mtu") - 40);  // RFC 9293 3.7.1: MTU less IPv4 and TCP headers
  const auto queues = std::size_t(port.get_int("queues"));
  sc.rps.assign(queues, policy::rps_mode::off);
  sc.busy_poll_budget_us.assign(queues, -1);
  std::vector<bool> seen(queues, false);
  for (const config::table_view& rxq : port.tables("rxq")) {
    const auto q = std::size_t(rxq.get_int("queue"));
    if (q >= queues)
      return std::unexpected(rxq.error("queue", fmt::format("RX queue {} does not exist (the port has {}: 0..{})", q,
                                                            queues, queues - 1)));
    if (seen[q]) return std::unexpected(rxq.error("queue", fmt::format("RX queue {} has a table already", q)));
    seen[q] = true;
    sc.busy_poll_budget_us[q] = rxq.get_int("busy_poll_budget_us");
    const std::string& mode = rxq.get_string("rps");
    for (auto m : {policy::rps_mode::off, policy::rps_mode::hash, policy::rps_mode::flow, policy::rps_mode::idle})
      if (policy::to_string(m) == mode) sc.rps[q] = m;
  }
  return sc;
}

}  // namespace affine::stack
