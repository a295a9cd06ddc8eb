#include "reactor/stack_pool.hh"

#include <sys/mman.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <algorithm>
#include <fstream>

#include <fmt/format.h>

namespace affine::detail {

namespace {

// vm.max_map_count, or the kernel default when it cannot be read.
std::size_t max_map_count() {
  std::ifstream f("/proc/sys/vm/max_map_count");
  std::size_t n = 0;
  if (f >> n && n > 0) return n;
  return 65530;
}

}  // namespace

stack_pool::stack_pool(std::size_t stack_bytes, unsigned cores, std::size_t stacks_per_slab)
    : page_(static_cast<std::size_t>(::sysconf(_SC_PAGESIZE))),
      per_slab_(stacks_per_slab == 0 ? 1 : stacks_per_slab),
      free_(cores == 0 ? 1 : cores) {
#if defined(__SANITIZE_ADDRESS__)
  // ASan's redzones make frames two to three times larger: a sanitizer build
  // gives fibers four times the configured stack, so that what fits in a
  // normal build fits there too.
  stack_bytes *= 4;
#endif
  stack_bytes_ = (stack_bytes + page_ - 1) / page_ * page_;
  if (stack_bytes_ < 4 * page_) stack_bytes_ = 4 * page_;
  // Leave a quarter of the map budget to the rest of the process (libraries,
  // DPDK memory, the heap) and count two VMAs per guarded stack.
  limit_ = max_map_count() * 3 / 4 / 2;
}

stack_pool::~stack_pool() {
  for (auto [p, n] : slabs_) ::munmap(p, n);
}

bool stack_pool::grow(unsigned core, std::string* error) {
  std::lock_guard lock(slab_mutex_);
  auto& list = free_[core].spans;
  if (!shared_.empty()) {
    const std::size_t k = std::min(per_slab_, shared_.size());
    list.insert(list.end(), shared_.end() - static_cast<std::ptrdiff_t>(k), shared_.end());
    shared_.resize(shared_.size() - k);
    return true;
  }
  std::size_t n = per_slab_;
  if (total_ + n > limit_) n = limit_ > total_ ? limit_ - total_ : 0;
  if (n == 0) {
    if (error)
      *error = fmt::format(
          "fiber stacks exhausted: {} guarded stacks in use, the limit from vm.max_map_count "
          "is {} (raise vm.max_map_count or use fewer fibers)",
          total_, limit_);
    return false;
  }
  const std::size_t stride = page_ + stack_bytes_;
  const std::size_t bytes = stride * n;
  void* mem = ::mmap(nullptr, bytes, PROT_READ | PROT_WRITE,
                     MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (mem == MAP_FAILED) {
    if (error) *error = fmt::format("fiber stack slab of {} bytes: mmap: {}", bytes, std::strerror(errno));
    return false;
  }
  auto* base = static_cast<std::byte*>(mem);
  for (std::size_t i = 0; i < n; ++i) {
    if (::mprotect(base + i * stride, page_, PROT_NONE) != 0) {
      if (error) *error = fmt::format("fiber stack guard page: mprotect: {}", std::strerror(errno));
      ::munmap(mem, bytes);
      return false;
    }
  }
  slabs_.emplace_back(mem, bytes);
  total_ += n;
  // Hand out low addresses first: purely cosmetic, but makes dumps readable.
  for (std::size_t i = n; i-- > 0;) list.push_back({base + i * stride + page_, stack_bytes_});
  return true;
}

stack_span stack_pool::take(unsigned core, std::string* error) {
  auto& list = free_[core].spans;
  if (list.empty() && !grow(core, error)) return {};
  stack_span s = list.back();
  list.pop_back();
  in_use_.fetch_add(1, std::memory_order_relaxed);
  return s;
}

void stack_pool::give(unsigned core, stack_span s) {
  auto& list = free_[core].spans;
  list.push_back(s);
  in_use_.fetch_sub(1, std::memory_order_relaxed);
  if (list.size() > 2 * per_slab_) {
    std::lock_guard lock(slab_mutex_);
    shared_.insert(shared_.end(), list.end() - static_cast<std::ptrdiff_t>(per_slab_), list.end());
    list.resize(list.size() - per_slab_);
  }
}

}  // namespace affine::detail
