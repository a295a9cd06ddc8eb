#include "apps/mysql-proxy/backends.hh"

#include <algorithm>

#include <fmt/format.h>

namespace affine_mysql {

std::string_view to_string(backend_role r) { return r == backend_role::primary ? "primary" : "replica"; }

void backend_lease::release() {
  if (b_ != nullptr) b_->active_.fetch_sub(1, std::memory_order_relaxed);
  b_ = nullptr;
}

backend_lease& backend_lease::operator=(backend_lease&& o) noexcept {
  if (this != &o) {
    release();
    b_ = std::exchange(o.b_, nullptr);
    index_ = o.index_;
    epoch_ = o.epoch_;
  }
  return *this;
}

backend_set::backend_set(std::span<const backend_config> configs) {
  backends_.reserve(configs.size());
  for (const auto& c : configs) backends_.push_back(std::make_unique<backend>(c));
}

bool backend_set::try_reserve(backend& b) {
  const unsigned limit = b.config_.max_connections;
  unsigned now = b.active_.load(std::memory_order_relaxed);
  do {
    if (limit != 0 && now >= limit) return false;
  } while (!b.active_.compare_exchange_weak(now, now + 1, std::memory_order_relaxed));
  return true;
}

std::expected<backend_lease, backend_set::refusal> backend_set::acquire(backend_role role,
                                                                        std::span<const std::size_t> excluded) {
  bool any_healthy = false;
  // Another session may take the chosen backend's last place first: choose
  // again among the rest, each backend at most once.
  std::vector<bool> full(backends_.size(), false);
  for (;;) {
    std::optional<std::size_t> best;
    for (std::size_t i = 0; i < backends_.size(); ++i) {
      const backend& b = *backends_[i];
      if (b.config_.role != role || !b.healthy() || std::ranges::find(excluded, i) != excluded.end()) continue;
      any_healthy = true;
      if (full[i]) continue;
      // a/wa < c/wc without division: a*wc < c*wa.
      if (!best || std::uint64_t(b.active()) * backends_[*best]->config_.weight <
                       std::uint64_t(backends_[*best]->active()) * b.config_.weight)
        best = i;
    }
    if (!best) return std::unexpected(any_healthy ? refusal::all_full : refusal::none_healthy);
    backend& b = *backends_[*best];
    if (!try_reserve(b)) {
      full[*best] = true;
      continue;
    }
    // The lease reads the down epoch before health is looked at again: a
    // backend marked down in between is either seen down here or seen to
    // have gone down by the session later.
    backend_lease lease(b, *best);
    if (b.healthy()) {
      b.sessions_.fetch_add(1, std::memory_order_relaxed);
      return lease;
    }
  }
}

bool backend_set::mark(std::size_t index, bool healthy) {
  backend& b = *backends_[index];
  if (b.healthy_.exchange(healthy, std::memory_order_acq_rel) == healthy) return false;
  if (!healthy) b.down_epoch_.fetch_add(1, std::memory_order_acq_rel);
  return true;
}

std::string format_backend(const backend& b) {
  return fmt::format("{} {} {} active={} sessions={} connect_failures={}", b.config().address.to_string(),
                     to_string(b.config().role), b.healthy() ? "up" : "down", b.active(), b.sessions(),
                     b.connect_failures());
}

}  // namespace affine_mysql
