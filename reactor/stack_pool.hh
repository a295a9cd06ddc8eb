#pragma once
// Fiber stacks with a guard page, carved from large slabs.
//
// Each stack is [guard page | usable stack]; stacks grow down, so the guard
// below the usable part catches an overflow with SIGSEGV instead of silent
// corruption of the neighbour. A slab is one mmap holding `stacks_per_slab`
// such pairs; the guards are mprotect'ed PROT_NONE. The kernel still counts two
// mappings (VMAs) per stack because the protections alternate, so the number
// of guarded stacks alive at once is bounded by vm.max_map_count / 2 (65530 by
// default: about 32,000 stacks). The pool checks that budget and refuses with
// a clear error instead of letting mprotect fail deep inside a spawn.
//
// Free stacks are kept per core (owner-only lists, no locks). A core whose
// list grows past two slabs' worth (fibers that start on one core and end on
// another) returns half to a shared list; a core that runs dry refills from
// the shared list before it maps a new slab. Both happen under one mutex,
// once per `stacks_per_slab` stacks at most.
// Stacks are never unmapped before the pool is destroyed.

#include <cstddef>
#include <cstdint>
#include <mutex>
#include <string>
#include <vector>
#include <atomic>

namespace affine::detail {

struct stack_span {
  std::byte* base = nullptr;  // lowest usable address (just above the guard)
  std::size_t size = 0;       // usable bytes
  std::byte* top() const { return base + size; }
};

class stack_pool {
 public:
  // `stack_bytes` is rounded up to whole pages. `cores` per-core free lists.
  stack_pool(std::size_t stack_bytes, unsigned cores, std::size_t stacks_per_slab = 64);
  ~stack_pool();
  stack_pool(const stack_pool&) = delete;
  stack_pool& operator=(const stack_pool&) = delete;

  // Precondition: called on core `core`'s reactor thread (its free list is
  // owner-only). Returns an empty span (base == nullptr) and sets `error`
  // when the mapping budget or memory is exhausted.
  stack_span take(unsigned core, std::string* error);
  void give(unsigned core, stack_span s);

  std::size_t stack_bytes() const { return stack_bytes_; }
  std::size_t in_use() const { return in_use_.load(std::memory_order_relaxed); }
  std::size_t capacity_limit() const { return limit_; }

 private:
  bool grow(unsigned core, std::string* error);

  struct free_list {
    std::vector<stack_span> spans;
    char pad[64 - sizeof(std::vector<stack_span>) % 64];
  };
  std::size_t stack_bytes_;
  std::size_t page_;
  std::size_t per_slab_;
  std::size_t limit_;  // most stacks that fit the VMA budget
  std::vector<free_list> free_;
  std::mutex slab_mutex_;
  std::vector<std::pair<void*, std::size_t>> slabs_;
  std::vector<stack_span> shared_;  // under slab_mutex_
  std::size_t total_ = 0;  // stacks carved so far (under slab_mutex_)
  std::atomic<std::size_t> in_use_{0};
};

}  // namespace affine::detail
