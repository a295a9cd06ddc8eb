#include "stack/counters.hh"

#include <fmt/format.h>

#include <array>
#include <tuple>

#include "reactor/policy/busy_poll.hh"

namespace affine::stack {

std::string_view to_string(layer l) {
  static constexpr std::array<std::string_view, layer_count> names{"eth",  "arp",    "ipv4", "icmp", "udp",
                                                                   "tcp", "ipv6", "icmpv6", "ndp"};
  return names[std::size_t(l)];
}

std::string_view to_string(drop d) {
  static constexpr std::array<std::string_view, drop_count> names{
      "not_our_mac",   "unknown_ethertype", "arp_not_for_us", "not_our_address",
      "fragment",      "unknown_protocol",  "icmp_ignored",   "icmp_out_of_window", "udp_no_socket",   "udp_queue_full",
      "tcp_no_socket", "tcp_connection_limit", "tcp_time_wait_full", "no_mbuf",     "arp_queue_full",
      "arp_unresolved", "no_route",         "tx_too_big",     "nd_not_for_us",      "icmp_rate_limited",
      "nd_queue_full",  "nd_unresolved",    "fragment_timeout"};
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

std::string format_counters(unsigned core, const core_counters& c) {
  const auto get = [](const std::atomic<std::uint64_t>& a) { return a.load(std::memory_order_relaxed); };
  std::string out = fmt::format("s{} rx={} tx={} tcp_in={} tcp_out={} busy_poll.packets={}", core, get(c.rx_packets),
                                get(c.tx_packets), get(c.tcp_segments_in), get(c.tcp_segments_out),
                                get(c.busy_poll_packets));
  for (std::size_t r = 0; r < c.busy_poll_exits.size(); ++r)
    if (const auto n = get(c.busy_poll_exits[r]))
      out += fmt::format(" busy_poll.{}={}", policy::to_string(policy::poll_exit(r)), n);
  for (std::size_t r = 0; r < c.rps_steered.size(); ++r)
    if (const auto n = get(c.rps_steered[r]))
      out += fmt::format(" rps.{}={}", policy::to_string(policy::rps_reason(r)), n);
  for (std::size_t d = 0; d < c.rps_distance.size(); ++d)
    if (const auto n = get(c.rps_distance[d])) out += fmt::format(" rps.to_{}={}", to_string(distance(d)), n);
  if (const auto n = get(c.rps_backlog_packets)) out += fmt::format(" rps.backlog_in={}", n);
  if (const auto n = get(c.syn_cookies_sent)) out += fmt::format(" tcp.syn_cookies_sent={}", n);
  if (const auto n = get(c.syn_cookies_accepted)) out += fmt::format(" tcp.syn_cookies_accepted={}", n);
  if (const auto n = get(c.time_wait_reopened)) out += fmt::format(" tcp.time_wait_reopened={}", n);
  if (const auto n = get(c.icmp_errors_taken)) out += fmt::format(" icmp.errors_taken={}", n);
  for (std::size_t i = 0; i < tcp_total_count; ++i)
    if (const auto n = get(c.tcp_counted[i])) out += fmt::format(" tcp.{}={}", tcp_totals[i].name, n);
  for (std::size_t r = 1; r < tcp::end_reason_count; ++r)
    if (const auto n = get(c.tcp_ended[r])) out += fmt::format(" tcp.ended.{}={}", to_string(tcp::end_reason(r)), n);
  if (const auto n = get(c.rps_backlog_full)) out += fmt::format(" drop.rps_backlog_full={}", n);
  for (const auto& [name, n] : c.nonzero()) out += fmt::format(" drop.{}={}", name, n);
  return out;
}

namespace {

// One sample a core. Out of line and with plain arguments, so that no
// caller's frame holds the temporaries of every series (under ASan at -O0
// those frames outgrow a 64 KiB fiber stack).
[[gnu::noinline]] void emit(std::vector<affine::metric_sample>& out, std::string_view name, std::string_view help,
                            unsigned port, std::span<const std::uint64_t> per_core, std::string_view key = {},
                            std::string_view value = {}) {
  for (std::size_t i = 0; i < per_core.size(); ++i) {
    affine::metric_sample m;
    m.name = name;
    m.help = help;
    m.labels.emplace_back("port", std::to_string(port));
    m.labels.emplace_back("core", std::to_string(i));
    if (!key.empty()) m.labels.emplace_back(std::string(key), std::string(value));
    m.value = per_core[i];
    out.push_back(std::move(m));
  }
}

}  // namespace

void append_metrics(std::vector<affine::metric_sample>& out, unsigned port, std::span<const core_counters* const> cores) {
  std::vector<std::uint64_t> v(cores.size());
  const auto of = [&](const std::atomic<std::uint64_t>& (*get)(const core_counters&)) {
    for (std::size_t i = 0; i < cores.size(); ++i) v[i] = get(*cores[i]).load(std::memory_order_relaxed);
    return std::span<const std::uint64_t>(v);
  };
  using getter = const std::atomic<std::uint64_t>& (*)(const core_counters&);
  static constexpr std::array<std::tuple<std::string_view, std::string_view, getter>, 10> plain{{
      {"affine_stack_rx_packets_total", "Packets the stack received.", [](const core_counters& c) -> const std::atomic<std::uint64_t>& { return c.rx_packets; }},
      {"affine_stack_tx_packets_total", "Packets the stack sent.", [](const core_counters& c) -> const std::atomic<std::uint64_t>& { return c.tx_packets; }},
      {"affine_stack_tcp_segments_in_total", "TCP segments received.", [](const core_counters& c) -> const std::atomic<std::uint64_t>& { return c.tcp_segments_in; }},
      {"affine_stack_tcp_segments_out_total", "TCP segments sent.", [](const core_counters& c) -> const std::atomic<std::uint64_t>& { return c.tcp_segments_out; }},
      {"affine_stack_busy_poll_packets_total", "Packets busy-polling readers received (seed 001).", [](const core_counters& c) -> const std::atomic<std::uint64_t>& { return c.busy_poll_packets; }},
      {"affine_stack_rps_backlog_packets_total", "Packets this core took from its RPS backlog ring.", [](const core_counters& c) -> const std::atomic<std::uint64_t>& { return c.rps_backlog_packets; }},
      {"affine_stack_rps_backlog_full_total", "Packets dropped: the target core's RPS backlog ring was full.", [](const core_counters& c) -> const std::atomic<std::uint64_t>& { return c.rps_backlog_full; }},
      {"affine_stack_tcp_syn_cookies_sent_total", "SYNs answered with a SYN cookie (RFC 4987).", [](const core_counters& c) -> const std::atomic<std::uint64_t>& { return c.syn_cookies_sent; }},
      {"affine_stack_tcp_syn_cookies_accepted_total", "Valid SYN cookies returned: connections made from them.", [](const core_counters& c) -> const std::atomic<std::uint64_t>& { return c.syn_cookies_accepted; }},
      {"affine_stack_tcp_time_wait_reopened_total", "SYNs that opened a connection from TIME-WAIT (RFC 6191).", [](const core_counters& c) -> const std::atomic<std::uint64_t>& { return c.time_wait_reopened; }},
  }};
  for (const auto& [name, help, get] : plain) emit(out, name, help, port, of(get));
  const auto column = [&](auto array_of, std::size_t k) {
    for (std::size_t i = 0; i < cores.size(); ++i) v[i] = array_of(*cores[i])[k].load(std::memory_order_relaxed);
    return std::span<const std::uint64_t>(v);
  };
  for (std::size_t r = 1; r < policy::poll_exit_count; ++r)
    emit(out, "affine_stack_busy_poll_exits_total", "Why busy polls ended (seed 001).", port,
         column([](const core_counters& c) -> const auto& { return c.busy_poll_exits; }, r), "reason",
         policy::to_string(policy::poll_exit(r)));
  for (std::size_t r = 0; r < policy::rps_reason_count; ++r)
    emit(out, "affine_stack_rps_steered_total", "Packets per-queue RPS steered, by why the core was chosen (seed 003).",
         port, column([](const core_counters& c) -> const auto& { return c.rps_steered; }, r), "reason",
         policy::to_string(policy::rps_reason(r)));
  for (std::size_t r = 1; r < tcp::end_reason_count; ++r)
    emit(out, "affine_stack_tcp_connections_ended_total", "TCP connections that reached CLOSED, by why.", port,
         column([](const core_counters& c) -> const auto& { return c.tcp_ended; }, r), "reason",
         to_string(tcp::end_reason(r)));
  for (std::size_t i = 0; i < tcp_total_count; ++i)
    emit(out, fmt::format("affine_stack_tcp_{}_total", tcp_totals[i].name), tcp_totals[i].help, port,
         column([](const core_counters& c) -> const auto& { return c.tcp_counted; }, i));
  for (std::size_t d = 0; d < 4; ++d)
    emit(out, "affine_stack_rps_distance_total", "Packets per-queue RPS steered, by how far from the RX core.", port,
         column([](const core_counters& c) -> const auto& { return c.rps_distance; }, d), "distance",
         to_string(distance(d)));
  for (std::size_t i = 0; i < cores.size(); ++i)
    for (auto& [reason, n] : cores[i]->nonzero()) {
      affine::metric_sample m;
      m.name = "affine_stack_drops_total";
      m.help = "Packets dropped, by reason (only reasons seen so far).";
      m.labels = {{"port", std::to_string(port)}, {"core", std::to_string(i)}, {"reason", reason}};
      m.value = n;
      out.push_back(std::move(m));
    }
}

}  // namespace affine::stack
