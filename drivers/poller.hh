#pragma once
// The per-core side of a port (drivers/port.hh): an RX poller that owns some RX queues
// and hands their packets to the stack (the "interrupt" of this system,
// DESIGN.md section 4), and the core's TX batch, flushed once per loop turn.

#include <array>
#include <atomic>
#include <cstdint>
#include <span>
#include <vector>

#include "affine/poller.hh"
#include "drivers/port.hh"

namespace affine::drivers {

// Where received packets go. Runs on the reactor of `core`, in the RX path:
// never blocks, never runs user code. Takes ownership of the packets, which
// came from RX queue `queue`.
class packet_sink {
 public:
  virtual ~packet_sink() = default;
  virtual void receive(unsigned core, unsigned queue, std::span<rte_mbuf*> pkts) = 0;
};

// One core's TX queue of one port, batched. Precondition: used only on the
// owning core (one writer per TX queue).
class tx_batch {
 public:
  static constexpr unsigned capacity = 64;

  tx_batch(port& p, unsigned queue) : port_(p), queue_(std::uint16_t(queue)) {}
  ~tx_batch();  // drops (frees) what was never sent
  tx_batch(const tx_batch&) = delete;
  tx_batch& operator=(const tx_batch&) = delete;

  // Queue a packet; takes ownership. A full batch goes out at once; if the
  // port takes none of it (TX ring full), the packet is dropped and counted.
  void send(rte_mbuf* m) noexcept {
    if (n_ == capacity && flush() == 0) {
      drop(m);
      return;
    }
    buf_[n_++] = m;
  }
  // Hand the batch to the port; what it does not take stays for the next
  // flush (back-pressure), in order. Returns how many went out.
  unsigned flush() noexcept;

  unsigned pending() const { return n_; }
  unsigned queue() const { return queue_; }
  std::uint64_t sent() const { return sent_; }
  std::uint64_t dropped() const { return dropped_; }

 private:
  [[gnu::noinline]] void drop(rte_mbuf* m) noexcept;

  port& port_;
  std::uint16_t queue_;
  unsigned n_ = 0;
  std::uint64_t sent_ = 0;
  std::uint64_t dropped_ = 0;
  std::array<rte_mbuf*, capacity> buf_;
};

// Polls the RX queues one reactor core owns and flushes that core's TX
// batch. Each poll takes a queue's owner try-lock around the burst, so a
// busy-polling fiber holding it is never raced (it is skipped and counted).
class rx_poller final : public poller {
 public:
  static constexpr std::uint16_t burst = 32;

  // `core` is the reactor index and the TX queue. With `interrupts` and a
  // port that has them, the poller can arm RX interrupts when the reactor
  // goes to sleep (interrupt_fd() is an epoll set of the queues' fds).
  rx_poller(port& p, unsigned core, std::vector<unsigned> queues, packet_sink& sink, bool interrupts);
  ~rx_poller() override;
  rx_poller(const rx_poller&) = delete;
  rx_poller& operator=(const rx_poller&) = delete;

  unsigned poll() override;
  unsigned flush() override { return tx_.flush(); }
  bool try_enter_interrupt_mode() override;
  void exit_interrupt_mode() override;
  int interrupt_fd() const override { return epoll_fd_; }

  tx_batch& tx() { return tx_; }
  unsigned core() const { return core_; }
  std::span<const unsigned> queues() const { return queues_; }

  // Written by the owning core only (plain stores), readable from any thread.
  struct counters {
    std::atomic<std::uint64_t> packets{0};     // handed to the sink
    std::atomic<std::uint64_t> busy_skips{0};  // queue owned by a busy-polling fiber at poll time
  };
  const counters& counts() const { return counts_; }

 private:
  unsigned poll_queue(unsigned q);
  void disarm(std::size_t armed);

  port& port_;
  unsigned core_;
  std::vector<unsigned> queues_;
  packet_sink& sink_;
  tx_batch tx_;
  int epoll_fd_ = -1;
  counters counts_;
};

}  // namespace affine::drivers
