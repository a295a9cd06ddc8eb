#include "stack/wire/ndp.hh"

#include <cassert>
#include <cstring>

#include "stack/wire/endian.hh"

namespace affine::stack {
namespace {

// The first word of every ND message: type, code, checksum (RFC 4861 4).
constexpr u8_field type_field{0};
constexpr u8_field code_field{1};
constexpr be32_field second_word{4};  // reserved in RS, NS, Redirect; NA's flags
// Router Advertisement (4.2).
constexpr u8_field cur_hop_limit_field{4};
constexpr u8_field ra_flags{5};
constexpr be16_field router_lifetime_field{6};
constexpr be32_field reachable_time_field{8};
constexpr be32_field retrans_timer_field{12};
constexpr std::uint8_t flag_managed = 0x80;
constexpr std::uint8_t flag_other = 0x40;
// Neighbor Advertisement (4.4): flags in the second word.
constexpr std::uint32_t flag_router = 0x8000'0000;
constexpr std::uint32_t flag_solicited = 0x4000'0000;
constexpr std::uint32_t flag_override = 0x2000'0000;
// NS, NA, Redirect (4.3 to 4.5).
constexpr ipv6_address_field target_field{8};
constexpr ipv6_address_field destination_field{24};  // Redirect

// Options (4.6): type, length in units of 8 bytes, then the option's own.
constexpr std::size_t option_unit = 8;
constexpr mac_field link_layer_field{2};       // 4.6.1, RFC 2464 8: one unit
constexpr u8_field prefix_length_field{2};     // 4.6.2
constexpr u8_field prefix_flags{3};
constexpr be32_field valid_lifetime_field{4};
constexpr be32_field preferred_lifetime_field{8};
constexpr ipv6_address_field prefix_field{16};
constexpr std::size_t prefix_information_length = 32;
constexpr std::uint8_t flag_on_link = 0x80;
constexpr std::uint8_t flag_autonomous = 0x40;
constexpr std::size_t redirected_data_at = 8;  // 4.6.3: after six reserved bytes
constexpr be32_field mtu_field{4};             // 4.6.4: after two reserved bytes

constexpr ipv6_bytes solicited_node_prefix{0xff, 0x02, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0xff, 0, 0, 0};
constexpr std::size_t solicited_node_prefix_bytes = 13;  // /104

// What a message's options say, of those it reads (the first of each).
struct options_read {
  std::optional<mac_address> source_link_layer{};
  std::optional<mac_address> target_link_layer{};
  std::optional<std::uint32_t> mtu{};
  std::optional<std::span<const std::byte>> redirected{};
};

constexpr std::uint32_t bit(std::uint8_t option_type) noexcept { return std::uint32_t{1} << option_type; }

// RFC 4861 4.6: walks the options after a message's fixed part, refusing
// one of length 0 or running past the message, reading those of the types
// in `wanted` and skipping the rest (6.1.1 and its siblings: unknown
// options and options not specified for the message are ignored).
std::expected<options_read, parse_error> read_options(std::span<const std::byte> options,
                                                      std::uint32_t wanted) noexcept {
  options_read r;
  for (std::size_t at = 0; at < options.size();) {
    if (options.size() - at < 2) return std::unexpected(parse_error::bad_option);
    const auto type = std::uint8_t(options[at]);
    const std::size_t length = std::size_t(options[at + 1]) * option_unit;
    if (length == 0) return std::unexpected(parse_error::bad_option);  // 4.6: "MUST silently discard"
    if (length > options.size() - at) return std::unexpected(parse_error::bad_option);
    const auto o = options.subspan(at, length);
    at += length;
    if (type >= 32 || !(wanted & bit(type))) continue;
    switch (type) {
      case ndp_option::source_link_layer:
      case ndp_option::target_link_layer: {
        // RFC 2464 8: on Ethernet the option is one unit, the address and
        // nothing else.
        if (length != option_unit) return std::unexpected(parse_error::bad_option);
        auto& address = type == ndp_option::source_link_layer ? r.source_link_layer : r.target_link_layer;
        if (!address) address = link_layer_field.get(o);
        break;
      }
      case ndp_option::prefix_information:
        // Read again by prefix_options; here only whether it can be.
        if (length < prefix_information_length || prefix_length_field.get(o) > 128)
          return std::unexpected(parse_error::bad_option);
        break;
      case ndp_option::redirected_header:
        if (!r.redirected) r.redirected = o.subspan(redirected_data_at);
        break;
      case ndp_option::mtu:
        if (!r.mtu) r.mtu = mtu_field.get(o);
        break;
    }
  }
  return r;
}

// The checks all five messages share (RFC 4861 6.1.1, 6.1.2, 7.1.1,
// 7.1.2, 8.1), then their options: what each parse function starts with.
std::expected<options_read, parse_error> check_and_read_options(const icmpv6_view& m, const ipv6_header& ip,
                                                                icmpv6_type type, std::uint32_t wanted) noexcept {
  assert(m.type() == type);
  if (ip.hop_limit != ndp_hop_limit) return std::unexpected(parse_error::bad_hop_limit);
  if (m.code() != 0) return std::unexpected(parse_error::bad_code);
  // icmpv6_view::parse has checked the message holds its fixed part.
  return read_options(m.bytes().subspan(icmpv6_view::fixed_length(std::uint8_t(type))), wanted);
}

// The first 8 bytes of a message this host sends: type, code 0, a zero
// checksum for set_icmpv6_checksum to fill, and the word after it.
void start_message(std::span<std::byte> out, icmpv6_type type, std::uint32_t word) noexcept {
  type_field.set(out, std::uint8_t(type));
  code_field.set(out, 0);
  second_word.set(out, word);
}

// A link-layer address option of `type` at `at` (4.6.1), one unit long.
void put_link_layer(std::span<std::byte> out, std::size_t at, std::uint8_t type, const mac_address& mac) noexcept {
  const auto o = out.subspan(at, option_unit);
  o[0] = std::byte(type);
  o[1] = std::byte(1);
  link_layer_field.set(o, mac);
}

// A router or neighbor solicitation: its fixed part, the reserved word
// zero and the target after it for a neighbor solicitation, then the source
// link-layer address option unless `src` is unspecified (RFC 4861 4.1,
// 4.3: "MUST NOT be included" then).
std::expected<std::size_t, emit_error> emit_solicitation(icmpv6_type type, const std::optional<ipv6_bytes>& target,
                                                         const mac_address& link_layer, const ipv6_bytes& src,
                                                         const ipv6_bytes& dst, std::span<std::byte> out) noexcept {
  const std::size_t fixed = icmpv6_view::fixed_length(std::uint8_t(type));
  const bool with_option = !is_unspecified(src);
  const std::size_t n = fixed + (with_option ? option_unit : 0);
  if (out.size() < n) return std::unexpected(emit_error::buffer_too_small);
  start_message(out, type, 0);
  if (target) target_field.set(out, *target);
  if (with_option) put_link_layer(out, fixed, ndp_option::source_link_layer, link_layer);
  set_icmpv6_checksum(out.first(n), src, dst);
  return n;
}

}  // namespace

ipv6_bytes solicited_node(const ipv6_bytes& a) noexcept {
  ipv6_bytes out = solicited_node_prefix;
  std::memcpy(out.data() + solicited_node_prefix_bytes, a.data() + solicited_node_prefix_bytes,
              a.size() - solicited_node_prefix_bytes);
  return out;
}

bool is_solicited_node(const ipv6_bytes& a) noexcept {
  return std::memcmp(a.data(), solicited_node_prefix.data(), solicited_node_prefix_bytes) == 0;
}

mac_address multicast_mac(const ipv6_bytes& a) noexcept { return {0x33, 0x33, a[12], a[13], a[14], a[15]}; }

prefix_information prefix_options::iterator::operator*() const noexcept {
  const std::span<const std::byte> o(at_, prefix_information_length);
  const std::uint8_t flags = prefix_flags.get(o);
  return {.length = prefix_length_field.get(o),
          .on_link = (flags & flag_on_link) != 0,
          .autonomous = (flags & flag_autonomous) != 0,
          .valid_lifetime = valid_lifetime_field.get(o),
          .preferred_lifetime = preferred_lifetime_field.get(o),
          .prefix = prefix_field.get(o)};
}

prefix_options::iterator& prefix_options::iterator::operator++() noexcept {
  at_ += std::size_t(at_[1]) * option_unit;
  skip();
  return *this;
}

void prefix_options::iterator::skip() noexcept {
  // The options were checked: each has a length above 0 and fits.
  while (at_ != end_ && std::uint8_t(at_[0]) != ndp_option::prefix_information)
    at_ += std::size_t(at_[1]) * option_unit;
}

std::expected<router_solicitation, parse_error> parse_router_solicitation(const icmpv6_view& m,
                                                                          const ipv6_header& ip) noexcept {
  const auto o = check_and_read_options(m, ip, icmpv6_type::router_solicitation, bit(ndp_option::source_link_layer));
  if (!o) return std::unexpected(o.error());
  // RFC 4861 6.1.1: from the unspecified address, no link-layer address.
  if (is_unspecified(ip.src) && o->source_link_layer) return std::unexpected(parse_error::bad_option);
  return router_solicitation{.source_link_layer = o->source_link_layer};
}

std::expected<router_advertisement, parse_error> parse_router_advertisement(const icmpv6_view& m,
                                                                            const ipv6_header& ip) noexcept {
  const auto o = check_and_read_options(
      m, ip, icmpv6_type::router_advertisement,
      bit(ndp_option::source_link_layer) | bit(ndp_option::mtu) | bit(ndp_option::prefix_information));
  if (!o) return std::unexpected(o.error());
  // RFC 4861 6.1.2: routers advertise from their link-local address.
  if (!is_link_local(ip.src)) return std::unexpected(parse_error::bad_source);
  const auto b = m.bytes();
  const std::uint8_t flags = ra_flags.get(b);
  return router_advertisement{
      .cur_hop_limit = cur_hop_limit_field.get(b),
      .managed = (flags & flag_managed) != 0,
      .other = (flags & flag_other) != 0,
      .router_lifetime = router_lifetime_field.get(b),
      .reachable_time = reachable_time_field.get(b),
      .retrans_timer = retrans_timer_field.get(b),
      .source_link_layer = o->source_link_layer,
      .mtu = o->mtu,
      .prefixes = prefix_options(b.subspan(icmpv6_view::fixed_length(std::uint8_t(m.type()))))};
}

std::expected<neighbor_solicitation, parse_error> parse_neighbor_solicitation(const icmpv6_view& m,
                                                                              const ipv6_header& ip) noexcept {
  const auto o =
      check_and_read_options(m, ip, icmpv6_type::neighbor_solicitation, bit(ndp_option::source_link_layer));
  if (!o) return std::unexpected(o.error());
  const ipv6_bytes target = target_field.get(m.bytes());
  if (is_multicast(target)) return std::unexpected(parse_error::bad_target);  // RFC 4861 7.1.1
  if (is_unspecified(ip.src)) {
    // RFC 4861 7.1.1, Duplicate Address Detection: to the target's
    // solicited-node group, and no link-layer address to cache.
    if (!is_solicited_node(ip.dst)) return std::unexpected(parse_error::bad_destination);
    if (o->source_link_layer) return std::unexpected(parse_error::bad_option);
  }
  return neighbor_solicitation{.target = target, .source_link_layer = o->source_link_layer};
}

std::expected<neighbor_advertisement, parse_error> parse_neighbor_advertisement(const icmpv6_view& m,
                                                                                const ipv6_header& ip) noexcept {
  const auto o =
      check_and_read_options(m, ip, icmpv6_type::neighbor_advertisement, bit(ndp_option::target_link_layer));
  if (!o) return std::unexpected(o.error());
  const std::uint32_t flags = second_word.get(m.bytes());
  const neighbor_advertisement a{.router = (flags & flag_router) != 0,
                                 .solicited = (flags & flag_solicited) != 0,
                                 .override = (flags & flag_override) != 0,
                                 .target = target_field.get(m.bytes()),
                                 .target_link_layer = o->target_link_layer};
  if (is_multicast(a.target)) return std::unexpected(parse_error::bad_target);  // RFC 4861 7.1.2
  // RFC 4861 7.1.2: an answer goes to whoever asked, never to a group.
  if (is_multicast(ip.dst) && a.solicited) return std::unexpected(parse_error::bad_flags);
  return a;
}

std::expected<redirect, parse_error> parse_redirect(const icmpv6_view& m, const ipv6_header& ip) noexcept {
  const auto o = check_and_read_options(m, ip, icmpv6_type::redirect,
                                        bit(ndp_option::target_link_layer) | bit(ndp_option::redirected_header));
  if (!o) return std::unexpected(o.error());
  // RFC 4861 8.1: from a router's link-local address.
  if (!is_link_local(ip.src)) return std::unexpected(parse_error::bad_source);
  const redirect r{.target = target_field.get(m.bytes()),
                   .destination = destination_field.get(m.bytes()),
                   .target_link_layer = o->target_link_layer,
                   .redirected = o->redirected.value_or(m.bytes().last(0))};
  if (is_multicast(r.destination)) return std::unexpected(parse_error::bad_destination);  // RFC 4861 8.1
  // RFC 4861 8.1: to a router (link-local) or to the destination itself,
  // which is then on the link.
  if (!is_link_local(r.target) && r.target != r.destination) return std::unexpected(parse_error::bad_target);
  return r;
}

std::expected<std::size_t, emit_error> emit_neighbor_solicitation(const ipv6_bytes& target,
                                                                  const mac_address& link_layer,
                                                                  const ipv6_bytes& src, const ipv6_bytes& dst,
                                                                  std::span<std::byte> out) noexcept {
  return emit_solicitation(icmpv6_type::neighbor_solicitation, target, link_layer, src, dst, out);
}

std::expected<std::size_t, emit_error> emit_router_solicitation(const mac_address& link_layer,
                                                                const ipv6_bytes& src, const ipv6_bytes& dst,
                                                                std::span<std::byte> out) noexcept {
  return emit_solicitation(icmpv6_type::router_solicitation, std::nullopt, link_layer, src, dst, out);
}

std::expected<std::size_t, emit_error> emit_neighbor_advertisement(const neighbor_advertisement& m,
                                                                   const ipv6_bytes& src, const ipv6_bytes& dst,
                                                                   std::span<std::byte> out) noexcept {
  const std::size_t fixed = icmpv6_view::fixed_length(std::uint8_t(icmpv6_type::neighbor_advertisement));
  const std::size_t n = fixed + (m.target_link_layer ? option_unit : 0);
  if (out.size() < n) return std::unexpected(emit_error::buffer_too_small);
  start_message(out, icmpv6_type::neighbor_advertisement,
                (m.router ? flag_router : 0) | (m.solicited ? flag_solicited : 0) | (m.override ? flag_override : 0));
  target_field.set(out, m.target);
  if (m.target_link_layer) put_link_layer(out, fixed, ndp_option::target_link_layer, *m.target_link_layer);
  set_icmpv6_checksum(out.first(n), src, dst);
  return n;
}

}  // namespace affine::stack
