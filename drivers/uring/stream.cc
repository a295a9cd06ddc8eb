#include "drivers/uring/stream.hh"

#include <netinet/tcp.h>
#include <sys/socket.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "drivers/uring/sockets.hh"

namespace affine::drivers::uring {

std::expected<std::unique_ptr<net::detail::stream_impl>, std::error_code> uring_stream::connect(
    const ring_set& rings, net::endpoint to, std::uint64_t deadline_ns, const net::stream_options& opts) {
  const int family = family_of(to.addr);
  auto fd = tcp_socket(family);
  if (!fd) return std::unexpected(fd.error());
  auto s = std::make_unique<uring_stream>(rings, *fd, net::endpoint{}, to);  // closes the fd on any error
  if (auto r = set_buffers(*fd, opts); !r) return std::unexpected(r.error());
  if (auto r = s->apply(opts); !r) return std::unexpected(r.error());
  socket_address addr = to_sockaddr(to);
  const int res = s->file_.run({.what = request::kind::connect, .buf = addr.get(), .len = addr.length}, deadline_ns);
  if (res < 0) return failure(-res);
  s->local_ = local_endpoint(*fd);
  return s;
}

std::expected<void, std::error_code> uring_stream::apply(const net::stream_options& opts) {
  if (auto r = set_flags(file_.fd(), opts); !r) return r;
  if (opts.linger && opts.linger->count() > 0) file_.close_may_block();
  return {};
}

std::expected<std::size_t, std::error_code> uring_stream::read(std::span<std::byte> buf, std::uint64_t deadline_ns) {
  if (buf.empty()) return 0;
  if (has_lent_input()) {  // what read_view lent and was not consumed comes first
    const std::size_t n = std::min(buf.size(), in_end_ - in_begin_);
    std::memcpy(buf.data(), in_.get() + in_begin_, n);
    consume(n);
    return n;
  }
  const int res = file_.run({.what = request::kind::recv, .buf = buf.data(), .len = buf.size()}, deadline_ns);
  if (res < 0) return failure(-res);
  return std::size_t(res);
}

std::expected<void, std::error_code> uring_stream::write(std::span<const std::byte> data, std::uint64_t deadline_ns) {
  // A send may take part of the data (a full send buffer): go on from there.
  while (!data.empty()) {
    // MSG_NOSIGNAL: a peer that went away is EPIPE here, not a SIGPIPE.
    const int res = file_.run({.what = request::kind::send,
                               .buf = const_cast<std::byte*>(data.data()),
                               .len = data.size(),
                               .flags = MSG_NOSIGNAL},
                              deadline_ns);
    if (res <= 0) return failure(res == 0 ? EPIPE : -res);
    data = data.subspan(std::size_t(res));
  }
  return {};
}

std::expected<std::span<const std::byte>, std::error_code> uring_stream::read_view(std::uint64_t deadline_ns) {
  if (!has_lent_input()) {
    if (!in_) in_ = std::make_unique_for_overwrite<std::byte[]>(view_bytes);
    const int res = file_.run({.what = request::kind::recv, .buf = in_.get(), .len = view_bytes}, deadline_ns);
    if (res < 0) return failure(-res);
    in_begin_ = 0;
    in_end_ = std::size_t(res);  // 0: the end of the stream, an empty view
  }
  return std::span<const std::byte>(in_.get() + in_begin_, in_end_ - in_begin_);
}

void uring_stream::consume(std::size_t n) { in_begin_ += std::min(n, in_end_ - in_begin_); }

std::expected<std::span<std::byte>, std::error_code> uring_stream::write_view(std::uint64_t) {
  if (file_.fd() < 0) return failure(EBADF);
  if (!out_) out_ = std::make_unique_for_overwrite<std::byte[]>(view_bytes);
  return std::span<std::byte>(out_.get(), view_bytes);
}

std::expected<void, std::error_code> uring_stream::commit(std::size_t n, std::uint64_t deadline_ns) {
  if (!out_ || n > view_bytes) return failure(EINVAL);
  return write({out_.get(), n}, deadline_ns);
}

std::expected<void, std::error_code> uring_stream::shutdown_write() {
  const int res = file_.run({.what = request::kind::shutdown, .flags = SHUT_WR}, no_deadline, stop_mode::ignore);
  if (res < 0) return failure(-res);
  return {};
}

void uring_stream::abort() {
  // Linger on, zero seconds: close() sends RST and drops unsent data.
  const linger l{.l_onoff = 1, .l_linger = 0};
  ::setsockopt(file_.fd(), SOL_SOCKET, SO_LINGER, &l, sizeof l);
  file_.close();
}

std::expected<void, std::error_code> uring_stream::set_no_delay(bool on) {
  return set_option(file_.fd(), IPPROTO_TCP, TCP_NODELAY, on ? 1 : 0);
}

std::expected<void, std::error_code> uring_stream::set_keepalive(bool on) {
  return set_option(file_.fd(), SOL_SOCKET, SO_KEEPALIVE, on ? 1 : 0);
}

}  // namespace affine::drivers::uring
