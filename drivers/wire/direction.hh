#pragma once
// One direction of the wire: the impairment pipeline a frame goes through
// when the sending end takes it, and the bounded queue it waits in until the
// receiving end may have it.
//
// A frame sent at `now` is, in order: refused if longer than the MTU; lost
// (independent, then burst); duplicated; and each copy is then queued (or
// dropped when the queue is full), paced by the rate limiter, copied into the
// receiving end's pool, maybe corrupted, delayed with jitter, and maybe held
// back. The sender's mbuf is freed at once, as a NIC frees a transmitted one.
//
// Each impairment draws from its own stream of the seed, so turning one on
// does not move another's decisions: the loss pattern of a seed is the same
// with and without duplication.
//
// The sending end's tx_burst and the receiving end's rx_burst may run on
// different cores: one mutex per direction serialises them. Decisions stay
// deterministic as long as the frames arrive in the same order.

#include <cstddef>
#include <cstdint>
#include <mutex>
#include <optional>
#include <vector>

#include "drivers/wire/impairment.hh"
#include "drivers/wire/rng.hh"

struct rte_mbuf;
struct rte_mempool;

namespace affine::drivers::wire {

class direction {
 public:
  // `index` tells the link's two directions apart in the seed; `to_pool` is
  // the receiving end's pool; frames longer than `max_frame` are refused.
  direction(const impairments& cfg, std::uint64_t seed, unsigned index, rte_mempool* to_pool,
            std::uint32_t max_frame);
  ~direction();
  direction(const direction&) = delete;
  direction& operator=(const direction&) = delete;

  // Takes ownership of all n frames (a dropped frame is freed and counted).
  void send(rte_mbuf* const* pkts, std::uint16_t n, std::uint64_t now);
  // Frames whose arrival time is at or before `now`, in arrival order.
  std::uint16_t receive(rte_mbuf** pkts, std::uint16_t n, std::uint64_t now);

  // When the next frame arrives (or a held-back frame's time bound runs
  // out); nothing when the direction is empty or only holds frames waiting
  // for later frames without a time bound.
  std::optional<std::uint64_t> next_arrival() const;
  std::size_t in_flight() const;
  direction_stats stats() const;
  impairments config() const;
  // Frames already in flight keep the fate they were given.
  void set_impairments(const impairments& cfg);

 private:
  struct queued {
    std::uint64_t arrive_at;
    std::uint64_t seq;  // ties in arrive_at keep send order
    rte_mbuf* m;
  };
  struct held {
    rte_mbuf* m;
    unsigned frames_to_go;   // later frames still to overtake it
    std::uint64_t latest;    // its time bound (UINT64_MAX: none)
  };

  // Precondition for every helper below: mutex_ held.
  void send_one(rte_mbuf* m, std::uint64_t now);
  void enqueue_copy(const rte_mbuf* m, std::uint64_t now);
  bool lost();
  std::uint64_t propagation();
  void push(rte_mbuf* m, std::uint64_t arrive_at);
  void overtake_held(std::uint64_t arrive_at);
  void release_held_until(std::uint64_t now);
  // Every drop goes through here: one counter per reason (STYLE.md "Errors").
  // m is the mbuf to free, or nullptr when the dropped copy was never made.
  void drop(rte_mbuf* m, drop_reason why);

  mutable std::mutex mutex_;
  impairments cfg_;
  rte_mempool* to_pool_;
  std::uint32_t max_frame_;
  rng loss_rng_, burst_rng_, duplicate_rng_, corrupt_rng_, reorder_rng_, jitter_rng_;
  bool in_burst_ = false;
  std::uint64_t link_free_at_ = 0;  // when the rate limiter finishes its backlog
  std::uint64_t next_seq_ = 0;
  std::vector<queued> queue_;  // a min-heap on (arrive_at, seq)
  std::vector<held> held_;
  direction_stats stats_;
};

}  // namespace affine::drivers::wire
