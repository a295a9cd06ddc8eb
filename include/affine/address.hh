#pragma once
// Internet addresses of either family, as the socket API and the
// configuration take them: IPv4 (RFC 791) and IPv6 (RFC 4291), with the
// zone of a scoped (link-local) IPv6 address (RFC 4007). Text in, text out:
// parse() takes what RFC 4291 section 2.2 allows, to_string() writes RFC
// 5952's one canonical form.

#include <array>
#include <compare>
#include <cstdint>
#include <expected>
#include <optional>
#include <string>
#include <string_view>
#include <variant>

namespace affine::net {

struct ipv4_address {
  std::uint32_t value = 0;  // host byte order: 10.0.0.1 is 0x0a000001
  // Four decimal octets, "10.77.0.2": no sign, no leading zero (inet_pton's
  // rule: "010" is octal to inet_aton), nothing before or after.
  static std::expected<ipv4_address, std::string> parse(std::string_view dotted);
  std::string to_string() const;
  friend constexpr auto operator<=>(ipv4_address, ipv4_address) = default;
};
inline constexpr ipv4_address any_address{0};
inline constexpr ipv4_address loopback{0x7f000001};

struct ipv6_address {
  std::array<std::uint8_t, 16> bytes{};  // network byte order
  std::uint32_t scope_id = 0;            // RFC 4007 zone (an interface index); 0: none

  // "2001:db8::1", "::", "::ffff:10.0.0.1", "fe80::1%2": eight groups of one
  // to four hex digits, at most one "::" for one or more zero groups, an
  // IPv4 dotted quad for the last two groups, and a zone as a decimal
  // interface index after '%'. Errors say what is wrong in one line.
  static std::expected<ipv6_address, std::string> parse(std::string_view text);
  // RFC 5952: lower case, no leading zeros, the longest run of two or more
  // zero groups (the first of equals) as "::", an IPv4-mapped address as
  // "::ffff:a.b.c.d", then "%zone" if there is one.
  std::string to_string() const;

  // ::ffff:a.b.c.d (RFC 4291 2.5.5.2), how a dual-stack socket reports an
  // IPv4 peer.
  static ipv6_address v4_mapped(ipv4_address a);
  std::optional<ipv4_address> mapped_v4() const;

  bool is_unspecified() const;  // ::
  bool is_loopback() const;     // ::1
  bool is_link_local() const;   // fe80::/10
  bool is_multicast() const;    // ff00::/8

  friend constexpr auto operator<=>(const ipv6_address&, const ipv6_address&) = default;
};
inline constexpr ipv6_address any_address_v6{};
inline constexpr ipv6_address loopback_v6{{0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1}, 0};

// An address of either family; 0.0.0.0 by default. IPv4 addresses order
// before IPv6 ones.
class address {
 public:
  constexpr address() = default;
  constexpr address(ipv4_address a) : v_(a) {}  // NOLINT: implicit, as an ipv4_address is an address
  constexpr address(ipv6_address a) : v_(a) {}  // NOLINT

  // A dotted quad, else IPv6 text (ipv6_address::parse); an IPv6 address in
  // brackets, "[::1]", too.
  static std::expected<address, std::string> parse(std::string_view text);
  std::string to_string() const;

  bool is_v4() const { return std::holds_alternative<ipv4_address>(v_); }
  bool is_v6() const { return std::holds_alternative<ipv6_address>(v_); }
  // Precondition: the family asked for.
  ipv4_address v4() const { return std::get<ipv4_address>(v_); }
  ipv6_address v6() const { return std::get<ipv6_address>(v_); }
  // Either family's unspecified address (0.0.0.0, ::).
  bool is_unspecified() const;

  friend auto operator<=>(const address&, const address&) = default;

 private:
  std::variant<ipv4_address, ipv6_address> v_;
};

// An address of either family and a port. An IPv4 peer of a dual-stack
// IPv6 socket shows as its IPv4-mapped address (::ffff:a.b.c.d), as the
// kernel reports it (RFC 3493 3.7).
struct endpoint {
  address addr;
  std::uint16_t port = 0;
  std::string to_string() const;  // "10.77.0.2:6033", "[fd77::2]:6033"
  // "10.77.0.2:6033" or "[fd77::2]:6033" (a zone inside the brackets:
  // "[fe80::1%2]:80"). Errors say what is wrong in one line.
  static std::expected<endpoint, std::string> parse(std::string_view text);
  friend auto operator<=>(const endpoint&, const endpoint&) = default;
};

}  // namespace affine::net
