#pragma once
// What the stack counts, per core (DESIGN.md section 7): every dropped
// packet under its reason's name (STYLE.md "Errors": one function counts
// each drop), and the traffic it handled. Single writer (the core), read by
// anyone: relaxed atomics.

#include <array>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "affine/stats.hh"
#include "reactor/policy/busy_poll.hh"
#include "reactor/policy/rps.hh"
#include "stack/tcp/state.hh"
#include "stack/tcp_totals.hh"
#include "stack/wire/error.hh"

namespace affine::stack {

// Where a packet was refused: a parse error at a layer, or one of the
// reasons below.
enum class layer : std::uint8_t { ethernet, arp, ipv4, icmp, udp, tcp, ipv6, icmpv6, ndp };
inline constexpr std::size_t layer_count = 9;
inline constexpr std::size_t parse_error_count = std::size_t(parse_error::unsupported) + 1;

enum class drop : std::uint8_t {
  not_our_mac,        // unicast to another station
  unknown_ethertype,  // not IPv4 or ARP
  arp_not_for_us,     // a request for another address (still merged per RFC 826)
  not_our_address,    // IPv4 destination is neither ours nor a broadcast
  fragment,           // a fragment the reassembler refused (its counters say why)
  unknown_protocol,   // IPv4 protocol we do not carry (answered: protocol unreachable)
  icmp_ignored,       // an ICMP type this host does not act on, or an error quoting no connection of ours
  icmp_out_of_window, // an ICMP error whose quoted TCP sequence number is not in flight (RFC 5927 4.1)
  udp_no_socket,      // answered with port unreachable
  udp_queue_full,     // the socket's bounded receive queue was full
  tcp_no_socket,      // answered with RST (RFC 9293 3.10.7.1)
  tcp_connection_limit,
  tcp_time_wait_full, // a connection that would enter TIME-WAIT past tcp.max_time_wait, ended at once
  no_mbuf,            // the packet pool was empty (TX)
  arp_queue_full,     // no room to wait for an ARP answer
  arp_unresolved,     // the next hop never answered ARP
  no_route,           // no next hop for the destination
  tx_too_big,         // a packet that cannot fit one mbuf
  nd_not_for_us,      // Neighbor Discovery for an address not ours (or not yet: tentative)
  icmp_rate_limited,  // an ICMPv6 error not sent: past icmpv6_errors_per_s (RFC 4443 2.4(f))
  nd_queue_full,      // no room to wait for a Neighbor Advertisement
  nd_unresolved,      // the next hop never answered Neighbor Solicitations
  fragment_timeout,   // a datagram not whole within the reassembly timeout (answered: time exceeded, where its first fragment came)
};
inline constexpr std::size_t drop_count = std::size_t(drop::fragment_timeout) + 1;
inline constexpr std::size_t tcp_drop_count = std::size_t(tcp::drop_reason::ack_too_old) + 1;

class core_counters {
 public:
  static constexpr std::size_t slots = layer_count * parse_error_count + drop_count + tcp_drop_count;

  void count(layer l, parse_error e) noexcept { bump(std::size_t(l) * parse_error_count + std::size_t(e)); }
  void count(drop d) noexcept { bump(layer_count * parse_error_count + std::size_t(d)); }
  void count(tcp::drop_reason r) noexcept { bump(layer_count * parse_error_count + drop_count + std::size_t(r)); }

  std::uint64_t get(layer l, parse_error e) const noexcept { return at(std::size_t(l) * parse_error_count + std::size_t(e)); }
  std::uint64_t get(drop d) const noexcept { return at(layer_count * parse_error_count + std::size_t(d)); }
  std::uint64_t get(tcp::drop_reason r) const noexcept {
    return at(layer_count * parse_error_count + drop_count + std::size_t(r));
  }
  // Connections that reached CLOSED, by why (tcp::end_reason order; `open`
  // unused).
  std::array<std::atomic<std::uint64_t>, tcp::end_reason_count> tcp_ended{};
  std::uint64_t total_drops() const noexcept;
  // Non-zero drop counters by name ("ipv4.bad_checksum", "tcp.paws", "no_mbuf").
  std::vector<std::pair<std::string, std::uint64_t>> nonzero() const;

  // Busy polling (seed 001): why each poll ended (policy::poll_exit order),
  // and the packets busy-polling fibers received.
  std::array<std::atomic<std::uint64_t>, policy::poll_exit_count> busy_poll_exits{};
  std::atomic<std::uint64_t> busy_poll_packets{0};

  // Per-queue RPS (seed 003, stack/rps.hh): packets steered by why their
  // core was chosen (policy::rps_reason order) and by how far they went
  // (distance order), on the RX core; packets dropped because the target's
  // backlog ring was full (RX core); packets processed from this core's
  // backlog ring.
  std::array<std::atomic<std::uint64_t>, policy::rps_reason_count> rps_steered{};
  std::array<std::atomic<std::uint64_t>, 4> rps_distance{};
  std::atomic<std::uint64_t> rps_backlog_full{0}, rps_backlog_packets{0};

  // Traffic.
  std::atomic<std::uint64_t> rx_packets{0}, tx_packets{0}, tcp_segments_in{0}, tcp_segments_out{0};
  std::atomic<std::uint64_t> arp_requests_sent{0}, arp_replies_sent{0}, icmp_echo_replies{0};
  std::atomic<std::uint64_t> nd_solicitations_sent{0}, nd_advertisements_sent{0};
  // Our addresses Duplicate Address Detection found in use (RFC 4862 5.4.5).
  std::atomic<std::uint64_t> ipv6_duplicates{0};
  // Redirects taken (RFC 4861 8.3); one not from the first hop is the drop
  // ndp.bad_source.
  std::atomic<std::uint64_t> ipv6_redirects{0};
  // SYN cookies (RFC 4987 3.6) answered, and returned valid (the invalid
  // ones are the drop tcp.syn_cookie_invalid).
  std::atomic<std::uint64_t> syn_cookies_sent{0}, syn_cookies_accepted{0};
  // SYNs that ended a connection's TIME-WAIT and opened the next one at
  // once (RFC 6191; tcp::connection::reopen_iss).
  std::atomic<std::uint64_t> time_wait_reopened{0};
  // ICMP errors a connection acted on (rx_icmp.cc).
  std::atomic<std::uint64_t> icmp_errors_taken{0};
  // What connections counted, summed (stack/tcp_totals.hh, tcp_totals order).
  std::array<std::atomic<std::uint64_t>, tcp_total_count> tcp_counted{};

 private:
  void bump(std::size_t i) noexcept { v_[i].store(v_[i].load(std::memory_order_relaxed) + 1, std::memory_order_relaxed); }
  std::uint64_t at(std::size_t i) const noexcept { return v_[i].load(std::memory_order_relaxed); }
  std::array<std::atomic<std::uint64_t>, slots> v_{};
};

std::string_view to_string(layer l);
std::string_view to_string(drop d);

// One line for the periodic stats log, "s0 rx=... tx=... busy_poll.runnable=3
// drop.ipv4.bad_checksum=1": traffic always, busy-poll exits and drops when
// non-zero.
std::string format_counters(unsigned core, const core_counters& c);

// The same as samples for collect_metrics (include/affine/stats.hh), each
// labelled port=`port` and core; drops only where non-zero.
void append_metrics(std::vector<affine::metric_sample>& out, unsigned port, std::span<const core_counters* const> cores);

// Add to a relaxed single-writer counter.
inline void bump(std::atomic<std::uint64_t>& c, std::uint64_t n = 1) noexcept {
  c.store(c.load(std::memory_order_relaxed) + n, std::memory_order_relaxed);
}

}  // namespace affine::stack
