#pragma once
// What a machine's stalls alone do to one request/response flow: the floor
// under `bench/run rr`'s tail quantiles at a given transaction rate.
//
// One flow has one transaction in flight, handed between the two CPUs of
// the pair. A stall of either CPU that is longer than a round trip holds
// the flow up whichever side it catches (the side that waits has the next
// hand-off land in the stall), so the model lets the flow progress only
// while no CPU is stalled: a transaction of `1 / rate` seconds of work
// begins where the last one ended and is lengthened by every stall it
// meets. Stalls shorter than a round trip count in full although the flow
// would meet only some of them, so the floor errs high for those; the
// 10-50 us ones that tail quantiles land in are tens of round trips long.
// A stack with no tail of its own would show these quantiles at that rate;
// a quantile whose share of transactions is below the stalls' share stays
// at the round trip.

#include <cstdint>
#include <vector>

namespace affine::bench::stall {

struct interval {
  std::uint64_t from_ns, to_ns;
};

// The stalls of all CPUs as one sorted list of disjoint intervals (a stall
// of both CPUs at once, as the timer tick of a busy guest, is one).
std::vector<interval> merge_stalls(std::vector<interval> all);

struct rr_floor {
  std::uint64_t transactions = 0;
  std::uint64_t lengthened = 0;  // transactions a stall lengthened
  double p99_us = 0, p999_us = 0, p9999_us = 0;
};

// The flow of the model above at `per_s` transactions a second over
// [from_ns, to_ns), through `merged` (merge_stalls).
rr_floor model_rr_floor(const std::vector<interval>& merged, std::uint64_t from_ns, std::uint64_t to_ns, double per_s);

}  // namespace affine::bench::stall
