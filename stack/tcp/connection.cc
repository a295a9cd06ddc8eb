// Construction, state changes and accessors of a connection.

#include <algorithm>
#include <atomic>

#include <fmt/format.h>

#include "stack/tcp/connection.hh"

namespace affine::stack::tcp {

namespace {

// Connections are made and destroyed on any reactor core, hence atomic.
std::atomic<std::size_t> g_live{0};

// RFC 7323 2.3: the smallest shift that lets the window field cover the
// whole receive buffer, at most 14.
std::uint8_t window_shift_for(std::size_t buffer) {
  std::uint8_t shift = 0;
  while (shift < 14 && (buffer >> shift) > 0xffff) ++shift;
  return shift;
}

}  // namespace

connection::connection(const open_params& p, const connection_config& cfg, tcp_state initial)
    : tuple_(p.tuple),
      cfg_(cfg),
      state_(initial),
      iss_(p.iss),
      snd_una_(p.iss),
      snd_nxt_(p.iss),
      snd_max_(p.iss),
      snd_data_(p.iss + 1),
      rcv_wscale_(cfg.window_scaling ? window_shift_for(std::max(cfg.recv_buffer, cfg.recv_buffer_max)) : 0),
      eff_mss_(std::min<std::uint32_t>(536, cfg.mss)),
      ts_offset_(p.ts_offset),
      snd_buf_(cfg.send_buffer),
      rcv_buf_(cfg.recv_buffer),
      ooo_(cfg.max_ooo_ranges),
      scratch_(std::make_unique<std::byte[]>(cfg.mss)),
      cc_(make_congestion_control(cfg.congestion)),
      rto_(cfg.rto),
      recover_(p.iss),
      sb_(cfg.max_sack_ranges),
      log_(cfg.max_sent_records),
      rcv_mss_(std::min<std::uint32_t>(536, cfg.mss)) {
  // Linux's tcp_init_buffer_space: an initial window's worth is "taken".
  rcv_space_.space = std::max<std::size_t>(std::min<std::size_t>(cfg.recv_buffer, 10 * std::size_t{cfg.mss}), 1);
  g_live.fetch_add(1, std::memory_order_relaxed);
}

// The connection's time never goes back. Each caller passes its own
// reading of the clock, and callers on different cores read it at
// different moments (the RX path once a burst), so a core can hand in a
// time older than one another core handed in a moment before. Taken as
// is, that time would stamp a segment later in sequence with an older
// TSval (RFC 6191 1: TSvals are "required to be monotonically
// increasing"; the peer's PAWS, RFC 7323 5.3 R1, drops such a segment
// once the earlier one set TS.Recent), make TS.Recent look 24 days idle
// (RFC 7323 5.5), and wrap every unsigned "now minus then": an RTT
// sample, the idle restart, the user timeout. Every entry point that is
// given a time takes it through here.
std::uint64_t connection::monotone_now(std::uint64_t now_ns) {
  clock_ns_ = std::max(clock_ns_, now_ns);
  return clock_ns_;
}

connection::connection(const open_params& p, const connection_config& cfg, std::uint64_t now_ns)
    : connection(p, cfg, tcp_state::syn_sent) {
  clock_ns_ = now_ns;
  last_rx_ns_ = now_ns;
}

connection::connection(const open_params& p, const connection_config& cfg, const tcp_segment& syn,
                       std::uint64_t now_ns)
    : connection(p, cfg, tcp_state::syn_received) {
  clock_ns_ = now_ns;
  // RFC 9293 3.10.7.2 LISTEN, SYN: RCV.NXT = SEG.SEQ+1, IRS = SEG.SEQ; the
  // SYN-ACK <SEQ=ISS><ACK=RCV.NXT> leaves on the next output().
  passive_ = true;
  irs_ = syn.seq;
  rcv_nxt_ = syn.seq + 1;
  negotiate(syn, now_ns);
  // RFC 7323 2.2: the window of a SYN is never scaled.
  snd_wnd_ = max_snd_wnd_ = syn.window;
  snd_wl1_ = syn.seq;
  snd_wl2_ = iss_;
  rcv_adv_ = rcv_nxt_ + syn_window();
  last_rx_ns_ = now_ns;
}

connection::~connection() {
  g_live.fetch_sub(1, std::memory_order_relaxed);
}

std::string connection::describe(std::uint64_t now_ns) const {
  auto in = [now_ns](std::uint64_t d) -> std::string {
    return d == no_deadline ? "-" : fmt::format("{}ms", std::int64_t(d - now_ns) / 1'000'000);
  };
  return fmt::format(
      "{}{}{} iss={} snd.una=+{} snd.nxt=+{} snd.max=+{} snd.wnd={} queued={}/{} irs={} rcv.nxt=+{} rcv.adv=+{} "
      "rcv.buf={}/{} rcv.rtt={}us ooo={} cc={} cwnd={} ssthresh={} pacing={}B/s dupacks={} recovery={} rto={}ms retrans={} timers[rtx={} "
      "persist={} dack={} ka={} close={} reo={} tlp={} pace={}] sent_log={} lost={} rack[rtt={}us reo_wnd={}us reord={}] "
      "stats[sent={} rexmit={} rtos={} fast={} sack_recoveries={} dsacks={} dsacks_sent={} rack_lost={} lost_rexmits={} "
      "reo_timeouts={} tlps={} undos={} ecn={} ce={} ece={} ecn_cuts={}]",
      to_string(state_), end_ == end_reason::open ? "" : " end=", end_ == end_reason::open ? "" : to_string(end_),
      iss_.raw(), snd_una_ - iss_, snd_nxt_ - iss_, snd_max_ - iss_, snd_wnd_, snd_buf_.size(), snd_buf_.capacity(),
      irs_.raw(), rcv_nxt_ - irs_, rcv_adv_ - irs_, rcv_buf_.size(), rcv_buf_.capacity(),
      rcv_space_.rtt_ns / 1000, ooo_.range_count(), cc_->name(), cc_->cwnd(),
      cc_->ssthresh(), pacing_rate(), dup_acks_, in_recovery_, rto_.rto_ns() / 1'000'000, retransmissions_, in(timers_.retransmit),
      in(timers_.persist), in(timers_.delayed_ack), in(timers_.keepalive), in(timers_.close), in(timers_.reorder),
      in(timers_.loss_probe), in(timers_.pace), log_.size(), lost_bytes_, rack_.rtt_ns / 1000, rack_reo_wnd() / 1000, rack_.reord,
      stats_.segments_sent, stats_.retransmitted_segments, stats_.retransmission_timeouts, stats_.fast_retransmits,
      stats_.sack_recoveries, stats_.dsacks_received, stats_.dsacks_sent, stats_.rack_marked_lost, stats_.lost_retransmits,
      stats_.reorder_timeouts, stats_.loss_probes, stats_.spurious_undos, ecn_ok_, stats_.ecn_ce_received,
      stats_.ecn_echoes_received, stats_.ecn_reductions);
}

std::size_t connection::live_count() { return g_live.load(std::memory_order_relaxed); }

event_set connection::take_events() { return std::exchange(events_, event_set{}); }

std::size_t connection::writable() const { return writable_state() ? snd_buf_.free() : 0; }

// RFC 9293 3.10.2 SEND: accepted until the application closes its side.
bool connection::writable_state() const {
  switch (state_) {
    case tcp_state::syn_sent:
    case tcp_state::syn_received:
    case tcp_state::established:
    case tcp_state::close_wait:
      return !fin_queued_;
    default:
      return false;
  }
}

bool connection::fin_acked() const { return fin_queued_ && snd_una_ == fin_seq() + 1; }

std::uint16_t connection::syn_window() const {
  // RFC 7323 2.2: unscaled, so at most 65535.
  return std::uint16_t(std::min<std::size_t>(rcv_buf_.free(), 0xffff));
}

void connection::enter_established(std::uint64_t now_ns) {
  // A FIN queued by shutdown_write() during the handshake goes out now.
  state_ = fin_queued_ ? tcp_state::fin_wait_1 : tcp_state::established;
  cc_->init(eff_mss_, now_ns);
  sb_.reset(snd_una_);
  log_.clear();
  rexmit_high_ = snd_una_;
  // RFC 6298 5.7: after a retransmitted SYN with no RTT sample, data starts
  // with an RTO of at least 3 s.
  if (syn_retransmitted_ && !rto_.has_sample()) {
    rto_config c = cfg_.rto;
    c.initial_ns = std::max<std::uint64_t>(c.initial_ns, 3'000'000'000);
    rto_ = rto_estimator(c);
  }
  events_.add(event::connected);
  events_.add(event::writable);
  arm_keepalive();
}

void connection::enter_time_wait(std::uint64_t now_ns) {
  // RFC 9293 3.10.7.4 eighth: "turn off the other timers", start 2 MSL.
  state_ = tcp_state::time_wait;
  timers_ = timers{};
  timers_.close = now_ns + cfg_.time_wait_ns;
  retransmit_head_ = persist_probe_due_ = keepalive_probe_due_ = loss_probe_due_ = false;
}

void connection::flush_buffers() {
  snd_buf_.clear();
  rcv_buf_.clear();
  ooo_.clear();
  ooo_fin_.reset();
}

void connection::enter_closed(std::error_code err, end_reason why) {
  // RFC 9293 3.10.7.4 second: a reset flushes the segment queues; a normal
  // close leaves the received data to be read.
  if (err) {
    error_ = err;
    flush_buffers();
  }
  state_ = tcp_state::closed;
  end_ = why;
  timers_ = timers{};
  ack_now_ = ack_due_ = retransmit_head_ = persist_probe_due_ = keepalive_probe_due_ = loss_probe_due_ = false;
  events_.add(event::closed);
  events_.add(event::readable);
  events_.add(event::writable);
}

}  // namespace affine::stack::tcp
