#pragma once
// A DPDK ethdev port behind the driver boundary (drivers/port.hh): probe or
// hot-plug the device, configure N RX queues and one TX queue per reactor
// core, RSS with a read-back key, offloads, RX interrupts, steering rules,
// stats. open() returns a started port; the destructor stops and closes it.

#include <rte_ethdev.h>

#include <cstdint>
#include <expected>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "affine/topology.hh"
#include "drivers/dpdk/flow.hh"
#include "drivers/dpdk/probe.hh"
#include "drivers/dpdk/rss.hh"
#include "drivers/dpdk/tap_signal.hh"
#include "drivers/port.hh"

namespace affine::drivers::dpdk {

// A [[port]] table as the driver needs it (apps fill it from the config).
struct port_config {
  // An ethdev name ("net_tap0", probed by the EAL from --vdev), a PCI
  // address ("0000:03:00.0", or "03:00.0"), or a vdev string to hot-plug
  // ("net_ring0", "net_memif0,role=server,socket=/tmp/m.sock").
  std::string device;
  unsigned rx_queues = 1;
  unsigned tx_queues = 1;  // one per reactor core
  std::uint32_t mtu = 1500;
  unsigned mbufs = 8191;   // size of the node's packet pool, if this port creates it
  rss_mode rss = rss_mode::symmetric;
  int numa_node = -1;      // -1: the node DPDK reports for the device, else 0
  std::uint16_t rx_descriptors = 1024;
  std::uint16_t tx_descriptors = 1024;
  bool rx_interrupts = true;  // ask for them; caps().rx_interrupts says whether the port has them
};

using flow_rule_id = std::size_t;

class dpdk_port final : public port {
 public:
  // Errors name the port and say what to change, e.g. "port net_ring0: 32 RX
  // queues requested, the PMD has at most 16".
  static std::expected<std::unique_ptr<dpdk_port>, std::string> open(const port_config& cfg);
  ~dpdk_port() override;
  dpdk_port(const dpdk_port&) = delete;
  dpdk_port& operator=(const dpdk_port&) = delete;

  std::string_view name() const override { return dev_.name; }
  const port_caps& caps() const override { return caps_; }
  mac_address mac() const override { return mac_; }
  unsigned rx_queue_count() const override { return cfg_.rx_queues; }
  unsigned tx_queue_count() const override { return cfg_.tx_queues; }
  unsigned numa_node() const override { return node_; }

  std::uint16_t rx_burst(unsigned q, rte_mbuf** pkts, std::uint16_t n) override {
    if (tap_trigger_) tap_trigger_.pull();  // tap_signal.hh
    return rte_eth_rx_burst(dev_.port_id, std::uint16_t(q), pkts, n);
  }
  std::uint16_t tx_burst(unsigned q, rte_mbuf** pkts, std::uint16_t n) override {
    return rte_eth_tx_burst(dev_.port_id, std::uint16_t(q), pkts, n);
  }
  rte_mempool* pool(unsigned node) override;

  // PMDs whose queue interrupt is always armed (net_tap: the fd is the tap
  // itself) have no enable call; for them enabling succeeds trivially.
  bool rx_interrupt_enable(unsigned q) override;
  void rx_interrupt_disable(unsigned q) override;
  int rx_interrupt_fd(unsigned q) const override;
  // Add (or remove) queue q's interrupt to an epoll set through DPDK, which
  // then consumes the interrupt's counter in rte_epoll_wait (drain); a
  // net_af_packet queue's socket (packet_socket.hh) goes in directly and
  // needs no draining.
  bool rx_interrupt_watch(unsigned q, int epoll_fd, bool add) override;
  void rx_interrupt_drain(int epoll_fd) override;

  port_stats stats() const override;
  std::vector<std::pair<std::string, std::uint64_t>> xstats() const override;
  link_status link() const override;

  std::uint16_t port_id() const { return dev_.port_id; }
  // RETA entries; 0 when the port has no RSS or no RETA.
  unsigned reta_size() const { return reta_size_; }
  // Spread RSS buckets over the plan's cores (reta_from_plan). Nothing to do
  // (and no error) where the port has no RETA.
  std::expected<void, std::string> program_reta(std::span<const rxq_assignment> plan) override;
  std::expected<std::vector<std::uint16_t>, std::string> reta() const;
  std::vector<std::uint16_t> rss_table() const override {
    auto r = reta();
    return r ? std::move(*r) : std::vector<std::uint16_t>{};
  }

  // Steer a flow or a destination port to an RX queue (flow.hh).
  std::expected<flow_rule_id, flow_error> steer(const flow_match& m, unsigned queue);
  void remove_steering(flow_rule_id id);

 private:
  dpdk_port(const port_config& cfg, probed_device dev);
  std::expected<void, std::string> start(const rte_eth_dev_info& info);
  struct setup_error {
    std::string message;
    bool at_start;  // configure and queue set-up went through; start failed
  };
  std::expected<void, setup_error> configure_and_start(rte_eth_conf conf);
  void detect_rx_interrupts();
  void watch_packet_sockets(const rte_eth_dev_info& info);
  void close();

  port_config cfg_;
  probed_device dev_;
  port_caps caps_;
  mac_address mac_{};
  unsigned node_ = 0;
  rte_mempool* pool_ = nullptr;
  unsigned reta_size_ = 0;
  tap_trigger tap_trigger_;  // net_tap without its RX signal: the PMD's trigger, pulled per burst
  bool intr_enable_needed_ = true;
  std::vector<int> packet_sockets_;  // net_af_packet: each RX queue's socket, its interrupt
  bool configured_ = false;
  std::vector<rte_flow*> flows_;  // by flow_rule_id; nullptr once removed
};

}  // namespace affine::drivers::dpdk
