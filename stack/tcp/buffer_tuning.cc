// The buffers' auto-tuning. A fixed buffer caps a connection at one buffer
// a round trip: 256 KiB over 20 ms is 13 MB/s, whatever the path carries.
//
// The receive buffer (Linux's dynamic right-sizing, tcp_rcv_space_adjust).
// Each round trip the receiver looks at what the application took in it;
// when that was more than ever before, the buffer grows to twice it plus
// a cushion, and more again for a sender whose rate is growing, up to
// recv_buffer_max. Only what is read counts, so a buffer grows for an
// application that keeps up, never for a peer that merely sends.
//
// The round trip is the receiver's own estimate (tcp_rcv_rtt_measure):
// with timestamps, from the echo of our TSval in full-sized data; without,
// from the time a whole window's worth of data took to come.
//
// The ring grows when the application reads (recv() or consume()), as
// Linux grows sk_rcvbuf in recvmsg: never under a view lent by recv_view()
// or a landing() span of the RX path.
//
// The send buffer (Linux's tcp_sndbuf_expand) grows to twice the
// congestion window, up to send_buffer_max, when it is what limits
// sending: full, all of it sent, and room left in both windows. It grows
// when the application writes (after send() took its bytes, which may lie
// in the ring's free space, lent by send_room()) or asks for room.
//
// Both stop at the process's bound on ring memory (buffer_memory_limit,
// Linux's tcp_mem): a ring's pages are all touched as it turns, so what a
// buffer grows to is memory the process holds until the connection ends.

#include <algorithm>

#include "stack/tcp/connection.hh"

namespace affine::stack::tcp {

namespace {
// An echo further back than this is not one of our recent TSvals.
constexpr std::uint32_t max_echo_age_ticks = 60'000;
}  // namespace

// In-order data arrived, `len` bytes, RCV.NXT already past it.
void connection::measure_rcv_rtt(const tcp_segment& seg, std::size_t len, std::uint64_t now_ns) {
  if (!rcv_tuned()) return;
  std::uint64_t& rtt = rcv_space_.rtt_ns;
  if (ts_ok_ && seg.options.timestamps && seg.options.timestamps->echo != 0) {
    // Full-sized segments only: a small one may answer a delayed ACK.
    if (len < rcv_mss_) return;
    const std::uint32_t ticks = ts_clock(now_ns) - seg.options.timestamps->echo;
    if (ticks > max_echo_age_ticks) return;
    const std::uint64_t m = std::max<std::uint64_t>(ticks, 1) * ts_tick_ns;
    rtt = rtt == 0 ? m : rtt - rtt / 8 + m / 8;  // smoothed, as SRTT
    return;
  }
  // Data past the edge offered when the timing began was sent only after
  // the sender heard of a later one: it comes a round trip or more after.
  // A sender that did not fill the window makes the time longer, so the
  // shortest is kept.
  if (rcv_space_.rtt_since_ns != 0 && rcv_nxt_ <= rcv_space_.rtt_seq) return;
  if (rcv_space_.rtt_since_ns != 0) {
    const std::uint64_t m = std::max<std::uint64_t>(now_ns - rcv_space_.rtt_since_ns, 1);
    rtt = rtt == 0 ? m : std::min(rtt, m);
  }
  rcv_space_.rtt_seq = seq_max(rcv_adv_, rcv_nxt_);
  rcv_space_.rtt_since_ns = now_ns;
}

// Once a round trip, from output(): what the application took in it.
void connection::adjust_rcv_space(std::uint64_t now_ns) {
  if (!rcv_tuned()) return;
  rcv_space_state& s = rcv_space_;
  if (s.rtt_ns == 0 || s.since_ns == 0) {
    // No round trip to measure over yet: the first measurement begins
    // when there is one, and covers one round trip, not all until then.
    s.since_ns = now_ns;
    s.mark = s.taken;
    return;
  }
  if (now_ns - s.since_ns < s.rtt_ns) return;
  const std::uint64_t taken = s.taken - s.mark;
  if (taken > s.space) {
    // Twice a round trip's worth, for a loss's retransmission to find room
    // behind it, and 16 segments of cushion; a sender still growing is a
    // round trip ahead of what was read, so as much again as it grew, twice
    // (Linux's rule). Unlike Linux the growth counted is at most a
    // doubling, as slow start's: a ring's pages are all touched as it
    // turns, so a first measurement against the small initial `space`
    // must not make a 64 KB-a-round reader a 2 MB buffer.
    std::uint64_t window = 2 * taken + 16 * std::uint64_t{cfg_.mss};
    window += 2 * (window * std::min<std::uint64_t>(taken - s.space, s.space) / s.space);
    // No larger than a window can say: without window scaling (the peer's
    // SYN had none) 64 KiB.
    const std::uint64_t most = std::min<std::uint64_t>(cfg_.recv_buffer_max, std::uint64_t{0xffff} << rcv_wscale_);
    s.want = std::max(s.want, std::size_t(std::min(window, most)));
    s.space = std::size_t(taken);
  }
  s.since_ns = now_ns;
  s.mark = s.taken;
}

// The application took n bytes: the buffer grows now if a round trip
// asked it to.
void connection::note_taken(std::size_t n) {
  rcv_space_.taken += n;
  if (rcv_space_.want > rcv_buf_.capacity() && grow(rcv_buf_, rcv_space_.want))
    count(&connection_stats::receive_buffer_grown);
}

// After each pass that sends data (output_data).
void connection::adjust_snd_space() {
  if (!snd_tuned() || snd_buf_.free() >= eff_mss_) return;   // not full: the application is not held back
  // A full segment unsent: a window holds it back (less may wait for
  // sender silly window avoidance alone).
  const seq32 end = fin_seq();
  if (snd_nxt_ < end && std::uint32_t(end - snd_nxt_) >= eff_mss_) return;
  const auto flight = std::uint32_t(snd_nxt_ - snd_una_);
  if (std::uint64_t{flight} + eff_mss_ > std::min(cc_->cwnd(), snd_wnd_)) return;  // so does a full window
  const std::uint64_t want = std::min<std::uint64_t>(2 * std::uint64_t{cc_->cwnd()}, cfg_.send_buffer_max);
  snd_want_ = std::max(snd_want_, std::size_t(want));
}

// The application writes or asks for room: the buffer grows now if
// sending asked it to.
void connection::grow_send_buffer() {
  if (snd_want_ > snd_buf_.capacity() && grow(snd_buf_, snd_want_)) count(&connection_stats::send_buffer_grown);
}

// Under the process's bound on ring memory; a growth withheld is counted
// once a wait, and asked again at the next read or write.
bool connection::grow(ring_buffer& ring, std::size_t capacity) {
  const std::size_t limit = cfg_.buffer_memory_limit;
  if (limit != 0 && ring_buffer::allocated_bytes() + (capacity - ring.capacity()) > limit) {
    if (!growth_held_) count(&connection_stats::buffer_growth_held);
    growth_held_ = true;
    return false;
  }
  growth_held_ = false;
  ring.grow(capacity);
  return true;
}

}  // namespace affine::stack::tcp
