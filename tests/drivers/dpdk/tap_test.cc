// net_tap: the Linux kernel is the peer. Inside the test's own network
// namespace (netns_main.cc) the kernel holds 10.77.0.1/24 on the tap
// interface and the DPDK port plays 10.77.0.2: the kernel's ARP and ping
// must reach the port, and its answers must reach the kernel.

#include <arpa/inet.h>
#include <fcntl.h>
#include <linux/if_ether.h>
#include <linux/if_packet.h>
#include <net/if.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <array>
#include <atomic>
#include <chrono>
#include <cstdlib>

#include <fmt/format.h>
#include <rte_mbuf.h>

#include "affine/runtime.hh"
#include "drivers/attach.hh"
#include "drivers/dpdk/port.hh"
#include "tests/drivers/dpdk/collect_sink.hh"
#include "tests/drivers/dpdk/dpdk_fixture.hh"
#include "tests/drivers/dpdk/netns.hh"
#include "tests/drivers/dpdk/responder.hh"

namespace affine::drivers::dpdk::test {
namespace {

constexpr const char* tap_iface = "afftap0";
constexpr std::uint32_t kernel_ip = 0x0a4d0001;  // 10.77.0.1
constexpr std::uint32_t port_ip = 0x0a4d0002;    // 10.77.0.2

class tap_test : public dpdk_test {
 protected:
  void SetUp() override {
    if (const std::string why = namespace_skip_reason(); !why.empty()) GTEST_SKIP() << why;
    ASSERT_TRUE(inside_own_namespace()) << "tap tests run only inside the namespace netns_main.cc makes";
    // The EAL starts here, not in a global environment: a run that skips
    // must not need it.
    auto eal = init_eal_for_tests();
    ASSERT_TRUE(eal.has_value()) << eal.error();
    dpdk_test::SetUp();
  }

  // Open the tap port and give the kernel's side its address.
  std::unique_ptr<dpdk_port> open_tap(unsigned queues = 1) {
    auto p = dpdk_port::open({.device = fmt::format("net_tap0,iface={}", tap_iface), .rx_queues = queues,
                              .tx_queues = queues, .rx_descriptors = 256, .tx_descriptors = 256});
    EXPECT_TRUE(p.has_value()) << p.error();
    if (!p) return nullptr;
    const std::string cmd = fmt::format("ip addr add 10.77.0.1/24 dev {0} && ip link set {0} up", tap_iface);
    EXPECT_EQ(std::system(cmd.c_str()), 0) << cmd;
    return std::move(*p);
  }
};

// An ICMP echo from the kernel to `dst` over a raw socket; true when the
// matching reply comes back within `limit`.
bool kernel_ping(std::uint32_t dst, std::uint16_t seq, std::chrono::milliseconds limit) {
  const int s = ::socket(AF_INET, SOCK_RAW, IPPROTO_ICMP);
  if (s < 0) return false;
  std::array<std::uint8_t, 40> echo{};
  const std::uint16_t id = std::uint16_t(::getpid());
  echo[0] = 8;
  echo[4] = std::uint8_t(id >> 8), echo[5] = std::uint8_t(id);
  echo[6] = std::uint8_t(seq >> 8), echo[7] = std::uint8_t(seq);
  for (std::size_t i = 8; i < echo.size(); ++i) echo[i] = std::uint8_t(i);
  std::uint32_t sum = 0;
  for (std::size_t i = 0; i < echo.size(); i += 2) sum += std::uint32_t(echo[i] << 8 | echo[i + 1]);
  while (sum >> 16) sum = (sum & 0xffff) + (sum >> 16);
  echo[2] = std::uint8_t(~sum >> 8), echo[3] = std::uint8_t(~sum);
  sockaddr_in to{};
  to.sin_family = AF_INET;
  to.sin_addr.s_addr = htonl(dst);
  bool answered = false;
  if (::sendto(s, echo.data(), echo.size(), 0, reinterpret_cast<sockaddr*>(&to), sizeof to) ==
      ssize_t(echo.size())) {
    const auto until = std::chrono::steady_clock::now() + limit;
    while (!answered && std::chrono::steady_clock::now() < until) {
      pollfd pfd{s, POLLIN, 0};
      if (::poll(&pfd, 1, 50) <= 0) continue;
      std::array<std::uint8_t, 256> in;
      const ssize_t n = ::recv(s, in.data(), in.size(), 0);
      const std::size_t ihl = n > 0 ? std::size_t(in[0] & 0x0f) * 4 : 0;
      if (n < ssize_t(ihl + 8)) continue;
      const std::uint8_t* icmp = in.data() + ihl;
      answered = icmp[0] == 0 && (icmp[4] << 8 | icmp[5]) == id && (icmp[6] << 8 | icmp[7]) == seq;
    }
  }
  ::close(s);
  return answered;
}

// A UDP datagram from the kernel to a subnet's broadcast address (the
// tap's by default): it goes out of the interface without needing ARP.
void kernel_broadcast(std::string_view payload, std::uint32_t broadcast = 0x0a4d00ff) {
  const int s = ::socket(AF_INET, SOCK_DGRAM, 0);
  ASSERT_GE(s, 0);
  const int on = 1;
  ::setsockopt(s, SOL_SOCKET, SO_BROADCAST, &on, sizeof on);
  sockaddr_in to{};
  to.sin_family = AF_INET;
  to.sin_port = htons(9);
  to.sin_addr.s_addr = htonl(broadcast);
  EXPECT_EQ(::sendto(s, payload.data(), payload.size(), 0, reinterpret_cast<sockaddr*>(&to), sizeof to),
            ssize_t(payload.size()));
  ::close(s);
}

bool contains(const std::vector<std::uint8_t>& frame, std::string_view text) {
  return std::search(frame.begin(), frame.end(), text.begin(), text.end()) != frame.end();
}

TEST_F(tap_test, caps_of_a_tap_port) {
  auto port = open_tap();
  ASSERT_TRUE(port);
  const port_caps& c = port->caps();
  EXPECT_TRUE(c.rx_interrupts);
  EXPECT_TRUE(c.tx_ipv4_checksum);
  EXPECT_TRUE(c.tx_l4_checksum);
  EXPECT_TRUE(c.tso);
  EXPECT_TRUE(c.multi_seg_tx);
  EXPECT_TRUE(c.rx_l4_checksum);
  EXPECT_NE(port->mac(), mac_address{});
  EXPECT_GE(port->rx_interrupt_fd(0), 0);
  EXPECT_TRUE(port->link().up);
}

TEST_F(tap_test, kernel_arp_and_ping_reach_the_port_and_its_replies_reach_the_kernel) {
  auto topo = topology::from_system();
  ASSERT_TRUE(topo.has_value()) << topo.error();
  // Two reactors where there are two cores, one queue each (the kernel's
  // tap spreads flows over its queues).
  const unsigned cores = topo->core_count() >= 2 ? 2 : 1;
  auto port = open_tap(cores);
  ASSERT_TRUE(port);
  runtime_options o;
  for (unsigned c = 0; c < cores; ++c) o.cores.push_back(core_id{c});
  o.on_reactor_start = register_reactor;
  auto rt = runtime::start(*topo, o);
  ASSERT_TRUE(rt.has_value()) << rt.error();
  auto plan = plan_rx_queues(*topo, 0, cores, o.cores, rxq_placement::local);
  ASSERT_TRUE(plan.has_value()) << plan.error();
  responder host(port->mac(), port_ip);
  // Reactors here nap and poll rather than sleep on the tap's interrupt:
  // rx_interrupt_wakes_an_armed_poller covers interrupts on their own. The
  // pollers start once the host knows where to send its answers.
  auto att = attach(**rt, *port, *plan, host, {.rx_interrupts = false, .start_polling = false});
  ASSERT_TRUE(att.has_value()) << att.error();
  host.set_attachment(att->get());
  (*att)->start();

  EXPECT_TRUE(kernel_ping(port_ip, 1, std::chrono::seconds(5)));
  EXPECT_TRUE(kernel_ping(port_ip, 2, std::chrono::seconds(5)));
  att->reset();
  rt->reset();
  EXPECT_GE(host.arp_requests.load(), 1u);
  EXPECT_EQ(host.echo_requests.load(), 2u);
  const port_stats s = port->stats();
  EXPECT_GE(s.rx_packets, 3u);  // ARP request and two echo requests
  EXPECT_GE(s.tx_packets, 3u);  // ARP reply and two echo replies
}

// attach_options::start_polling = false: the pollers stay off the reactors
// until start(), and what arrived meanwhile waits in the queue (the stack
// finishes its per-core state first: a tap's kernel side sends frames the
// moment its interface is up).
TEST_F(tap_test, an_attachment_made_without_polling_takes_nothing_until_started) {
  auto topo = topology::from_system();
  ASSERT_TRUE(topo.has_value()) << topo.error();
  auto port = open_tap();
  ASSERT_TRUE(port);
  runtime_options o;
  o.cores = {core_id{0}};
  o.on_reactor_start = register_reactor;
  auto rt = runtime::start(*topo, o);
  ASSERT_TRUE(rt.has_value()) << rt.error();
  auto plan = plan_rx_queues(*topo, 0, 1, o.cores, rxq_placement::local);
  ASSERT_TRUE(plan.has_value()) << plan.error();
  collect_sink sink;
  auto att = attach(**rt, *port, *plan, sink, {.rx_interrupts = false, .start_polling = false});
  ASSERT_TRUE(att.has_value()) << att.error();
  kernel_broadcast("before start");
  EXPECT_TRUE(sink.wait_for(1, std::chrono::milliseconds(200)).empty()) << "polled before start()";
  (*att)->start();
  bool seen = false;
  const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(2);
  while (!seen && std::chrono::steady_clock::now() < until) {
    for (const auto& r : sink.wait_for(1, std::chrono::milliseconds(100))) seen = seen || contains(r.bytes, "before start");
    if (!seen) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  EXPECT_TRUE(seen) << "the frame that waited was not taken after start()";
  att->reset();
  rt->reset();
}

// An armed poller on `port` sleeps in epoll on its interrupt_fd() until a
// frame the kernel broadcasts to `broadcast` wakes it, then receives it.
void expect_rx_interrupt_wakes(dpdk_port& port, std::uint32_t broadcast) {
  collect_sink sink;
  rx_poller poller(port, 0, {0}, sink, true);
  ASSERT_GE(poller.interrupt_fd(), 0);
  // The kernel may still be announcing the new link (IPv6): arm once quiet.
  bool armed = false;
  for (int i = 0; i < 100 && !armed; ++i) {
    armed = poller.try_enter_interrupt_mode();
    if (!armed) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  ASSERT_TRUE(armed);
  epoll_event ev;
  const int fd = poller.interrupt_fd();
  int ready = ::epoll_wait(fd, &ev, 1, 0);
  if (ready == 1) {  // a late announcement: take it and arm again
    poller.exit_interrupt_mode();
    poller.poll();
    ASSERT_TRUE(poller.try_enter_interrupt_mode());
  }
  kernel_broadcast("wake the poller", broadcast);
  ready = ::epoll_wait(fd, &ev, 1, 5000);
  EXPECT_EQ(ready, 1) << "the port's RX interrupt did not fire";
  poller.exit_interrupt_mode();
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(2);
  bool seen = false;
  while (!seen && std::chrono::steady_clock::now() < deadline) {
    poller.poll();
    for (const auto& r : sink.wait_for(0, std::chrono::milliseconds(0))) seen = seen || contains(r.bytes, "wake the poller");
  }
  EXPECT_TRUE(seen);
}

TEST_F(tap_test, rx_interrupt_wakes_an_armed_poller) {
  auto port = open_tap();
  ASSERT_TRUE(port);
  expect_rx_interrupt_wakes(*port, 0x0a4d00ff);
}

// net_af_packet on a veth pair: the kernel holds 10.78.0.1/24 on one end,
// the port reads the other. The PMD has no RX interrupt; the queue's packet
// socket serves as one (packet_socket.hh).
class af_packet_test : public tap_test {
 protected:
  void SetUp() override {
    tap_test::SetUp();
    if (IsSkipped() || HasFatalFailure()) return;
    const char* cmd = "ip link add affv0 type veth peer name affv1 && ip addr add 10.78.0.1/24 dev affv0 && "
                      "ip link set affv1 up && ip link set affv0 up";
    ASSERT_EQ(std::system(cmd), 0) << cmd;
  }
  void TearDown() override {
    [[maybe_unused]] int rc = std::system("ip link del affv0 2>/dev/null");
    tap_test::TearDown();
  }
  static std::expected<std::unique_ptr<dpdk_port>, std::string> open_af_packet() {
    return dpdk_port::open({.device = "net_af_packet0,iface=affv1", .rx_descriptors = 256, .tx_descriptors = 256});
  }
};

TEST_F(af_packet_test, the_queue_socket_wakes_an_armed_poller) {
  auto port = open_af_packet();
  ASSERT_TRUE(port.has_value()) << port.error();
  ASSERT_TRUE((*port)->caps().rx_interrupts) << "the queue's packet socket was not found";
  int domain = 0;
  socklen_t len = sizeof domain;
  ASSERT_EQ(::getsockopt((*port)->rx_interrupt_fd(0), SOL_SOCKET, SO_DOMAIN, &domain, &len), 0);
  EXPECT_EQ(domain, AF_PACKET);
  expect_rx_interrupt_wakes(**port, 0x0a4e00ff);
}

// Frames on `q` (taken and freed) that carry `text`.
int frames_with(dpdk_port& port, unsigned q, std::string_view text) {
  int found = 0;
  std::array<rte_mbuf*, 32> pkts;
  for (std::uint16_t n; (n = port.rx_burst(q, pkts.data(), std::uint16_t(pkts.size()))) != 0;) {
    for (std::uint16_t i = 0; i < n; ++i) {
      const auto* b = rte_pktmbuf_mtod(pkts[i], const std::uint8_t*);
      found += std::search(b, b + pkts[i]->data_len, text.begin(), text.end()) != b + pkts[i]->data_len;
      rte_pktmbuf_free(pkts[i]);
    }
  }
  return found;
}

TEST_F(af_packet_test, each_queue_socket_is_readable_when_its_queue_has_the_frame) {
  // Two queue pairs: the kernel spreads flows over the two sockets by hash
  // (PACKET_FANOUT); a broadcast from a fresh source port lands on either.
  auto port = dpdk_port::open({.device = "net_af_packet0,iface=affv1,qpairs=2", .rx_queues = 2,
                               .rx_descriptors = 256, .tx_descriptors = 256});
  ASSERT_TRUE(port.has_value()) << port.error();
  ASSERT_TRUE((*port)->caps().rx_interrupts);
  const int ep = ::epoll_create1(EPOLL_CLOEXEC);
  ASSERT_GE(ep, 0);
  for (unsigned q = 0; q < 2; ++q) ASSERT_TRUE((*port)->rx_interrupt_watch(q, ep, true));
  std::array<int, 2> landed{};
  for (int i = 0; i < 8; ++i) {
    // What the kernel said on its own (IPv6 on a new link) is taken first.
    for (unsigned q = 0; q < 2; ++q) frames_with(**port, q, "");
    const std::string text = fmt::format("frame {}", i);
    kernel_broadcast(text, 0x0a4e00ff);
    std::array<epoll_event, 2> ev;
    const int ready = ::epoll_wait(ep, ev.data(), 2, 5000);
    ASSERT_GE(ready, 1) << text << " woke neither queue's socket";
    int found = 0;
    for (int k = 0; k < ready; ++k) {
      const int n = frames_with(**port, unsigned(ev[k].data.u64), text);
      landed[ev[k].data.u64] += n;
      found += n;
    }
    EXPECT_EQ(found, 1) << text << " is not on a queue whose socket was readable";
  }
  for (unsigned q = 0; q < 2; ++q) (*port)->rx_interrupt_watch(q, ep, false);
  ::close(ep);
  EXPECT_EQ(landed[0] + landed[1], 8);
}

TEST_F(af_packet_test, another_packet_socket_on_the_interface_leaves_the_port_napping) {
  // A capture on the same interface (as libpcap opens): which socket is the
  // queue's cannot be told, so the port does not guess.
  const int capture = ::socket(AF_PACKET, SOCK_RAW, htons(ETH_P_ALL));
  ASSERT_GE(capture, 0);
  sockaddr_ll at{};
  at.sll_family = AF_PACKET;
  at.sll_protocol = htons(ETH_P_ALL);
  at.sll_ifindex = int(::if_nametoindex("affv1"));
  ASSERT_EQ(::bind(capture, reinterpret_cast<sockaddr*>(&at), sizeof at), 0);
  auto port = open_af_packet();
  ::close(capture);
  ASSERT_TRUE(port.has_value()) << port.error();
  EXPECT_FALSE((*port)->caps().rx_interrupts);
  EXPECT_LT((*port)->rx_interrupt_fd(0), 0);
}

// The tap PMD asks for a signal per received packet (O_ASYNC, on SIGIO or
// a real-time signal of its choosing, by DPDK release: tap_signal.hh); the
// port turns that off and pulls the PMD's trigger itself, so packets arrive
// and no signal is raised for them.
std::atomic<unsigned> tap_signals{0};
void (*pmd_handler)(int) = nullptr;
void count_tap_signal(int sig) {
  tap_signals.fetch_add(1, std::memory_order_relaxed);
  pmd_handler(sig);
}

TEST_F(tap_test, received_packets_raise_no_signal_and_still_arrive) {
  auto port = open_tap();
  ASSERT_TRUE(port);
  const int fd = port->rx_interrupt_fd(0);
  ASSERT_GE(fd, 0);
  EXPECT_EQ(::fcntl(fd, F_GETFL) & O_ASYNC, 0) << "the queue fd still signals each packet";
  int sig = ::fcntl(fd, F_GETSIG);
  ASSERT_GE(sig, 0);
  if (sig == 0) sig = SIGIO;
  struct sigaction pmd{}, counting{};
  ASSERT_EQ(::sigaction(sig, nullptr, &pmd), 0);
  ASSERT_NE(pmd.sa_handler, SIG_DFL) << "no handler for signal " << sig << ": the PMD installs its trigger there";
  pmd_handler = pmd.sa_handler;
  counting.sa_handler = count_tap_signal;
  counting.sa_flags = SA_RESTART;
  ASSERT_EQ(::sigaction(sig, &counting, nullptr), 0);

  collect_sink sink;
  rx_poller poller(*port, 0, {0}, sink, false);
  constexpr int frames = 5;
  for (int i = 0; i < frames; ++i) kernel_broadcast(fmt::format("quiet {}", i));
  int seen = 0;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(2);
  while (seen < frames && std::chrono::steady_clock::now() < deadline) {
    poller.poll();
    for (const auto& r : sink.wait_for(0, std::chrono::milliseconds(0)))
      for (int i = 0; i < frames; ++i) seen += contains(r.bytes, fmt::format("quiet {}", i)) ? 1 : 0;
  }
  ::sigaction(sig, &pmd, nullptr);
  EXPECT_EQ(seen, frames) << "the trigger pulled before each burst must let the PMD read";
  EXPECT_EQ(tap_signals.load(), 0u) << "signal " << sig << " raised for received packets";
}

TEST_F(tap_test, a_tap_needs_as_many_rx_as_tx_queues) {
  auto p = dpdk_port::open({.device = fmt::format("net_tap0,iface={}", tap_iface), .rx_queues = 1, .tx_queues = 2});
  ASSERT_FALSE(p.has_value());
  EXPECT_EQ(p.error(), "port net_tap0: configure: net_tap0: number of rx queues 1 must be equal to number of tx queues 2");
}

TEST_F(tap_test, more_queues_than_af_packet_has) {
  auto p = dpdk_port::open({.device = "net_af_packet0,iface=lo", .rx_queues = 8});
  ASSERT_FALSE(p.has_value());
  EXPECT_EQ(p.error(), "port net_af_packet0: 8 RX queues requested, the PMD has at most 1");
}

}  // namespace
}  // namespace affine::drivers::dpdk::test
