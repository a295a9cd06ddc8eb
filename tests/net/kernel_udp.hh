#pragma once
// A kernel UDP socket as a test's peer: bound to `local_ip` (an ephemeral
// port), sending to `peer_ip`, with a receive timeout. Calls that a signal
// meant for the runtime's threads interrupts are retried. Used over loopback
// (tests/drivers/uring) and across a tap (tests/stack/udp_tap_test.cc).

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstddef>
#include <cstdint>
#include <span>
#include <utility>

namespace affine::test {

class kernel_udp {
 public:
  kernel_udp(std::uint32_t local_ip, std::uint32_t peer_ip, int timeout_s)
      : fd_(::socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0)), peer_ip_(peer_ip) {
    const timeval t{.tv_sec = timeout_s, .tv_usec = 0};
    ::setsockopt(fd_, SOL_SOCKET, SO_RCVTIMEO, &t, sizeof t);
    const sockaddr_in a = address(local_ip, 0);
    ::bind(fd_, reinterpret_cast<const sockaddr*>(&a), sizeof a);
  }
  ~kernel_udp() { ::close(fd_); }
  kernel_udp(const kernel_udp&) = delete;
  kernel_udp& operator=(const kernel_udp&) = delete;

  std::uint16_t port() const {
    sockaddr_in a{};
    socklen_t len = sizeof a;
    ::getsockname(fd_, reinterpret_cast<sockaddr*>(&a), &len);
    return ntohs(a.sin_port);
  }
  bool connect(std::uint16_t port) const {
    const sockaddr_in a = address(peer_ip_, port);
    return ::connect(fd_, reinterpret_cast<const sockaddr*>(&a), sizeof a) == 0;
  }
  bool send_to(std::uint16_t port, std::span<const std::byte> d) const {
    const sockaddr_in a = address(peer_ip_, port);
    return ::sendto(fd_, d.data(), d.size(), 0, reinterpret_cast<const sockaddr*>(&a), sizeof a) == ssize_t(d.size());
  }
  // On a connected socket.
  bool send(std::span<const std::byte> d) const { return ::send(fd_, d.data(), d.size(), 0) == ssize_t(d.size()); }
  // The datagram's size and sender port, or -errno (-EAGAIN on timeout).
  std::pair<ssize_t, std::uint16_t> recv(std::span<std::byte> buf) const {
    for (;;) {
      sockaddr_in from{};
      socklen_t len = sizeof from;
      const ssize_t n = ::recvfrom(fd_, buf.data(), buf.size(), 0, reinterpret_cast<sockaddr*>(&from), &len);
      if (n >= 0) return {n, ntohs(from.sin_port)};
      if (errno != EINTR) return {-errno, 0};
    }
  }

 private:
  static sockaddr_in address(std::uint32_t ip, std::uint16_t port) {
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_port = htons(port);
    a.sin_addr.s_addr = htonl(ip);
    return a;
  }
  int fd_;
  std::uint32_t peer_ip_;
};

}  // namespace affine::test
