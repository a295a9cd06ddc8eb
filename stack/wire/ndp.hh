#pragma once
// Neighbor Discovery for IPv6 (RFC 4861) on Ethernet: the bodies of the
// five ND messages, read from a parsed ICMPv6 message and checked as the
// RFC's "Message Validation" sections say (6.1.1, 6.1.2, 7.1.1, 7.1.2,
// 8.1), and the three a host sends. A message that fails validation is
// silently discarded (RFC 4861 6.1, 7.1, 8.1); the reason is for the drop
// counter.
//
// One function per message type, each returning its own struct; the caller
// dispatches on icmpv6_view::type(). The checks every one of them makes:
// - the IPv6 Hop Limit is 255, so the sender is on the link: bad_hop_limit;
// - the ICMP Code is 0: bad_code;
// - the ICMP length covers the fixed part: icmpv6_view::parse's truncated;
// - every option has a length above 0 and ends within the message
//   (RFC 4861 4.6): bad_option. Options of unknown types, and options not
//   specified for the message at hand, are skipped (6.1.1 and the others:
//   "MUST be ignored"). Of an option a message carries once, the first
//   counts. A link-layer address option is one Ethernet address (RFC 2464
//   8: length 1), else bad_option.
// The checks specific to one message are listed with its parse function.
// What validation leaves to the protocol (a Redirect's source being the
// current first hop, a prefix's lifetimes) is not checked here.

#include <cstddef>
#include <cstdint>
#include <expected>
#include <iterator>
#include <optional>
#include <span>

#include "stack/wire/error.hh"
#include "stack/wire/ethernet.hh"
#include "stack/wire/icmpv6.hh"
#include "stack/wire/ipv6.hh"

namespace affine::stack {

// RFC 4861 6.1, 7.1, 8.1: ND is sent with hop limit 255, and a message
// that arrives with less came through a router.
inline constexpr std::uint8_t ndp_hop_limit = 255;

// Link-local scope multicast groups (RFC 4291 2.7.1).
inline constexpr ipv6_bytes all_nodes{0xff, 0x02, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1};
inline constexpr ipv6_bytes all_routers{0xff, 0x02, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2};

// The solicited-node multicast address of `a` (RFC 4291 2.7.1):
// ff02::1:ff00:0/104 and the low 24 bits of `a`.
ipv6_bytes solicited_node(const ipv6_bytes& a) noexcept;
// Whether `a` is in ff02::1:ff00:0/104.
bool is_solicited_node(const ipv6_bytes& a) noexcept;
// The Ethernet address a packet to multicast `a` goes to (RFC 2464 7):
// 33:33 and the last four bytes of `a`.
mac_address multicast_mac(const ipv6_bytes& a) noexcept;

// Option types (RFC 4861 4.6).
namespace ndp_option {
inline constexpr std::uint8_t source_link_layer = 1;
inline constexpr std::uint8_t target_link_layer = 2;
inline constexpr std::uint8_t prefix_information = 3;
inline constexpr std::uint8_t redirected_header = 4;
inline constexpr std::uint8_t mtu = 5;
}  // namespace ndp_option

// RFC 4861 4.1.
struct router_solicitation {
  std::optional<mac_address> source_link_layer{};
};

// RFC 4861 4.6.2.
struct prefix_information {
  std::uint8_t length = 0;              // leading bits of `prefix` that count, 0 to 128
  bool on_link = false;                 // L
  bool autonomous = false;              // A: usable for address autoconfiguration (RFC 4862)
  std::uint32_t valid_lifetime = 0;     // seconds; 0xffffffff: infinity
  std::uint32_t preferred_lifetime = 0;
  ipv6_bytes prefix{};
  friend constexpr bool operator==(const prefix_information&, const prefix_information&) = default;
};

struct router_advertisement;

// The Prefix Information options of a Router Advertisement in their order
// (RFC 4861 6.3.4 processes each). Made by parse_router_advertisement over
// options it has checked, so walking them again needs no checks.
class prefix_options {
 public:
  class iterator {
   public:
    using value_type = prefix_information;
    using difference_type = std::ptrdiff_t;
    iterator() noexcept = default;
    prefix_information operator*() const noexcept;
    iterator& operator++() noexcept;
    iterator operator++(int) noexcept {
      iterator was = *this;
      ++*this;
      return was;
    }
    bool operator==(const iterator& o) const noexcept { return at_ == o.at_; }

   private:
    friend class prefix_options;
    iterator(const std::byte* at, const std::byte* end) noexcept : at_(at), end_(end) { skip(); }
    void skip() noexcept;  // to the next Prefix Information option, or the end
    const std::byte* at_ = nullptr;
    const std::byte* end_ = nullptr;
  };

  prefix_options() noexcept = default;
  iterator begin() const noexcept { return {options_.data(), options_.data() + options_.size()}; }
  iterator end() const noexcept { return {options_.data() + options_.size(), options_.data() + options_.size()}; }
  bool empty() const noexcept { return begin() == end(); }

 private:
  friend std::expected<router_advertisement, parse_error> parse_router_advertisement(
      const icmpv6_view&, const ipv6_header&) noexcept;
  explicit prefix_options(std::span<const std::byte> options) noexcept : options_(options) {}
  std::span<const std::byte> options_;  // all the message's options, checked
};
static_assert(std::input_iterator<prefix_options::iterator>);

// RFC 4861 4.2.
struct router_advertisement {
  std::uint8_t cur_hop_limit = 0;       // for packets this host sends; 0: unspecified
  bool managed = false;                 // M: addresses from DHCPv6
  bool other = false;                   // O: other configuration from DHCPv6
  std::uint16_t router_lifetime = 0;    // seconds as a default router; 0: not one
  std::uint32_t reachable_time = 0;     // milliseconds; 0: unspecified
  std::uint32_t retrans_timer = 0;      // milliseconds; 0: unspecified
  std::optional<mac_address> source_link_layer{};
  std::optional<std::uint32_t> mtu{};   // the MTU option (4.6.4)
  prefix_options prefixes{};
};

// RFC 4861 4.3.
struct neighbor_solicitation {
  ipv6_bytes target{};
  std::optional<mac_address> source_link_layer{};
};

// RFC 4861 4.4.
struct neighbor_advertisement {
  bool router = false;     // R
  bool solicited = false;  // S: an answer to a Neighbor Solicitation
  bool override = false;   // O: replace a cached link-layer address
  ipv6_bytes target{};
  std::optional<mac_address> target_link_layer{};
};

// RFC 4861 4.5.
struct redirect {
  ipv6_bytes target{};       // the better first hop
  ipv6_bytes destination{};  // the destination redirected
  std::optional<mac_address> target_link_layer{};
  // The Redirected Header option's data (4.6.3): as much of the packet that
  // caused the redirect as fits, for parse_ipv6_quote; without one, empty
  // (at the message's end).
  std::span<const std::byte> redirected{};
};

// Each parses `m` as the message of its type, sent with IPv6 header `ip`
// (the addresses `m` was parsed with). Precondition: m.type() is that type.
// Beyond the checks above:
// RFC 4861 6.1.1: with the unspecified source, no source link-layer
// address option (bad_option).
std::expected<router_solicitation, parse_error> parse_router_solicitation(const icmpv6_view& m,
                                                                          const ipv6_header& ip) noexcept;
// RFC 4861 6.1.2: the source is link-local (bad_source). A Prefix
// Information option shorter than its fields, or with a prefix length over
// 128, is bad_option.
std::expected<router_advertisement, parse_error> parse_router_advertisement(const icmpv6_view& m,
                                                                            const ipv6_header& ip) noexcept;
// RFC 4861 7.1.1: the target is not multicast (bad_target); with the
// unspecified source (Duplicate Address Detection, RFC 4862 5.4) the
// destination is a solicited-node address (bad_destination) and there is
// no source link-layer address option (bad_option).
std::expected<neighbor_solicitation, parse_error> parse_neighbor_solicitation(const icmpv6_view& m,
                                                                              const ipv6_header& ip) noexcept;
// RFC 4861 7.1.2: the target is not multicast (bad_target); to a multicast
// destination, Solicited is 0 (bad_flags).
std::expected<neighbor_advertisement, parse_error> parse_neighbor_advertisement(const icmpv6_view& m,
                                                                                const ipv6_header& ip) noexcept;
// RFC 4861 8.1: the source is link-local (bad_source); the destination
// redirected is not multicast (bad_destination); the target is link-local
// (a router) or the destination itself (on-link) (bad_target).
std::expected<redirect, parse_error> parse_redirect(const icmpv6_view& m, const ipv6_header& ip) noexcept;

// The emitters write the ICMPv6 message, checksum included, from `src` to
// `dst`; the caller writes the IPv6 header before it, with Next Header 58
// and hop limit ndp_hop_limit. Each returns the message's length.

// RFC 4861 4.3, 7.2.2: a solicitation for `target`, with a source
// link-layer address option holding `link_layer` unless `src` is the
// unspecified address (Duplicate Address Detection, RFC 4862 5.4.2: the
// option is then not allowed). 24 bytes, or 32.
std::expected<std::size_t, emit_error> emit_neighbor_solicitation(const ipv6_bytes& target,
                                                                  const mac_address& link_layer,
                                                                  const ipv6_bytes& src, const ipv6_bytes& dst,
                                                                  std::span<std::byte> out) noexcept;

// RFC 4861 4.4, 7.2.4: its flags and target, and a target link-layer
// address option when `m` has one. 24 bytes, or 32.
std::expected<std::size_t, emit_error> emit_neighbor_advertisement(const neighbor_advertisement& m,
                                                                   const ipv6_bytes& src, const ipv6_bytes& dst,
                                                                   std::span<std::byte> out) noexcept;

// RFC 4861 4.1, 6.3.7: a solicitation, with a source link-layer address
// option holding `link_layer` unless `src` is the unspecified address.
// 8 bytes, or 16.
std::expected<std::size_t, emit_error> emit_router_solicitation(const mac_address& link_layer,
                                                                const ipv6_bytes& src, const ipv6_bytes& dst,
                                                                std::span<std::byte> out) noexcept;

}  // namespace affine::stack
