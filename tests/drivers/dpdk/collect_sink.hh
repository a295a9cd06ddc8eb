#pragma once
// A packet_sink for tests: keeps a copy of every frame with the core that
// received it, and frees the mbufs.

#include <chrono>
#include <condition_variable>
#include <mutex>
#include <thread>
#include <vector>

#include <rte_mbuf.h>

#include "drivers/poller.hh"
#include "drivers/dpdk/rss.hh"

namespace affine::drivers::dpdk::test {

class collect_sink : public packet_sink {
 public:
  struct received {
    unsigned core;
    std::vector<std::uint8_t> bytes;
    bool has_flow;  // flow_hash found a flow
  };

  void receive(unsigned core, unsigned /*queue*/, std::span<rte_mbuf*> pkts) override {
    std::lock_guard lock(mutex_);
    for (rte_mbuf* m : pkts) {
      const auto* p = rte_pktmbuf_mtod(m, const std::uint8_t*);
      got_.push_back({core, {p, p + m->data_len}, flow_hash(m, key_).has_value()});
      rte_pktmbuf_free(m);
    }
    changed_.notify_all();
  }

  // Everything received once there are at least `n` frames, or after `limit`.
  std::vector<received> wait_for(std::size_t n, std::chrono::milliseconds limit = std::chrono::seconds(5)) {
    std::unique_lock lock(mutex_);
    changed_.wait_for(lock, limit, [&] { return got_.size() >= n; });
    return got_;
  }

 private:
  std::mutex mutex_;
  std::condition_variable changed_;
  std::vector<received> got_;
  const std::vector<std::uint8_t> key_ = symmetric_rss_key();
};

}  // namespace affine::drivers::dpdk::test
