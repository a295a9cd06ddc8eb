#pragma once
// A port that records: wraps any drivers::port and writes every frame it
// receives and every frame the inner port takes for sending to a pcap file.
//
// The stack uses the wrapper in place of the inner port, owner flags
// included (the wrapper's RX queue owners are its own). A TX frame is
// recorded only once the inner port has taken it, so a frame tx_burst hands
// back and the caller retries is recorded once; since the inner port may
// free a frame as soon as it takes it, the first snaplen bytes of each frame
// are copied aside before the burst.

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <vector>

#include "drivers/pcap/pcap_writer.hh"
#include "drivers/port.hh"

namespace affine::drivers {

class pcap_port final : public port {
 public:
  // Capture timestamps, in nanoseconds since the Unix epoch.
  using clock = std::function<std::uint64_t()>;
  static std::uint64_t realtime_ns();

  // `inner` must outlive the wrapper.
  pcap_port(port& inner, std::unique_ptr<pcap_writer> writer, clock now = realtime_ns);

  std::string_view name() const override { return inner_.name(); }
  const port_caps& caps() const override { return inner_.caps(); }
  mac_address mac() const override { return inner_.mac(); }
  unsigned rx_queue_count() const override { return inner_.rx_queue_count(); }
  unsigned tx_queue_count() const override { return inner_.tx_queue_count(); }
  unsigned numa_node() const override { return inner_.numa_node(); }
  rte_mempool* pool(unsigned node) override { return inner_.pool(node); }

  std::uint16_t rx_burst(unsigned q, rte_mbuf** pkts, std::uint16_t n) override;
  std::uint16_t tx_burst(unsigned q, rte_mbuf** pkts, std::uint16_t n) override;

  bool rx_interrupt_enable(unsigned q) override { return inner_.rx_interrupt_enable(q); }
  void rx_interrupt_disable(unsigned q) override { inner_.rx_interrupt_disable(q); }
  int rx_interrupt_fd(unsigned q) const override { return inner_.rx_interrupt_fd(q); }

  port_stats stats() const override { return inner_.stats(); }
  std::vector<std::pair<std::string, std::uint64_t>> xstats() const override;
  link_status link() const override { return inner_.link(); }

  pcap_writer& writer() { return *writer_; }

 private:
  // The frames of one TX burst, cut to snaplen, kept until the inner port
  // says how many it took. One per TX queue: each queue has one writer.
  struct tx_snapshot {
    std::vector<std::byte> bytes;
    std::vector<std::uint32_t> captured, orig_len;
  };

  port& inner_;
  std::unique_ptr<pcap_writer> writer_;
  clock now_;
  std::vector<tx_snapshot> snapshots_;
};

}  // namespace affine::drivers
