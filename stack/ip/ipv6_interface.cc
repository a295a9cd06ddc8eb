#include "stack/ip/ipv6_interface.hh"

#include <algorithm>
#include <bit>

#include "stack/wire/ndp.hh"

namespace affine::stack {

namespace {

// Leading bits `a` and `b` share (RFC 6724 2.2 CommonPrefixLen).
unsigned common_prefix(const ipv6_bytes& a, const ipv6_bytes& b) {
  unsigned n = 0;
  for (std::size_t i = 0; i < a.size(); ++i) {
    const auto x = std::uint8_t(a[i] ^ b[i]);
    if (x != 0) return n + unsigned(std::countl_zero(x));
    n += 8;
  }
  return n;
}

// RFC 4291 2.7: the scope of a multicast address is its low nibble of the
// second byte; 2 is link-local.
bool link_scope(const ipv6_bytes& a) { return is_link_local(a) || (is_multicast(a) && (a[1] & 0x0f) <= 2); }

}  // namespace

bool same_prefix(const ipv6_bytes& a, const ipv6_bytes& b, unsigned bits) { return common_prefix(a, b) >= bits; }

ipv6_interface::ipv6_interface(ipv6_interface_config config) : config_(std::move(config)) {
  for (const ipv6_prefix_address& a : config_.addresses) addresses_.push_back({.address = a});
  probe_.reserve(addresses_.size());
  ready_.reserve(addresses_.size());
}

void ipv6_interface::start(std::uint64_t now_ns) {
  for (address_entry& e : addresses_) {
    e.probes_sent = 0;
    e.state = config_.dad_transmits == 0 ? ipv6_address_state::preferred : ipv6_address_state::tentative;
    e.deadline = e.state == ipv6_address_state::tentative ? now_ns : no_deadline;
  }
}

ipv6_interface::due ipv6_interface::expire(std::uint64_t now_ns) {
  probe_.clear();
  ready_.clear();
  for (address_entry& e : addresses_) {
    if (e.state != ipv6_address_state::tentative || now_ns < e.deadline) continue;
    if (e.probes_sent < config_.dad_transmits) {
      // RFC 4862 5.4.2: the next probe, RetransTimer after the last.
      ++e.probes_sent;
      ++counts_.dad_probes;
      e.deadline = now_ns + config_.retrans_ns;
      probe_.push_back(e.address.address);
    } else {
      // 5.4: RetransTimer after the last probe and no one claimed it.
      e.state = ipv6_address_state::preferred;
      e.deadline = no_deadline;
      ready_.push_back(e.address.address);
    }
  }
  std::erase_if(routers_, [&](const router& r) {
    if (now_ns < r.expires) return false;
    ++counts_.routers_expired;
    forget_redirects_to(r.address);
    return true;
  });
  std::erase_if(redirects_, [&](const redirected& r) { return now_ns >= r.expires; });
  return {probe_, ready_};
}

std::uint64_t ipv6_interface::next_deadline() const {
  std::uint64_t d = no_deadline;
  for (const address_entry& e : addresses_) d = std::min(d, e.deadline);
  for (const router& r : routers_) d = std::min(d, r.expires);
  return d;
}

bool ipv6_interface::claimed(const ipv6_bytes& target) {
  for (address_entry& e : addresses_) {
    if (e.address.address != target || e.state != ipv6_address_state::tentative) continue;
    // RFC 4862 5.4.5: not assigned; a manual address needs the operator.
    e.state = ipv6_address_state::duplicate;
    e.deadline = no_deadline;
    ++counts_.dad_duplicates;
    return true;
  }
  return false;
}

const ipv6_interface::address_entry* ipv6_interface::find(const ipv6_bytes& a) const {
  for (const address_entry& e : addresses_)
    if (e.address.address == a) return &e;
  return nullptr;
}

ipv6_interface::match ipv6_interface::classify(const ipv6_bytes& dst) const {
  if (is_multicast(dst)) {
    if (dst == all_nodes) return match::multicast;
    for (const address_entry& e : addresses_)
      if (e.state != ipv6_address_state::duplicate && solicited_node(e.address.address) == dst) return match::multicast;
    return match::none;
  }
  const address_entry* e = find(dst);
  if (e == nullptr) return match::none;
  switch (e->state) {
    case ipv6_address_state::preferred: return match::unicast;
    case ipv6_address_state::tentative: return match::tentative;
    case ipv6_address_state::duplicate: return match::none;
  }
  return match::none;
}

bool ipv6_interface::accepts(const mac_address& mac) const {
  if (mac[0] != 0x33 || mac[1] != 0x33) return false;
  if (mac == multicast_mac(all_nodes)) return true;
  for (const address_entry& e : addresses_)
    if (e.state != ipv6_address_state::duplicate && multicast_mac(solicited_node(e.address.address)) == mac)
      return true;
  return false;
}

std::vector<ipv6_bytes> ipv6_interface::groups() const {
  std::vector<ipv6_bytes> g{all_nodes};
  for (const address_entry& e : addresses_) {
    const ipv6_bytes s = solicited_node(e.address.address);
    if (e.state != ipv6_address_state::duplicate && std::find(g.begin(), g.end(), s) == g.end()) g.push_back(s);
  }
  return g;
}

bool ipv6_interface::on_link(const ipv6_bytes& dst) const {
  if (link_scope(dst)) return true;
  return std::any_of(addresses_.begin(), addresses_.end(), [&](const address_entry& e) {
    return !is_link_local(e.address.address) && same_prefix(e.address.address, dst, e.address.prefix_length);
  });
}

std::optional<ipv6_bytes> ipv6_interface::next_hop(const ipv6_bytes& dst, std::uint64_t now_ns) const {
  for (const redirected& r : redirects_)
    if (r.destination == dst && now_ns < r.expires) return r.target;
  if (on_link(dst)) return dst;
  if (config_.gateway) return config_.gateway;
  for (const router& r : routers_)
    if (now_ns < r.expires) return r.address;
  return std::nullopt;
}

std::optional<ipv6_bytes> ipv6_interface::source_for(const ipv6_bytes& dst) const {
  const bool want_link_local = link_scope(dst);
  const address_entry* best = nullptr;
  unsigned best_len = 0;
  for (const address_entry& e : addresses_) {
    if (e.state != ipv6_address_state::preferred) continue;
    // RFC 6724 5 rule 2: the scope that fits the destination.
    if (is_link_local(e.address.address) != want_link_local) continue;
    const unsigned len = common_prefix(e.address.address, dst);  // rule 8
    if (best == nullptr || len > best_len) {
      best = &e;
      best_len = len;
    }
  }
  if (best != nullptr) return best->address.address;
  if (want_link_local) return std::nullopt;
  // A global destination with no global address: the link-local one still
  // reaches a neighbor (rule 2 prefers scope, it does not forbid).
  for (const address_entry& e : addresses_)
    if (e.state == ipv6_address_state::preferred) return e.address.address;
  return std::nullopt;
}

void ipv6_interface::on_router_advertisement(const ipv6_bytes& router_address, std::uint16_t lifetime_s,
                                             std::uint64_t now_ns) {
  if (!config_.accept_router_advertisements) return;
  auto it = std::find_if(routers_.begin(), routers_.end(), [&](const router& r) { return r.address == router_address; });
  if (lifetime_s == 0) {
    if (it != routers_.end()) {
      routers_.erase(it);
      ++counts_.routers_expired;
    }
    forget_redirects_to(router_address);
    return;
  }
  const std::uint64_t expires = now_ns + std::uint64_t(lifetime_s) * 1'000'000'000;
  if (it != routers_.end()) {
    it->expires = expires;
    return;
  }
  if (routers_.size() >= config_.max_routers) {
    ++counts_.routers_full;
    return;
  }
  routers_.push_back({router_address, expires});
  ++counts_.routers_added;
}

void ipv6_interface::router_gone(const ipv6_bytes& router_address) {
  if (std::erase_if(routers_, [&](const router& r) { return r.address == router_address; }) > 0)
    ++counts_.routers_expired;
  forget_redirects_to(router_address);
}

// RFC 4861 6.3.5: the destinations that went through a deleted router find
// their next hop again.
void ipv6_interface::forget_redirects_to(const ipv6_bytes& router_address) {
  std::erase_if(redirects_, [&](const redirected& r) { return r.target == router_address; });
}

bool ipv6_interface::on_redirect(const ipv6_bytes& router_address, const ipv6_bytes& destination,
                                 const ipv6_bytes& target, std::uint64_t now_ns) {
  if (next_hop(destination, now_ns) != router_address || config_.max_redirects == 0) {
    ++counts_.redirects_refused;
    return false;
  }
  const std::uint64_t expires = now_ns + config_.redirect_lifetime_ns;
  auto it = std::find_if(redirects_.begin(), redirects_.end(),
                         [&](const redirected& r) { return r.destination == destination; });
  if (it == redirects_.end()) {
    std::erase_if(redirects_, [&](const redirected& r) { return now_ns >= r.expires; });
    if (redirects_.size() >= config_.max_redirects)
      redirects_.erase(std::min_element(redirects_.begin(), redirects_.end(),
                                        [](const redirected& a, const redirected& b) { return a.expires < b.expires; }));
    it = redirects_.insert(redirects_.end(), {destination, target, expires});
  }
  it->target = target;
  it->expires = expires;
  ++counts_.redirects_taken;
  return true;
}

}  // namespace affine::stack
