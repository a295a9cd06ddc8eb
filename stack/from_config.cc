#include "stack/from_config.hh"

#include <fmt/format.h>

#include <algorithm>

#include "stack/link_local.hh"

namespace affine::stack {

namespace {
constexpr std::size_t max_ipv6_addresses = 8;
}  // namespace

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
  // The schema checked each address's shape; here what they are together.
  bool have_v4 = false;
  for (const std::string& text : port.get_strings("ip")) {
    if (text.empty()) continue;
    const auto slash = text.find('/');
    const auto length = std::stoi(text.substr(slash + 1));
    const auto a = net::address::parse(text.substr(0, slash));
    if (!a) return std::unexpected(port.error("ip", a.error()));
    if (a->is_v4()) {
      if (have_v4)
        return std::unexpected(port.error("ip", fmt::format("{}: the stack serves one IPv4 address per port", text)));
      have_v4 = true;
      sc.address = a->v4().value;
      sc.prefix_length = std::uint8_t(length);
      continue;
    }
    const net::ipv6_address v6 = a->v6();
    if (v6.is_multicast() || v6.is_unspecified() || v6.is_loopback() || v6.mapped_v4())
      return std::unexpected(port.error("ip", fmt::format("{} is no address a host interface holds (RFC 4291 2.5)", text)));
    if (sc.ipv6.size() == max_ipv6_addresses)
      return std::unexpected(port.error("ip", fmt::format("more than {} IPv6 addresses", max_ipv6_addresses)));
    sc.ipv6.push_back({v6.bytes, std::uint8_t(length)});
  }
  if (!have_v4)
    return std::unexpected(port.error("ip", "a dpdk port carries the userspace stack and needs an IPv4 address, like "
                                            "ip = \"10.77.0.2/24\" (or [\"10.77.0.2/24\", \"fd77::2/64\"])"));
  for (const std::string& text : port.get_strings("gateway")) {
    if (text.empty()) continue;
    const auto g = net::address::parse(text);
    if (!g) return std::unexpected(port.error("gateway", g.error()));
    if (g->is_v4()) {
      if (sc.gateway) return std::unexpected(port.error("gateway", "more than one IPv4 gateway"));
      sc.gateway = g->v4().value;
      continue;
    }
    if (sc.gateway6) return std::unexpected(port.error("gateway", "more than one IPv6 gateway"));
    const ipv6_bytes gw = g->v6().bytes;
    const bool reachable = g->v6().is_link_local() || std::ranges::any_of(sc.ipv6, [&](const ipv6_prefix_address& p) {
                             return same_prefix(p.address, gw, p.prefix_length);
                           });
    if (!reachable)
      return std::unexpected(port.error(
          "gateway", fmt::format("{} is neither link-local nor inside one of the port's IPv6 prefixes", text)));
    sc.gateway6 = gw;
  }
  const std::string& mode = port.get_string("link_local");
  sc.link_local = mode == "eui64" ? stack_config::link_local_mode::eui64
                  : mode == "off" ? stack_config::link_local_mode::off
                                  : stack_config::link_local_mode::stable;
  if (const std::string& secret = port.get_string("stable_secret"); !secret.empty()) {
    for (std::size_t i = 0; i < 16; ++i) sc.stable_secret[i] = std::uint8_t(std::stoul(secret.substr(2 * i, 2), nullptr, 16));
  } else if (sc.link_local == stack_config::link_local_mode::stable) {
    sc.stable_secret = machine_secret();
  }
  sc.accept_router_advertisements = port.get_bool("router_advertisements");
  sc.dad_transmits = std::uint32_t(port.get_int("dad_transmits"));
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
