#pragma once
// Small helpers shared by the reactor benchmark's variants.

#include <sys/resource.h>

#include <algorithm>
#include <cstdint>
#include <vector>

namespace affine::bench {

inline double percentile(std::vector<std::uint64_t>& v, double p) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const std::size_t i = std::min(v.size() - 1, std::size_t(p / 100.0 * double(v.size())));
  return double(v[i]);
}

// CPU time of the whole process (all threads), in ns.
inline std::uint64_t process_cpu_ns() {
  rusage ru{};
  ::getrusage(RUSAGE_SELF, &ru);
  return (std::uint64_t(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1'000'000ULL +
          std::uint64_t(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec)) * 1000ULL;
}

struct thread_figures {
  double switch_ns;
  double wake_p50_ns;
  double wake_p99_ns;
};

// std::thread + std::condition_variable, the futex baseline.
thread_figures measure_threads(unsigned rounds, unsigned cpu_a, unsigned cpu_b);

}  // namespace affine::bench
