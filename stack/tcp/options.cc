// TCP options: MSS (RFC 9293 3.7.1, RFC 6691), window scale and
// timestamps with PAWS (RFC 7323), SACK-permitted (RFC 2018 2). Window
// scale, MSS and SACK are settled by the two SYNs; timestamps go on every
// segment once both SYNs carried them.

#include <algorithm>

#include "stack/tcp/connection.hh"

namespace affine::stack::tcp {

namespace {

// RFC 7323 5.2: timestamps are compared modulo 2^32.
bool ts_before(std::uint32_t a, std::uint32_t b) { return std::int32_t(a - b) < 0; }

// RFC 9293 3.7.1: without the option the peer takes 536 over IPv4, 1220
// over IPv6 (RFC 8200 5's 1280-byte minimum MTU less 60).
std::uint32_t default_mss(const flow_tuple& t) { return t.v4() ? 536 : 1220; }
// A smaller MSS only multiplies per-segment work (Linux tcp_min_snd_mss).
constexpr std::uint32_t min_mss = 48;
// RFC 7323 3.2: the Timestamps option, padded, takes 12 bytes per segment.
constexpr std::uint32_t ts_option_bytes = 12;
// RFC 7323 5.5: TS.Recent is invalid after 24 days of idleness.
constexpr std::uint64_t ts_recent_lifetime_ns = 24ull * 24 * 3600 * 1'000'000'000;

bool recent_valid(std::uint64_t recorded_ns, std::uint64_t now_ns) {
  return now_ns - recorded_ns < ts_recent_lifetime_ns;
}

}  // namespace

tcp_options connection::syn_options(std::uint64_t now_ns) const {
  // Our SYN offers what the configuration enables; a SYN,ACK only what the
  // peer's SYN offered too (RFC 7323 1.3: both or neither).
  const bool active = state_ == tcp_state::syn_sent;
  tcp_options o;
  o.mss = cfg_.mss;
  if (cfg_.window_scaling && (active || ws_ok_)) o.window_scale = rcv_wscale_;
  if (cfg_.timestamps && (active || ts_ok_)) o.timestamps = tcp_timestamps{ts_clock(now_ns), active ? 0 : ts_recent_};
  // RFC 2018 2: "MAY be sent in a SYN ... only" (and in a SYN,ACK only when the SYN had it).
  if (cfg_.sack && (active || sack_ok_)) o.sack_permitted = true;
  return o;
}

void connection::negotiate(const tcp_segment& syn, std::uint64_t now_ns) {
  ws_ok_ = cfg_.window_scaling && syn.options.window_scale.has_value();
  if (ws_ok_) {
    // RFC 7323 2.3: a shift above 14 is taken as 14.
    snd_wscale_ = std::min<std::uint8_t>(*syn.options.window_scale, 14);
    if (*syn.options.window_scale > 14) count(&connection_stats::window_scale_clamped);
  } else {
    // RFC 7323 2.2: both sides scale, or neither does.
    snd_wscale_ = 0;
    rcv_wscale_ = 0;
  }
  sack_ok_ = cfg_.sack && syn.options.sack_permitted;
  negotiate_ecn(syn);
  ts_ok_ = cfg_.timestamps && syn.options.timestamps.has_value();
  if (ts_ok_) {
    ts_recent_ = syn.options.timestamps->value;
    ts_recent_ns_ = now_ns;
  }
  // RFC 9293 3.7.1 / RFC 6691: Eff.snd.MSS = min(SendMSS, our MSS) less the
  // TCP options every segment carries.
  const std::uint32_t offered = syn.options.mss.value_or(default_mss(tuple_));
  const std::uint32_t peer = std::max(offered, min_mss);
  if (offered < min_mss) count(&connection_stats::peer_mss_raised);  // CVE-2019-11479
  // RFC 1191: and within the path MTU, where one is known (icmp.cc).
  eff_mss_ = std::min<std::uint32_t>({peer, cfg_.mss, path_mss_}) - (ts_ok_ ? ts_option_bytes : 0);
}

std::uint32_t connection::ts_clock(std::uint64_t now_ns) const {
  return std::uint32_t(now_ns / ts_tick_ns) + ts_offset_;
}

connection::step_result connection::check_timestamps(const tcp_segment& seg, std::uint64_t now_ns) {
  if (!ts_ok_ || seg.control == tcp_control::rst) return std::nullopt;
  // RFC 7323 3.2: "If a non-<RST> segment is received without a TSopt, a TCP
  // SHOULD silently drop the segment."
  if (!seg.options.timestamps) return input_result{std::nullopt, drop_reason::timestamp_missing};
  // RFC 7323 5.3 R1 (PAWS): SEG.TSval < TS.Recent with TS.Recent valid: an
  // old duplicate. "Send an acknowledgment in reply ... and drop".
  if (recent_valid(ts_recent_ns_, now_ns) && ts_before(seg.options.timestamps->value, ts_recent_))
    return input_result{ack_segment(now_ns), drop_reason::paws};
  return std::nullopt;
}

// RFC 7323 4.3 (and 5.3 R3): "If SEG.TSval >= TS.Recent and SEG.SEQ =<
// Last.ACK.sent then SEG.TSval is copied to TS.Recent".
void connection::update_ts_recent(const tcp_segment& seg, std::uint64_t now_ns) {
  if (!ts_ok_ || !seg.options.timestamps) return;
  const std::uint32_t value = seg.options.timestamps->value;
  if ((!recent_valid(ts_recent_ns_, now_ns) || !ts_before(value, ts_recent_)) && seg.seq <= last_ack_sent_) {
    ts_recent_ = value;
    ts_recent_ns_ = now_ns;
  }
}

}  // namespace affine::stack::tcp
