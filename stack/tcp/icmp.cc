// ICMP errors to a connection (RFC 1122 4.2.3.9, RFC 5927): path MTU
// (RFC 1191), hard errors that end a connection attempt, soft errors that
// are remembered.

#include <algorithm>

#include "stack/tcp/connection.hh"

namespace affine::stack::tcp {

namespace {

// IPv4 and TCP headers without options (RFC 9293 3.7.1).
constexpr std::uint32_t tcp_header_bytes = 20;
constexpr std::uint32_t ts_option_bytes = 12;
constexpr std::uint32_t min_mss = 48;  // as options.cc bounds a peer's MSS

}  // namespace

bool connection::in_flight(seq32 seq) const {
  return state_ != tcp_state::closed && state_ != tcp_state::time_wait && snd_una_ <= seq && seq < snd_max_;
}

void connection::set_path_mtu(std::uint32_t mtu) {
  const std::uint32_t headers = ip_header_bytes(tuple_) + tcp_header_bytes;
  path_mss_ = std::max(min_mss, mtu > headers ? mtu - headers : 0);
  eff_mss_ = std::min(eff_mss_, std::max(min_mss, path_mss_ - std::min(path_mss_, ts_ok_ ? ts_option_bytes : 0u)));
}

bool connection::on_icmp(icmp_error e, seq32 quoted_seq, std::uint32_t path_mtu, std::uint64_t now_ns) {
  now_ns = monotone_now(now_ns);
  if (!in_flight(quoted_seq)) {
    count(&connection_stats::icmp_out_of_window);
    return false;
  }
  count(&connection_stats::icmp_errors);
  switch (e) {
    case icmp_error::fragmentation_needed: {
      // RFC 1191 6.4: segments no larger than the new path MTU allows.
      const std::uint32_t before = eff_mss_;
      set_path_mtu(path_mtu);
      if (eff_mss_ >= before) return true;
      count(&connection_stats::path_mtu_reductions);
      // What is in flight was too big for the path and is gone: send it
      // again at the new size, from SND.UNA, as Linux's
      // tcp_simple_retransmit does; a narrower path is not congestion, so
      // neither the window nor the RTO changes.
      if (syn_acked() && snd_una_ != snd_max_) {
        sb_.clear();
        rack_on_timeout();
        loss_probe_end_.reset();
        timers_.loss_probe = no_deadline;
        loss_probe_due_ = false;
        rtt_seq_.reset();
        snd_nxt_ = snd_una_;
        restart_retransmit_timer(now_ns);
      }
      return true;
    }
    case icmp_error::port_unreachable:
    case icmp_error::protocol_unreachable:
      // RFC 1122 4.2.3.9: hard errors; RFC 5461: they end a connection
      // attempt, and only that (an established one takes them as soft).
      if (state_ == tcp_state::syn_sent) {
        enter_closed(std::make_error_code(std::errc::connection_refused), end_reason::refused);
        return true;
      }
      soft_error_ = std::make_error_code(std::errc::connection_refused);
      return true;
    case icmp_error::host_unreachable:
      soft_error_ = std::make_error_code(std::errc::host_unreachable);
      return true;
    case icmp_error::net_unreachable:
      soft_error_ = std::make_error_code(std::errc::network_unreachable);
      return true;
  }
  return false;
}

}  // namespace affine::stack::tcp
