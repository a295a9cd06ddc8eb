#include "stack/ip/route.hh"

#include <algorithm>

namespace affine::stack {

namespace {

constexpr std::uint32_t limited_broadcast = 0xffffffff;

constexpr std::uint32_t first_octet(std::uint32_t a) { return a >> 24; }
// RFC 1112 4: class D, 224.0.0.0/4.
constexpr bool is_multicast(std::uint32_t a) { return (a >> 28) == 0xe; }

// RFC 1122 3.2.1.3: what may never be a host's own address or a
// destination on a link: 0.0.0.0/8 ("this network", (a) and (b)),
// 127.0.0.0/8 (loopback, (g)); and class D and E, 224.0.0.0/3 with the
// limited broadcast (RFC 1112 4, RFC 1122 3.2.1.3 (c)).
constexpr bool is_special(std::uint32_t a) {
  return first_octet(a) == 0 || first_octet(a) == 127 || first_octet(a) >= 224;
}

}  // namespace

std::string_view to_string(route_error e) {
  switch (e) {
    case route_error::bad_prefix_length: return "bad_prefix_length";
    case route_error::bad_address: return "bad_address";
    case route_error::bad_gateway: return "bad_gateway";
  }
  return "unknown";
}

std::expected<route_table, route_error> route_table::make(const interface_config& config) {
  if (config.prefix_length > 32) return std::unexpected(route_error::bad_prefix_length);
  const std::uint32_t mask = config.prefix_length == 0 ? 0 : ~std::uint32_t(0) << (32 - config.prefix_length);
  const route_table t(config.address, mask, config.gateway);
  // A host address on the subnet: not special, not the subnet's network or
  // broadcast address (RFC 1122 3.2.1.3 (c), (d); none on a /31, RFC 3021).
  const auto host_on_subnet = [&](std::uint32_t a) {
    const std::uint32_t host = a & ~mask;
    return !is_special(a) && t.on_link(a) && (!t.has_directed_broadcast() || (host != 0 && host != ~mask));
  };
  if (!host_on_subnet(config.address)) return std::unexpected(route_error::bad_address);
  // RFC 1122 3.3.1.1: the gateway must be reachable on the link.
  if (config.gateway && (!host_on_subnet(*config.gateway) || *config.gateway == config.address))
    return std::unexpected(route_error::bad_gateway);
  return t;
}

bool route_table::is_broadcast(std::uint32_t dst) const {
  return dst == limited_broadcast || (has_directed_broadcast() && on_link(dst) && (dst & ~mask_) == ~mask_);
}

template <class Key>
path_mtu_cache_of<Key>::path_mtu_cache_of(const path_mtu_config& config)
    : config_(config), entries_(config.capacity) {}

template <class Key>
bool path_mtu_cache_of<Key>::on_frag_needed(const Key& dst, std::uint32_t next_hop_mtu, std::uint64_t now_ns) {
  // RFC 1191 4: "A host MUST never reduce its estimate of the Path MTU
  // below 68 octets." Old routers (before RFC 1191) send 0 here. RFC 8201
  // 4: nor an IPv6 one below 1280.
  if (next_hop_mtu < config_.min_mtu) {
    ++counts_.below_min;
    return false;
  }
  const std::uint32_t floor = std::min(config_.floor, config_.interface_mtu);
  const bool below_floor = next_hop_mtu < floor;
  if (below_floor) ++counts_.floor_clamped;
  // Never above what the interface itself can send.
  const std::uint32_t mtu = std::clamp<std::uint32_t>(next_hop_mtu, floor, config_.interface_mtu);
  // RFC 1191 4: the estimate MUST NOT be raised by a Datagram Too Big (it
  // may be stale, forged, or from another path). A report under the floor
  // lowers it too when it is the first to say the path is that narrow.
  entry* e = entries_.find(dst);
  const bool known = e != nullptr && now_ns < e->expires;
  const std::uint32_t current = known ? e->mtu : config_.interface_mtu;
  const bool newly_narrow = below_floor && !(known && e->below_floor);
  if (mtu > current || (mtu == current && !newly_narrow)) {
    ++counts_.not_lower;
    return false;
  }
  if (e == nullptr) e = add(dst);
  e->mtu = mtu;
  e->below_floor = below_floor;
  e->expires = now_ns + config_.expiry_ns;
  next_deadline_ = std::min(next_deadline_, e->expires);
  ++counts_.lowered;
  return true;
}

template <class Key>
std::uint32_t path_mtu_cache_of<Key>::path_mtu(const Key& dst, std::uint64_t now_ns) const {
  const entry* e = fresh(dst, now_ns);
  return e ? e->mtu : config_.interface_mtu;
}

template <class Key>
bool path_mtu_cache_of<Key>::may_fragment(const Key& dst, std::uint64_t now_ns) const {
  const entry* e = fresh(dst, now_ns);
  return e && e->below_floor;
}

template <class Key>
std::uint32_t path_mtu_cache_of<Key>::expire(std::uint64_t now_ns) {
  std::uint32_t n = 0;
  next_deadline_ = no_deadline;
  entries_.erase_if([&](const Key&, const entry& e) {
    if (now_ns < e.expires) {
      next_deadline_ = std::min(next_deadline_, e.expires);
      return false;
    }
    ++n;
    return true;
  });
  counts_.expired += n;
  return n;
}

template <class Key>
auto path_mtu_cache_of<Key>::fresh(const Key& dst, std::uint64_t now_ns) const -> const entry* {
  const entry* e = entries_.find(dst);
  return e && now_ns < e->expires ? e : nullptr;
}

// A full cache gives up the estimate closest to expiry: the one learnt
// longest ago.
template <class Key>
auto path_mtu_cache_of<Key>::add(const Key& dst) -> entry* {
  if (entries_.full()) {
    entries_.erase(*entries_.first_by([](const entry& a, const entry& b) { return a.expires < b.expires; }));
    ++counts_.evicted;
  }
  return entries_.insert(dst);
}

template class path_mtu_cache_of<std::uint32_t>;
template class path_mtu_cache_of<std::array<std::uint8_t, 16>>;

}  // namespace affine::stack
