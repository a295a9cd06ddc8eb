// UDP ports on the stack: the bounded datagram queue of a bound port, and
// the port table (bind, unbind, the RX path's lookup) with the send path.

#include "stack/udp_socket.hh"

#include <algorithm>
#include <mutex>

#include "affine/fiber.hh"
#include "stack/family.hh"
#include "stack/per_core.hh"
#include "stack/stack.hh"
#include "stack/wire/udp.hh"

namespace affine::stack {

namespace {

std::atomic<std::size_t> live_sockets{0};

std::unexpected<std::error_code> failure(std::errc e) { return std::unexpected(std::make_error_code(e)); }

// IPv4 and UDP headers: what a frame's MTU leaves for the largest payload
// of either family (IPv6's header is larger), which a receive queue fits.
constexpr std::size_t udp_overhead = 20 + udp_view::header_length;

}  // namespace

udp_socket::udp_socket(net::endpoint local, binding bound, std::size_t max_datagrams,
                       std::size_t max_datagram_bytes)
    : bound(bound),
      local_(local), bytes_(max_datagrams * max_datagram_bytes), slots_(max_datagrams) {
  live_sockets.fetch_add(1, std::memory_order_relaxed);
}

udp_socket::~udp_socket() { live_sockets.fetch_sub(1, std::memory_order_relaxed); }

std::size_t udp_socket::live_count() { return live_sockets.load(std::memory_order_relaxed); }

bool udp_socket::push(net::endpoint from, std::span<const std::byte> payload) {
  if (count_ == slots_.size() || payload.size() > bytes_.free()) return false;
  bytes_.write(payload);
  slots_[(head_ + count_) % slots_.size()] = {from, payload.size()};
  ++count_;
  return true;
}

net::udp_socket::datagram_info udp_socket::pop(std::span<std::byte> buf) {
  const slot s = slots_[head_];
  head_ = (head_ + 1) % slots_.size();
  --count_;
  const std::size_t n = bytes_.read(buf.first(std::min(buf.size(), s.size)));
  bytes_.consume(s.size - n);
  return {.size = n, .from = s.from, .truncated = n < s.size};
}

// Ports are one table for every core: a datagram may arrive on any RX queue
// (the same reason the flow table is shared, docs/stack.md).
std::expected<udp_socket*, std::error_code> stack::bind_udp(const net::udp_options& opts) {
  const binding b = bind_of(opts.local.addr, opts.v6_only);
  if (!b.serves()) return failure(std::errc::address_family_not_supported);
  if (b.address && !is_ours(*b.address)) return failure(std::errc::address_not_available);
  if (opts.receive_queue == 0) return failure(std::errc::invalid_argument);
  // Two sockets share a port where they take different traffic (0.0.0.0
  // and [::] with v6_only, or two addresses), as on Linux.
  auto in_use = [&](std::uint16_t p) {
    return std::any_of(udp_ports_.begin(), udp_ports_.end(),
                       [&](auto& e) { return e.first == p && e.second->bound.overlaps(b); });
  };
  // Allocated before the table lock is taken: a spinlock section stays short.
  auto* u = new udp_socket({opts.local.addr, opts.local.port}, b, opts.receive_queue, port_.caps().mtu - udp_overhead);
  std::lock_guard g(udp_lock_);
  std::uint16_t port = opts.local.port;
  // RFC 6056 3.3.1: an ephemeral port from the dynamic range, by a counter.
  for (unsigned tries = 0; tries < 16384 && port == 0; ++tries) {
    const auto p = std::uint16_t(49152 + next_port_.fetch_add(1, std::memory_order_relaxed) % 16384);
    if (!in_use(p)) port = p;
  }
  if (port == 0 || (opts.local.port != 0 && in_use(port))) {
    u->unref();
    return failure(std::errc::address_in_use);
  }
  u->set_port(port);
  udp_ports_.emplace_back(port, u);  // the table's reference
  u->ref();                          // the caller's
  return u;
}

void stack::close_udp(udp_socket* u) {
  {
    std::lock_guard g(udp_lock_);
    std::erase_if(udp_ports_, [&](auto& e) {
      if (e.second != u) return false;
      u->unref();
      return true;
    });
  }
  std::lock_guard g(u->lock);
  u->closed = true;
  u->readers.notify_all();
}

udp_socket* stack::find_udp(std::uint16_t port, const flow_address& dst) {
  std::lock_guard g(udp_lock_);
  for (auto& [p, u] : udp_ports_)
    // A port bound to one address takes only datagrams sent to it; one
    // bound to every address takes broadcasts too (as Linux does).
    if (p == port && u->bound.takes(dst)) {
      u->ref();
      return u;
    }
  return nullptr;
}

// Built in one mbuf on the calling core and sent at once: a datagram never
// waits (an unresolved next hop holds it in the ARP queue, bounded).
std::expected<void, std::error_code> stack::send_udp(std::uint16_t local_port, net::endpoint to,
                                                     std::span<const std::byte> datagram) {
  const flow_address dst = flow_of(to.addr);
  if (to.port == 0 || is_unspecified(dst) || (is_v4(dst) && v4_address(dst) == 0))
    return failure(std::errc::invalid_argument);
  // RFC 1191, RFC 8201: DF is set on what this stack sends (but to an IPv4
  // path narrower than 552, rx_icmp.cc), and it never fragments; a
  // datagram the link, or the path as a router's "too big" told it, cannot
  // carry whole is the sender's error.
  const std::uint64_t now = now_ns();
  const std::size_t headers = (is_v4(dst) ? 20 : 40) + udp_view::header_length;
  if (datagram.size() > path_mtu_to(dst, now) - headers) return failure(std::errc::message_size);
  if (is_v4(dst) && !routes_.next_hop(v4_address(dst))) return failure(std::errc::network_unreachable);
  const auto src = source_for(dst);
  if (!src) return failure(std::errc::network_unreachable);
  const udp_header h{.src_port = local_port, .dst_port = to.port};
  const flow_tuple t{*src, dst, local_port, to.port};
  const pseudo_header ph = outbound_pseudo(t, next_header::udp);
  send_ip(here(), t, next_header::udp, udp_view::header_length + datagram.size(),
          [&](std::span<std::byte> out, bool offload) -> std::size_t {
            auto n = emit_udp(h, datagram, ph, out, offload ? checksum_mode::offload : checksum_mode::software);
            return n ? *n : 0;
          },
          now);
  return {};
}

}  // namespace affine::stack
