// Log-linear bucketing: values below 64 ns are exact; above, each power of
// two is split into 64 equal buckets.

#include "sim/histogram.hh"

#include <bit>

namespace affine::sim {

std::size_t histogram::index(std::uint64_t ns) noexcept {
  if (ns < sub) return static_cast<std::size_t>(ns);
  const unsigned e = static_cast<unsigned>(std::bit_width(ns)) - 1;  // ns in [2^e, 2^(e+1))
  if (e >= max_exp) return bucket_count - 1;
  const std::uint64_t within = (ns >> (e - sub_bits)) - sub;        // 0..63
  return sub + (e - sub_bits) * sub + static_cast<std::size_t>(within);
}

double histogram::midpoint(std::size_t i) noexcept {
  if (i < sub) return static_cast<double>(i);
  const std::size_t e = (i - sub) / sub + sub_bits;
  const std::size_t within = (i - sub) % sub;
  const double width = static_cast<double>(1ULL << (e - sub_bits));
  return static_cast<double>((sub + within) << (e - sub_bits)) + width / 2;
}

void histogram::add(std::uint64_t ns) noexcept {
  ++buckets_[index(ns)];
  ++count_;
  sum_ += ns;
}

double histogram::mean_ns() const noexcept {
  return count_ == 0 ? 0.0 : static_cast<double>(sum_ / count_);
}

double histogram::quantile_ns(double q) const noexcept {
  if (count_ == 0) return 0;
  // The rank of the sample asked for, 1-based: the ceil(q * n)-th smallest.
  auto rank = static_cast<std::uint64_t>(q * static_cast<double>(count_));
  if (static_cast<double>(rank) < q * static_cast<double>(count_)) ++rank;
  if (rank == 0) rank = 1;
  std::uint64_t seen = 0;
  for (std::size_t i = 0; i < bucket_count; ++i) {
    seen += buckets_[i];
    if (seen >= rank) return midpoint(i);
  }
  return midpoint(bucket_count - 1);
}

std::vector<std::pair<double, double>> histogram::cdf() const {
  std::vector<std::pair<double, double>> out;
  std::uint64_t seen = 0;
  for (std::size_t i = 0; i < bucket_count && seen < count_; ++i) {
    if (buckets_[i] == 0) continue;
    seen += buckets_[i];
    out.emplace_back(midpoint(i), static_cast<double>(seen) / static_cast<double>(count_));
  }
  return out;
}

}  // namespace affine::sim
