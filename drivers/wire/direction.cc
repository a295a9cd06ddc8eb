#include "drivers/wire/direction.hh"

#include <rte_mbuf.h>

#include <algorithm>
#include <cstdint>

#include "drivers/wire/frame.hh"

namespace affine::drivers::wire {

namespace {

constexpr std::uint64_t ns_per_s = 1'000'000'000;
constexpr std::uint64_t no_bound = UINT64_MAX;

enum stream : unsigned { loss_stream, burst_stream, duplicate_stream, corrupt_stream, reorder_stream, jitter_stream };

// Independent streams per (direction, impairment) from one seed.
rng stream_rng(std::uint64_t seed, unsigned index, stream s) {
  return rng(seed ^ (0xd1b54a32d192ed03ULL * (std::uint64_t(index) * 8 + s + 1)));
}

}  // namespace

direction::direction(const impairments& cfg, std::uint64_t seed, unsigned index, rte_mempool* to_pool,
                     std::uint32_t max_frame)
    : cfg_(cfg),
      to_pool_(to_pool),
      max_frame_(max_frame),
      loss_rng_(stream_rng(seed, index, loss_stream)),
      burst_rng_(stream_rng(seed, index, burst_stream)),
      duplicate_rng_(stream_rng(seed, index, duplicate_stream)),
      corrupt_rng_(stream_rng(seed, index, corrupt_stream)),
      reorder_rng_(stream_rng(seed, index, reorder_stream)),
      jitter_rng_(stream_rng(seed, index, jitter_stream)) {
  queue_.reserve(cfg.queue_frames);
}

direction::~direction() {
  for (auto& q : queue_) rte_pktmbuf_free(q.m);
  for (auto& h : held_) rte_pktmbuf_free(h.m);
}

void direction::send(rte_mbuf* const* pkts, std::uint16_t n, std::uint64_t now) {
  std::lock_guard lock(mutex_);
  for (std::uint16_t i = 0; i < n; ++i) send_one(pkts[i], now);
}

void direction::send_one(rte_mbuf* m, std::uint64_t now) {
  ++stats_.sent;
  stats_.sent_bytes += m->pkt_len;
  if (m->pkt_len > max_frame_) return drop(m, drop_reason::oversize);
  // Both loss models are stepped for every frame, so each stays a function
  // of the frame count alone.
  const bool burst = lost();
  if (loss_rng_.chance(cfg_.loss)) return drop(m, drop_reason::loss);
  if (burst) return drop(m, drop_reason::burst_loss);
  const bool twice = duplicate_rng_.chance(cfg_.duplicate);
  enqueue_copy(m, now);
  if (twice) {
    ++stats_.duplicated;
    enqueue_copy(m, now);
  }
  rte_pktmbuf_free(m);
}

bool direction::lost() {
  if (!cfg_.burst) return false;
  const gilbert_elliott& ge = *cfg_.burst;
  in_burst_ = in_burst_ ? !burst_rng_.chance(ge.bad_to_good) : burst_rng_.chance(ge.good_to_bad);
  return burst_rng_.chance(in_burst_ ? ge.loss_in_bad : ge.loss_in_good);
}

void direction::enqueue_copy(const rte_mbuf* m, std::uint64_t now) {
  if (queue_.size() + held_.size() >= cfg_.queue_frames) return drop(nullptr, drop_reason::queue_full);

  std::uint64_t ready = now;
  std::uint64_t backlog = 0;  // bytes ahead of this frame in the rate limiter
  if (cfg_.rate_bytes_per_s > 0) {
    const std::uint64_t rate = cfg_.rate_bytes_per_s;
    const std::uint64_t start = std::max(now, link_free_at_);
    backlog = std::uint64_t((unsigned __int128)(start - now) * rate / ns_per_s);
    // An idle link takes any frame; a busy one only what fits its backlog.
    if (backlog > 0 && backlog + m->pkt_len > cfg_.rate_queue_bytes) return drop(nullptr, drop_reason::rate_limit);
    ready = start + (std::uint64_t(m->pkt_len) * ns_per_s + rate - 1) / rate;
  }

  rte_mbuf* c = copy_frame(m, to_pool_);
  if (c == nullptr) return drop(nullptr, drop_reason::no_mbuf);
  if (cfg_.rate_bytes_per_s > 0) link_free_at_ = ready;

  if (corrupt_rng_.chance(cfg_.corrupt) && c->pkt_len > 0) {
    flip_bit(c, corrupt_rng_.below(std::uint64_t(c->pkt_len) * 8));
    ++stats_.corrupted;
  }
  if (cfg_.ecn_mark_bytes > 0 && backlog >= cfg_.ecn_mark_bytes && mark_ce(c)) ++stats_.ce_marked;

  const std::uint64_t arrive_at = ready + propagation();
  if (reorder_rng_.chance(cfg_.reorder)) {
    ++stats_.reordered;
    if (cfg_.reorder_gap == 0) return push(c, arrive_at + cfg_.reorder_delay_ns);
    const std::uint64_t latest = cfg_.reorder_delay_ns > 0 ? arrive_at + cfg_.reorder_delay_ns : no_bound;
    held_.push_back({c, cfg_.reorder_gap, latest});
    return;
  }
  push(c, arrive_at);
  overtake_held(arrive_at);
}

std::uint64_t direction::propagation() {
  if (cfg_.jitter_ns == 0) return cfg_.delay_ns;
  const auto j = std::int64_t(jitter_rng_.below(2 * cfg_.jitter_ns + 1)) - std::int64_t(cfg_.jitter_ns);
  return std::uint64_t(std::max<std::int64_t>(0, std::int64_t(cfg_.delay_ns) + j));
}

namespace {

// std::*_heap keep the largest first; this makes the earliest arrival (and
// among equals, the first sent) the "largest".
struct arrives_later {
  template <class Q>
  bool operator()(const Q& x, const Q& y) const {
    return x.arrive_at != y.arrive_at ? x.arrive_at > y.arrive_at : x.seq > y.seq;
  }
};

}  // namespace

void direction::push(rte_mbuf* m, std::uint64_t arrive_at) {
  queue_.push_back({arrive_at, next_seq_++, m});
  std::push_heap(queue_.begin(), queue_.end(), arrives_later{});
}

// A frame just went by every held-back frame: those it was the last to
// overtake go right behind it (or at their time bound, if that is earlier).
void direction::overtake_held(std::uint64_t arrive_at) {
  std::erase_if(held_, [&](held& h) {
    if (--h.frames_to_go > 0) return false;
    push(h.m, std::min(arrive_at, h.latest));
    return true;
  });
}

void direction::release_held_until(std::uint64_t now) {
  std::erase_if(held_, [&](const held& h) {
    if (h.latest > now) return false;
    push(h.m, h.latest);
    return true;
  });
}

std::uint16_t direction::receive(rte_mbuf** pkts, std::uint16_t n, std::uint64_t now) {
  std::lock_guard lock(mutex_);
  release_held_until(now);
  std::uint16_t got = 0;
  while (got < n && !queue_.empty() && queue_.front().arrive_at <= now) {
    std::pop_heap(queue_.begin(), queue_.end(), arrives_later{});
    rte_mbuf* m = queue_.back().m;
    queue_.pop_back();
    ++stats_.delivered;
    stats_.delivered_bytes += m->pkt_len;
    pkts[got++] = m;
  }
  return got;
}

std::optional<std::uint64_t> direction::next_arrival() const {
  std::lock_guard lock(mutex_);
  std::uint64_t next = queue_.empty() ? no_bound : queue_.front().arrive_at;
  for (const auto& h : held_) next = std::min(next, h.latest);
  if (next == no_bound) return std::nullopt;
  return next;
}

std::size_t direction::in_flight() const {
  std::lock_guard lock(mutex_);
  return queue_.size() + held_.size();
}

direction_stats direction::stats() const {
  std::lock_guard lock(mutex_);
  return stats_;
}

impairments direction::config() const {
  std::lock_guard lock(mutex_);
  return cfg_;
}

void direction::set_impairments(const impairments& cfg) {
  std::lock_guard lock(mutex_);
  cfg_ = cfg;
}

void direction::drop(rte_mbuf* m, drop_reason why) {
  ++stats_.dropped[std::size_t(why)];
  rte_pktmbuf_free(m);
}

}  // namespace affine::drivers::wire
