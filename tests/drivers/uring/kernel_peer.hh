#pragma once
// The kernel side of the uring tests: plain blocking POSIX sockets on
// 127.0.0.1 (loopback only), used from std::threads. Every socket has a
// 10 s send/receive timeout, so a test that goes wrong fails, never hangs.

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <span>
#include <utility>

namespace affine::test {

class kernel_socket {
 public:
  kernel_socket() = default;
  explicit kernel_socket(int fd) : fd_(fd) {
    const timeval t{.tv_sec = 10, .tv_usec = 0};
    ::setsockopt(fd_, SOL_SOCKET, SO_RCVTIMEO, &t, sizeof t);
    ::setsockopt(fd_, SOL_SOCKET, SO_SNDTIMEO, &t, sizeof t);
  }
  kernel_socket(kernel_socket&& o) noexcept : fd_(std::exchange(o.fd_, -1)) {}
  kernel_socket& operator=(kernel_socket&& o) noexcept {
    std::swap(fd_, o.fd_);
    return *this;
  }
  ~kernel_socket() { close(); }

  bool valid() const { return fd_ >= 0; }
  int fd() const { return fd_; }

  // A listening socket on 127.0.0.1 and a port the kernel picks.
  static kernel_socket listen_any() {
    kernel_socket s(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
    sockaddr_in a = loopback(0);
    if (::bind(s.fd_, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0 || ::listen(s.fd_, 128) != 0) s.close();
    return s;
  }
  // Bound to a free port but not listening: connecting there is refused.
  static kernel_socket bound_only() {
    kernel_socket s(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
    sockaddr_in a = loopback(0);
    if (::bind(s.fd_, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0) s.close();
    return s;
  }
  static kernel_socket connect_to(std::uint16_t port) {
    kernel_socket s(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
    sockaddr_in a = loopback(port);
    if (::connect(s.fd_, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0) s.close();
    return s;
  }

  std::uint16_t port() const {
    sockaddr_in a{};
    socklen_t len = sizeof a;
    ::getsockname(fd_, reinterpret_cast<sockaddr*>(&a), &len);
    return ntohs(a.sin_port);
  }
  kernel_socket accept_one() const { return kernel_socket(::accept4(fd_, nullptr, nullptr, SOCK_CLOEXEC)); }

  bool write_all(std::span<const std::byte> data) const {
    while (!data.empty()) {
      const ssize_t n = ::send(fd_, data.data(), data.size(), MSG_NOSIGNAL);
      if (n <= 0) return false;
      data = data.subspan(std::size_t(n));
    }
    return true;
  }
  bool read_exactly(std::span<std::byte> buf) const {
    while (!buf.empty()) {
      const ssize_t n = ::recv(fd_, buf.data(), buf.size(), 0);
      if (n <= 0) return false;
      buf = buf.subspan(std::size_t(n));
    }
    return true;
  }
  // > 0 bytes, 0 at end of stream, < 0 on error or timeout.
  ssize_t read_some(std::span<std::byte> buf) const { return ::recv(fd_, buf.data(), buf.size(), 0); }
  void shutdown_write() const { ::shutdown(fd_, SHUT_WR); }
  // Close with an RST instead of a FIN.
  void reset() {
    const linger l{.l_onoff = 1, .l_linger = 0};
    ::setsockopt(fd_, SOL_SOCKET, SO_LINGER, &l, sizeof l);
    close();
  }
  void close() {
    if (fd_ >= 0) ::close(std::exchange(fd_, -1));
  }

 private:
  static sockaddr_in loopback(std::uint16_t port) {
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_port = htons(port);
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    return a;
  }
  int fd_ = -1;
};

// A byte stream that a reader can check without keeping a copy: byte i of
// stream `seed`, and a running FNV-1a checksum.
inline std::byte pattern_byte(std::uint64_t seed, std::uint64_t i) {
  std::uint64_t z = seed * 0x9e3779b97f4a7c15ULL + (i >> 3);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return std::byte((z ^ (z >> 31)) >> ((i & 7) * 8));
}

class fnv1a {
 public:
  void add(std::span<const std::byte> data) {
    for (std::byte b : data) h_ = (h_ ^ std::uint64_t(b)) * 0x100000001b3ULL;
    bytes_ += data.size();
  }
  std::uint64_t value() const { return h_; }
  std::uint64_t bytes() const { return bytes_; }

 private:
  std::uint64_t h_ = 0xcbf29ce484222325ULL;
  std::uint64_t bytes_ = 0;
};

}  // namespace affine::test
