// The socket API's handles forward to the backend the runtime was set up
// with (net_backend.hh). This layer sits in drivers/ because both backends
// implement it: drivers/uring directly, and stack/ on top of the DPDK ports.

#include <atomic>
#include <climits>
#include <cstdint>

#include <fmt/format.h>

#include "drivers/net_backend.hh"
#include "reactor/preempt.hh"

namespace affine::net {

namespace {
std::atomic<detail::backend*> installed{nullptr};

std::unexpected<std::error_code> not_open() { return std::unexpected(std::make_error_code(std::errc::bad_file_descriptor)); }

// The ranges Linux's setsockopt takes (tcp_sock_set_keepidle and its
// kin, TCP_USER_TIMEOUT): one rule for both backends, so a program does
// not succeed on one and fail on the other. Zero is the default.
bool valid(const stream_options& o) {
  constexpr std::int64_t max_keepalive_s = 32767;  // Linux's MAX_TCP_KEEPIDLE, MAX_TCP_KEEPINTVL
  const auto in = [](std::int64_t v, std::int64_t max) { return v >= 0 && v <= max; };
  return in(o.keepalive_idle.count(), max_keepalive_s) && in(o.keepalive_interval.count(), max_keepalive_s) &&
         o.keepalive_count <= 127 && in(o.user_timeout.count(), INT_MAX);
}
}  // namespace

namespace detail {
void set_backend(backend* b) noexcept { installed.store(b, std::memory_order_release); }
backend* current_backend() noexcept { return installed.load(std::memory_order_acquire); }
}  // namespace detail


// ---- tcp_stream ---------------------------------------------------------------

tcp_stream::tcp_stream() = default;
tcp_stream::tcp_stream(std::unique_ptr<detail::stream_impl> impl) : impl_(std::move(impl)) {}
tcp_stream::tcp_stream(tcp_stream&&) noexcept = default;
tcp_stream& tcp_stream::operator=(tcp_stream&& o) noexcept {
  if (this != &o) {
    close();
    impl_ = std::move(o.impl_);
  }
  return *this;
}
tcp_stream::~tcp_stream() { close(); }

std::expected<std::size_t, std::error_code> tcp_stream::read(std::span<std::byte> buf, deadline deadline_ns) {
  const affine::detail::no_preempt guard;
  if (!impl_) return not_open();
  return impl_->read(buf, deadline_ns);
}

std::expected<void, std::error_code> tcp_stream::read_exactly(std::span<std::byte> buf, deadline deadline_ns) {
  const affine::detail::no_preempt guard;
  if (!impl_) return not_open();
  while (!buf.empty()) {
    auto n = impl_->read(buf, deadline_ns);
    if (!n) return std::unexpected(n.error());
    if (*n == 0) return std::unexpected(std::make_error_code(std::errc::connection_reset));
    buf = buf.subspan(*n);
  }
  return {};
}

std::expected<void, std::error_code> tcp_stream::write(std::span<const std::byte> data, deadline deadline_ns) {
  const affine::detail::no_preempt guard;
  if (!impl_) return not_open();
  return impl_->write(data, deadline_ns);
}

std::expected<std::span<const std::byte>, std::error_code> tcp_stream::read_view(deadline deadline_ns) {
  const affine::detail::no_preempt guard;
  if (!impl_) return not_open();
  return impl_->read_view(deadline_ns);
}

void tcp_stream::consume(std::size_t n) {
  const affine::detail::no_preempt guard;
  if (impl_) impl_->consume(n);
}

std::expected<std::span<std::byte>, std::error_code> tcp_stream::write_view(deadline deadline_ns) {
  const affine::detail::no_preempt guard;
  if (!impl_) return not_open();
  return impl_->write_view(deadline_ns);
}

std::expected<void, std::error_code> tcp_stream::commit(std::size_t n, deadline deadline_ns) {
  const affine::detail::no_preempt guard;
  if (!impl_) return not_open();
  return impl_->commit(n, deadline_ns);
}

std::expected<void, std::error_code> tcp_stream::shutdown_write() {
  const affine::detail::no_preempt guard;
  if (!impl_) return not_open();
  return impl_->shutdown_write();
}

void tcp_stream::close() {
  const affine::detail::no_preempt guard;
  if (impl_) {
    impl_->close();
    impl_.reset();
  }
}

void tcp_stream::abort() {
  const affine::detail::no_preempt guard;
  if (impl_) {
    impl_->abort();
    impl_.reset();
  }
}

std::expected<void, std::error_code> tcp_stream::set_no_delay(bool on) {
  const affine::detail::no_preempt guard;
  if (!impl_) return not_open();
  return impl_->set_no_delay(on);
}

std::expected<void, std::error_code> tcp_stream::set_keepalive(bool on) {
  const affine::detail::no_preempt guard;
  if (!impl_) return not_open();
  return impl_->set_keepalive(on);
}

endpoint tcp_stream::local() const { return impl_ ? impl_->local() : endpoint{}; }
endpoint tcp_stream::remote() const { return impl_ ? impl_->remote() : endpoint{}; }

// ---- tcp_listener -----------------------------------------------------------------

tcp_listener::tcp_listener() = default;
tcp_listener::tcp_listener(std::unique_ptr<detail::listener_impl> impl) : impl_(std::move(impl)) {}
tcp_listener::tcp_listener(tcp_listener&&) noexcept = default;
tcp_listener& tcp_listener::operator=(tcp_listener&& o) noexcept {
  if (this != &o) {
    close();
    impl_ = std::move(o.impl_);
  }
  return *this;
}
tcp_listener::~tcp_listener() { close(); }

std::expected<tcp_stream, std::error_code> tcp_listener::accept(deadline deadline_ns) {
  const affine::detail::no_preempt guard;
  if (!impl_) return not_open();
  auto s = impl_->accept(deadline_ns);
  if (!s) return std::unexpected(s.error());
  return tcp_stream(std::move(*s));
}

endpoint tcp_listener::local() const { return impl_ ? impl_->local() : endpoint{}; }

void tcp_listener::close() {
  const affine::detail::no_preempt guard;
  if (impl_) {
    impl_->close();
    impl_.reset();
  }
}

// ---- udp_socket -----------------------------------------------------------------------

udp_socket::udp_socket() = default;
udp_socket::udp_socket(std::unique_ptr<detail::udp_impl> impl) : impl_(std::move(impl)) {}
udp_socket::udp_socket(udp_socket&&) noexcept = default;
udp_socket& udp_socket::operator=(udp_socket&& o) noexcept {
  if (this != &o) {
    close();
    impl_ = std::move(o.impl_);
  }
  return *this;
}
udp_socket::~udp_socket() { close(); }

std::expected<void, std::error_code> udp_socket::send_to(endpoint to, std::span<const std::byte> datagram) {
  const affine::detail::no_preempt guard;
  if (!impl_) return not_open();
  return impl_->send_to(to, datagram);
}

std::expected<udp_socket::datagram_info, std::error_code> udp_socket::recv_from(std::span<std::byte> buf,
                                                                                deadline deadline_ns) {
  const affine::detail::no_preempt guard;
  if (!impl_) return not_open();
  return impl_->recv_from(buf, deadline_ns);
}

endpoint udp_socket::local() const { return impl_ ? impl_->local() : endpoint{}; }

void udp_socket::close() {
  const affine::detail::no_preempt guard;
  if (impl_) {
    impl_->close();
    impl_.reset();
  }
}

// ---- entry points ---------------------------------------------------------------------

std::expected<tcp_listener, std::error_code> listen(const listen_options& opts) {
  const affine::detail::no_preempt guard;
  detail::backend* b = detail::current_backend();
  if (b == nullptr) return std::unexpected(std::make_error_code(std::errc::network_down));
  if (!valid(opts.accepted)) return std::unexpected(std::make_error_code(std::errc::invalid_argument));
  auto l = b->listen(opts);
  if (!l) return std::unexpected(l.error());
  return tcp_listener(std::move(*l));
}

std::expected<tcp_stream, std::error_code> connect(endpoint to, deadline deadline_ns, const stream_options& opts) {
  const affine::detail::no_preempt guard;
  detail::backend* b = detail::current_backend();
  if (b == nullptr) return std::unexpected(std::make_error_code(std::errc::network_down));
  if (!valid(opts)) return std::unexpected(std::make_error_code(std::errc::invalid_argument));
  auto s = b->connect(to, deadline_ns, opts);
  if (!s) return std::unexpected(s.error());
  return tcp_stream(std::move(*s));
}

std::expected<udp_socket, std::error_code> bind_udp(const udp_options& opts) {
  const affine::detail::no_preempt guard;
  detail::backend* b = detail::current_backend();
  if (b == nullptr) return std::unexpected(std::make_error_code(std::errc::network_down));
  auto u = b->bind_udp(opts);
  if (!u) return std::unexpected(u.error());
  return udp_socket(std::move(*u));
}

// ---- waiting on several sockets -------------------------------------------------------

namespace {

// The handle's backend waiter (null: it has none), and whether the handle is open.
template <class Handle>
std::pair<detail::multi_waiter*, bool> waiter_of(const Handle& h) {
  const auto* impl = detail::handle_access::of(h);
  return {impl ? impl->waiter() : nullptr, impl != nullptr};
}

bool valid(const wait_entry& e) {
  // Only a stream can be waited on for writing (send_to never waits).
  const readiness askable = e.stream ? readiness::readable | readiness::writable : readiness::readable;
  return (e.stream != nullptr) + (e.listener != nullptr) + (e.udp != nullptr) == 1 && e.interest != readiness::none &&
         (e.interest & askable) == e.interest;
}

std::unexpected<std::error_code> failure(std::errc e) { return std::unexpected(std::make_error_code(e)); }

}  // namespace

// Entries of closed handles are answered here (closed, so ready); the rest
// go to their backend's waiter, which then only looks.
std::expected<std::size_t, std::error_code> wait_any(std::span<wait_entry> entries, deadline deadline_ns) {
  const affine::detail::no_preempt guard;
  if (entries.empty() || entries.size() > max_wait_entries) return failure(std::errc::invalid_argument);
  detail::multi_waiter* w = nullptr;
  std::size_t closed = 0;
  for (wait_entry& e : entries) {
    if (!valid(e)) return failure(std::errc::invalid_argument);
    const auto [mine, open] = e.stream ? waiter_of(*e.stream) : e.listener ? waiter_of(*e.listener) : waiter_of(*e.udp);
    e.ready = open ? readiness::none : readiness::closed;
    closed += !open;
    if (!open) continue;
    if (mine == nullptr) return failure(std::errc::operation_not_supported);
    if (w != nullptr && mine != w) return failure(std::errc::invalid_argument);  // two kinds of backend
    w = mine;
  }
  if (w == nullptr) return closed;
  auto n = w->wait_any(entries, closed > 0 ? 0 : deadline_ns.ns());
  if (n) return *n + closed;
  if (closed > 0 && n.error() == std::errc::timed_out) return closed;
  return n;
}

}  // namespace affine::net
