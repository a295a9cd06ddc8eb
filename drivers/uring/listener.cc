#include "drivers/uring/listener.hh"

#include <sys/socket.h>

#include <cerrno>

#include "drivers/uring/sockets.hh"
#include "drivers/uring/stream.hh"

namespace affine::drivers::uring {

std::expected<std::unique_ptr<net::detail::listener_impl>, std::error_code> uring_listener::listen(
    const ring_set& rings, const net::listen_options& opts) {
  const int family = family_of(opts.local.addr);
  auto fd = tcp_socket(family);
  if (!fd) return std::unexpected(fd.error());
  auto l = std::make_unique<uring_listener>(rings, *fd, opts.accepted);  // closes the fd on any error
  // A restarted server binds again at once, past its old TIME_WAIT sockets.
  if (auto r = set_option(*fd, SOL_SOCKET, SO_REUSEADDR, 1); !r) return std::unexpected(r.error());
  // Accepted sockets inherit the listener's buffer sizes (and with them the
  // window scale of their handshake).
  if (auto r = set_buffers(*fd, opts.accepted); !r) return std::unexpected(r.error());
  if (auto r = set_v6_only(*fd, opts.local.addr, opts.v6_only); !r) return std::unexpected(r.error());
  const socket_address addr = to_sockaddr(opts.local);
  if (::bind(*fd, addr.get(), addr.length) != 0) return failure(errno);
  if (::listen(*fd, int(opts.backlog)) != 0) return failure(errno);
  l->local_ = local_endpoint(*fd);
  return l;
}

std::expected<std::unique_ptr<net::detail::stream_impl>, std::error_code> uring_listener::accept(
    std::uint64_t deadline_ns) {
  socket_address peer;
  const int res = file_.run(
      {.what = request::kind::accept, .buf = peer.get(), .addr_len = &peer.length, .flags = SOCK_CLOEXEC},
      deadline_ns);
  if (res < 0) return failure(-res);
  auto s = std::make_unique<uring_stream>(rings_, res, local_endpoint(res), from_sockaddr(peer));
  if (auto r = s->apply(accepted_); !r) return std::unexpected(r.error());
  return s;
}

}  // namespace affine::drivers::uring
