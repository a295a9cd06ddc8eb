#pragma once
// RFC 5961 7's throttle over all of a stack's connections, beside each
// connection's own (connection_config::challenge_ack_limit): about
// `per_second` challenge ACKs a second in all. A plain global count is the
// CVE-2016-5696 side channel: an off-path attacker who counts the challenge
// ACKs its own connection draws learns how many another connection drew,
// and so whether its guess of that connection's tuple was right. So the
// budget of each second is drawn at random, uniformly from half to one and
// a half times `per_second` (Linux's fix, 4.7), and a connection's own
// limit stays the first check: what one connection sees says almost
// nothing about the others.
//
// Shared by every core of a stack; take() is thread-safe.

#include <cstdint>
#include <mutex>

#include "affine/sync.hh"
#include "base/xoshiro.hh"

namespace affine::stack::tcp {

class challenge_budget {
 public:
  // per_second 0: no global budget (take() always true).
  challenge_budget(std::uint32_t per_second, std::uint64_t seed);

  // One challenge ACK from the budget of the second `now_ns` is in: true
  // when there was one left.
  bool take(std::uint64_t now_ns);
  std::uint64_t denied() const;

 private:
  std::uint32_t per_second_;
  mutable spinlock lock_;
  xoshiro256ss rng_;                   // under lock_
  std::uint64_t second_ = UINT64_MAX;  // under lock_: the second the budget is for
  std::uint32_t left_ = 0;             // under lock_
  std::uint64_t denied_ = 0;           // under lock_
};

}  // namespace affine::stack::tcp
