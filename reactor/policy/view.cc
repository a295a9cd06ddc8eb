// The view's contract, checked once where a caller builds one.

#include "reactor/policy/view.hh"

#include <algorithm>

namespace affine::policy {

bool well_formed(const sched_view& view) {
  if (view.cores.size() != view.topo.core_count() || view.reactor_cores.empty()) return false;
  const bool ascending = std::adjacent_find(view.reactor_cores.begin(), view.reactor_cores.end(),
                                            [](core_id a, core_id b) { return a >= b; }) ==
                         view.reactor_cores.end();
  return ascending && view.reactor_cores.back().value < view.topo.core_count();
}

}  // namespace affine::policy
