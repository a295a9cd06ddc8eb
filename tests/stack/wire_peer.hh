#pragma once
// Fixtures for the stack tests whose peer is not affine: wire_peer, where the
// test itself is the peer on end b of the in-process wire (raw frames in and
// out, the stack's ARP requests answered); tap_peer, where the Linux kernel
// is the peer over net_tap, inside the network namespace netns_main.cc makes
// (only tests linked with it may use tap_peer). Both run the stack on a
// runtime of their own and end with the same leak checks (STYLE.md, "Tests":
// nothing the stack made outlives it).
//
// Header only, like two_stacks.hh: the wire tests and the tap tests link
// different drivers, and each links only the code of the fixture it uses.

#include <gtest/gtest.h>
#include <rte_mbuf.h>
#include <rte_mempool.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "affine/net.hh"
#include "affine/runtime.hh"
#include "drivers/dpdk/eal.hh"
#include "drivers/dpdk/port.hh"
#include "drivers/wire/wire.hh"
#include "stack/stack.hh"
#include "stack/tcp/connection.hh"
#include "stack/tcp/ring_buffer.hh"
#include "stack/udp_socket.hh"
#include "stack/wire/arp.hh"
#include "stack/wire/ethernet.hh"
#include "tests/drivers/dpdk/netns.hh"

namespace affine::stack::testing {

using frame = std::vector<std::byte>;

// The wire's own addresses for its ends: a (the stack) and b (the peer).
inline constexpr mac_address stack_mac{0x02, 0, 0, 0, 0, 0x01};
inline constexpr mac_address peer_mac{0x02, 0, 0, 0, 0, 0x02};

// Every socket, connection and ring-buffer byte the stack made is gone.
inline void expect_nothing_left() {
  EXPECT_EQ(udp_socket::live_count(), 0u) << "UDP sockets leaked";
  EXPECT_EQ(tcp::connection::live_count(), 0u);
  EXPECT_EQ(tcp::ring_buffer::live_bytes(), 0u);
}

// The EAL, the machine's topology and a runtime on its first cores_ cores,
// each reactor registered with the DPDK driver. The helpers report through
// gtest: call them under ASSERT_NO_FATAL_FAILURE.
class runtime_fixture : public ::testing::Test {
 protected:
  // cores_: two where the machine has two, at most `max_cores`.
  void start_topology(unsigned max_cores) {
    auto eal = drivers::dpdk::init_eal_for_tests();
    ASSERT_TRUE(eal.has_value()) << eal.error();
    auto topo = topology::from_system();
    ASSERT_TRUE(topo.has_value()) << topo.error();
    topo_ = std::make_unique<topology>(std::move(*topo));
    cores_ = std::min(max_cores, topo_->core_count() >= 2 ? 2u : 1u);
  }

  void start_runtime() {
    runtime_options o = runtime_base_;
    o.cores = reactor_cores();
    o.on_reactor_start = drivers::dpdk::register_reactor;
    auto rt = runtime::start(*topo_, o);
    ASSERT_TRUE(rt.has_value()) << rt.error();
    rt_ = std::move(*rt);
  }

  std::vector<core_id> reactor_cores() const {
    std::vector<core_id> v;
    for (unsigned c = 0; c < cores_; ++c) v.push_back(core_id{c});
    return v;
  }

  std::unique_ptr<topology> topo_;
  unsigned cores_ = 1;
  std::unique_ptr<runtime> rt_;
  runtime_options runtime_base_;  // what start_runtime starts from (its cores and hook set there)
};

// What the wire tests differ in.
struct wire_peer_options {
  const char* pool_prefix;      // the pools' names, before a serial number (DPDK names are unique)
  unsigned pool_mbufs;
  unsigned max_cores;           // the link's ends get one TX queue per core
  std::uint32_t stack_ip;       // the stack's address and the peer's, for ARP answers
  std::uint32_t peer_ip;
  unsigned drain_rounds;        // how many 3 ms polls drain() lets the stack have
};

// Own packet pools for both ends of a clean wire, so that teardown sees
// every mbuf back.
class wire_peer : public runtime_fixture {
 protected:
  explicit wire_peer(const wire_peer_options& o) : options_(o) {}

  void SetUp() override {
    ASSERT_NO_FATAL_FAILURE(start_topology(options_.max_cores));
    static unsigned serial = 0;
    for (auto*& p : pools_) {
      const std::string name = options_.pool_prefix + std::to_string(serial++);
      p = rte_pktmbuf_pool_create(name.c_str(), options_.pool_mbufs, 0, 0, RTE_MBUF_DEFAULT_BUF_SIZE, SOCKET_ID_ANY);
      ASSERT_NE(p, nullptr);
    }
    drivers::wire::link_config lc;
    lc.clock = drivers::wire::clock_kind::monotonic;
    lc.a.pool = pools_[0];
    lc.b.pool = pools_[1];
    lc.a.tx_queues = cores_;
    lc.b.tx_queues = cores_;
    auto link = drivers::wire::link::create(lc);
    ASSERT_TRUE(link.has_value()) << link.error();
    link_ = std::move(*link);
    ASSERT_NO_FATAL_FAILURE(start_runtime());
  }

  void TearDown() override {
    rt_.reset();
    link_.reset();
    expect_nothing_left();
    for (rte_mempool* p : pools_) {
      if (p == nullptr) continue;  // SetUp failed before making it
      EXPECT_EQ(rte_mempool_in_use_count(p), 0u) << "mbufs leaked from " << p->name;
      rte_mempool_free(p);
    }
  }

  // One frame from the peer into the wire's end b.
  void send(const frame& f) {
    rte_mbuf* m = rte_pktmbuf_alloc(pools_[1]);
    ASSERT_NE(m, nullptr);
    std::memcpy(rte_pktmbuf_append(m, std::uint16_t(f.size())), f.data(), f.size());
    ASSERT_EQ(link_->b().tx_burst(0, &m, 1), 1);
    ++sent_;
  }

  // Lets the stack's core poll, then takes what it sent, answering its ARP
  // requests for the peer on the way; returns every other frame. Runs in a
  // fiber.
  std::vector<frame> drain() {
    std::vector<frame> out;
    for (unsigned round = 0; round < options_.drain_rounds; ++round) {
      this_fiber::sleep_for(std::chrono::milliseconds(3));
      std::array<rte_mbuf*, 32> got;
      const auto n = link_->b().rx_burst(0, got.data(), got.size());
      for (unsigned i = 0; i < n; ++i) {
        const auto* data = rte_pktmbuf_mtod(got[i], const std::byte*);
        frame f(data, data + got[i]->data_len);
        rte_pktmbuf_free(got[i]);
        if (!answer_arp_request(f)) out.push_back(std::move(f));
      }
    }
    return out;
  }

  std::uint64_t sent_ = 0;  // frames send() put on the wire, ARP answers included
  std::array<rte_mempool*, 2> pools_{};
  std::unique_ptr<drivers::wire::link> link_;

 private:
  // Whether `f` is an ARP request for the peer's address (answered).
  bool answer_arp_request(const frame& f) {
    auto eth = ethernet_view::parse(f);
    if (!eth || eth->type() != ether_type::arp) return false;
    auto a = arp_view::parse(eth->payload());
    if (!a || a->op() != arp_op::request || a->target_ip() != options_.peer_ip) return false;
    frame reply(60);
    (void)emit_ethernet({.dst = stack_mac, .src = peer_mac, .type = ether_type::arp}, reply);
    (void)emit_arp({arp_op::reply, peer_mac, options_.peer_ip, stack_mac, options_.stack_ip},
                   std::span(reply).subspan(14));
    send(reply);
    return true;
  }

  wire_peer_options options_;
};

// What the tap tests differ in.
struct tap_peer_options {
  const char* device;          // the net_tap instance, "net_tap0"
  const char* iface;           // its interface in the namespace
  const char* kernel_address;  // the kernel's, with its prefix: "10.77.0.1/24"
  unsigned max_cores;          // the port's RX and TX queues: one per core
};

class tap_peer : public runtime_fixture {
 protected:
  explicit tap_peer(const tap_peer_options& o) : options_(o) {}

  void SetUp() override {
    if (const std::string why = drivers::dpdk::test::namespace_skip_reason(); !why.empty()) GTEST_SKIP() << why;
    ASSERT_TRUE(drivers::dpdk::test::inside_own_namespace());
    ASSERT_NO_FATAL_FAILURE(start_topology(options_.max_cores));
    auto p = drivers::dpdk::dpdk_port::open({.device = fmt::format("{},iface={}", options_.device, options_.iface),
                                             .rx_queues = cores_, .tx_queues = cores_});
    ASSERT_TRUE(p.has_value()) << p.error();
    port_ = std::move(*p);
    const std::string cmd =
        fmt::format("ip addr add {1} dev {0} && ip link set {0} up", options_.iface, options_.kernel_address);
    ASSERT_EQ(std::system(cmd.c_str()), 0) << cmd;
    ASSERT_NO_FATAL_FAILURE(start_runtime());
  }

  void TearDown() override {
    rt_.reset();
    port_.reset();
    expect_nothing_left();
  }

  // Runs `body` in a fiber with a stack made from `sc` on the tap (an RX
  // queue on every core, placed locally) as the socket API's backend.
  void with_stack(const stack_config& sc, const std::function<void(stack&)>& body) {
    rt_->run([&] {
      auto plan = plan_rx_queues(*topo_, 0, cores_, reactor_cores(), rxq_placement::local);
      ASSERT_TRUE(plan.has_value()) << plan.error();
      auto st = stack::create(*rt_, *port_, sc, *plan);
      ASSERT_TRUE(st.has_value()) << st.error();
      net::detail::set_backend(&(*st)->backend());
      body(**st);
      net::detail::set_backend(nullptr);
      st->reset();
    });
  }

  std::unique_ptr<drivers::dpdk::dpdk_port> port_;

 private:
  tap_peer_options options_;
};

// The kernel's socket address for `e`: sockaddr_in or sockaddr_in6.
inline std::pair<sockaddr_storage, socklen_t> kernel_address(const net::endpoint& e) {
  sockaddr_storage s{};
  if (e.addr.is_v4()) {
    auto& a = reinterpret_cast<sockaddr_in&>(s);
    a.sin_family = AF_INET;
    a.sin_port = htons(e.port);
    a.sin_addr.s_addr = htonl(e.addr.v4().value);
    return {s, socklen_t(sizeof a)};
  }
  auto& a = reinterpret_cast<sockaddr_in6&>(s);
  a.sin6_family = AF_INET6;
  a.sin6_port = htons(e.port);
  std::memcpy(&a.sin6_addr, e.addr.v6().bytes.data(), 16);
  a.sin6_scope_id = e.addr.v6().scope_id;
  return {s, socklen_t(sizeof a)};
}

// A kernel TCP socket connected to `to`, with 10 s send and receive
// timeouts; -1 (errno set) if the connect failed.
inline int kernel_connect(const net::endpoint& to) {
  const auto [a, len] = kernel_address(to);
  const int fd = ::socket(a.ss_family, SOCK_STREAM, 0);
  timeval tv{10, 0};
  ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  ::setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
  if (::connect(fd, reinterpret_cast<const sockaddr*>(&a), len) != 0) {
    const int why = errno;  // connect's, for the caller
    ::close(fd);
    errno = why;
    return -1;
  }
  return fd;
}

// The same to an IPv4 address and port (host order).
inline int kernel_connect(std::uint32_t ip, std::uint16_t port) {
  return kernel_connect({net::ipv4_address{ip}, port});
}

// "Affine's socket is bound (or listening)": set by the fiber, waited for by
// a kernel side that speaks first. Without it the kernel's first datagram or
// SYN can meet a port not bound yet (port unreachable, RST) when the fiber is
// slow to start: one datagram lost, a connect refused.
class affine_ready {
 public:
  void set() { ready_.store(true, std::memory_order_release); }
  // On the kernel's thread; false after `limit`.
  bool wait(std::chrono::milliseconds limit = std::chrono::seconds(10)) const {
    const auto until = std::chrono::steady_clock::now() + limit;
    while (!ready_.load(std::memory_order_acquire)) {
      if (std::chrono::steady_clock::now() > until) return false;
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    return true;
  }

 private:
  std::atomic<bool> ready_{false};
};

// The kernel's side of a tap test: `kernel` on a thread of its own with every
// signal blocked (they are meant for the runtime's threads, and must not
// interrupt the kernel side's blocking calls with EINTR).
class kernel_side {
 public:
  explicit kernel_side(const std::function<void()>& kernel)
      : thread_([this, kernel] {
          sigset_t all;
          sigfillset(&all);
          pthread_sigmask(SIG_BLOCK, &all, nullptr);
          kernel();
          done_ = true;
        }) {}
  kernel_side(const kernel_side&) = delete;
  kernel_side& operator=(const kernel_side&) = delete;

  // Precondition: runs in a fiber, which sleeps (its reactor keeps polling
  // for the stack) until `kernel` has returned.
  void join() {
    while (!done_) this_fiber::sleep_for(std::chrono::milliseconds(1));
    thread_.join();
  }

 private:
  std::atomic<bool> done_{false};
  std::thread thread_;
};

}  // namespace affine::stack::testing
