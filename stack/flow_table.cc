#include "stack/flow_table.hh"

#include <mutex>

namespace affine::stack {

flow_table::~flow_table() {
  for (shard& sh : shards_)
    for (auto& [tuple, s] : sh.map) s->unref();
}

socket_ref flow_table::find(const flow_tuple& t) const {
  shard& sh = shard_of(t);
  std::lock_guard g(sh.lock);
  auto it = sh.map.find(t);
  if (it == sh.map.end()) return {};
  it->second->ref();
  return socket_ref(it->second);
}

bool flow_table::contains(const flow_tuple& t) const {
  shard& sh = shard_of(t);
  std::lock_guard g(sh.lock);
  return sh.map.contains(t);
}

bool flow_table::insert(const flow_tuple& t, tcp_socket* s) {
  // The bound is checked before the shard lock; racing inserts may pass it
  // by at most one per core, which is what "a limit" means here.
  if (size_.load(std::memory_order_relaxed) >= max_) return false;
  shard& sh = shard_of(t);
  std::lock_guard g(sh.lock);
  if (!sh.map.try_emplace(t, s).second) return false;
  s->ref();
  size_.fetch_add(1, std::memory_order_relaxed);
  return true;
}

void flow_table::erase(const flow_tuple& t, tcp_socket* s) {
  shard& sh = shard_of(t);
  {
    std::lock_guard g(sh.lock);
    auto it = sh.map.find(t);
    if (it == sh.map.end() || it->second != s) return;
    sh.map.erase(it);
    size_.fetch_sub(1, std::memory_order_relaxed);
  }
  s->unref();
}

}  // namespace affine::stack
