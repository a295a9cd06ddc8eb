#pragma once
// What every connection counted (tcp::connection_stats), summed per core,
// as Linux's TcpExt counters (`nstat`): how often the stack retransmitted,
// recovered, probed, undid a reduction or refused an option, over all
// connections, the ended ones included. A connection's own counts are in its
// describe() line; these are what an operator graphs.
//
// A connection raises tcp::event::counted when a counter moves; settle(),
// on whichever core holds the socket, adds what changed since the last fold
// to that core's totals. Nothing is done for a segment that counted nothing.

#include <array>
#include <atomic>
#include <cstdint>
#include <span>
#include <string_view>

#include "stack/tcp/connection.hh"

namespace affine::stack {

struct tcp_total {
  std::string_view name;  // "retransmission_timeouts": tcp.<name>= and affine_stack_tcp_<name>_total
  std::string_view help;
  std::uint64_t tcp::connection_stats::*counter;
};

// Every counter of connection_stats but segments_sent (the stack's own
// tcp_segments_out counts those).
inline constexpr std::array tcp_totals{
    tcp_total{"retransmission_timeouts", "Retransmission timer expiries (RFC 6298 5.4).",
              &tcp::connection_stats::retransmission_timeouts},
    tcp_total{"retransmitted_segments", "Segments sent again: data, SYN or FIN.",
              &tcp::connection_stats::retransmitted_segments},
    tcp_total{"fast_retransmits", "Fast retransmissions (RFC 5681 3.2, RFC 6582, RFC 6675).",
              &tcp::connection_stats::fast_retransmits},
    tcp_total{"duplicate_acks", "Duplicate ACKs received (RFC 5681 2).", &tcp::connection_stats::duplicate_acks},
    tcp_total{"persist_probes", "Zero-window probes sent.", &tcp::connection_stats::persist_probes},
    tcp_total{"orphans_reset", "Orphans a zero window held past tcp.max_orphan_probes, reset.",
              &tcp::connection_stats::orphans_reset},
    tcp_total{"keepalive_probes", "Keepalive probes sent (RFC 1122 4.2.3.6).", &tcp::connection_stats::keepalive_probes},
    tcp_total{"ooo_ranges_full", "Out-of-order data not kept: the assembler's bound.",
              &tcp::connection_stats::ooo_ranges_full},
    tcp_total{"challenge_acks", "Challenge ACKs sent (RFC 5961).", &tcp::connection_stats::challenge_acks},
    tcp_total{"challenge_acks_limited", "Challenge ACKs owed but not sent: the rate limit (RFC 5961 7).",
              &tcp::connection_stats::challenge_acks_limited},
    tcp_total{"icmp_errors", "ICMP errors a connection acted on.", &tcp::connection_stats::icmp_errors},
    tcp_total{"icmp_out_of_window", "ICMP errors ignored: the quoted sequence number was not in flight (RFC 5927).",
              &tcp::connection_stats::icmp_out_of_window},
    tcp_total{"path_mtu_reductions", "Segments made smaller for a smaller path MTU (RFC 1191, RFC 8201).",
              &tcp::connection_stats::path_mtu_reductions},
    tcp_total{"peer_mss_raised", "Peer MSS options under 48, taken as 48.", &tcp::connection_stats::peer_mss_raised},
    tcp_total{"window_scale_clamped", "Peer window scales over 14, taken as 14 (RFC 7323 2.3).",
              &tcp::connection_stats::window_scale_clamped},
    tcp_total{"sack_recoveries", "SACK loss recovery episodes (RFC 6675).", &tcp::connection_stats::sack_recoveries},
    tcp_total{"lost_retransmits", "Retransmissions RACK found lost, and sent again.",
              &tcp::connection_stats::lost_retransmits},
    tcp_total{"rack_marked_lost", "Segments RACK marked lost (RFC 8985 6.2).", &tcp::connection_stats::rack_marked_lost},
    tcp_total{"reorder_timeouts", "RACK reorder timer expiries (RFC 8985 6.3).", &tcp::connection_stats::reorder_timeouts},
    tcp_total{"reordering_seen", "Connections that saw reordering (RFC 8985 6.2).", &tcp::connection_stats::reordering_seen},
    tcp_total{"spurious_undos", "Window reductions undone as spurious (Eifel or D-SACK).",
              &tcp::connection_stats::spurious_undos},
    tcp_total{"sent_log_full", "Transmissions merged into the last record: the sent log's bound.",
              &tcp::connection_stats::sent_log_full},
    tcp_total{"loss_probes", "Tail loss probes sent (RFC 8985 7).", &tcp::connection_stats::loss_probes},
    tcp_total{"loss_probe_repairs", "Tail loss probes that repaired a loss (RFC 8985 7.4).",
              &tcp::connection_stats::loss_probe_repairs},
    tcp_total{"dsacks_received", "Duplicate reports received (RFC 2883).", &tcp::connection_stats::dsacks_received},
    tcp_total{"dsacks_sent", "Duplicate data received and reported (RFC 2883).", &tcp::connection_stats::dsacks_sent},
    tcp_total{"sack_blocks_rejected", "SACK blocks refused: empty, inverted or beyond SND.MAX.",
              &tcp::connection_stats::sack_blocks_rejected},
    tcp_total{"sack_ranges_full", "SACK blocks not kept: the scoreboard's bound.", &tcp::connection_stats::sack_ranges_full},
    tcp_total{"ecn_ce_received", "Data segments that arrived marked CE (RFC 3168).", &tcp::connection_stats::ecn_ce_received},
    tcp_total{"ecn_echoes_received", "ACKs received with ECE (RFC 3168).", &tcp::connection_stats::ecn_echoes_received},
    tcp_total{"ecn_reductions", "Window reductions for an ECN echo (RFC 3168 6.1.2).",
              &tcp::connection_stats::ecn_reductions},
    tcp_total{"receive_buffer_grown", "Receive buffers made larger (buffer auto-tuning).",
              &tcp::connection_stats::receive_buffer_grown},
    tcp_total{"send_buffer_grown", "Send buffers made larger (buffer auto-tuning).",
              &tcp::connection_stats::send_buffer_grown},
    tcp_total{"buffer_growth_held", "Buffer growths withheld at tcp.buffer_memory_mb.",
              &tcp::connection_stats::buffer_growth_held},
    tcp_total{"pacing_holds", "Times data waited for the pacing rate (tcp.pacing).",
              &tcp::connection_stats::pacing_holds},
};
inline constexpr std::size_t tcp_total_count = tcp_totals.size();

// Every counter in the table, and none twice: a field added to
// connection_stats and left out here fails to compile.
static_assert(sizeof(tcp::connection_stats) == (tcp_total_count + 1) * sizeof(std::uint64_t));

// Adds to `totals` (one core's, tcp_totals order) what `now` counts past
// `folded`, and brings `folded` up to `now`. Single writer per core.
void fold_tcp_totals(const tcp::connection_stats& now, tcp::connection_stats& folded,
                     std::span<std::atomic<std::uint64_t>, tcp_total_count> totals);

}  // namespace affine::stack
