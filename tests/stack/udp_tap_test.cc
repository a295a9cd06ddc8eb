// UDP between the stack and the Linux kernel over net_tap, inside the
// network namespace netns_main.cc creates (DESIGN.md section 8): the kernel
// holds 10.78.0.1/24 on the tap, affine 10.78.0.2. The kernel's checks are
// the test's: it drops a datagram whose checksum is wrong, reassembles what
// it fragments, and turns our port unreachable into ECONNREFUSED only when
// the ICMP quote matches its socket.

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdlib>
#include <functional>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "affine/net.hh"
#include "affine/runtime.hh"
#include "stack/stack.hh"
#include "tests/net/kernel_udp.hh"
#include "tests/stack/wire_peer.hh"

namespace affine::stack {
namespace {

constexpr const char* tap_iface = "affudp0";
constexpr std::uint32_t kernel_ip = 0x0a4e0001;  // 10.78.0.1
constexpr std::uint32_t affine_ip = 0x0a4e0002;  // 10.78.0.2
constexpr std::uint16_t affine_port = 5300;
constexpr std::uint64_t seconds = 1'000'000'000;

// A kernel UDP socket on 10.78.0.1 sending to affine, 5 s receive timeout.
struct kernel_udp : test::kernel_udp {
  kernel_udp() : test::kernel_udp(kernel_ip, affine_ip, 5) {}
};

std::vector<std::byte> datagram(std::size_t n, std::size_t seed) {
  std::vector<std::byte> d(n);
  for (std::size_t i = 0; i < n; ++i) d[i] = std::byte(i * 31 + seed);
  return d;
}

class udp_tap : public testing::tap_peer {
 protected:
  udp_tap() : tap_peer({.device = "net_tap1", .iface = tap_iface, .kernel_address = "10.78.0.1/24", .max_cores = 2}) {}

  // `body` in a fiber with the stack as the socket API's backend, `kernel`
  // meanwhile on a thread of its own.
  void run(const std::function<void()>& body, const std::function<void()>& kernel) {
    stack_config sc;
    sc.address = affine_ip;
    // RX interrupts only with AFFINE_TEST_RX_INTR set: net_tap reads a
    // queue only after its SIGIO handler ran (tap_trigger), and that signal
    // may go to another thread after the interrupt woke the reactor, which
    // then finds nothing and sleeps with the datagram queued. TCP's timers
    // hide the stall; a UDP exchange waits for the next packet.
    sc.rx_interrupts = std::getenv("AFFINE_TEST_RX_INTR") != nullptr;
    with_stack(sc, [&](stack&) {
      testing::kernel_side k(kernel);
      body();
      k.join();
    });
  }
};

// The kernel sends, affine echoes: every size up to one frame, and one
// datagram the kernel must fragment (affine reassembles it, and answers
// with its size: its own sends never fragment).
TEST_F(udp_tap, AKernelClientGetsEveryDatagramEchoedAndAFragmentedOneArrivesWhole) {
  constexpr int rounds = 300;
  constexpr std::size_t big = 4000;
  std::atomic<int> echoed{0};
  std::string big_answer;
  testing::affine_ready bound;
  run(
      [&] {
        auto u = net::bind_udp({.local = {net::any_address, affine_port}});
        ASSERT_TRUE(u.has_value()) << u.error().message();
        bound.set();
        std::vector<std::byte> buf(8192);
        for (int i = 0; i <= rounds; ++i) {
          auto got = u->recv_from(buf, now_ns() + 10 * seconds);
          ASSERT_TRUE(got.has_value()) << i << ": " << got.error().message();
          EXPECT_EQ(got->from.addr.v4().value, kernel_ip);
          if (got->size == big) {
            const bool same = std::ranges::equal(std::span(buf).first(big), datagram(big, 7));
            const std::string answer = fmt::format("{} {}", got->size, same ? "intact" : "damaged");
            ASSERT_TRUE(u->send_to(got->from, std::as_bytes(std::span(answer))));
          } else {
            ASSERT_TRUE(u->send_to(got->from, std::span(buf).first(got->size)));
          }
        }
      },
      [&] {
        kernel_udp k;
        if (!bound.wait()) return;
        std::vector<std::byte> in(8192);
        for (int i = 0; i < rounds; ++i) {
          const auto out = datagram(std::size_t(i * 41) % 1473, std::size_t(i));
          if (!k.send_to(affine_port, out)) break;
          const auto [n, from] = k.recv(in);
          const bool same = n == ssize_t(out.size()) && std::equal(out.begin(), out.end(), in.begin());
          if (same && from == affine_port) ++echoed;
        }
        if (!k.send_to(affine_port, datagram(big, 7))) return;
        if (const auto [n, from] = k.recv(in); n > 0)
          big_answer.assign(reinterpret_cast<const char*>(in.data()), std::size_t(n));
      });
  EXPECT_EQ(echoed.load(), rounds);
  EXPECT_EQ(big_answer, "4000 intact");
}

// Affine speaks first (it resolves the kernel's address by ARP on the way).
TEST_F(udp_tap, AffineSendsToAKernelSocketAndGetsItsAnswers) {
  constexpr int rounds = 100;
  std::atomic<std::uint16_t> kernel_port{0};
  int answered = 0;
  run(
      [&] {
        auto u = net::bind_udp({.local = {net::any_address, 0}});
        ASSERT_TRUE(u.has_value());
        while (kernel_port == 0) this_fiber::sleep_for(std::chrono::milliseconds(1));
        std::vector<std::byte> in(2048);
        for (int i = 0; i < rounds; ++i) {
          const auto out = datagram(std::size_t(1 + i * 13), std::size_t(i));
          ASSERT_TRUE(u->send_to({net::ipv4_address{kernel_ip}, kernel_port}, out));
          auto got = u->recv_from(in, now_ns() + 10 * seconds);
          ASSERT_TRUE(got.has_value()) << i << ": " << got.error().message();
          if (got->size == out.size() && std::equal(out.begin(), out.end(), in.begin())) ++answered;
        }
      },
      [&] {
        kernel_udp k;
        kernel_port = k.port();
        std::vector<std::byte> in(2048);
        for (int i = 0; i < rounds; ++i) {
          const auto [n, from] = k.recv(in);
          if (n < 0) return;
          if (!k.send_to(from, std::span(in).first(std::size_t(n)))) return;
        }
      });
  EXPECT_EQ(answered, rounds);
}

// RFC 1122 4.1.3.1: the stack answers a datagram for an unbound port with
// ICMP port unreachable; the kernel matches the quote to its connected
// socket and reports ECONNREFUSED.
TEST_F(udp_tap, AConnectedKernelSocketToAnUnboundPortGetsConnectionRefused) {
  int err = 0;
  run([] {},
      [&] {
        kernel_udp k;
        if (!k.connect(affine_port + 1)) return;
        const std::array<std::byte, 4> ping{};
        std::array<std::byte, 16> in;
        if (k.send(ping)) err = int(-k.recv(in).first);
      });
  EXPECT_EQ(err, ECONNREFUSED);
}

}  // namespace
}  // namespace affine::stack
