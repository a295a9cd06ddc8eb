#include "drivers/uring/sockets.hh"

#include <arpa/inet.h>
#include <netinet/tcp.h>
#include <sys/socket.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <string_view>
#include <utility>

namespace affine::drivers::uring {

int family_of(const net::address& a) { return a.is_v6() ? AF_INET6 : AF_INET; }

socket_address to_sockaddr(net::endpoint e) {
  socket_address out;
  if (e.addr.is_v6()) {
    auto& a = reinterpret_cast<sockaddr_in6&>(out.storage);
    a.sin6_family = AF_INET6;
    a.sin6_port = htons(e.port);
    const net::ipv6_address v6 = e.addr.v6();
    std::memcpy(a.sin6_addr.s6_addr, v6.bytes.data(), v6.bytes.size());
    a.sin6_scope_id = v6.scope_id;
    out.length = sizeof a;
  } else {
    auto& a = reinterpret_cast<sockaddr_in&>(out.storage);
    a.sin_family = AF_INET;
    a.sin_port = htons(e.port);
    a.sin_addr.s_addr = htonl(e.addr.v4().value);
    out.length = sizeof a;
  }
  return out;
}

net::endpoint from_sockaddr(const socket_address& a) {
  if (a.storage.ss_family == AF_INET6) {
    const auto& in6 = reinterpret_cast<const sockaddr_in6&>(a.storage);
    net::ipv6_address v6;
    std::memcpy(v6.bytes.data(), in6.sin6_addr.s6_addr, v6.bytes.size());
    v6.scope_id = in6.sin6_scope_id;
    return {.addr = v6, .port = ntohs(in6.sin6_port)};
  }
  if (a.storage.ss_family != AF_INET) return {};
  const auto& in = reinterpret_cast<const sockaddr_in&>(a.storage);
  return {.addr = net::ipv4_address{ntohl(in.sin_addr.s_addr)}, .port = ntohs(in.sin_port)};
}

net::endpoint local_endpoint(int fd) {
  socket_address a;
  if (::getsockname(fd, a.get(), &a.length) != 0) return {};
  return from_sockaddr(a);
}

std::expected<void, std::error_code> set_v6_only(int fd, const net::address& local, bool v6_only) {
  if (!local.is_v6()) return {};
  return set_option(fd, IPPROTO_IPV6, IPV6_V6ONLY, v6_only ? 1 : 0);
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
  // Zero leaves the kernel's own default (its sysctls), as net.hh says.
  for (const auto& [name, value] : {std::pair{TCP_KEEPIDLE, opts.keepalive_idle.count()},
                                   std::pair{TCP_KEEPINTVL, opts.keepalive_interval.count()},
                                   std::pair{TCP_KEEPCNT, std::int64_t(opts.keepalive_count)},
                                   std::pair{TCP_USER_TIMEOUT, opts.user_timeout.count()}})
    if (value > 0)
      if (auto r = set_option(fd, IPPROTO_TCP, name, int(value)); !r) return r;
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

std::expected<int, std::error_code> tcp_socket(int family) {
  const int fd = ::socket(family, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return failure(errno);
  return fd;
}

}  // namespace affine::drivers::uring
