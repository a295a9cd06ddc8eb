#include "drivers/uring/udp.hh"

#include <sys/socket.h>

#include <algorithm>
#include <cerrno>

#include "drivers/uring/sockets.hh"

namespace affine::drivers::uring {

namespace {

// One datagram's message: the peer's address and one buffer.
msghdr message(socket_address& peer, iovec& iov) {
  msghdr msg{};
  msg.msg_name = peer.get();
  msg.msg_namelen = peer.length;
  msg.msg_iov = &iov;
  msg.msg_iovlen = 1;
  return msg;
}

}  // namespace

std::expected<std::unique_ptr<net::detail::udp_impl>, std::error_code> uring_udp::bind(
    const ring_set& rings, const net::udp_options& opts) {
  if (opts.receive_queue == 0) return failure(EINVAL);
  const int family = family_of(opts.local.addr);
  const int fd = ::socket(family, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return failure(errno);
  auto u = std::make_unique<uring_udp>(rings, fd);  // closes the fd on any error
  // As on the stack: DF on every datagram, EMSGSIZE past the path MTU
  // instead of fragments (an IPv6 socket's IPv4-mapped peers too); IPv4
  // broadcasts may be sent.
  if (auto r = set_option(fd, IPPROTO_IP, IP_MTU_DISCOVER, IP_PMTUDISC_DO); !r) return std::unexpected(r.error());
  if (family == AF_INET6)
    if (auto r = set_option(fd, IPPROTO_IPV6, IPV6_MTU_DISCOVER, IPV6_PMTUDISC_DO); !r) return std::unexpected(r.error());
  if (auto r = set_option(fd, SOL_SOCKET, SO_BROADCAST, 1); !r) return std::unexpected(r.error());
  if (auto r = set_v6_only(fd, opts.local.addr, opts.v6_only); !r) return std::unexpected(r.error());
  const socket_address addr = to_sockaddr(opts.local);
  if (::bind(fd, addr.get(), addr.length) != 0) return failure(errno);
  u->local_ = local_endpoint(fd);
  return u;
}

std::expected<void, std::error_code> uring_udp::send_to(net::endpoint to, std::span<const std::byte> datagram) {
  socket_address addr = to_sockaddr(to);
  iovec iov{.iov_base = const_cast<std::byte*>(datagram.data()), .iov_len = datagram.size()};
  msghdr msg = message(addr, iov);
  const int res = file_.run({.what = request::kind::sendmsg, .buf = &msg, .flags = MSG_NOSIGNAL}, no_deadline, stop_mode::ignore);
  if (res < 0) return failure(-res);
  return {};
}

std::expected<net::udp_socket::datagram_info, std::error_code> uring_udp::recv_from(std::span<std::byte> buf,
                                                                                    std::uint64_t deadline_ns) {
  socket_address from;
  iovec iov{.iov_base = buf.data(), .iov_len = buf.size()};
  msghdr msg = message(from, iov);
  // MSG_TRUNC: the result is the datagram's whole length, so a short
  // buffer shows as truncation (udp(7)).
  const int res = file_.run({.what = request::kind::recvmsg, .buf = &msg, .flags = MSG_TRUNC}, deadline_ns);
  if (res < 0) return failure(-res);
  const auto whole = std::size_t(res);
  return net::udp_socket::datagram_info{
      .size = std::min(whole, buf.size()), .from = from_sockaddr(from), .truncated = whole > buf.size()};
}

}  // namespace affine::drivers::uring
