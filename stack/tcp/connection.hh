#pragma once
// One TCP connection, RFC 9293: a pure protocol object. Time is passed in,
// nothing here does I/O, takes a lock or reads a clock; it runs on the core
// that owns the flow.
//
// The integration drives it with four calls and reads back what changed:
//   input(segment, now)  SEGMENT ARRIVES (RFC 9293 3.10.7); at most one
//                        immediate reply (ACK or RST) for a rejected segment
//   output(now, sink)    everything else that is due: SYN, data, FIN, ACKs,
//                        window updates, probes, the RST after abort()
//   on_timer(now)        when now >= next_deadline(); then output()
//   take_events()        readable / writable / connected / closed / accept_ready
// The application's calls (send, recv, shutdown_write, close, abort) change
// only buffers and flags; their segments leave on the next output().
//
// With SACK, loss is detected by time (RACK, rack.cc, over the sent log of
// sent_log.hh), repaired by RFC 6675 recovery paced by PRR
// (sack_recovery.cc) or by a tail loss probe (loss_probe.cc), and a
// reduction shown spurious is undone (undo.cc).

#include <array>
#include <cstddef>
#include <cstdint>
#include <expected>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <system_error>

#include "stack/flow.hh"
#include "stack/tcp/assembler.hh"
#include "stack/tcp/config.hh"
#include "stack/tcp/congestion.hh"
#include "stack/tcp/function_ref.hh"
#include "stack/tcp/rack.hh"
#include "stack/tcp/ring_buffer.hh"
#include "stack/tcp/rto.hh"
#include "stack/tcp/scoreboard.hh"
#include "stack/tcp/sent_log.hh"
#include "stack/tcp/state.hh"
#include "stack/wire/seq32.hh"
#include "stack/wire/tcp_segment.hh"

namespace affine::stack::tcp {

class connection;

// What a passive connection asks when its handshake completes (RFC 9293
// 3.10.7.4, SYN-RECEIVED, fifth): whether its listener's accept queue has
// room (listener.hh). False: the final ACK is ignored, as Linux does, and
// the connection stays in SYN-RECEIVED.
class admission {
 public:
  virtual bool admit(connection& c) = 0;

 protected:
  ~admission() = default;
};
inline constexpr std::uint64_t no_deadline = UINT64_MAX;

// Who the connection is and where its sequence spaces start.
struct open_params {
  flow_tuple tuple;
  seq32 iss;                    // RFC 6528, from isn_generator
  std::uint32_t ts_offset = 0;  // RFC 7323 5.4: a per-connection offset for TSval
};

// The ICMP errors a connection acts on (RFC 1122 4.2.3.9, RFC 5927),
// named by their cause.
enum class icmp_error : std::uint8_t {
  fragmentation_needed,  // RFC 1191: the path's MTU is smaller
  port_unreachable,      // hard: ends a connection attempt (ECONNREFUSED)
  protocol_unreachable,  // hard, likewise
  host_unreachable,      // soft: remembered, the error of a connect that times out (EHOSTUNREACH)
  net_unreachable,       // soft, likewise (ENETUNREACH)
};

// What a connection counted. Each counter but segments_sent moves through
// connection::count, which raises event::counted: the stack adds the change
// to its per-core totals (stack/tcp_totals.hh), as Linux's TcpExt MIB.
struct connection_stats {
  std::uint64_t segments_sent = 0;  // the stack counts these itself (tcp_segments_out)
  std::uint64_t retransmission_timeouts = 0;  // RFC 6298 5.4 expiries
  std::uint64_t retransmitted_segments = 0;   // all resent data, SYN or FIN
  std::uint64_t fast_retransmits = 0;         // RFC 5681 3.2 / RFC 6582 3.2 (incl. partial ACKs)
  std::uint64_t duplicate_acks = 0;           // RFC 5681 2 definition
  std::uint64_t persist_probes = 0;
  std::uint64_t orphans_reset = 0;  // orphans a zero window held past max_orphan_probes
  std::uint64_t keepalive_probes = 0;
  std::uint64_t ooo_ranges_full = 0;          // out-of-order data not kept: assembler bound hit
  std::uint64_t challenge_acks = 0;           // RFC 5961 3.2, 4.2, 5.2
  std::uint64_t challenge_acks_limited = 0;   // RFC 5961 7: owed but not sent (throttled)
  std::uint64_t icmp_errors = 0;              // ICMP errors acted on (on_icmp)
  std::uint64_t icmp_out_of_window = 0;       // ICMP errors ignored: quoted sequence not in flight
  std::uint64_t path_mtu_reductions = 0;      // RFC 1191: segments made smaller
  std::uint64_t peer_mss_raised = 0;          // the peer's MSS under 48, taken as 48 (CVE-2019-11479)
  std::uint64_t window_scale_clamped = 0;     // the peer's shift over 14, taken as 14 (RFC 7323 2.3)
  std::uint64_t sack_recoveries = 0;          // RFC 6675 loss recovery episodes
  std::uint64_t lost_retransmits = 0;         // a retransmission found lost by RACK, and sent again
  std::uint64_t rack_marked_lost = 0;         // RFC 8985 6.2: segments RACK marked lost
  std::uint64_t reorder_timeouts = 0;         // RFC 8985 6.3: the reorder timer ran out
  std::uint64_t reordering_seen = 0;          // RFC 8985 6.2 step 3: RACK.reord became true
  std::uint64_t spurious_undos = 0;           // a reduction undone: Eifel (RFC 3522/4015) or D-SACK
  std::uint64_t sent_log_full = 0;            // a transmission joined the last record: the log's bound
  std::uint64_t loss_probes = 0;              // RFC 8985 7 tail loss probes sent
  std::uint64_t loss_probe_repairs = 0;       // RFC 8985 7.4: a probe repaired a loss (cwnd reduced)
  std::uint64_t dsacks_received = 0;          // RFC 2883 duplicate reports (not counted as loss)
  std::uint64_t dsacks_sent = 0;              // RFC 2883: duplicates received, reported to the sender
  std::uint64_t sack_blocks_rejected = 0;     // empty, inverted or beyond SND.MAX
  std::uint64_t sack_ranges_full = 0;         // a block not kept: the scoreboard's bound
  std::uint64_t ecn_ce_received = 0;          // RFC 3168: data marked CE on the way here
  std::uint64_t ecn_echoes_received = 0;      // RFC 3168: ACKs with ECE
  std::uint64_t ecn_reductions = 0;           // RFC 3168 6.1.2: the window cut for an echo
  std::uint64_t receive_buffer_grown = 0;     // buffer_tuning.cc: the receive buffer made larger
  std::uint64_t send_buffer_grown = 0;        // buffer_tuning.cc: the send buffer made larger
  std::uint64_t buffer_growth_held = 0;       // buffer_tuning.cc: growth withheld at buffer_memory_limit
  std::uint64_t pacing_holds = 0;             // pacing.cc: data held back until the pacing rate let it go
};

class connection {
 public:
  struct input_result {
    std::optional<tcp_segment> reply;  // ACK or RST, no payload
    drop_reason drop = drop_reason::none;
  };

  // Active open (RFC 9293 3.10.1): SYN-SENT; the SYN leaves on the next output().
  connection(const open_params& p, const connection_config& cfg, std::uint64_t now_ns);
  // Passive open from a SYN a listener accepted (RFC 9293 3.10.7.2):
  // SYN-RECEIVED; the SYN-ACK leaves on the next output().
  connection(const open_params& p, const connection_config& cfg, const tcp_segment& syn, std::uint64_t now_ns);
  ~connection();
  // Its owner's structures point at it: the address is fixed.
  connection(const connection&) = delete;
  connection& operator=(const connection&) = delete;

  // RFC 7323 5.4: the timestamp clock ticks every millisecond.
  static constexpr std::uint64_t ts_tick_ns = 1'000'000;

  input_result input(const tcp_segment& seg, std::uint64_t now_ns);
  void output(std::uint64_t now_ns, segment_sink sink);
  // Passive, made from the SYN a returning SYN cookie stands for
  // (listener.hh): its SYN-ACK went out when the cookie was made. Takes it
  // as sent now (SND.NXT = ISS + 1, the retransmission timer armed), sends
  // nothing; the ACK that brought the cookie comes next.
  void syn_ack_sent(std::uint64_t now_ns);
  std::uint64_t next_deadline() const;  // no_deadline when no timer runs
  void on_timer(std::uint64_t now_ns);
  event_set take_events();

  // Copies into the send buffer; returns the bytes taken (0 when full).
  // EPIPE after shutdown_write()/close(); the connection's error once it failed.
  std::expected<std::size_t, std::error_code> send(std::span<const std::byte> data);
  // Copies out of the receive buffer; 0 when nothing is there (see eof()).
  // The connection's error once it failed and nothing is left to read.
  std::expected<std::size_t, std::error_code> recv(std::span<std::byte> out);
  // Zero-copy (net.hh read_view / write_view). The receive buffer's bytes
  // where they lie, up to its wrap point (empty: nothing there, see eof());
  // consume(n) drops the first n of them (clamped: a reset may have emptied
  // the buffer meanwhile). The send buffer's free space up to its wrap
  // point: bytes placed there and passed to send() from where they lie are
  // queued without a copy. Errors as recv() and send().
  std::expected<std::span<const std::byte>, std::error_code> recv_view() const;
  void consume(std::size_t n);
  std::expected<std::span<std::byte>, std::error_code> send_room();
  std::size_t readable() const { return rcv_buf_.size(); }
  std::size_t writable() const;
  void shutdown_write();               // FIN after the queued data (RFC 9293 3.10.4)
  void close(std::uint64_t now_ns);    // shutdown_write(), and the application reads no more
  void abort();                        // RFC 9293 3.10.5: RST, CLOSED (end_reason::aborted)
  // TIME-WAIT ends now, quietly (the stack's bound on TIME-WAIT was hit,
  // or a SYN reopens the connection).
  void end_time_wait();
  // A SYN for this connection in TIME-WAIT that may open its next
  // incarnation at once (RFC 9293 3.6.1 MAY-2, RFC 6191): the ISS that
  // incarnation must take; none when the SYN may be an old duplicate, and
  // it goes through input() as any segment. The owner then ends TIME-WAIT
  // and gives the SYN to the port's listener with that ISS.
  std::optional<seq32> reopen_iss(const tcp_segment& syn) const;

  // An ICMP error whose quote names this connection (the caller checked
  // the addresses and ports), with the quoted SEG.SEQ and, for
  // fragmentation_needed, the path MTU now to use. Acts only when the
  // quoted sequence number is in flight, SND.UNA =< SEG.SEQ < SND.NXT
  // (RFC 5927 4.1: a blind attacker must guess it); returns whether it did.
  bool on_icmp(icmp_error e, seq32 quoted_seq, std::uint32_t path_mtu, std::uint64_t now_ns);
  // Whether an ICMP error quoting `seq` would be acted on.
  bool in_flight(seq32 seq) const;
  // The path MTU known before the handshake settles the MSS (a cached
  // estimate for the destination, RFC 1191): segments stay within it.
  void set_path_mtu(std::uint32_t mtu);
  // The last soft error an ICMP message reported (RFC 1122 4.2.3.9), or none.
  std::error_code soft_error() const { return soft_error_; }

  tcp_state state() const { return state_; }
  std::error_code error() const { return error_; }
  end_reason end() const { return end_; }  // why it reached CLOSED; `open` before
  bool eof() const { return fin_received_ && rcv_buf_.empty(); }  // the peer's FIN is consumed
  // Whether output() must run before the next segment is read: an ACK that
  // may not wait (out-of-order data, a filled gap, a FIN, an unacceptable
  // segment), so each such segment gets its own (RFC 5681 4.2). The ACK for
  // every second full-sized segment may wait for the end of the receive
  // batch, which the stack ends within one RX burst.
  bool owes_ack_now() const { return ack_now_; }
  // Where `length` bytes of in-order data starting at `seq` will be kept,
  // when they go there whole and in one piece (a data-transfer state, seq
  // at RCV.NXT, no out-of-order data held, room before the wrap); else
  // empty. The RX path copies a payload there as it sums it, and input()
  // then keeps it without copying it again.
  std::span<std::byte> landing(seq32 seq, std::size_t length);
  void set_no_delay(bool on) { cfg_.no_delay = on; }
  void set_keepalive(const keepalive_config& k);

  const flow_tuple& tuple() const { return tuple_; }
  // Passive: what the handshake's completion asks (null: nothing; it must
  // outlive the connection or be reset first).
  void set_admission(admission* a) { admission_ = a; }
  const connection_config& config() const { return cfg_; }
  const connection_stats& stats() const { return stats_; }
  const congestion_control& congestion() const { return *cc_; }
  const rto_estimator& rto() const { return rto_; }
  std::uint32_t send_mss() const { return eff_mss_; }      // RFC 9293 3.7.1 Eff.snd.MSS
  std::uint32_t send_window() const { return snd_wnd_; }   // scaled
  std::uint8_t send_window_scale() const { return snd_wscale_; }
  std::uint8_t recv_window_scale() const { return rcv_wscale_; }
  // buffer_tuning.cc: the buffers' sizes, and the receiver's RTT estimate
  // they follow (0: none yet).
  std::size_t receive_buffer() const { return rcv_buf_.capacity(); }
  std::size_t send_buffer() const { return snd_buf_.capacity(); }
  std::uint64_t receive_rtt_ns() const { return rcv_space_.rtt_ns; }
  bool timestamps_enabled() const { return ts_ok_; }
  bool sack_enabled() const { return sack_ok_; }  // RFC 2018 2: both SYNs had SACK-permitted
  bool ecn_enabled() const { return ecn_ok_; }    // RFC 3168 6.1.1: both SYNs agreed
  const scoreboard& sack_scoreboard() const { return sb_; }

  // One line of the connection's variables (RFC 9293 3.3.1 names), for
  // stats endpoints and for tests that must say why a transfer stalled.
  std::string describe(std::uint64_t now_ns) const;

  // Connections alive in this process, for leak checks in tests.
  static std::size_t live_count();

 private:
  // A segment after trimming to the receive window (RFC 9293 3.10.7.4 first).
  struct incoming {
    seq32 seq;
    bool syn = false;
    bool fin = false;
    std::span<const std::byte> data;
  };
  using step_result = std::optional<input_result>;  // a value stops processing

  struct timers {
    std::uint64_t retransmit = no_deadline;   // RFC 6298; also SYN and SYN-ACK
    std::uint64_t persist = no_deadline;      // RFC 9293 3.8.6.1, RFC 1122 4.2.3.4 override
    std::uint64_t delayed_ack = no_deadline;  // RFC 1122 4.2.3.2
    std::uint64_t keepalive = no_deadline;    // RFC 1122 4.2.3.6
    std::uint64_t close = no_deadline;        // TIME-WAIT, or FIN-WAIT-2 after close()
    std::uint64_t linger = no_deadline;       // SO_LINGER after close()
    std::uint64_t loss_probe = no_deadline;   // RFC 8985 7 TLP's PTO
    std::uint64_t reorder = no_deadline;      // RFC 8985 6.2 step 6, RACK's reorder timer
    std::uint64_t pace = no_deadline;         // pacing.cc: the next burst may leave
  };

  // undo.cc: a reduction and what it retransmitted, until it is over.
  struct undo_episode {
    bool open = false;
    bool timeout = false;               // a retransmission timeout is part of it
    seq32 marker{};                     // SND.UNA when it began
    std::uint32_t prior_cwnd = 0;       // the window before the reduction
    std::uint32_t prior_ssthresh = 0;
    bool probe_resent = false;          // a retransmitted loss probe was out when it began
    unsigned retransmissions = 0;       // data segments resent since
    unsigned dsacked = 0;               // of them, reported as duplicates
    bool eifel_armed = false;           // the first ACK past `marker` is still to come
    std::uint32_t first_rexmit_ts = 0;  // TSval of the first retransmission
    bool ended = false;                 // the reduction is over; reports may still come ...
    seq32 close_at{};                   // ... until SND.UNA reaches this
  };

  connection(const open_params& p, const connection_config& cfg, tcp_state initial);

  // connection.cc: state changes.
  void enter_established(std::uint64_t now_ns);
  void enter_time_wait(std::uint64_t now_ns);
  void enter_closed(std::error_code err, end_reason why);
  void flush_buffers();
  void abort_with(end_reason why);  // abort(), for the reason given
  bool writable_state() const;
  bool syn_acked() const { return snd_una_ != iss_; }
  bool fin_acked() const;
  seq32 fin_seq() const { return snd_data_ + std::uint32_t(snd_buf_.size()); }
  std::uint16_t syn_window() const;

  // segment_arrives.cc: RFC 9293 3.10.7.4, one function per step.
  input_result segment_arrives(const tcp_segment& seg, std::uint64_t now_ns);
  step_result check_duplicate_syn(const tcp_segment& seg, incoming& in);
  step_result check_sequence(const tcp_segment& seg, incoming& in, std::uint64_t now_ns);
  step_result check_rst(const tcp_segment& seg, std::uint64_t now_ns);
  step_result check_syn(const incoming& in, std::uint64_t now_ns);
  std::optional<tcp_segment> challenge_ack(std::uint64_t now_ns);
  std::uint32_t receive_window() const;
  bool acceptable(const incoming& in) const;
  void trim_to_window(incoming& in) const;

  // handshake.cc: RFC 9293 3.10.7.3 and the ACK of our SYN.
  input_result syn_sent_arrives(const tcp_segment& seg, std::uint64_t now_ns);
  step_result syn_received_ack(const tcp_segment& seg, std::uint64_t now_ns);

  // ack.cc: RFC 9293 3.10.7.4 fifth, RFC 5681, RFC 6582, RFC 6298.
  step_result check_ack(const tcp_segment& seg, std::uint64_t now_ns);
  void process_new_ack(const tcp_segment& seg, std::uint64_t now_ns);
  bool is_duplicate_ack(const tcp_segment& seg) const;
  void process_duplicate_ack(std::uint64_t now_ns);
  void update_send_window(const tcp_segment& seg);
  std::uint64_t sample_rtt(const tcp_segment& seg, std::uint64_t now_ns);  // the sample taken, 0 = none

  // receive.cc: RFC 9293 3.10.7.4 seventh and eighth; the offered window.
  step_result process_data(const tcp_segment& seg, const incoming& in, std::uint64_t now_ns);
  void process_fin(const incoming& in, std::uint64_t now_ns);
  void receive_fin(std::uint64_t now_ns);
  void schedule_ack(std::size_t bytes, std::uint64_t now_ns);
  seq32 offered_edge() const;
  std::uint16_t advertise_window();
  bool window_update_due() const;

  // options.cc: MSS, window scale, timestamps (RFC 9293 3.7.1, RFC 7323).
  tcp_options syn_options(std::uint64_t now_ns) const;
  void negotiate(const tcp_segment& syn, std::uint64_t now_ns);
  std::uint32_t ts_clock(std::uint64_t now_ns) const;
  std::uint64_t monotone_now(std::uint64_t now_ns);
  step_result check_timestamps(const tcp_segment& seg, std::uint64_t now_ns);
  void update_ts_recent(const tcp_segment& seg, std::uint64_t now_ns);

  // sack.cc: the SACK blocks a data receiver reports (RFC 2018 4).
  void note_out_of_order(seq32 seq);
  void note_duplicate(seq32 begin, seq32 end);
  void add_sack_blocks(tcp_options& o, std::uint32_t room_bytes) const;

  // sack_recovery.cc: the SACK sender, RFC 6675 loss recovery with RFC 6937
  // Proportional Rate Reduction.
  struct next_segment {
    seq32 seq;
    std::uint32_t len = 0;
    bool fin = false;
    enum class kind : std::uint8_t { retransmit, new_data } what = kind::retransmit;
  };
  scoreboard::update take_sack(const tcp_segment& seg, seq32 una_after);
  bool sack_duplicate(const tcp_segment& seg, const scoreboard::update& u) const;
  void enter_sack_recovery(std::uint64_t now_ns);
  void prr_on_ack(std::uint32_t delivered);
  std::uint32_t sack_pipe() const;
  std::optional<next_segment> next_seg() const;
  next_segment cut(seq32 begin, seq32 end, next_segment::kind what) const;
  void output_sack_recovery(std::uint64_t now_ns, segment_sink sink);

  // rack.cc: RFC 8985 6, loss detection by time over the sent log.
  void note_transmit(seq32 begin, seq32 end, std::uint64_t now_ns);
  void rack_deliver(const sent_record& r, const tcp_segment& seg, std::uint64_t now_ns);
  void rack_sacked(seq32 from, seq32 to, const tcp_segment& seg, std::uint64_t now_ns);
  void rack_on_ack(const tcp_segment& seg, const scoreboard::update& u, std::uint64_t now_ns);
  void rack_on_dsack();
  void rack_on_recovery_end();
  std::uint64_t rack_reo_wnd() const;
  void rack_detect_loss(std::uint64_t now_ns);
  void on_reorder_timeout(std::uint64_t now_ns);
  void rack_on_timeout();
  void forget_lost_marks();
  std::uint32_t unsacked_bytes(const sent_record& r) const;
  std::optional<next_segment> first_lost() const;

  // undo.cc: spurious retransmissions (Eifel, D-SACK) and the undo.
  void open_undo_episode(bool timeout);
  void end_undo_episode();
  void note_episode_retransmission(std::uint64_t now_ns);
  bool recovery_resent_nothing() const;
  bool eifel_spurious(const tcp_segment& seg);
  bool dsack_spurious(const scoreboard::update& u);
  void undo_reduction(std::uint64_t now_ns);

  // loss_probe.cc: RFC 8985 7, the tail loss probe.
  bool loss_probe_allowed() const;
  void arm_loss_probe(std::uint64_t now_ns);
  void output_loss_probe(std::uint64_t now_ns, segment_sink sink);
  void check_loss_probe(const scoreboard::update& u, std::uint64_t now_ns);

  // buffer_tuning.cc: the buffers' auto-tuning.
  bool rcv_tuned() const { return cfg_.recv_buffer_max > cfg_.recv_buffer; }
  bool snd_tuned() const { return cfg_.send_buffer_max > cfg_.send_buffer; }
  void note_taken(std::size_t n);
  void measure_rcv_rtt(const tcp_segment& seg, std::size_t len, std::uint64_t now_ns);
  void adjust_rcv_space(std::uint64_t now_ns);
  void adjust_snd_space();
  void grow_send_buffer();
  bool grow(ring_buffer& ring, std::size_t capacity);

  // cwnd_use.cc: RFC 9438 5.8, RFC 7661: whether the window limits sending.
  void note_cwnd_use();
  bool cwnd_limited() const;
  // pacing.cc: the rate (bytes a second, 0: none), whether the next
  // segment must wait for it (then timers_.pace says until when), and a
  // segment of `len` bytes sent: the next waits the time it takes at it.
  std::uint64_t pacing_rate() const;
  bool pacing_holds(std::uint64_t now_ns);
  void note_paced(std::uint32_t len, std::uint64_t now_ns);
  // ecn.cc: RFC 3168 ECN.
  void negotiate_ecn(const tcp_segment& syn);
  void mark_syn_ecn(tcp_segment& syn, bool retransmission) const;
  void ecn_arrives(const tcp_segment& seg);
  void ecn_echo_arrives(const tcp_segment& seg, std::uint64_t now_ns);
  void mark_data_ecn(tcp_segment& seg, bool new_data);

  // transmit.cc
  void output_syn(std::uint64_t now_ns, segment_sink sink);
  void output_data(std::uint64_t now_ns, segment_sink sink);
  bool send_allowed(std::uint32_t len, std::uint32_t queued, bool fin, std::uint32_t flight) const;
  void send_data_segment(seq32 seq, std::uint32_t len, bool fin, std::uint64_t now_ns, segment_sink sink);
  void output_probes(std::uint64_t now_ns, segment_sink sink);
  std::span<const std::byte> send_bytes(seq32 seq, std::uint32_t len);
  tcp_segment make_segment(tcp_control control, seq32 seq, std::uint64_t now_ns);
  void note_sent(const tcp_segment& seg);
  void emit(const tcp_segment& seg, segment_sink sink);
  tcp_segment ack_segment(std::uint64_t now_ns);

  // timeouts.cc
  void on_retransmit_timeout(std::uint64_t now_ns);
  end_reason retransmissions_end(std::uint64_t now_ns) const;
  void on_persist_timeout(std::uint64_t now_ns);
  void on_keepalive_timeout(std::uint64_t now_ns);
  bool keepalive_applies() const;
  std::uint64_t within_user_timeout(std::uint64_t deadline, std::uint64_t since_ns) const;
  void start_retransmit_timer(std::uint64_t now_ns);
  void restart_retransmit_timer(std::uint64_t now_ns);
  void arm_persist(std::uint64_t now_ns);
  void arm_keepalive();

  // Identity and settings.
  flow_tuple tuple_;
  connection_config cfg_;
  tcp_state state_;
  bool passive_ = false;  // made by a listener from a SYN

  // Send sequence variables (RFC 9293 3.3.1). snd_max_ is the highest
  // sequence number sent: snd_nxt_ goes back to snd_una_ on a timeout.
  seq32 iss_, snd_una_, snd_nxt_, snd_max_, snd_wl1_, snd_wl2_;
  seq32 snd_data_;  // sequence number of the send buffer's first byte
  std::uint32_t snd_wnd_ = 0;
  std::uint32_t max_snd_wnd_ = 0;  // RFC 1122 4.2.3.4: the largest window the peer offered
  std::uint8_t snd_wscale_ = 0;
  bool fin_queued_ = false;        // shutdown_write(): FIN after the send buffer

  // Receive sequence variables. rcv_adv_ is the right edge we advertised;
  // it never moves left (RFC 9293 3.8.6.2.2).
  seq32 irs_, rcv_nxt_, rcv_adv_;
  std::uint8_t rcv_wscale_ = 0;
  bool fin_received_ = false;
  std::optional<seq32> ooo_fin_;   // a FIN seen past a hole

  // Options (RFC 9293 3.7.1, RFC 7323).
  bool ws_ok_ = false;
  bool ts_ok_ = false;
  bool sack_ok_ = false;           // RFC 2018 2: both SYNs carried SACK-permitted
  // RFC 3168 (ecn.cc): both SYNs agreed; the receiver owes ECE on its ACKs
  // (a CE came, no CWR since); the sender owes CWR on its next new data;
  // the last reduction, and the SND.MAX it covers echoes up to.
  bool ecn_ok_ = false;
  bool ece_owed_ = false;
  bool cwr_owed_ = false;
  // cwnd_use.cc: a round runs from SND.NXT at its start until SND.UNA
  // passes it; `limited` if the window was full in it, and the largest
  // flight it had (Linux's is_cwnd_limited, max_packets_out).
  struct cwnd_round {
    bool limited = false;
    std::uint32_t max_flight = 0;
    seq32 end{};
  } cwnd_use_;
  bool ecn_reduced_ = false;
  seq32 ecn_high_;
  std::uint32_t eff_mss_ = 536;
  std::uint32_t ts_offset_ = 0;
  std::uint64_t clock_ns_ = 0;  // the latest time a caller passed (monotone_now)
  std::uint32_t ts_recent_ = 0;
  std::uint64_t ts_recent_ns_ = 0;
  seq32 last_ack_sent_;            // RFC 7323 4.3 Last.ACK.sent

  ring_buffer snd_buf_;
  ring_buffer rcv_buf_;
  // buffer_tuning.cc (Linux's rcvq_space and rcv_rtt_est): what the
  // application took in the last measured round trip, the capacity the next
  // read grows the buffer to, and the receiver's own RTT estimate, from
  // timestamps or the time data past an offered edge takes to come.
  struct rcv_space_state {
    std::uint64_t taken = 0;         // bytes the application has taken, ever
    std::uint64_t mark = 0;          // `taken` when this measurement began
    std::uint64_t since_ns = 0;      // when it began; 0: not yet
    std::size_t space = 0;           // bytes taken in the last measured round trip
    std::size_t want = 0;            // capacity for the next read to grow the buffer to
    std::uint64_t rtt_ns = 0;        // 0: none yet
    seq32 rtt_seq{};                 // without timestamps: the end of the window being timed
    std::uint64_t rtt_since_ns = 0;  // and when it was offered; 0: none timed
  } rcv_space_;
  std::size_t snd_want_ = 0;  // buffer_tuning.cc: the send buffer's next capacity
  bool growth_held_ = false;  // a growth waits for the process's rings to shrink
  assembler ooo_;
  // RFC 2018 4: where the latest out-of-order segments began, newest first:
  // their blocks are reported first, so each goes out in several ACKs.
  std::array<seq32, 4> sack_recent_{};
  std::uint8_t sack_recent_count_ = 0;
  // RFC 2883: the latest duplicate received, owed as the first block of the
  // next ACK that has room for it.
  std::optional<tcp_sack_block> dsack_;
  std::unique_ptr<std::byte[]> scratch_;  // a segment that wraps in the send ring is copied here

  // Loss detection and recovery (RFC 5681, RFC 6582) and RTT (RFC 6298).
  std::unique_ptr<congestion_control> cc_;
  rto_estimator rto_;
  unsigned dup_acks_ = 0;
  bool in_recovery_ = false;
  bool retransmit_head_ = false;   // fast retransmit: resend at SND.UNA on the next output
  bool partial_ack_seen_ = false;  // RFC 6582 3.2 step 5: the timer is reset on the first only
  seq32 recover_;
  // The SACK sender: the scoreboard (what the peer holds), the sent log
  // (what left when; RACK marks its records lost, and lost_bytes_ sums the
  // un-SACKed bytes so marked), RACK's state, and PRR's counts (RFC 6937
  // RecoverFS, prr_delivered, prr_out, and sndcnt: what the latest ACK lets
  // recovery send).
  scoreboard sb_;
  sent_log log_;
  rack_state rack_;
  std::uint32_t lost_bytes_ = 0;
  std::uint32_t sacked_records_ = 0;  // RACK.segs_sacked
  seq32 rexmit_high_;                 // past every retransmitted record
  undo_episode undo_;
  // RFC 8985 7: the probe in flight ([loss_probe_begin_, TLP.end_seq)), and
  // whether it was a retransmission.
  bool loss_probe_due_ = false;
  std::optional<seq32> loss_probe_end_;
  seq32 loss_probe_begin_;
  bool loss_probe_retransmitted_ = false;
  std::uint32_t recover_fs_ = 1;
  std::uint64_t prr_delivered_ = 0;
  std::uint64_t prr_out_ = 0;
  std::int64_t sndcnt_ = 0;
  unsigned retransmissions_ = 0;   // consecutive timeouts without progress
  bool syn_retransmitted_ = false;
  std::optional<seq32> rtt_seq_;   // Karn: the one timed segment, when timestamps are off
  std::uint64_t rtt_start_ns_ = 0;
  std::uint64_t last_send_ns_ = 0;
  std::uint64_t pace_next_ns_ = 0;       // pacing.cc: when the rate lets the next byte go
  std::uint8_t data_segments_out_ = 0;   // pacing.cc: up to 10, the initial window left unpaced
  // RFC 9293 3.10.8's user timeout counts from these: when the oldest
  // unacknowledged sequence number began to wait (its first transmission
  // onto an empty flight, or the last ACK that moved SND.UNA), and when
  // queued data began to wait before a shut window (none: no_deadline).
  std::uint64_t unacked_since_ns_ = 0;
  std::uint64_t window_shut_ns_ = no_deadline;

  // Acknowledgement and probe state.
  bool ack_now_ = false;           // an ACK owed before the next segment is read
  bool ack_due_ = false;           // an ACK owed by the end of this receive batch
  std::size_t unacked_bytes_ = 0;  // received since our last ACK
  std::uint32_t rcv_mss_ = 536;    // largest segment seen, for "full-sized" (RFC 1122 4.2.3.2)
  bool persist_probe_due_ = false;
  unsigned persist_backoff_ = 0;
  unsigned persist_unanswered_ = 0;  // probes with no segment received since
  unsigned orphan_probes_ = 0;       // probes since close() met a shut window
  std::uint64_t challenge_window_start_ns_ = 0;  // RFC 5961 7: the throttle's current window
  unsigned challenge_acks_in_window_ = 0;
  bool keepalive_probe_due_ = false;
  unsigned keepalive_probes_ = 0;
  std::uint64_t last_rx_ns_ = 0;

  timers timers_;
  std::error_code error_;
  std::error_code soft_error_;
  std::uint32_t path_mss_ = UINT32_MAX;  // RFC 1191: what the path MTU leaves for a segment (icmp.cc)
  event_set events_;
  end_reason end_ = end_reason::open;
  bool user_closed_ = false;  // close(): the application reads no more
  bool rst_pending_ = false;  // abort(): RST on the next output

  admission* admission_ = nullptr;

  connection_stats stats_;
  // Counts `n` of one of stats_'s events, and says so (event::counted).
  void count(std::uint64_t connection_stats::*counter, std::uint64_t n = 1) {
    stats_.*counter += n;
    events_.add(event::counted);
  }
};

}  // namespace affine::stack::tcp
