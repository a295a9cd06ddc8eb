#pragma once
// Phrases shared by the numa module's error messages, so every message names
// the valid range the same way ("this machine has cores 0-7").

#include <cstddef>
#include <string>
#include <string_view>

#include <fmt/format.h>

namespace affine::numa_detail {

// "cores 0-7", or "only core 0" when there is only one; `what` is singular.
inline std::string id_range(std::string_view what, std::size_t count) {
  if (count == 1) return fmt::format("only {} 0", what);
  return fmt::format("{}s 0-{}", what, count - 1);
}

}  // namespace affine::numa_detail
