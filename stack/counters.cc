#include "stack/counters.hh"

#include <fmt/format.h>

namespace affine::stack {

std::string_view to_string(layer l) {
  static constexpr std::array<std::string_view, layer_count> names{"eth", "arp", "ipv4", "icmp", "udp", "tcp"};
  return names[std::size_t(l)];
}

std::string_view to_string(drop d) {
  static constexpr std::array<std::string_view, drop_count> names{
      "not_our_mac",   "unknown_ethertype", "arp_not_for_us", "not_our_address", "ttl_expired",
      "fragment",      "unknown_protocol",  "icmp_ignored",   "udp_no_socket",   "udp_queue_full",
      "tcp_no_socket", "tcp_connection_limit", "tcp_rx_busy_socket", "no_mbuf", "arp_queue_full",
      "arp_unresolved", "no_route",         "tx_too_big"};
  return names[std::size_t(d)];
}

std::uint64_t core_counters::total_drops() const noexcept {
  std::uint64_t sum = 0;
  for (std::size_t i = 0; i < slots; ++i) sum += at(i);
  return sum;
}

std::vector<std::pair<std::string, std::uint64_t>> core_counters::nonzero() const {
  std::vector<std::pair<std::string, std::uint64_t>> out;
  for (std::size_t l = 0; l < layer_count; ++l)
    for (std::size_t e = 0; e < parse_error_count; ++e)
      if (const auto n = get(layer(l), parse_error(e)))
        out.emplace_back(fmt::format("{}.{}", to_string(layer(l)), to_string(parse_error(e))), n);
  for (std::size_t d = 0; d < drop_count; ++d)
    if (const auto n = get(drop(d))) out.emplace_back(std::string(to_string(drop(d))), n);
  for (std::size_t r = 1; r < tcp_drop_count; ++r)
    if (const auto n = get(tcp::drop_reason(r))) out.emplace_back(fmt::format("tcp.{}", to_string(tcp::drop_reason(r))), n);
  return out;
}

}  // namespace affine::stack
