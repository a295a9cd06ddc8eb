#pragma once
// Round-trip times in bounded memory: log-linear buckets (64 per power of
// two, about 1.6% wide), so a client of any length keeps a fixed size and
// add() allocates nothing. Shared by the apps' load generators.

#include <algorithm>
#include <array>
#include <bit>
#include <cstdint>

namespace affine_apps {

class latency_histogram {
 public:
  void add(std::uint64_t ns) {
    ++counts_[bucket(ns)];
    ++total_;
    sum_ns_ += ns;
  }
  void merge(const latency_histogram& o) {
    for (std::size_t i = 0; i < counts_.size(); ++i) counts_[i] += o.counts_[i];
    total_ += o.total_;
    sum_ns_ += o.sum_ns_;
  }
  std::uint64_t count() const { return total_; }
  std::uint64_t sum_ns() const { return sum_ns_; }  // exact
  // Samples in the buckets up to the one holding `ns`: those at most `ns`,
  // and those above it in its bucket (about 1.6% wide).
  std::uint64_t count_at_most(std::uint64_t ns) const {
    std::uint64_t n = 0;
    for (std::size_t i = 0; i <= bucket(ns); ++i) n += counts_[i];
    return n;
  }
  // The lower bound of the bucket holding the q-quantile (0 < q <= 1).
  std::uint64_t quantile_ns(double q) const {
    const auto rank = std::max<std::uint64_t>(1, std::uint64_t(q * double(total_) + 0.5));
    std::uint64_t seen = 0;
    for (std::size_t i = 0; i < counts_.size(); ++i)
      if ((seen += counts_[i]) >= rank) return lower_bound(i);
    return 0;
  }

 private:
  static constexpr unsigned sub_bits = 6;  // 64 buckets per power of two
  static constexpr unsigned sub = 1u << sub_bits;

  static std::size_t bucket(std::uint64_t ns) {
    if (ns < sub) return std::size_t(ns);
    const unsigned exp = unsigned(std::bit_width(ns)) - 1 - sub_bits;  // ns >> exp is in [sub, 2*sub)
    return std::size_t(exp + 1) * sub + std::size_t((ns >> exp) - sub);
  }
  static std::uint64_t lower_bound(std::size_t i) {
    if (i < sub) return i;
    const unsigned exp = unsigned(i / sub) - 1;
    return (std::uint64_t(sub) + i % sub) << exp;
  }

  std::array<std::uint64_t, (64 - sub_bits + 1) * sub> counts_{};
  std::uint64_t total_ = 0;
  std::uint64_t sum_ns_ = 0;
};

}  // namespace affine_apps
