#include "stack/tcp_totals.hh"

#include "stack/counters.hh"

namespace affine::stack {

void fold_tcp_totals(const tcp::connection_stats& now, tcp::connection_stats& folded,
                     std::span<std::atomic<std::uint64_t>, tcp_total_count> totals) {
  for (std::size_t i = 0; i < tcp_total_count; ++i) {
    const auto counter = tcp_totals[i].counter;
    if (const std::uint64_t n = now.*counter - folded.*counter) bump(totals[i], n);
  }
  folded = now;
}

}  // namespace affine::stack
