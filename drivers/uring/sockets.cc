#include "drivers/uring/sockets.hh"

#include <arpa/inet.h>
#include <netinet/tcp.h>
#include <sys/socket.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <string_view>

namespace affine::drivers::uring {

sockaddr_in to_sockaddr(net::endpoint e) {
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(e.port);
  a.sin_addr.s_addr = htonl(e.addr.value);
  return a;
}

net::endpoint from_sockaddr(const sockaddr_in& a) {
  return {.addr = {ntohl(a.sin_addr.s_addr)}, .port = ntohs(a.sin_port)};
}

net::endpoint local_endpoint(int fd) {
  sockaddr_in a{};
  socklen_t len = sizeof a;
  if (::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len) != 0 || a.sin_family != AF_INET) return {};
  return from_sockaddr(a);
}

std::expected<void, std::error_code> set_option(int fd, int level, int name, int value) {
  if (::setsockopt(fd, level, name, &value, sizeof value) != 0) return failure(errno);
  return {};
}

std::expected<void, std::error_code> set_buffers(int fd, const net::stream_options& opts) {
  if (opts.send_buffer != 0)
    if (auto r = set_option(fd, SOL_SOCKET, SO_SNDBUF, int(opts.send_buffer)); !r) return r;
  if (opts.receive_buffer != 0)
    if (auto r = set_option(fd, SOL_SOCKET, SO_RCVBUF, int(opts.receive_buffer)); !r) return r;
  return {};
}

std::expected<void, std::error_code> set_flags(int fd, const net::stream_options& opts) {
  if (opts.no_delay)
    if (auto r = set_option(fd, IPPROTO_TCP, TCP_NODELAY, 1); !r) return r;
  if (opts.keepalive)
    if (auto r = set_option(fd, SOL_SOCKET, SO_KEEPALIVE, 1); !r) return r;
  if (opts.congestion != net::congestion_control::configured) {
    const std::string_view name = opts.congestion == net::congestion_control::cubic ? "cubic" : "reno";
    if (::setsockopt(fd, IPPROTO_TCP, TCP_CONGESTION, name.data(), socklen_t(name.size())) != 0) return failure(errno);
  }
  if (opts.linger) {
    // SO_LINGER counts whole seconds: a linger under one is still a linger.
    const auto ms = std::max<std::int64_t>(0, opts.linger->count());
    const linger l{.l_onoff = 1, .l_linger = int((ms + 999) / 1000)};
    if (::setsockopt(fd, SOL_SOCKET, SO_LINGER, &l, sizeof l) != 0) return failure(errno);
  }
  return {};
}

std::expected<int, std::error_code> tcp_socket() {
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return failure(errno);
  return fd;
}

}  // namespace affine::drivers::uring
