#include "stack/rss_ports.hh"

#include <array>
#include <set>

#include "drivers/rss.hh"

namespace affine::stack {

rss_steering::rss_steering(std::vector<std::uint8_t> key, std::vector<std::uint16_t> reta,
                           std::vector<unsigned> core_of_queue)
    : key_(std::move(key)), reta_(std::move(reta)), core_of_queue_(std::move(core_of_queue)) {
  const std::set<unsigned> cores(core_of_queue_.begin(), core_of_queue_.end());
  active_ = key_.size() >= 16 && !reta_.empty() && cores.size() > 1;
}

std::optional<unsigned> rss_steering::core_of(const flow_tuple& t) const {
  if (!active_) return std::nullopt;
  // The Toeplitz input for TCP/IPv4 (Microsoft RSS): source address,
  // destination address, source port, destination port, big-endian.
  const std::array<std::uint8_t, 12> in{
      std::uint8_t(t.remote_addr >> 24), std::uint8_t(t.remote_addr >> 16), std::uint8_t(t.remote_addr >> 8),
      std::uint8_t(t.remote_addr),       std::uint8_t(t.local_addr >> 24),  std::uint8_t(t.local_addr >> 16),
      std::uint8_t(t.local_addr >> 8),   std::uint8_t(t.local_addr),        std::uint8_t(t.remote_port >> 8),
      std::uint8_t(t.remote_port),       std::uint8_t(t.local_port >> 8),   std::uint8_t(t.local_port)};
  const std::uint32_t h = drivers::toeplitz_hash(key_, in);
  const std::uint16_t q = reta_[h % reta_.size()];
  if (q >= core_of_queue_.size()) return std::nullopt;
  return core_of_queue_[q];
}

}  // namespace affine::stack
