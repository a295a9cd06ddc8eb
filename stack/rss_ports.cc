#include "stack/rss_ports.hh"

#include <array>
#include <cstring>
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
  // The Toeplitz input for TCP over IPv4 or IPv6 (Microsoft RSS): source
  // address, destination address, source port, destination port,
  // big-endian; the key must cover the input and 4 bytes more.
  const std::size_t a = t.v4() ? 4 : 16;
  if (key_.size() < 2 * a + 8) return std::nullopt;
  std::array<std::uint8_t, 36> in;
  std::memcpy(in.data(), t.remote_addr.data() + 16 - a, a);
  std::memcpy(in.data() + a, t.local_addr.data() + 16 - a, a);
  in[2 * a] = std::uint8_t(t.remote_port >> 8);
  in[2 * a + 1] = std::uint8_t(t.remote_port);
  in[2 * a + 2] = std::uint8_t(t.local_port >> 8);
  in[2 * a + 3] = std::uint8_t(t.local_port);
  const std::uint32_t h = drivers::toeplitz_hash(key_, std::span(in).first(2 * a + 4));
  const std::uint16_t q = reta_[h % reta_.size()];
  if (q >= core_of_queue_.size()) return std::nullopt;
  return core_of_queue_[q];
}

}  // namespace affine::stack
