#pragma once
// Latency histogram with log-linear buckets (64 per power of two, so a
// percentile is within 1.6% of the exact value) over a fixed array: adding a
// sample never allocates.

#include <array>
#include <cstdint>
#include <utility>
#include <vector>

namespace affine::sim {

class histogram {
 public:
  void add(std::uint64_t ns) noexcept;
  std::uint64_t count() const noexcept { return count_; }
  double mean_ns() const noexcept;
  // The value below which the fraction q (0..1) of samples lie; 0 when empty.
  double quantile_ns(double q) const noexcept;
  // (value ns, fraction of samples <= value) for each non-empty bucket, for a CDF plot.
  std::vector<std::pair<double, double>> cdf() const;

 private:
  static constexpr unsigned sub_bits = 6;
  static constexpr unsigned sub = 1U << sub_bits;
  static constexpr unsigned max_exp = 44;  // values up to 2^44 ns (about 4.9 hours)
  static constexpr std::size_t bucket_count = sub + (max_exp - sub_bits) * sub;

  static std::size_t index(std::uint64_t ns) noexcept;
  static double midpoint(std::size_t i) noexcept;

  std::array<std::uint64_t, bucket_count> buckets_{};
  std::uint64_t count_ = 0;
  long double sum_ = 0;
};

}  // namespace affine::sim
