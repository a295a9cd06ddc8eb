#include "drivers/uring/listener.hh"

#include <sys/socket.h>

#include <cerrno>

#include "drivers/uring/sockets.hh"
#include "drivers/uring/stream.hh"

namespace affine::drivers::uring {

std::expected<std::unique_ptr<net::detail::listener_impl>, std::error_code> uring_listener::listen(
    const ring_set& rings, const net::listen_options& opts) {
  auto fd = tcp_socket();
  if (!fd) return std::unexpected(fd.error());
  auto l = std::make_unique<uring_listener>(rings, *fd, opts.accepted);  // closes the fd on any error
  // A restarted server binds again at once, past its old TIME_WAIT sockets.
  if (auto r = set_option(*fd, SOL_SOCKET, SO_REUSEADDR, 1); !r) return std::unexpected(r.error());
  // Accepted sockets inherit the listener's buffer sizes (and with them the
  // window scale of their handshake).
  if (auto r = set_buffers(*fd, opts.accepted); !r) return std::unexpected(r.error());
  const sockaddr_in addr = to_sockaddr(opts.local);
  if (::bind(*fd, reinterpret_cast<const sockaddr*>(&addr), sizeof addr) != 0) return failure(errno);
  if (::listen(*fd, int(opts.backlog)) != 0) return failure(errno);
  l->local_ = local_endpoint(*fd);
  return l;
}

std::expected<std::unique_ptr<net::detail::stream_impl>, std::error_code> uring_listener::accept(
    std::uint64_t deadline_ns) {
  sockaddr_in peer{};
  socklen_t peer_len = sizeof peer;
  const int res = file_.run(
      {.what = request::kind::accept, .buf = &peer, .addr_len = &peer_len, .flags = SOCK_CLOEXEC}, deadline_ns);
  if (res < 0) return failure(-res);
  auto s = std::make_unique<uring_stream>(rings_, res, local_endpoint(res), from_sockaddr(peer));
  if (auto r = s->apply(accepted_); !r) return std::unexpected(r.error());
  return s;
}

}  // namespace affine::drivers::uring
