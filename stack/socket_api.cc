// The fiber socket API (include/affine/net.hh) on the userspace stack:
// blocking-style calls that take the socket's lock, change the connection,
// settle it (send, wake, publish the deadline) and, when they must wait,
// park on the socket's wait queue with the lock released atomically.

#include <mutex>

#include "affine/fiber.hh"
#include "reactor/here.hh"
#include "stack/family.hh"
#include "stack/per_core.hh"
#include "stack/stack.hh"
#include "stack/wait_any.hh"

namespace affine::stack {

namespace {

std::error_code err(std::errc e) { return std::make_error_code(e); }

class stream final : public net::detail::stream_impl {
 public:
  // `mapped`: the stream came from a socket on an IPv6 address and reports
  // its IPv4 addresses as IPv4-mapped ones (stack/family.hh).
  stream(socket_ref s, bool mapped) : s_(std::move(s)), mapped_(mapped) {
    std::lock_guard g(s_->lock);
    s_->handle_open = true;
  }
  ~stream() override { close(); }

  std::expected<std::size_t, std::error_code> read(std::span<std::byte> buf, std::uint64_t deadline) override {
    if (!s_) return std::unexpected(err(std::errc::bad_file_descriptor));
    return receive([&] { return s_->conn.recv(buf); }, !buf.empty(), deadline);
  }

  // The receive ring's bytes, lent where they lie until consume().
  std::expected<std::span<const std::byte>, std::error_code> read_view(std::uint64_t deadline) override {
    if (!s_) return std::unexpected(err(std::errc::bad_file_descriptor));
    return receive([&] { return s_->conn.recv_view(); }, true, deadline, false);
  }

  void consume(std::size_t n) override {
    if (s_ && n > 0) change([n](tcp::connection& c) { c.consume(n); });  // a window update may be due
  }

  // The send ring's free space, lent until commit(): the bytes are queued
  // from where the caller put them.
  std::expected<std::span<std::byte>, std::error_code> write_view(std::uint64_t deadline) override {
    if (!s_) return std::unexpected(err(std::errc::bad_file_descriptor));
    for (;;) {
      s_->lock.lock();
      auto room = s_->conn.send_room();
      if (!room || !room->empty()) {
        lent_ = room ? *room : std::span<std::byte>{};
        s_->lock.unlock();
        return room;
      }
      if (now_ns() >= deadline) {
        s_->lock.unlock();
        return std::unexpected(err(std::errc::timed_out));
      }
      if (const wait_result w = s_->writers.wait(s_->lock, deadline); w == wait_result::canceled)
        return std::unexpected(error_of(w));
    }
  }

  std::expected<void, std::error_code> commit(std::size_t n, std::uint64_t) override {
    if (!s_) return std::unexpected(err(std::errc::bad_file_descriptor));
    if (n > lent_.size()) return std::unexpected(err(std::errc::invalid_argument));
    const std::span<const std::byte> bytes = lent_.first(n);
    lent_ = {};
    if (n == 0) return {};
    s_->lock.lock();
    auto taken = s_->conn.send(bytes);  // in place: no copy (the room is still the ring's free space)
    const auto what = st().settle(*s_, now_ns());
    s_->lock.unlock();
    st().finish(*s_, what);
    if (!taken) return std::unexpected(taken.error());
    return {};
  }

  std::expected<void, std::error_code> write(std::span<const std::byte> data, std::uint64_t deadline) override {
    if (!s_) return std::unexpected(err(std::errc::bad_file_descriptor));
    for (;;) {
      s_->lock.lock();
      auto n = s_->conn.send(data);
      if (!n) {
        s_->lock.unlock();
        return std::unexpected(n.error());
      }
      data = data.subspan(*n);
      const auto what = st().settle(*s_, now_ns());
      if (data.empty()) {
        s_->lock.unlock();
        st().finish(*s_, what);
        return {};
      }
      if (*n == 0) {
        if (now_ns() >= deadline) {
          s_->lock.unlock();
          st().finish(*s_, what);
          return std::unexpected(err(std::errc::timed_out));
        }
        const wait_result w = s_->writers.wait(s_->lock, deadline);
        st().finish(*s_, what);
        if (w == wait_result::canceled) return std::unexpected(error_of(w));
        continue;
      }
      s_->lock.unlock();
      st().finish(*s_, what);
    }
  }

  std::expected<void, std::error_code> shutdown_write() override {
    if (!s_) return std::unexpected(err(std::errc::bad_file_descriptor));
    change([](tcp::connection& c) { c.shutdown_write(); });
    return {};
  }

  void close() override {
    if (!s_) return;
    change([](tcp::connection& c) { c.close(now_ns()); });
    {
      std::lock_guard g(s_->lock);
      s_->handle_open = false;
      // A wait_any on this stream in another fiber ends: readiness::closed.
      s_->readers.notify_all();
      s_->writers.notify_all();
    }
    s_.reset();
  }

  void abort() override {
    if (!s_) return;
    change([](tcp::connection& c) { c.abort(); });
    close();
  }

  std::expected<void, std::error_code> set_no_delay(bool on) override {
    if (!s_) return std::unexpected(err(std::errc::bad_file_descriptor));
    change([on](tcp::connection& c) { c.set_no_delay(on); });
    return {};
  }

  std::expected<void, std::error_code> set_keepalive(bool on) override {
    if (!s_) return std::unexpected(err(std::errc::bad_file_descriptor));
    change([on](tcp::connection& c) {
      tcp::keepalive_config k = c.config().keepalive;
      k.enabled = on;
      c.set_keepalive(k);
    });
    return {};
  }

  net::endpoint local() const override {
    const flow_tuple& t = s_->conn.tuple();
    return {reported(t.local_addr, mapped_), t.local_port};
  }
  net::endpoint remote() const override {
    const flow_tuple& t = s_->conn.tuple();
    return {reported(t.remote_addr, mapped_), t.remote_port};
  }
  net::detail::multi_waiter* waiter() const override { return stack_waiter(); }
  tcp_socket* socket() const { return s_.get(); }

 private:
  stack& st() const { return s_->owner(); }

  static std::size_t size_of(std::size_t n) { return n; }
  static std::size_t size_of(std::span<const std::byte> v) { return v.size(); }

  // Takes what take() gives (under the lock), waiting while it is nothing
  // and more may come (`want`: the caller asked for something). `changes`:
  // take() changed the connection (bytes taken): settle it.
  template <class Take>
  auto receive(Take take, bool want, std::uint64_t deadline, bool changes = true) -> decltype(take()) {
    bool polled = false;
    for (;;) {
      s_->lock.lock();
      st().note_reader(*s_);  // seed 003: RPS "flow"/"idle" follow the reader
      auto r = take();
      if (r && size_of(*r) == 0 && want && !s_->conn.eof() && s_->conn.state() != tcp::tcp_state::closed) {
        if (!polled && st().busy_poll_budget_ns(*s_) > 0) {
          // Seed 001: poll the flow's RX queues for a while before sleeping.
          s_->lock.unlock();
          polled = true;
          st().busy_poll(*s_);
          continue;
        }
        if (now_ns() >= deadline) {
          s_->lock.unlock();
          return std::unexpected(err(std::errc::timed_out));
        }
        if (const wait_result w = s_->readers.wait(s_->lock, deadline); w == wait_result::canceled)
          return std::unexpected(error_of(w));  // what came meanwhile stays for the next read
        continue;
      }
      if (!changes) {
        s_->lock.unlock();
        return r;
      }
      const auto what = st().settle(*s_, now_ns());  // a window update may be due
      s_->lock.unlock();
      st().finish(*s_, what);
      return r;
    }
  }

  template <class F>
  void change(F&& f) {
    s_->lock.lock();
    f(s_->conn);
    const auto what = st().settle(*s_, now_ns());
    s_->lock.unlock();
    st().finish(*s_, what);
  }

  socket_ref s_;
  bool mapped_;
  std::span<std::byte> lent_;  // write_view's room until commit()
};

class listener final : public net::detail::listener_impl {
 public:
  listener(stack& st, listen_socket* l) : st_(st), l_(l) {}
  ~listener() override { close(); }

  std::expected<std::unique_ptr<net::detail::stream_impl>, std::error_code> accept(std::uint64_t deadline) override {
    if (l_ == nullptr) return std::unexpected(err(std::errc::bad_file_descriptor));
    l_->lock.lock();
    while (l_->ready.empty()) {
      if (l_->closed) {
        l_->lock.unlock();
        return std::unexpected(err(std::errc::operation_canceled));
      }
      if (now_ns() >= deadline) {
        l_->lock.unlock();
        return std::unexpected(err(std::errc::timed_out));
      }
      if (const wait_result w = l_->acceptors.wait(l_->lock, deadline); w != wait_result::notified)
        return std::unexpected(error_of(w));
      l_->lock.lock();
    }
    socket_ref s(l_->ready.front());
    l_->ready.pop_front();
    l_->queue.accepted();
    l_->lock.unlock();
    return std::make_unique<stream>(std::move(s), l_->bound.mapped);
  }

  net::endpoint local() const override { return l_->local(); }
  net::detail::multi_waiter* waiter() const override { return stack_waiter(); }
  listen_socket* socket() const { return l_; }

  void close() override {
    if (l_ == nullptr) return;
    st_.close_listener(l_);
    l_->unref();
    l_ = nullptr;
  }

 private:
  stack& st_;
  listen_socket* l_;
};

// A bound UDP port. The handle keeps its reference until destroyed, so a
// recv_from woken by close() from another fiber still finds the socket.
class udp_handle final : public net::detail::udp_impl {
 public:
  udp_handle(stack& st, udp_socket* u) : st_(st), u_(u) {}
  ~udp_handle() override {
    close();
    u_->unref();
  }

  std::expected<void, std::error_code> send_to(net::endpoint to, std::span<const std::byte> datagram) override {
    if (closed_.load(std::memory_order_relaxed)) return std::unexpected(err(std::errc::bad_file_descriptor));
    return st_.send_udp(u_->local().port, to, datagram);
  }

  std::expected<net::udp_socket::datagram_info, std::error_code> recv_from(std::span<std::byte> buf,
                                                                           std::uint64_t deadline) override {
    // Held for the call: the handle may be destroyed by a close() meanwhile.
    udp_socket* u = u_;
    u->ref();
    u->lock.lock();
    while (u->empty()) {
      if (u->closed || now_ns() >= deadline) {
        const auto e = u->closed ? std::errc::operation_canceled : std::errc::timed_out;
        u->lock.unlock();
        u->unref();
        return std::unexpected(err(e));
      }
      if (const wait_result w = u->readers.wait(u->lock, deadline); w == wait_result::canceled) {
        u->unref();
        return std::unexpected(error_of(w));
      }
      u->lock.lock();
    }
    const auto got = u->pop(buf);
    u->lock.unlock();
    u->unref();
    return got;
  }

  net::endpoint local() const override { return u_->local(); }
  net::detail::multi_waiter* waiter() const override { return stack_waiter(); }
  udp_socket* socket() const { return u_; }

  void close() override {
    if (!closed_.exchange(true)) st_.close_udp(u_);
  }

 private:
  stack& st_;
  udp_socket* u_;  // a reference
  std::atomic<bool> closed_{false};
};

class stack_backend final : public net::detail::backend {
 public:
  explicit stack_backend(stack& st) : st_(st) {}

  std::expected<std::unique_ptr<net::detail::udp_impl>, std::error_code> bind_udp(
      const net::udp_options& opts) override {
    auto u = st_.bind_udp(opts);
    if (!u) return std::unexpected(u.error());
    return std::make_unique<udp_handle>(st_, *u);
  }

  std::expected<std::unique_ptr<net::detail::listener_impl>, std::error_code> listen(
      const net::listen_options& opts) override {
    auto l = st_.listen(opts);
    if (!l) return std::unexpected(l.error());
    return std::make_unique<listener>(st_, *l);
  }

  std::expected<std::unique_ptr<net::detail::stream_impl>, std::error_code> connect(
      net::endpoint to, std::uint64_t deadline, const net::stream_options& opts) override {
    auto s = st_.connect(to, opts);
    if (!s) return std::unexpected(s.error());
    socket_ref& sock = *s;
    sock->lock.lock();
    while (sock->conn.state() == tcp::tcp_state::syn_sent || sock->conn.state() == tcp::tcp_state::syn_received) {
      const wait_result w = now_ns() >= deadline ? (sock->lock.unlock(), wait_result::timed_out)
                                                 : sock->writers.wait(sock->lock, deadline);
      if (w != wait_result::notified) {
        sock->lock.lock();
        // A deadline that passes after an ICMP soft error (host
        // unreachable, say) reports that error (RFC 1122 4.2.3.9).
        const std::error_code soft = sock->conn.soft_error();
        sock->conn.abort();
        const auto what = st_.settle(*sock, now_ns());
        sock->lock.unlock();
        st_.finish(*sock, what);
        return std::unexpected(w == wait_result::timed_out && soft ? soft : error_of(w));
      }
      sock->lock.lock();
    }
    if (sock->conn.state() == tcp::tcp_state::closed) {
      const std::error_code e = sock->conn.error() ? sock->conn.error() : err(std::errc::connection_refused);
      sock->lock.unlock();
      return std::unexpected(e);
    }
    sock->lock.unlock();
    // Connected to an IPv6 address (an IPv4-mapped one too): IPv4 is reported mapped.
    return std::make_unique<stream>(std::move(sock), to.addr.is_v6());
  }

 private:
  stack& st_;
};

}  // namespace

entry_sockets sockets_of(const net::wait_entry& e) {
  using net::detail::handle_access;
  entry_sockets s;
  if (e.stream) s.tcp = static_cast<stream*>(handle_access::of(*e.stream))->socket();
  if (e.listener) s.listener = static_cast<listener*>(handle_access::of(*e.listener))->socket();
  if (e.udp) s.udp = static_cast<udp_handle*>(handle_access::of(*e.udp))->socket();
  return s;
}

std::unique_ptr<net::detail::backend> stack::make_backend() { return std::make_unique<stack_backend>(*this); }

// A listener takes a port in the table of each family it serves: one on
// 0.0.0.0 and one on [::] with v6_only share a port, as on Linux.
std::expected<listen_socket*, std::error_code> stack::listen(const net::listen_options& opts) {
  const binding b = bind_of(opts.local.addr, opts.v6_only);
  if (!b.serves()) return std::unexpected(err(std::errc::address_family_not_supported));
  if (b.address && !is_ours(*b.address)) return std::unexpected(err(std::errc::address_not_available));
  std::lock_guard g(listeners_lock_);
  auto taken = [&](std::uint16_t p) { return (b.v4 && listeners_.bound(p)) || (b.v6 && listeners6_.bound(p)); };
  std::uint16_t port = opts.local.port;
  if (port == 0) {
    for (unsigned tries = 0; tries < 16384 && port == 0; ++tries) {
      const auto p = std::uint16_t(49152 + next_port_.fetch_add(1, std::memory_order_relaxed) % 16384);
      if (!taken(p)) port = p;
    }
    if (port == 0) return std::unexpected(err(std::errc::address_in_use));
  }
  if (taken(port)) return std::unexpected(err(std::errc::address_in_use));
  // getsockname()'s answer: the address asked for (:: stays ::), 0.0.0.0
  // as the port's one IPv4 address, the port picked.
  const net::address local = b.address ? reported(*b.address, b.mapped)
                             : b.mapped ? opts.local.addr
                                        : net::address(net::ipv4_address{routes_.address()});
  auto* l = new listen_socket({local, port}, b, opts.backlog, opts.accepted, isn_, &cookies_, cfg_.syn_cookies);
  // A reference for each table, and the caller's.
  if (b.v4) {
    l->ref();
    listeners_.insert(port, l);
  }
  if (b.v6) {
    l->ref();
    listeners6_.insert(port, l);
  }
  return l;
}

void stack::close_listener(listen_socket* l) {
  {
    std::lock_guard g(listeners_lock_);
    if (l->bound.v4 && listeners_.remove(l->local().port, l)) l->unref();
    if (l->bound.v6 && listeners6_.remove(l->local().port, l)) l->unref();
  }
  std::deque<tcp_socket*> orphans;
  {
    std::lock_guard g(l->lock);
    l->closed = true;
    l->acceptors.notify_all();
    orphans.swap(l->ready);
  }
  // Established but never accepted: reset (RFC 9293 3.10.4, Linux does the same).
  for (tcp_socket* s : orphans) {
    s->lock.lock();
    s->conn.abort();
    const auto what = settle(*s, now_ns());
    s->lock.unlock();
    finish(*s, what);
    s->unref();
  }
}

std::size_t stack::syn_received() {
  // Lock order: the table's lock (no listener leaves meanwhile), then each
  // listener's; close_listener takes them one after the other, never both.
  std::lock_guard g(listeners_lock_);
  std::size_t n = 0;
  auto count = [&n](std::uint16_t, listen_socket* l) {
    std::lock_guard lg(l->lock);
    n += l->queue.syn_received();
  };
  listeners_.for_each(count);
  listeners6_.for_each([&](std::uint16_t p, listen_socket* l) {
    if (!l->bound.v4) count(p, l);  // a dual-stack one is counted once
  });
  return n;
}

// An ephemeral port from the dynamic range (RFC 6056 3.3.1's counter) whose
// tuple is free and, where RSS decides, whose replies reach `core`
// (rss_ports.hh); any free port where none does.
std::optional<std::uint16_t> stack::pick_local_port(flow_tuple t, unsigned core) {
  const std::uint32_t start = next_port_.fetch_add(1, std::memory_order_relaxed);
  auto taken = [&](const flow_tuple& c) { return flows_.contains(c); };
  if (auto p = steering_.pick(t, core, 49152, 65535, start, taken)) return p;
  return rss_steering().pick(t, core, 49152, 65535, start, taken);
}

std::expected<socket_ref, std::error_code> stack::connect(net::endpoint peer, const net::stream_options& opts) {
  const flow_address remote = flow_of(peer.addr);
  if (is_unspecified(remote) || is_multicast(remote) || (is_v4(remote) && v4_address(remote) == 0))
    return std::unexpected(err(std::errc::invalid_argument));
  const auto local = source_for(remote);
  if (!local) return std::unexpected(err(std::errc::network_unreachable));
  const unsigned core = detail::here::core();
  flow_tuple t{*local, remote, 0, peer.port};
  const auto port = pick_local_port(t, core);
  if (!port) return std::unexpected(err(std::errc::address_not_available));
  t.local_port = *port;
  const std::uint64_t now = now_ns();
  const tcp::open_params p{.tuple = t, .iss = isn_.next(t, now), .ts_offset = std::uint32_t(isn_.next(t, 0).raw())};
  socket_ref s(new tcp_socket(*this, core, p, connection_config(opts, t), now));
  apply_path_mtu(s->conn, t, now);
  if (!flows_.insert(t, s.get())) return std::unexpected(err(std::errc::too_many_files_open));
  home(s.get());
  s->lock.lock();
  s->in_table = true;
  const auto what = settle(*s, now);  // the SYN
  s->lock.unlock();
  finish(*s, what);
  return s;
}

}  // namespace affine::stack
