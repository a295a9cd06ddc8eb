#include "stack/tcp/challenge_budget.hh"

namespace affine::stack::tcp {

challenge_budget::challenge_budget(std::uint32_t per_second, std::uint64_t seed)
    : per_second_(per_second), rng_({mix64(seed), mix64(seed + 1), mix64(seed + 2), mix64(seed + 3)}) {}

bool challenge_budget::take(std::uint64_t now_ns) {
  if (per_second_ == 0) return true;
  std::lock_guard g(lock_);
  if (const std::uint64_t second = now_ns / 1'000'000'000; second != second_) {
    second_ = second;
    left_ = per_second_ / 2 + std::uint32_t(rng_.below(std::uint64_t(per_second_) + 1));
  }
  if (left_ == 0) {
    ++denied_;
    return false;
  }
  --left_;
  return true;
}

std::uint64_t challenge_budget::denied() const {
  std::lock_guard g(lock_);
  return denied_;
}

}  // namespace affine::stack::tcp
