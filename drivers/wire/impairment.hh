#pragma once
// What one direction of the wire does to the frames it carries, and what it
// counts. Every probability is per frame; every decision is drawn from the
// link's seed, so the same seed, frames and time advances give the same
// drops, copies, order and damage.

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>

namespace affine::drivers::wire {

// Burst loss (Gilbert-Elliott): a two-state chain stepped once per frame; a
// frame is lost with the loss probability of the state it finds the chain in.
struct gilbert_elliott {
  double good_to_bad = 0.0;  // chance per frame of entering a burst
  double bad_to_good = 1.0;  // chance per frame of leaving it (mean burst length 1/bad_to_good)
  double loss_in_good = 0.0;
  double loss_in_bad = 1.0;
};

struct impairments {
  double loss = 0.0;                     // independent loss, per frame
  std::optional<gilbert_elliott> burst;  // burst loss, on top of `loss`
  double duplicate = 0.0;                // chance a frame arrives twice
  double corrupt = 0.0;                  // chance of one flipped bit in one random byte

  // Reordering: a frame is held back with probability `reorder`. With
  // reorder_gap N > 0 it is delivered right after the N-th frame sent after it
  // (so N frames overtake it), or reorder_delay_ns after it would have
  // arrived if that comes first (0: no time bound). With N == 0 it is simply
  // delivered reorder_delay_ns late.
  double reorder = 0.0;
  unsigned reorder_gap = 0;
  std::uint64_t reorder_delay_ns = 0;

  // Propagation: each frame arrives delay_ns after it leaves the rate
  // limiter, plus or minus a uniform draw of up to jitter_ns (at least 0).
  // Jitter larger than the spacing of frames reorders them, as on netem.
  std::uint64_t delay_ns = 0;
  std::uint64_t jitter_ns = 0;

  // Serialisation: at most rate_bytes_per_s (0: unlimited); frames wait
  // their turn in a backlog of at most rate_queue_bytes, and a frame that
  // would overflow it is dropped (drop_reason::rate_limit); an idle link
  // takes a frame of any size. A frame's length on the link is its pkt_len.
  std::uint64_t rate_bytes_per_s = 0;
  std::uint64_t rate_queue_bytes = 256 * 1024;
  // ECN marking (RFC 3168 5), as a router's queue management does it: an
  // ECN-capable IP frame (ECT(0) or ECT(1)) that finds at least this much
  // of the backlog before it is marked CE instead of waiting for the
  // drop-tail; 0: never. Only with a rate limit (no backlog without one).
  std::uint64_t ecn_mark_bytes = 0;

  // Frames in flight (delayed, paced or held back) in this direction; a frame
  // beyond the bound is dropped (drop_reason::queue_full).
  std::uint32_t queue_frames = 4096;
};

enum class drop_reason : std::uint8_t {
  loss,        // independent random loss
  burst_loss,  // lost in a Gilbert-Elliott burst
  queue_full,  // the in-flight queue was at queue_frames
  rate_limit,  // the rate limiter's backlog would have overflowed
  no_mbuf,     // the receiving end's pool was empty
  oversize,    // longer than the sending end's MTU allows (counted as a TX error)
  count,
};

constexpr std::string_view drop_reason_name(drop_reason r) {
  switch (r) {
    case drop_reason::loss: return "loss";
    case drop_reason::burst_loss: return "burst_loss";
    case drop_reason::queue_full: return "queue_full";
    case drop_reason::rate_limit: return "rate_limit";
    case drop_reason::no_mbuf: return "no_mbuf";
    case drop_reason::oversize: return "oversize";
    case drop_reason::count: break;
  }
  return "?";
}

struct direction_stats {
  std::uint64_t sent = 0;          // frames handed to tx_burst
  std::uint64_t sent_bytes = 0;
  std::uint64_t delivered = 0;     // frames handed out by the far end's rx_burst
  std::uint64_t delivered_bytes = 0;
  std::uint64_t duplicated = 0;    // extra copies made
  std::uint64_t corrupted = 0;     // frames with a flipped bit
  std::uint64_t reordered = 0;     // frames held back
  std::uint64_t ce_marked = 0;     // ECN-capable frames marked CE (ecn_mark_bytes)
  std::array<std::uint64_t, std::size_t(drop_reason::count)> dropped{};

  std::uint64_t drops(drop_reason r) const { return dropped[std::size_t(r)]; }
  std::uint64_t total_drops() const {
    std::uint64_t n = 0;
    for (auto d : dropped) n += d;
    return n;
  }
};

}  // namespace affine::drivers::wire
