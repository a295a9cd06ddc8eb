// reactor.cores = "auto" (auto_cores.hh).

#include "reactor/auto_cores.hh"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace affine::detail {

std::expected<std::vector<core_id>, std::string> auto_cores(const topology& topo, double others_load) {
  const auto all = double(topo.core_count());
  const double busy = std::round(std::clamp(others_load, 0.0, all));
  return first_cores(topo, unsigned(std::max(1.0, all - busy)));
}

double load_average_1m() {
  double load = 0;
  if (std::FILE* f = std::fopen("/proc/loadavg", "re")) {
    if (std::fscanf(f, "%lf", &load) != 1) load = 0;
    std::fclose(f);
  }
  return load;
}

}  // namespace affine::detail
