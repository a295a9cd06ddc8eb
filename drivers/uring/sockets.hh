#pragma once
// Plain socket plumbing for the uring backend: addresses, options, errors.
// Synchronous calls that never block (socket, bind, listen, setsockopt).

#include <netinet/in.h>

#include <expected>
#include <system_error>

#include "affine/net.hh"

namespace affine::drivers::uring {

// -res of a CQE, or errno, as the API reports it (the generic category, so
// it compares equal to std::make_error_code(std::errc::...)).
inline std::error_code errno_code(int err) { return {err, std::generic_category()}; }
inline std::unexpected<std::error_code> failure(int err) { return std::unexpected(errno_code(err)); }

// A socket address of either family, as bind, connect, accept and the
// message calls take it.
struct socket_address {
  sockaddr_storage storage{};
  socklen_t length = sizeof storage;
  sockaddr* get() { return reinterpret_cast<sockaddr*>(&storage); }
  const sockaddr* get() const { return reinterpret_cast<const sockaddr*>(&storage); }
};

// The address family a socket for `a` needs.
int family_of(const net::address& a);
// `e` in its own family. A dual-stack AF_INET6 socket takes an IPv4 one as
// it takes the IPv4-mapped address; an AF_INET socket refuses an IPv6 one
// (EAFNOSUPPORT).
socket_address to_sockaddr(net::endpoint e);
// The endpoint in `a` (AF_INET or AF_INET6; anything else: the unspecified
// IPv4 endpoint).
net::endpoint from_sockaddr(const socket_address& a);
// getsockname(); the unspecified endpoint if the socket has none.
net::endpoint local_endpoint(int fd);
// For a socket on an IPv6 address: IPV6_V6ONLY as asked, set either way so
// that the host's net.ipv6.bindv6only does not decide.
std::expected<void, std::error_code> set_v6_only(int fd, const net::address& local, bool v6_only);

std::expected<void, std::error_code> set_option(int fd, int level, int name, int value);
// SO_SNDBUF / SO_RCVBUF where given (0 = the kernel's default). Before
// connect() or listen(): the window scale is agreed in the handshake.
std::expected<void, std::error_code> set_buffers(int fd, const net::stream_options& opts);
// TCP_NODELAY, SO_KEEPALIVE and SO_LINGER.
std::expected<void, std::error_code> set_flags(int fd, const net::stream_options& opts);
// A new TCP socket of `family` (SOCK_CLOEXEC), or the errno.
std::expected<int, std::error_code> tcp_socket(int family);

}  // namespace affine::drivers::uring
