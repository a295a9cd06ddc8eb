#pragma once
// What the tap interop tests share on both sides: the kernel side's
// blocking I/O (retried on EINTR), an echo server on the stack, and the
// size of the bulk transfers.

#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <span>
#include <thread>
#include <vector>

#include "affine/fiber.hh"
#include "affine/net.hh"
#include "tests/stack/byte_pattern.hh"
#include "tests/stack/wire_peer.hh"

namespace affine::stack::testing {

// Bytes each way in the bulk tests: 256 MiB (the figure) unless
// AFFINE_INTEROP_MIB says otherwise (the sanitizer build moves less).
inline std::size_t bulk_bytes() {
  if (const char* m = std::getenv("AFFINE_INTEROP_MIB")) return std::size_t(std::atoi(m)) << 20;
  return std::size_t(256) << 20;
}

// recv(2), retried when a signal interrupts it (the runtime's threads get
// signals; this thread must not take them for an error).
inline ssize_t recv_some(int fd, void* buf, std::size_t len, int flags = 0) {
  for (;;) {
    const ssize_t n = ::recv(fd, buf, len, flags);
    if (n >= 0 || errno != EINTR) return n;
  }
}

inline bool write_all(int fd, std::span<const std::byte> d) {
  while (!d.empty()) {
    const ssize_t n = ::send(fd, d.data(), d.size(), MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    d = d.subspan(std::size_t(n));
  }
  return true;
}

// An echo server on the stack: every connection a fiber.
inline void echo_server(net::tcp_listener& l, unsigned connections) {
  std::vector<fiber_handle> fibers;
  for (unsigned i = 0; i < connections; ++i) {
    auto c = l.accept(now_ns() + 20'000'000'000ull);
    if (!c) {
      ADD_FAILURE() << "accept: " << c.error().message();
      break;
    }
    fibers.push_back(spawn([c = std::move(*c)]() mutable {
      std::array<std::byte, 16384> buf;
      for (;;) {
        auto n = c.read(buf, now_ns() + 20'000'000'000ull);
        if (!n) ADD_FAILURE() << "echo read: " << n.error().message();
        if (!n || *n == 0) break;
        auto w = c.write({buf.data(), *n}, now_ns() + 20'000'000'000ull);
        if (!w) ADD_FAILURE() << "echo write: " << w.error().message();
        if (!w) break;
      }
    }).value());
  }
  for (auto& f : fibers) f.join();
}

// A kernel TCP listener on `at` (SO_REUSEADDR; an IPv6 one takes IPv6
// only); -1 (errno set) if it failed.
inline int kernel_listen(const net::endpoint& at) {
  const auto [a, len] = kernel_address(at);
  const int fd = ::socket(a.ss_family, SOCK_STREAM, 0);
  const int one = 1;
  ::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  if (a.ss_family == AF_INET6) ::setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof one);
  if (::bind(fd, reinterpret_cast<const sockaddr*>(&a), len) != 0 || ::listen(fd, 8) != 0) {
    const int why = errno;
    ::close(fd);
    errno = why;
    return -1;
  }
  return fd;
}

// The kernel's side of a bulk echo: connects to `to`, sends `total` bytes
// of pattern `seed` from a thread of its own while it reads the echo back,
// and checks it byte for byte.
inline void kernel_echo_client(const net::endpoint& to, std::size_t total, std::uint64_t seed) {
  const int fd = kernel_connect(to);
  ASSERT_GE(fd, 0) << "connect to " << to.to_string() << ": " << std::strerror(errno);
  const byte_pattern p{seed};
  std::thread writer([&] {
    std::vector<std::byte> chunk(65536);
    for (std::size_t off = 0; off < total; off += chunk.size()) {
      p.fill(off, chunk);
      if (!write_all(fd, chunk)) break;
    }
    ::shutdown(fd, SHUT_WR);
  });
  std::vector<std::byte> buf(65536);
  std::size_t got = 0;
  bool same = true;
  while (got < total) {
    const ssize_t n = recv_some(fd, buf.data(), buf.size());
    if (n <= 0) {
      ADD_FAILURE() << "kernel recv after " << got << " bytes: " << (n == 0 ? "end of stream" : std::strerror(errno));
      break;
    }
    same = same && p.check(got, {buf.data(), std::size_t(n)});
    got += std::size_t(n);
  }
  writer.join();
  ::close(fd);
  EXPECT_EQ(got, total);
  EXPECT_TRUE(same) << "the echo differs from what was sent";
}

// The kernel's side of an affine sender: accepts one connection on the
// listening `lfd` and reads it to its end, checking pattern `seed`.
// Returns the bytes that came; `same` is false at the first difference.
inline std::size_t kernel_bulk_sink(int lfd, std::uint64_t seed, bool& same) {
  int fd;
  do fd = ::accept(lfd, nullptr, nullptr);
  while (fd < 0 && errno == EINTR);
  EXPECT_GE(fd, 0) << "accept: " << std::strerror(errno);
  if (fd < 0) return 0;
  const byte_pattern p{seed};
  std::vector<std::byte> buf(65536);
  std::size_t got = 0;
  for (;;) {
    const ssize_t n = recv_some(fd, buf.data(), buf.size());
    if (n <= 0) break;
    same = same && p.check(got, {buf.data(), std::size_t(n)});
    got += std::size_t(n);
  }
  ::close(fd);
  return got;
}

// The stack's side of the same: connects to `to` and sends `total` bytes of
// pattern `seed`, then closes.
inline void affine_bulk_source(const net::endpoint& to, std::size_t total, std::uint64_t seed) {
  auto c = net::connect(to, now_ns() + 10'000'000'000ull);
  ASSERT_TRUE(c.has_value()) << "connect to " << to.to_string() << ": " << c.error().message();
  const byte_pattern p{seed};
  std::vector<std::byte> chunk(65536);
  for (std::size_t off = 0; off < total; off += chunk.size()) {
    p.fill(off, chunk);
    ASSERT_TRUE(c->write(chunk, now_ns() + 20'000'000'000ull).has_value());
  }
  c->close();
}

}  // namespace affine::stack::testing
