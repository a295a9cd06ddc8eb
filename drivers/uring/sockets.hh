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

sockaddr_in to_sockaddr(net::endpoint e);
net::endpoint from_sockaddr(const sockaddr_in& a);
// getsockname(); the unspecified endpoint if the socket has none.
net::endpoint local_endpoint(int fd);

std::expected<void, std::error_code> set_option(int fd, int level, int name, int value);
// SO_SNDBUF / SO_RCVBUF where given (0 = the kernel's default). Before
// connect() or listen(): the window scale is agreed in the handshake.
std::expected<void, std::error_code> set_buffers(int fd, const net::stream_options& opts);
// TCP_NODELAY, SO_KEEPALIVE and SO_LINGER.
std::expected<void, std::error_code> set_flags(int fd, const net::stream_options& opts);
// A new TCP socket (SOCK_CLOEXEC), or the errno.
std::expected<int, std::error_code> tcp_socket();

}  // namespace affine::drivers::uring
