#pragma once
// One port's IPv6 addressing (RFC 4291, RFC 4861, RFC 4862): the unicast
// addresses it holds with their Duplicate Address Detection state, the
// multicast groups it listens to, its on-link prefixes and default
// routers, and from those where a packet goes and from which address.
//
// An address is tentative until DAD has sent dad_transmits Neighbor
// Solicitations RetransTimer apart and heard no one claim it (RFC 4862
// 5.4); then it is preferred. One that someone else claims is a duplicate
// and never used (5.4.5). With dad_transmits 0 addresses are preferred at
// once. Packets are accepted for preferred addresses and the groups joined;
// a tentative address takes only the Neighbor Discovery that DAD needs
// (5.4, the caller's to tell apart).
//
// Pure data: time is passed in, the owner sends what expire() asks for.
// Precondition: one owner at a time (the stack's lock).

#include <cstddef>
#include <cstdint>
#include <limits>
#include <optional>
#include <span>
#include <vector>

#include "stack/wire/ethernet.hh"
#include "stack/wire/ipv6.hh"

namespace affine::stack {

struct ipv6_prefix_address {
  ipv6_bytes address{};
  std::uint8_t prefix_length = 64;
  friend constexpr bool operator==(const ipv6_prefix_address&, const ipv6_prefix_address&) = default;
};

struct ipv6_interface_config {
  // The port's addresses, its link-local one among them (the owner derives
  // it, stack/ip/link_local.hh).
  std::vector<ipv6_prefix_address> addresses;
  // A configured default router; routers advertised (RFC 4861 6.3.4) are
  // used only without one, and only when accept_router_advertisements.
  std::optional<ipv6_bytes> gateway{};
  bool accept_router_advertisements = true;
  std::uint32_t dad_transmits = 1;             // RFC 4862 5.1 DupAddrDetectTransmits
  std::uint64_t retrans_ns = 1'000'000'000;    // RFC 4861 10 RETRANS_TIMER
  std::uint32_t max_routers = 8;               // advertised default routers kept (the rest are counted)
  std::uint32_t max_redirects = 64;            // destinations redirected at once (the oldest makes room)
  std::uint64_t redirect_lifetime_ns = 600'000'000'000;  // how long a redirect holds: 10 minutes
};

enum class ipv6_address_state : std::uint8_t { tentative, preferred, duplicate };

class ipv6_interface {
 public:
  static constexpr std::uint64_t no_deadline = std::numeric_limits<std::uint64_t>::max();

  struct counters {
    std::uint64_t dad_probes = 0;        // Neighbor Solicitations asked for by DAD
    std::uint64_t dad_duplicates = 0;    // addresses someone else holds
    std::uint64_t routers_added = 0;     // advertised default routers taken
    std::uint64_t routers_expired = 0;   // their lifetime ran out, or they said they are no router
    std::uint64_t routers_full = 0;      // advertisements not kept: max_routers reached
    std::uint64_t redirects_taken = 0;   // Redirects that changed a destination's first hop
    std::uint64_t redirects_refused = 0; // Redirects not from the destination's first hop (RFC 4861 8.1)
  };

  struct address_entry {
    ipv6_prefix_address address;
    ipv6_address_state state = ipv6_address_state::tentative;
    std::uint32_t probes_sent = 0;
    std::uint64_t deadline = no_deadline;  // tentative: the next probe, or the end of DAD
  };

  // What expire() found due: DAD probes to send (a Neighbor Solicitation
  // for each target, from the unspecified address to its solicited-node
  // group, RFC 4862 5.4.2), and addresses DAD has just made preferred, to
  // announce (an unsolicited Neighbor Advertisement, RFC 4861 7.2.6). Spans
  // valid until the next non-const call.
  struct due {
    std::span<const ipv6_bytes> probe;
    std::span<const ipv6_bytes> ready;
  };

  explicit ipv6_interface(ipv6_interface_config config);

  // Every address starts DAD at `now` (its first probe is due at once).
  void start(std::uint64_t now_ns);
  due expire(std::uint64_t now_ns);
  std::uint64_t next_deadline() const;

  // RFC 4862 5.4.3, 5.4.4: a Neighbor Solicitation from the unspecified
  // address (another node's DAD) or a Neighbor Advertisement for `target`
  // while it is tentative: it is a duplicate. True when that happened.
  bool claimed(const ipv6_bytes& target);

  enum class match : std::uint8_t { none, unicast, tentative, multicast };
  // What `dst` is to this interface: a preferred address, a tentative one,
  // a group joined (all-nodes, or the solicited-node group of an address
  // that is not a duplicate), or none.
  match classify(const ipv6_bytes& dst) const;
  // Whether frames to `mac` are ours: the multicast MACs of the groups.
  bool accepts(const mac_address& mac) const;
  // The groups joined (for MLD reports): all-nodes first.
  std::vector<ipv6_bytes> groups() const;

  // The neighbor a packet to `dst` goes to: the target of a Redirect for
  // it still held, else `dst` itself when it is link-local, multicast or
  // inside an on-link prefix (RFC 4861 5.2), else the configured gateway,
  // else the first advertised router still alive; nullopt when there is
  // none.
  std::optional<ipv6_bytes> next_hop(const ipv6_bytes& dst, std::uint64_t now_ns) const;
  // The source address for a packet to `dst` (RFC 6724 5, the rules that
  // matter to one interface): a preferred address of the same scope
  // (link-local for link-local and link-scope multicast destinations),
  // among those the longest common prefix; nullopt when none is preferred.
  std::optional<ipv6_bytes> source_for(const ipv6_bytes& dst) const;

  // RFC 4861 6.3.4: a Router Advertisement from `router` (link-local)
  // with `lifetime_s` as a default router; 0 removes it.
  void on_router_advertisement(const ipv6_bytes& router, std::uint16_t lifetime_s, std::uint64_t now_ns);
  // RFC 4861 7.2.5: the neighbor said it is no longer a router.
  void router_gone(const ipv6_bytes& router);
  // RFC 4861 8.3: a Redirect from `router` sends packets for `destination`
  // to `target` from now on: a better router, or the destination itself
  // (`target` == `destination`: it is on-link). Taken only from the
  // current first hop for `destination` (8.1; false otherwise, and nothing
  // changes). It holds for redirect_lifetime_ns, and ends with the router
  // it names when that router is deleted (6.3.5); at most max_redirects
  // are held, the one nearest its end making room.
  bool on_redirect(const ipv6_bytes& router, const ipv6_bytes& destination, const ipv6_bytes& target,
                   std::uint64_t now_ns);
  std::size_t redirects() const { return redirects_.size(); }

  std::span<const address_entry> addresses() const { return addresses_; }
  std::size_t routers() const { return routers_.size(); }
  const counters& counts() const { return counts_; }
  const ipv6_interface_config& config() const { return config_; }

 private:
  struct router {
    ipv6_bytes address{};
    std::uint64_t expires = 0;
  };

  struct redirected {
    ipv6_bytes destination{};
    ipv6_bytes target{};
    std::uint64_t expires = 0;
  };

  const address_entry* find(const ipv6_bytes& a) const;
  bool on_link(const ipv6_bytes& dst) const;
  void forget_redirects_to(const ipv6_bytes& router);

  ipv6_interface_config config_;
  std::vector<address_entry> addresses_;
  std::vector<router> routers_;
  std::vector<redirected> redirects_;
  std::vector<ipv6_bytes> probe_;
  std::vector<ipv6_bytes> ready_;
  counters counts_;
};

// Whether the first `bits` bits of `a` and `b` agree.
bool same_prefix(const ipv6_bytes& a, const ipv6_bytes& b, unsigned bits);

}  // namespace affine::stack
