#pragma once
// What the fuzz targets share: an invariant that fails stops the run with
// its reason and where it was checked (libFuzzer reports the abort as a
// crash and keeps the input), and the bounds checks the views' promises are
// checked with.

#include <cstddef>
#include <cstdio>
#include <cstdlib>
#include <source_location>
#include <span>

namespace affine_fuzz {

inline void require(bool holds, const char* what, std::source_location at = std::source_location::current()) {
  if (holds) return;
  std::fprintf(stderr, "%s:%u: invariant broken: %s\n", at.file_name(), unsigned(at.line()), what);
  std::abort();
}

// `part` lies within `whole` (an empty part anywhere within or at its end).
inline bool inside(std::span<const std::byte> part, std::span<const std::byte> whole) {
  const auto* b = whole.data();
  const auto* e = whole.data() + whole.size();
  return part.data() >= b && part.data() <= e && std::size_t(e - part.data()) >= part.size();
}

// `a` and `b` share no byte.
inline bool apart(std::span<const std::byte> a, std::span<const std::byte> b) {
  return a.empty() || b.empty() || a.data() + a.size() <= b.data() || b.data() + b.size() <= a.data();
}

// Reads every byte, so that AddressSanitizer sees a span that points where it
// must not (the volatile store keeps the reads).
inline void touch(std::span<const std::byte> bytes) {
  unsigned sum = 0;
  for (std::byte b : bytes) sum += unsigned(b);
  volatile unsigned sink = sum;
  (void)sink;
}

}  // namespace affine_fuzz
