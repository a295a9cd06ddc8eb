#pragma once
// The backend set: each backend's address, role, weight and connection
// limit, whether the health check last found it up, and its live sessions.
// A session takes one backend for its whole life: the healthy backend of
// the wanted role with the fewest live sessions per unit of weight, among
// those below their limit. Read/write splitting and multiplexing will pick
// per command instead, from the same set (command.hh says where a command
// ends).
//
// Thread-safe: sessions on any core acquire and release; the health
// checker marks backends up and down. No locks: the counts are atomics, and
// a limit is held by compare-and-swap.

#include <atomic>
#include <cstdint>
#include <expected>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "affine/net.hh"

namespace affine_mysql {

enum class backend_role : std::uint8_t { primary, replica };
std::string_view to_string(backend_role r);

struct backend_config {
  affine::net::endpoint address;
  backend_role role = backend_role::primary;
  unsigned weight = 1;           // 1..1000: a share of the sessions
  unsigned max_connections = 0;  // live sessions at most; 0: no limit
};

class backend {
 public:
  explicit backend(backend_config c) : config_(c) {}
  const backend_config& config() const { return config_; }

  bool healthy() const { return healthy_.load(std::memory_order_acquire); }
  unsigned active() const { return active_.load(std::memory_order_relaxed); }
  // Changes each time the backend is marked down: a session that saw
  // another value when it started must end.
  std::uint64_t down_epoch() const { return down_epoch_.load(std::memory_order_acquire); }

  std::uint64_t sessions() const { return sessions_.load(std::memory_order_relaxed); }
  std::uint64_t connect_failures() const { return connect_failures_.load(std::memory_order_relaxed); }
  void count_connect_failure() { connect_failures_.fetch_add(1, std::memory_order_relaxed); }

 private:
  friend class backend_set;
  friend class backend_lease;

  backend_config config_;
  std::atomic<bool> healthy_{true};
  std::atomic<unsigned> active_{0};
  std::atomic<std::uint64_t> down_epoch_{0};
  std::atomic<std::uint64_t> sessions_{0};
  std::atomic<std::uint64_t> connect_failures_{0};
};

// One session's hold on a backend: counted in its active sessions until the
// lease ends.
class backend_lease {
 public:
  backend_lease(backend& b, std::size_t index) : b_(&b), index_(index), epoch_(b.down_epoch()) {}
  backend_lease(backend_lease&& o) noexcept : b_(std::exchange(o.b_, nullptr)), index_(o.index_), epoch_(o.epoch_) {}
  backend_lease& operator=(backend_lease&& o) noexcept;
  ~backend_lease() { release(); }

  backend& get() const { return *b_; }
  std::size_t index() const { return index_; }
  // The backend was marked down since this lease began.
  bool went_down() const { return b_->down_epoch() != epoch_; }

 private:
  void release();

  backend* b_;
  std::size_t index_;
  std::uint64_t epoch_;
};

class backend_set {
 public:
  explicit backend_set(std::span<const backend_config> configs);

  enum class refusal : std::uint8_t {
    none_healthy,  // no healthy backend of the role
    all_full,      // every healthy one is at its limit
  };
  // Least connections per weight among healthy backends of `role` not in
  // `excluded` (indices already tried), holding one of its connections.
  std::expected<backend_lease, refusal> acquire(backend_role role, std::span<const std::size_t> excluded = {});

  // Returns whether the state changed.
  bool mark(std::size_t index, bool healthy);

  std::size_t size() const { return backends_.size(); }
  backend& at(std::size_t i) { return *backends_[i]; }
  const backend& at(std::size_t i) const { return *backends_[i]; }

 private:
  bool try_reserve(backend& b);

  std::vector<std::unique_ptr<backend>> backends_;  // atomics: never moved
};

// "127.0.0.1:3306 primary up active=3 sessions=120 connect_failures=0"
std::string format_backend(const backend& b);

}  // namespace affine_mysql
