#pragma once
// RSS-aware ephemeral ports (issue 5 item 7): an outgoing connection takes a
// source port whose replies hash, under the port's read-back RSS key and
// redirection table, to an RX queue owned by the connecting core. Peer
// stacks that pick ports blindly see their SYN-ACKs land on another core.

#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include "stack/flow.hh"

namespace affine::stack {

class rss_steering {
 public:
  rss_steering() = default;
  // `core_of_queue[q]`: the reactor polling RX queue q.
  rss_steering(std::vector<std::uint8_t> key, std::vector<std::uint16_t> reta, std::vector<unsigned> core_of_queue);

  // RSS decides where a flow lands only with a key, a table and a choice of
  // queues; otherwise every port is as good as another.
  bool active() const { return active_; }

  // The core that receives the peer's packets of flow `t` (as the NIC sees
  // them: source = t.remote, destination = t.local).
  std::optional<unsigned> core_of(const flow_tuple& t) const;

  // A port in [first, last] for t (its local_port ignored) whose replies
  // reach `core`, trying `first + (start + i) % span` in order and skipping
  // ports `taken` says are in use. nullopt when none qualifies.
  template <class Taken>
  std::optional<std::uint16_t> pick(flow_tuple t, unsigned core, std::uint16_t first, std::uint16_t last,
                                    std::uint32_t start, Taken&& taken) const {
    const std::uint32_t span = std::uint32_t(last - first) + 1;
    for (std::uint32_t i = 0; i < span; ++i) {
      t.local_port = std::uint16_t(first + (start + i) % span);
      if (active_ && core_of(t) != core) continue;
      if (!taken(t)) return t.local_port;
    }
    return std::nullopt;
  }

 private:
  std::vector<std::uint8_t> key_;
  std::vector<std::uint16_t> reta_;
  std::vector<unsigned> core_of_queue_;
  bool active_ = false;
};

}  // namespace affine::stack
