// The rr floor: a serial flow through the measured stalls (floor.hh).

#include "bench/stall/floor.hh"

#include <algorithm>
#include <cmath>
#include <functional>

namespace affine::bench::stall {

std::vector<interval> merge_stalls(std::vector<interval> all) {
  std::ranges::sort(all, {}, &interval::from_ns);
  std::vector<interval> merged;
  for (const interval& s : all) {
    if (!merged.empty() && s.from_ns <= merged.back().to_ns)
      merged.back().to_ns = std::max(merged.back().to_ns, s.to_ns);
    else
      merged.push_back(s);
  }
  return merged;
}

rr_floor model_rr_floor(const std::vector<interval>& merged, std::uint64_t from_ns, std::uint64_t to_ns, double per_s) {
  rr_floor r;
  const auto work = std::max<std::uint64_t>(1, std::uint64_t(std::llround(1e9 / per_s)));
  std::vector<std::uint64_t> long_ones;  // the lengthened transactions' times
  std::size_t next = 0;                  // the first stall that may still lie ahead
  std::uint64_t t = from_ns;
  for (;;) {
    const std::uint64_t begin = t;
    std::uint64_t left = work;
    while (left != 0) {
      while (next < merged.size() && merged[next].to_ns <= t) ++next;
      if (next < merged.size() && merged[next].from_ns < t + left) {
        if (merged[next].from_ns > t) left -= merged[next].from_ns - t;
        t = merged[next].to_ns;  // the flow waits the stall out
        ++next;
      } else {
        t += left;
        left = 0;
      }
    }
    if (t > to_ns) break;
    ++r.transactions;
    if (t - begin > work) long_ones.push_back(t - begin);
  }
  r.lengthened = long_ones.size();
  std::ranges::sort(long_ones, std::greater{});
  // The q-quantile: the time that a share 1 - q of the transactions exceed.
  const auto quantile_us = [&](double q) {
    const auto above = std::uint64_t(std::floor((1.0 - q) * double(r.transactions)));
    return double(above < long_ones.size() ? long_ones[above] : work) / 1e3;
  };
  r.p99_us = quantile_us(0.99);
  r.p999_us = quantile_us(0.999);
  r.p9999_us = quantile_us(0.9999);
  return r;
}

}  // namespace affine::bench::stall
