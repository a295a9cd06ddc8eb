#include "drivers/dpdk/port.hh"

#include <rte_epoll.h>
#include <rte_errno.h>
#include <sys/epoll.h>

#include <algorithm>
#include <array>

#include <fmt/format.h>

#include "affine/log.hh"
#include "drivers/dpdk/eal.hh"
#include "drivers/dpdk/error.hh"
#include "drivers/dpdk/offloads.hh"
#include "drivers/dpdk/packet_socket.hh"

namespace affine::drivers::dpdk {

namespace {

// The stack speaks IPv4 and IPv6: hash on what a flow of either has
// (stack/rss_ports.cc computes the same Toeplitz hash for both).
constexpr std::uint64_t ip_hash_functions = RTE_ETH_RSS_IPV4 | RTE_ETH_RSS_FRAG_IPV4 |
                                            RTE_ETH_RSS_NONFRAG_IPV4_TCP | RTE_ETH_RSS_NONFRAG_IPV4_UDP |
                                            RTE_ETH_RSS_NONFRAG_IPV4_OTHER | RTE_ETH_RSS_IPV6 |
                                            RTE_ETH_RSS_FRAG_IPV6 | RTE_ETH_RSS_NONFRAG_IPV6_TCP |
                                            RTE_ETH_RSS_NONFRAG_IPV6_UDP | RTE_ETH_RSS_NONFRAG_IPV6_OTHER;
constexpr std::size_t default_rss_key_bytes = 40;

std::string too_many(std::string_view port, unsigned asked, std::string_view what, unsigned max) {
  return fmt::format("port {}: {} {} requested, the PMD has at most {}", port, asked, what, max);
}

}  // namespace

std::expected<std::unique_ptr<dpdk_port>, std::string> dpdk_port::open(const port_config& cfg) {
  if (!eal_ready()) return std::unexpected(fmt::format("port {}: the DPDK EAL is not initialised", cfg.device));
  if (cfg.rx_queues == 0 || cfg.tx_queues == 0)
    return std::unexpected(fmt::format("port {}: a port needs at least one RX and one TX queue", cfg.device));
  auto dev = find_or_plug(cfg.device);
  if (!dev) return std::unexpected(dev.error());
  // From here the port object owns the device: every failure path closes
  // and unplugs it through the destructor.
  std::unique_ptr<dpdk_port> p(new dpdk_port(cfg, std::move(*dev)));
  rte_eth_dev_info info{};
  if (const int rc = rte_eth_dev_info_get(p->dev_.port_id, &info); rc != 0)
    return std::unexpected(fmt::format("port {}: device info: {}", p->name(), explain(rc)));
  if (cfg.rx_queues > info.max_rx_queues)
    return std::unexpected(too_many(p->name(), cfg.rx_queues, "RX queues", info.max_rx_queues));
  if (cfg.tx_queues > info.max_tx_queues)
    return std::unexpected(
        too_many(p->name(), cfg.tx_queues, "TX queues (one per reactor core)", info.max_tx_queues));
  if (auto r = p->start(info); !r) return std::unexpected(r.error());
  return p;
}

dpdk_port::dpdk_port(const port_config& cfg, probed_device dev)
    : port(cfg.rx_queues), cfg_(cfg), dev_(std::move(dev)) {}

dpdk_port::~dpdk_port() { close(); }

std::expected<void, std::string> dpdk_port::start(const rte_eth_dev_info& info) {
  if (cfg_.mtu < info.min_mtu || cfg_.mtu > info.max_mtu)
    return std::unexpected(
        fmt::format("port {}: mtu {} is outside the PMD's range {}..{}", name(), cfg_.mtu, info.min_mtu, info.max_mtu));
  const int socket = rte_eth_dev_socket_id(dev_.port_id);
  node_ = cfg_.numa_node >= 0 ? unsigned(cfg_.numa_node) : socket >= 0 ? unsigned(socket) : 0;
  auto pool = packet_pool(node_, cfg_.mbufs, frame_bytes(cfg_.mtu));
  if (!pool) return std::unexpected(fmt::format("port {}: {}", name(), pool.error()));
  pool_ = *pool;
  const std::uint32_t data_room = rte_pktmbuf_data_room_size(pool_) - RTE_PKTMBUF_HEADROOM;

  const std::uint64_t hash_functions = info.flow_type_rss_offloads & ip_hash_functions;
  const bool rss = cfg_.rss != rss_mode::off && hash_functions != 0;
  auto offloads = choose_offloads(info, cfg_.mtu, data_room, rss, caps_);
  if (!offloads) return std::unexpected(fmt::format("port {}: {}", name(), offloads.error()));

  rte_eth_conf conf{};
  conf.rxmode.mtu = cfg_.mtu;
  conf.rxmode.offloads = offloads->rx;
  conf.txmode.offloads = offloads->tx;
  conf.intr_conf.rxq = cfg_.rx_interrupts ? 1 : 0;
  const std::size_t key_bytes = info.hash_key_size != 0 ? info.hash_key_size : default_rss_key_bytes;
  std::vector<std::uint8_t> key = symmetric_rss_key(key_bytes);
  if (rss) {
    conf.rxmode.mq_mode = RTE_ETH_MQ_RX_RSS;
    if (cfg_.rss == rss_mode::symmetric) {
      conf.rx_adv_conf.rss_conf.rss_key = key.data();
      conf.rx_adv_conf.rss_conf.rss_key_len = std::uint8_t(key.size());
    }
    conf.rx_adv_conf.rss_conf.rss_hf = hash_functions;
  }

  auto started = configure_and_start(conf);
  if (!started && started.error().at_start && conf.intr_conf.rxq) {
    // Some PMDs refuse RX interrupts only when starting (no event fds): run
    // without them rather than not at all.
    AFFINE_LOG_INFO("{}; retrying without RX interrupts", started.error().message);
    conf.intr_conf.rxq = 0;
    started = configure_and_start(conf);
  }
  if (!started) return std::unexpected(started.error().message);

  caps_.max_rx_queues = info.max_rx_queues;
  caps_.max_tx_queues = info.max_tx_queues;
  std::uint16_t mtu = 0;
  caps_.mtu = rte_eth_dev_get_mtu(dev_.port_id, &mtu) == 0 ? mtu : cfg_.mtu;
  caps_.rss_key = rss ? settle_rss_key(dev_.port_id, cfg_.rss, key_bytes) : std::vector<std::uint8_t>{};
  caps_.rss = rss && cfg_.rx_queues > 1;
  caps_.rss_hash_in_mbuf = rss && (offloads->rx & RTE_ETH_RX_OFFLOAD_RSS_HASH) != 0;
  reta_size_ = rss ? info.reta_size : 0;
  if (conf.intr_conf.rxq) detect_rx_interrupts();
  if (cfg_.rx_interrupts && !caps_.rx_interrupts) watch_packet_sockets(info);
  if (caps_.rx_interrupts) tap_trigger_ = quiet_tap_signal(dev_.port_id, cfg_.rx_queues);
  caps_.flow_rules = probe_flow_support(dev_.port_id);
  rte_ether_addr addr{};
  if (rte_eth_macaddr_get(dev_.port_id, &addr) == 0) std::copy_n(addr.addr_bytes, mac_.size(), mac_.begin());
  return {};
}

std::expected<void, dpdk_port::setup_error> dpdk_port::configure_and_start(rte_eth_conf conf) {
  const std::uint16_t id = dev_.port_id;
  log_capture log;
  configured_ = true;
  auto fail = [&](std::string message, bool at_start = false) {
    return std::unexpected(setup_error{std::move(message), at_start});
  };
  int rc = rte_eth_dev_configure(id, std::uint16_t(cfg_.rx_queues), std::uint16_t(cfg_.tx_queues), &conf);
  if (rc != 0) return fail(failure(fmt::format("port {}: configure", name()), rc, log));
  std::uint16_t rx_desc = cfg_.rx_descriptors, tx_desc = cfg_.tx_descriptors;
  rte_eth_dev_adjust_nb_rx_tx_desc(id, &rx_desc, &tx_desc);
  const int socket = int(node_) < int(rte_socket_count()) ? int(node_) : SOCKET_ID_ANY;
  for (unsigned q = 0; q < cfg_.rx_queues; ++q) {
    rc = rte_eth_rx_queue_setup(id, std::uint16_t(q), rx_desc, unsigned(socket), nullptr, pool_);
    if (rc == -ENOMEM)
      return fail(fmt::format("port {}: RX queue {}: out of mbufs filling {} descriptors a queue (raise "
                              "[[port]].mbufs)",
                              name(), q, rx_desc));
    if (rc != 0) return fail(failure(fmt::format("port {}: RX queue {} setup", name(), q), rc, log));
  }
  for (unsigned q = 0; q < cfg_.tx_queues; ++q) {
    rc = rte_eth_tx_queue_setup(id, std::uint16_t(q), tx_desc, unsigned(socket), nullptr);
    if (rc != 0) return fail(failure(fmt::format("port {}: TX queue {} setup", name(), q), rc, log));
  }
  rc = rte_eth_dev_start(id);
  if (rc != 0) return fail(failure(fmt::format("port {}: start", name()), rc, log), true);
  return {};
}

void dpdk_port::detect_rx_interrupts() {
  // A queue's interrupt is usable when DPDK has an event fd for it. Probed
  // quietly: ethdev logs an error for every port without one.
  log_capture quiet;
  if (rte_eth_dev_rx_intr_ctl_q_get_fd(dev_.port_id, 0) < 0) return;
  caps_.rx_interrupts = true;
  const int rc = rte_eth_dev_rx_intr_enable(dev_.port_id, 0);
  intr_enable_needed_ = rc != -ENOTSUP;
  if (rc == 0) rte_eth_dev_rx_intr_disable(dev_.port_id, 0);
}

void dpdk_port::watch_packet_sockets(const rte_eth_dev_info& info) {
  if (info.driver_name == nullptr || std::string_view(info.driver_name) != "net_af_packet") return;
  std::string why;
  // The PMD opens a socket per queue pair it has (qpairs=), used or not.
  packet_sockets_ = af_packet_queue_sockets(info.if_index, info.max_rx_queues, why);
  packet_sockets_.resize(std::min<std::size_t>(packet_sockets_.size(), cfg_.rx_queues));
  if (packet_sockets_.empty()) {
    AFFINE_LOG_INFO("port {}: no RX interrupts ({}): idle reactors nap", name(), why);
    return;
  }
  caps_.rx_interrupts = true;
  intr_enable_needed_ = false;  // level-triggered: always armed
}

bool dpdk_port::rx_interrupt_enable(unsigned q) {
  if (!caps_.rx_interrupts) return false;
  return !intr_enable_needed_ || rte_eth_dev_rx_intr_enable(dev_.port_id, std::uint16_t(q)) == 0;
}

void dpdk_port::rx_interrupt_disable(unsigned q) {
  if (caps_.rx_interrupts && intr_enable_needed_) rte_eth_dev_rx_intr_disable(dev_.port_id, std::uint16_t(q));
}

int dpdk_port::rx_interrupt_fd(unsigned q) const {
  if (!caps_.rx_interrupts) return -1;
  if (!packet_sockets_.empty()) return packet_sockets_[q];
  return rte_eth_dev_rx_intr_ctl_q_get_fd(dev_.port_id, std::uint16_t(q));
}

bool dpdk_port::rx_interrupt_watch(unsigned q, int epoll_fd, bool add) {
  if (!caps_.rx_interrupts) return false;
  if (!packet_sockets_.empty()) {
    epoll_event ev{};
    ev.events = EPOLLIN;
    ev.data.u64 = q;
    return ::epoll_ctl(epoll_fd, add ? EPOLL_CTL_ADD : EPOLL_CTL_DEL, packet_sockets_[q], &ev) == 0;
  }
  return rte_eth_dev_rx_intr_ctl_q(dev_.port_id, std::uint16_t(q), epoll_fd,
                                   add ? RTE_INTR_EVENT_ADD : RTE_INTR_EVENT_DEL, nullptr) == 0;
}

void dpdk_port::rx_interrupt_drain(int epoll_fd) {
  if (!caps_.rx_interrupts || !packet_sockets_.empty()) return;
  // DPDK reads each event fd's counter as it reports it.
  std::array<rte_epoll_event, 8> events;
  while (rte_epoll_wait(epoll_fd, events.data(), int(events.size()), 0) == int(events.size())) {
  }
}

rte_mempool* dpdk_port::pool(unsigned node) {
  if (node == node_) return pool_;
  auto p = packet_pool(node, cfg_.mbufs, frame_bytes(cfg_.mtu));
  return p ? *p : pool_;
}

std::expected<void, std::string> dpdk_port::program_reta(std::span<const rxq_assignment> plan) {
  if (reta_size_ == 0 || plan.empty()) return {};
  const auto entries = reta_from_plan(plan, reta_size_);
  if (auto r = write_reta(dev_.port_id, entries); !r)
    return std::unexpected(fmt::format("port {}: {}", name(), r.error()));
  return {};
}

std::expected<std::vector<std::uint16_t>, std::string> dpdk_port::reta() const {
  if (reta_size_ == 0) return std::unexpected(fmt::format("port {}: no RSS redirection table", name()));
  return read_reta(dev_.port_id, reta_size_);
}

std::expected<flow_rule_id, flow_error> dpdk_port::steer(const flow_match& m, unsigned queue) {
  if (queue >= cfg_.rx_queues)
    return std::unexpected(flow_error{flow_failure::rejected,
                                      fmt::format("port {}: cannot steer {} to queue {}: the port has {} RX queues",
                                                  name(), to_string(m), queue, cfg_.rx_queues)});
  auto rule = create_steering_rule(dev_.port_id, name(), m, std::uint16_t(queue));
  if (!rule) return std::unexpected(rule.error());
  flows_.push_back(*rule);
  return flows_.size() - 1;
}

void dpdk_port::remove_steering(flow_rule_id id) {
  if (id >= flows_.size() || flows_[id] == nullptr) return;
  destroy_steering_rule(dev_.port_id, flows_[id]);
  flows_[id] = nullptr;
}

void dpdk_port::close() {
  log_capture quiet;
  for (flow_rule_id id = 0; id < flows_.size(); ++id) remove_steering(id);
  if (configured_) {
    rte_eth_dev_stop(dev_.port_id);
    rte_eth_dev_close(dev_.port_id);
  }
  unplug(dev_);
}

}  // namespace affine::drivers::dpdk
