// The stack against the Linux kernel over net_tap, inside the network
// namespace netns_main.cc creates (DESIGN.md section 8): the kernel holds
// 10.77.0.1/24 on the tap, affine 10.77.0.2. Kernel peers are plain POSIX
// sockets and tools (ping, nc) run from a thread of this process, which is
// in the namespace; affine runs on two reactors (where there are two cores).

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <functional>
#include <optional>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "affine/net.hh"
#include "affine/runtime.hh"
#include "base/xoshiro.hh"
#include "stack/stack.hh"
#include "tests/stack/interop/tap_io.hh"
#include "tests/stack/wire_peer.hh"

namespace affine::stack {
namespace {

constexpr const char* tap_iface = "affstk0";
constexpr std::uint32_t kernel_ip = 0x0a4d0001;  // 10.77.0.1
constexpr std::uint32_t affine_ip = 0x0a4d0002;  // 10.77.0.2

using testing::bulk_bytes;
using testing::echo_server;
using testing::recv_some;
using testing::write_all;

class tap_interop : public testing::tap_peer {
 protected:
  tap_interop()
      : tap_peer({.device = "net_tap0", .iface = tap_iface, .kernel_address = "10.77.0.1/24",
                  .max_cores = std::getenv("AFFINE_TEST_ONE_CORE") == nullptr ? 2u : 1u}) {}

  // Runs `body` in a fiber with the stack up and the socket API on it;
  // `kernel` runs meanwhile on a thread of its own (the kernel's side).
  void run(std::function<void(stack&)> body, std::function<void()> kernel = {}) {
    stack_config sc;
    sc.address = affine_ip;
    sc.prefix_length = 24;
    sc.rx_interrupts = std::getenv("AFFINE_TEST_NO_INTR") == nullptr;
    with_stack(sc, [&](stack& st) {
      std::optional<testing::kernel_side> kernel_thread;
      if (kernel) kernel_thread.emplace([&] {
        if (const char* cap = std::getenv("AFFINE_TEST_CAPTURE")) {
          (void)std::system(fmt::format("(tshark -q -i {} -w {} -a duration:6 >/dev/null 2>&1 &) ; sleep 1.5", tap_iface, cap).c_str());
        }
        kernel();
      });
      body(st);
      if (kernel_thread) kernel_thread->join();
      for (unsigned c = 0; c < cores_; ++c) {
        for (auto& [k, v] : st.counters(c).nonzero()) st_counters_.emplace_back(fmt::format("c{}.{}", c, k), v);
        const auto& cc = st.counters(c);
        st_counters_.emplace_back(fmt::format("c{}.rx", c), cc.rx_packets.load());
        st_counters_.emplace_back(fmt::format("c{}.tx", c), cc.tx_packets.load());
        st_counters_.emplace_back(fmt::format("c{}.tx_ring_drops", c), st.tx_dropped(c));
      }
      if (std::getenv("AFFINE_TEST_VERBOSE"))
        for (auto& [k, v] : st_counters_) std::fprintf(stderr, "  %s = %llu\n", k.c_str(), (unsigned long long)v);
    });
  }

  std::vector<std::pair<std::string, std::uint64_t>> st_counters_;
  // Set once the test's affine listener is up; a kernel side that connects
  // waits for it.
  testing::affine_ready listening_;
};

using testing::kernel_connect;

TEST_F(tap_interop, KernelPingAndArpReachTheStack) {
  run([](stack&) {},
      [] {
        const int rc = std::system("ping -c 3 -i 0.2 -W 2 -q 10.77.0.2 >/dev/null");
        EXPECT_EQ(rc, 0) << "ping 10.77.0.2 failed";
        const int arp = std::system("ip neigh show 10.77.0.2 | grep -q lladdr");
        EXPECT_EQ(arp, 0) << "the kernel has no ARP entry for 10.77.0.2";
      });
}

TEST_F(tap_interop, KernelConnectsAndGetsItsBulkEchoedByteForByte) {
  static const std::size_t total = bulk_bytes();
  run(
      [this](stack&) {
        auto l = net::listen({.local = {net::any_address, 7}});
        ASSERT_TRUE(l.has_value()) << l.error().message();
        listening_.set();
        echo_server(*l, 1);
      },
      [this] {
        ASSERT_TRUE(listening_.wait());
        testing::kernel_echo_client({net::ipv4_address{affine_ip}, 7}, total, 1);
      });
}

TEST_F(tap_interop, AffineConnectsToTheKernelAndSendsBulkByteForByte) {
  static const std::size_t total = bulk_bytes();
  const int lfd = testing::kernel_listen({net::any_address, 9000});
  ASSERT_GE(lfd, 0) << std::strerror(errno);
  std::size_t got = 0;
  bool same = true;
  run([&](stack&) { testing::affine_bulk_source({net::ipv4_address{kernel_ip}, 9000}, total, 2); },
      [&] { got = testing::kernel_bulk_sink(lfd, 2, same); });
  ::close(lfd);
  EXPECT_EQ(got, total);
  EXPECT_TRUE(same);
}

TEST_F(tap_interop, NetcatTalksToAnAffineEchoServer) {
  run(
      [this](stack&) {
        auto l = net::listen({.local = {net::any_address, 7}});
        ASSERT_TRUE(l.has_value());
        listening_.set();
        echo_server(*l, 1);
      },
      [this] {
        ASSERT_TRUE(listening_.wait());
        FILE* f = ::popen("echo hello-affine | nc -N -w 5 10.77.0.2 7", "r");
        ASSERT_NE(f, nullptr);
        char line[64] = {};
        const bool read = std::fgets(line, sizeof line, f) != nullptr;
        ::pclose(f);
        EXPECT_TRUE(read);
        EXPECT_STREQ(line, "hello-affine\n");
      });
}

TEST_F(tap_interop, AThousandConcurrentKernelConnectionsAreServed) {
  static constexpr unsigned n = 1000;
  run(
      [this](stack&) {
        auto l = net::listen({.local = {net::any_address, 7}, .backlog = 1024});
        ASSERT_TRUE(l.has_value());
        listening_.set();
        echo_server(*l, n);
      },
      [this] {
        ASSERT_TRUE(listening_.wait());
        std::vector<int> fds;
        for (unsigned i = 0; i < n; ++i) {
          const int fd = kernel_connect(affine_ip, 7);
          if (fd < 0) break;
          fds.push_back(fd);
        }
        ASSERT_EQ(fds.size(), n) << "connect: " << std::strerror(errno);
        unsigned echoed = 0;
        for (unsigned i = 0; i < n; ++i) {
          const std::uint32_t v = i;
          if (::send(fds[i], &v, sizeof v, 0) != sizeof v) continue;
        }
        for (unsigned i = 0; i < n; ++i) {
          std::uint32_t back = ~0u;
          if (recv_some(fds[i], &back, sizeof back, MSG_WAITALL) == sizeof back && back == i) ++echoed;
          ::close(fds[i]);
        }
        EXPECT_EQ(echoed, n);
      });
}

}  // namespace
}  // namespace affine::stack
