#include "drivers/poller.hh"

#include <rte_mbuf.h>
#include <sys/epoll.h>
#include <unistd.h>

#include <algorithm>

#include "affine/log.hh"

namespace affine::drivers {

namespace {

// A single-writer counter: no locked instruction on the data path.
void bump(std::atomic<std::uint64_t>& c, std::uint64_t n = 1) {
  c.store(c.load(std::memory_order_relaxed) + n, std::memory_order_relaxed);
}

}  // namespace

tx_batch::~tx_batch() {
  if (n_ != 0) rte_pktmbuf_free_bulk(buf_.data(), n_);
}

unsigned tx_batch::flush() noexcept {
  if (n_ == 0) return 0;
  const std::uint16_t took = port_.tx_burst(queue_, buf_.data(), std::uint16_t(n_));
  if (took != n_) std::copy(buf_.begin() + took, buf_.begin() + n_, buf_.begin());
  n_ -= took;
  sent_ += took;
  return took;
}

void tx_batch::drop(rte_mbuf* m) noexcept {
  rte_pktmbuf_free(m);
  ++dropped_;
  AFFINE_LOG_RATELIMITED(warn, "port {} TX queue {}: ring full, packet dropped ({} so far)", port_.name(), queue_,
                         dropped_);
}

rx_poller::rx_poller(port& port, unsigned core, std::vector<unsigned> queues, packet_sink& sink,
                     bool interrupts)
    : port_(port), core_(core), queues_(std::move(queues)), sink_(sink), tx_(port, core) {
  if (!interrupts || !port_.caps().rx_interrupts || queues_.empty()) return;
  epoll_fd_ = ::epoll_create1(EPOLL_CLOEXEC);
  if (epoll_fd_ < 0) return;
  for (unsigned q : queues_) {
    if (port_.rx_interrupt_watch(q, epoll_fd_, true)) continue;
    AFFINE_LOG_WARN("port {} RX queue {}: cannot watch its interrupt; core {} naps instead of sleeping",
                    port_.name(), q, core_);
    for (unsigned w : queues_) {
      if (w == q) break;
      port_.rx_interrupt_watch(w, epoll_fd_, false);
    }
    ::close(epoll_fd_);
    epoll_fd_ = -1;
    return;
  }
}

rx_poller::~rx_poller() {
  if (epoll_fd_ < 0) return;
  for (unsigned q : queues_) port_.rx_interrupt_watch(q, epoll_fd_, false);
  ::close(epoll_fd_);
}

unsigned rx_poller::poll_queue(unsigned q) {
  rx_queue_owner& owner = port_.owner(q);
  if (!owner.try_lock()) {
    bump(counts_.busy_skips);
    return 0;
  }
  std::array<rte_mbuf*, burst> pkts;
  const std::uint16_t n = port_.rx_burst(q, pkts.data(), burst);
  owner.unlock();
  if (n != 0) {
    bump(counts_.packets, n);
    sink_.receive(core_, q, std::span(pkts.data(), n));
  }
  return n;
}

unsigned rx_poller::poll() {
  unsigned n = 0;
  for (unsigned q : queues_) n += poll_queue(q);
  // What the RX path answered (ARP, ACKs, echoes) leaves now, one TX burst
  // for the whole RX burst, instead of after the rest of the loop turn;
  // fibers' sends still go out together at the flush rung.
  if (n != 0) tx_.flush();
  return n;
}

void rx_poller::disarm(std::size_t armed) {
  for (std::size_t i = 0; i < armed; ++i) port_.rx_interrupt_disable(queues_[i]);
}

bool rx_poller::try_enter_interrupt_mode() {
  if (tx_.pending() != 0) return false;  // back-pressured packets need another flush soon
  if (queues_.empty()) return true;      // nothing here can wake the core
  if (epoll_fd_ < 0) return false;
  for (std::size_t i = 0; i < queues_.size(); ++i) {
    if (port_.rx_interrupt_enable(queues_[i])) continue;
    disarm(i);
    return false;
  }
  // A packet that arrived before the interrupt was armed raises none: look
  // once more, and stay awake for what is there.
  unsigned n = 0;
  for (unsigned q : queues_) n += poll_queue(q);
  if (n == 0) return true;
  tx_.flush();
  disarm(queues_.size());
  return false;
}

void rx_poller::exit_interrupt_mode() {
  if (epoll_fd_ < 0) return;
  disarm(queues_.size());
  port_.rx_interrupt_drain(epoll_fd_);
}

}  // namespace affine::drivers
