#include "stack/from_config.hh"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <fstream>

#include "affine/log.hh"
#include "stack/ip/link_local.hh"
#include "stack/tcp/isn.hh"

namespace affine::stack {

namespace {

constexpr std::size_t max_ipv6_addresses = 8;

// ip: one IPv4 address (the stack serves one) and up to 8 IPv6 ones. The
// schema checked each one's shape; here what they are together.
std::expected<void, std::string> addresses_from(const config::table_view& port, stack_config& sc) {
  bool have_v4 = false;
  for (const std::string& text : port.get_strings("ip")) {
    if (text.empty()) continue;  // ip = "": none, as before lists
    const auto slash = text.find('/');
    const auto length = std::uint8_t(std::stoi(text.substr(slash + 1)));
    const auto a = net::address::parse(text.substr(0, slash));
    if (!a) return std::unexpected(port.error("ip", a.error()));
    if (a->is_v4()) {
      if (have_v4)
        return std::unexpected(port.error("ip", fmt::format("{}: the stack serves one IPv4 address per port", text)));
      have_v4 = true;
      sc.address = a->v4().value;
      sc.prefix_length = length;
      continue;
    }
    const net::ipv6_address v6 = a->v6();
    // RFC 4291 2.5.2, 2.5.3, 2.5.5.2, 2.7: no unicast address a host interface holds.
    if (v6.is_multicast() || v6.is_unspecified() || v6.is_loopback() || v6.mapped_v4())
      return std::unexpected(port.error("ip", fmt::format("{} is no address a host interface holds (RFC 4291 2.5)", text)));
    if (std::ranges::any_of(sc.ipv6, [&](const ipv6_prefix_address& p) { return p.address == v6.bytes; }))
      return std::unexpected(port.error("ip", fmt::format("{}: the address is listed twice", text)));
    if (sc.ipv6.size() == max_ipv6_addresses)
      return std::unexpected(port.error("ip", fmt::format("more than {} IPv6 addresses", max_ipv6_addresses)));
    sc.ipv6.push_back({v6.bytes, length});
  }
  // Without IPv4 the port speaks IPv6 only (stack::create).
  if (!have_v4 && sc.ipv6.empty())
    return std::unexpected(port.error("ip", "a dpdk port carries the userspace stack and needs an address, like "
                                            "ip = \"10.77.0.2/24\" (or [\"10.77.0.2/24\", \"fd77::2/64\"], "
                                            "or \"fd77::2/64\" alone)"));
  return {};
}

// gateway: at most one per family. An IPv6 router is addressed by its
// link-local address (RFC 4861 4.2, 8.1); one inside the port's own
// prefixes is on the link too (RFC 4861 5.2) and taken as well.
std::expected<void, std::string> gateways_from(const config::table_view& port, stack_config& sc) {
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
    const net::ipv6_address v6 = g->v6();
    if (v6.is_multicast() || v6.is_unspecified() || v6.is_loopback())
      return std::unexpected(port.error("gateway", fmt::format("{} is no unicast address a router holds", text)));
    if (sc.ipv6.empty() && sc.link_local == stack_config::link_local_mode::off)
      return std::unexpected(port.error(
          "gateway", fmt::format("{}: an IPv6 gateway, but the port has no IPv6 address (none in ip, link_local "
                                 "= \"off\")",
                                 text)));
    const bool on_link = v6.is_link_local() || std::ranges::any_of(sc.ipv6, [&](const ipv6_prefix_address& p) {
                           return same_prefix(p.address, v6.bytes, p.prefix_length);
                         });
    if (!on_link)
      return std::unexpected(port.error(
          "gateway", fmt::format("{} is neither link-local nor inside one of the port's IPv6 prefixes", text)));
    sc.gateway6 = v6.bytes;
  }
  return {};
}

// link_local and its stable_secret (32 hex digits, the schema checked).
void link_local_from(const config::table_view& port, stack_config& sc) {
  const std::string& mode = port.get_string("link_local");
  sc.link_local = mode == "eui64" ? stack_config::link_local_mode::eui64
                  : mode == "off" ? stack_config::link_local_mode::off
                                  : stack_config::link_local_mode::stable;
  if (const std::string& secret = port.get_string("stable_secret"); !secret.empty()) {
    for (std::size_t i = 0; i < sc.stable_secret.size(); ++i)
      std::from_chars(secret.data() + 2 * i, secret.data() + 2 * i + 2, sc.stable_secret[i], 16);
  } else if (sc.link_local == stack_config::link_local_mode::stable) {
    sc.stable_secret = machine_secret();
  }
}

}  // namespace

std::array<std::uint8_t, 16> machine_secret() {
  std::ifstream in("/etc/machine-id");
  std::string id;
  if (!(in >> id) || id.empty()) {
    AFFINE_LOG_WARN("stack: no /etc/machine-id: the stable link-local address is random (set port.stable_secret)");
    return tcp::random_siphash_key();
  }
  // The id is random from the installation on, as RFC 7217 5 asks of the
  // key, but readable on the machine: machine-id(5) asks for a keyed hash
  // under an application's own key, never the id itself. Two SipHash
  // outputs under fixed keys make the 128 bits.
  const auto bytes = std::as_bytes(std::span(id.data(), id.size()));
  std::array<std::uint8_t, 16> out{};
  for (int half = 0; half < 2; ++half) {
    tcp::siphash_key k{};
    k[0] = std::uint8_t(0xa5 + half);
    const std::uint64_t h = tcp::siphash_2_4(k, bytes);
    for (int i = 0; i < 8; ++i) out[std::size_t(half * 8 + i)] = std::uint8_t(h >> (8 * i));
  }
  return out;
}

std::expected<stack_config, std::string> stack_config_from(const config::table_view& root,
                                                          const config::table_view& port, std::size_t rx_queues) {
  stack_config sc;
  sc.tcp.congestion =
      root.get_string("tcp.congestion") == "newreno" ? tcp::congestion_algorithm::new_reno : tcp::congestion_algorithm::cubic;
  sc.tcp.sack = root.get_bool("tcp.sack");
  sc.tcp.pacing = root.get_bool("tcp.pacing");
  const std::string& ecn = root.get_string("tcp.ecn");
  sc.tcp.ecn = ecn == "on" ? tcp::ecn_mode::on : ecn == "off" ? tcp::ecn_mode::off : tcp::ecn_mode::passive;
  sc.max_connections = std::size_t(root.get_int("tcp.max_connections"));
  sc.challenge_acks_per_s = std::uint32_t(root.get_int("tcp.challenge_acks_per_s"));
  sc.max_time_wait = std::size_t(root.get_int("tcp.max_time_wait"));
  sc.tcp.max_retransmissions = unsigned(root.get_int("tcp.retransmissions"));
  sc.tcp.max_syn_retransmissions = unsigned(root.get_int("tcp.syn_retransmissions"));
  sc.tcp.max_synack_retransmissions = unsigned(root.get_int("tcp.synack_retransmissions"));
  sc.tcp.max_orphan_probes = unsigned(root.get_int("tcp.orphan_probes"));
  constexpr std::uint64_t ms = 1'000'000, s = 1'000 * ms;
  sc.tcp.fin_wait_2_timeout_ns = std::uint64_t(root.get_int("tcp.fin_timeout_s")) * s;
  sc.tcp.keepalive.idle_ns = std::uint64_t(root.get_int("tcp.keepalive_idle_s")) * s;
  sc.tcp.keepalive.interval_ns = std::uint64_t(root.get_int("tcp.keepalive_interval_s")) * s;
  sc.tcp.keepalive.count = unsigned(root.get_int("tcp.keepalive_count"));
  sc.tcp.user_timeout_ns = std::uint64_t(root.get_int("tcp.user_timeout_ms")) * ms;
  constexpr std::size_t kib = 1024, mib = 1024 * kib;
  sc.tcp.recv_buffer = std::size_t(root.get_int("tcp.receive_buffer_kb")) * kib;
  sc.tcp.recv_buffer_max = std::size_t(root.get_int("tcp.receive_buffer_max_kb")) * kib;
  sc.tcp.send_buffer = std::size_t(root.get_int("tcp.send_buffer_kb")) * kib;
  sc.tcp.send_buffer_max = std::size_t(root.get_int("tcp.send_buffer_max_kb")) * kib;
  sc.tcp.buffer_memory_limit = std::size_t(root.get_int("tcp.buffer_memory_mb")) * mib;
  const std::string& cookies = root.get_string("tcp.syn_cookies");
  sc.syn_cookies = cookies == "always"  ? tcp::syn_cookie_mode::always
                   : cookies == "never" ? tcp::syn_cookie_mode::never
                                        : tcp::syn_cookie_mode::automatic;
  if (auto ok = addresses_from(port, sc); !ok) return std::unexpected(ok.error());
  link_local_from(port, sc);
  if (auto ok = gateways_from(port, sc); !ok) return std::unexpected(ok.error());
  sc.accept_router_advertisements = port.get_bool("router_advertisements");
  sc.dad_transmits = std::uint32_t(port.get_int("dad_transmits"));
  sc.tcp.mss = std::uint16_t(port.get_int("mtu") - 40);  // RFC 9293 3.7.1: MTU less IPv4 and TCP headers
  const std::size_t queues = rx_queues;
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
