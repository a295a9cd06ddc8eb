// Address text (include/affine/address.hh): RFC 4291 section 2.2 in, RFC
// 5952 out.

#include "affine/address.hh"

#include <charconv>

#include <fmt/format.h>

namespace affine::net {

namespace {

// The text as an error quotes it: in double quotes, with a quote, a
// backslash and every byte outside printable ASCII escaped, so that a
// message stays one line whatever the input.
std::string quoted(std::string_view text) {
  std::string out = "\"";
  for (const char c : text) {
    const auto u = static_cast<unsigned char>(c);
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (u < 0x20 || u >= 0x7f) {
      out += fmt::format("\\x{:02x}", u);
    } else {
      out += c;
    }
  }
  return out + '"';
}

std::string not_v4(std::string_view text) {
  return fmt::format("{} is not an IPv4 address (like \"10.77.0.2\")", quoted(text));
}

std::string not_v6(std::string_view text, std::string_view why) {
  return fmt::format("{} is not an IPv6 address (like \"2001:db8::1\"): {}", quoted(text), why);
}

int hex_digit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

}  // namespace

std::expected<ipv4_address, std::string> ipv4_address::parse(std::string_view text) {
  std::uint32_t v = 0;
  const char* p = text.data();
  const char* end = text.data() + text.size();
  for (int i = 0; i < 4; ++i) {
    unsigned octet = 0;
    auto [next, ec] = std::from_chars(p, end, octet);
    // A leading zero is refused, as inet_pton refuses it: "010" would be
    // octal to inet_aton.
    if (ec != std::errc{} || next == p || next - p > 3 || octet > 255 || (next - p > 1 && *p == '0') ||
        (i < 3 && (next == end || *next != '.')))
      return std::unexpected(not_v4(text));
    v = v << 8 | octet;
    p = i < 3 ? next + 1 : next;
  }
  if (p != end) return std::unexpected(not_v4(text));
  return ipv4_address{v};
}

std::string ipv4_address::to_string() const {
  return fmt::format("{}.{}.{}.{}", value >> 24, (value >> 16) & 0xff, (value >> 8) & 0xff, value & 0xff);
}

std::expected<ipv6_address, std::string> ipv6_address::parse(std::string_view text) {
  ipv6_address out;
  std::string_view body = text;
  if (const std::size_t pct = text.find('%'); pct != std::string_view::npos) {
    const std::string_view zone = text.substr(pct + 1);
    const auto [end, ec] = std::from_chars(zone.data(), zone.data() + zone.size(), out.scope_id);
    if (zone.empty() || ec != std::errc{} || end != zone.data() + zone.size() || out.scope_id == 0)
      return std::unexpected(not_v6(text, "the zone after '%' must be an interface index, 1 or more"));
    body = text.substr(0, pct);
  }
  if (body.empty()) return std::unexpected(not_v6(text, "it is empty"));

  // Groups before and after "::", then the gap between them is zeros.
  std::array<std::uint16_t, 8> groups{};
  int count = 0;        // groups written
  int gap_at = -1;      // index where "::" stands, if any
  std::size_t i = 0;
  if (body.starts_with("::")) {
    gap_at = 0;
    i = 2;
  } else if (body.starts_with(':')) {
    return std::unexpected(not_v6(text, "a single ':' at the start"));
  }
  while (i < body.size()) {
    // An IPv4 dotted quad as the last two groups.
    const std::size_t next_colon = body.find(':', i);
    const std::string_view piece = body.substr(i, next_colon == std::string_view::npos ? std::string_view::npos
                                                                                        : next_colon - i);
    if (piece.find('.') != std::string_view::npos) {
      if (next_colon != std::string_view::npos)
        return std::unexpected(not_v6(text, "an IPv4 part must come last"));
      const auto v4 = ipv4_address::parse(piece);
      if (!v4) return std::unexpected(not_v6(text, "its IPv4 part is not a dotted quad"));
      if (count > 6) return std::unexpected(not_v6(text, "more than 8 groups"));
      groups[count++] = static_cast<std::uint16_t>(v4->value >> 16);
      groups[count++] = static_cast<std::uint16_t>(v4->value & 0xffff);
      i = body.size();
      break;
    }
    if (piece.empty() || piece.size() > 4)
      return std::unexpected(not_v6(text, piece.empty() ? "an empty group" : "a group of more than 4 hex digits"));
    std::uint16_t g = 0;
    for (const char c : piece) {
      const int d = hex_digit(c);
      if (d < 0) {
        const std::string shown = quoted(std::string_view(&c, 1));
        return std::unexpected(not_v6(text, fmt::format("'{}' is not a hex digit", shown.substr(1, shown.size() - 2))));
      }
      g = static_cast<std::uint16_t>(g << 4 | d);
    }
    if (count == 8) return std::unexpected(not_v6(text, "more than 8 groups"));
    groups[count++] = g;
    if (next_colon == std::string_view::npos) {
      i = body.size();
      break;
    }
    i = next_colon + 1;
    if (i < body.size() && body[i] == ':') {
      if (gap_at >= 0) return std::unexpected(not_v6(text, "\"::\" more than once"));
      gap_at = count;
      ++i;
    } else if (i == body.size()) {
      return std::unexpected(not_v6(text, "a single ':' at the end"));
    }
  }
  if (gap_at < 0 && count != 8) return std::unexpected(not_v6(text, "fewer than 8 groups and no \"::\""));
  if (gap_at >= 0 && count > 7) return std::unexpected(not_v6(text, "\"::\" with 8 groups besides"));
  std::array<std::uint16_t, 8> full{};
  if (gap_at < 0) {
    full = groups;
  } else {
    const int tail = count - gap_at;
    for (int k = 0; k < gap_at; ++k) full[static_cast<std::size_t>(k)] = groups[static_cast<std::size_t>(k)];
    for (int k = 0; k < tail; ++k) full[static_cast<std::size_t>(8 - tail + k)] = groups[static_cast<std::size_t>(gap_at + k)];
  }
  for (std::size_t k = 0; k < 8; ++k) {
    out.bytes[2 * k] = static_cast<std::uint8_t>(full[k] >> 8);
    out.bytes[2 * k + 1] = static_cast<std::uint8_t>(full[k] & 0xff);
  }
  return out;
}

std::string ipv6_address::to_string() const {
  std::string out;
  if (const auto v4 = mapped_v4()) {
    out = "::ffff:" + v4->to_string();
  } else {
    std::array<unsigned, 8> g{};
    for (std::size_t k = 0; k < 8; ++k) g[k] = unsigned(bytes[2 * k]) << 8 | bytes[2 * k + 1];
    // The longest run of two or more zero groups, the first of equals.
    std::size_t best = 8, best_len = 1;
    for (std::size_t k = 0; k < 8;) {
      if (g[k] != 0) {
        ++k;
        continue;
      }
      std::size_t len = 0;
      while (k + len < 8 && g[k + len] == 0) ++len;
      if (len > best_len) {
        best = k;
        best_len = len;
      }
      k += len;
    }
    for (std::size_t k = 0; k < 8; ++k) {
      if (k == best) {
        out += "::";
        k += best_len - 1;
        continue;
      }
      if (!out.empty() && !out.ends_with(':')) out += ':';
      out += fmt::format("{:x}", g[k]);
    }
  }
  if (scope_id != 0) out += fmt::format("%{}", scope_id);
  return out;
}

ipv6_address ipv6_address::v4_mapped(ipv4_address a) {
  ipv6_address out;
  out.bytes[10] = out.bytes[11] = 0xff;
  out.bytes[12] = static_cast<std::uint8_t>(a.value >> 24);
  out.bytes[13] = static_cast<std::uint8_t>(a.value >> 16);
  out.bytes[14] = static_cast<std::uint8_t>(a.value >> 8);
  out.bytes[15] = static_cast<std::uint8_t>(a.value);
  return out;
}

std::optional<ipv4_address> ipv6_address::mapped_v4() const {
  for (std::size_t k = 0; k < 10; ++k) {
    if (bytes[k] != 0) return std::nullopt;
  }
  if (bytes[10] != 0xff || bytes[11] != 0xff) return std::nullopt;
  return ipv4_address{std::uint32_t(bytes[12]) << 24 | std::uint32_t(bytes[13]) << 16 |
                      std::uint32_t(bytes[14]) << 8 | bytes[15]};
}

bool ipv6_address::is_unspecified() const { return bytes == any_address_v6.bytes; }
bool ipv6_address::is_loopback() const { return bytes == loopback_v6.bytes; }
bool ipv6_address::is_link_local() const { return bytes[0] == 0xfe && (bytes[1] & 0xc0) == 0x80; }
bool ipv6_address::is_multicast() const { return bytes[0] == 0xff; }

std::expected<address, std::string> address::parse(std::string_view text) {
  if (text.find(':') == std::string_view::npos) {
    auto v4 = ipv4_address::parse(text);
    if (!v4) return std::unexpected(v4.error());
    return address(*v4);
  }
  std::string_view inner = text;
  if (inner.starts_with('[') && inner.ends_with(']')) inner = inner.substr(1, inner.size() - 2);
  auto v6 = ipv6_address::parse(inner);
  if (!v6) return std::unexpected(v6.error());
  return address(*v6);
}

std::string address::to_string() const { return is_v4() ? v4().to_string() : v6().to_string(); }

bool address::is_unspecified() const { return is_v4() ? v4() == any_address : v6().is_unspecified(); }

std::string endpoint::to_string() const {
  return addr.is_v6() ? fmt::format("[{}]:{}", addr.to_string(), port) : fmt::format("{}:{}", addr.to_string(), port);
}

std::expected<endpoint, std::string> endpoint::parse(std::string_view text) {
  const auto bad = [&](std::string_view why) {
    return std::unexpected(fmt::format("{} is not ADDRESS:PORT (like \"10.77.0.2:6033\" or \"[fd77::2]:6033\"): {}",
                                       quoted(text), why));
  };
  const auto colon = text.rfind(':');
  if (colon == std::string_view::npos) return bad("no port");
  std::string_view host = text.substr(0, colon);
  const std::string_view digits = text.substr(colon + 1);
  if (host.starts_with('[') != host.ends_with(']') || (host.size() == 1 && host[0] == '['))
    return bad("unbalanced brackets");
  if (!host.starts_with('[') && host.find(':') != std::string_view::npos)
    return bad("an IPv6 address takes brackets before a port");
  unsigned port = 0;
  const auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), port);
  if (digits.empty() || ec != std::errc{} || end != digits.data() + digits.size() || port > 65535)
    return bad("the port is not a number in 0..65535");
  if (host.starts_with('[')) {
    const std::string_view inner = host.substr(1, host.size() - 2);
    if (inner.find(':') == std::string_view::npos) return bad("brackets hold an IPv6 address");
    auto v6 = ipv6_address::parse(inner);
    if (!v6) return std::unexpected(v6.error());
    return endpoint{*v6, std::uint16_t(port)};
  }
  auto v4 = ipv4_address::parse(host);
  if (!v4) return std::unexpected(v4.error());
  return endpoint{*v4, std::uint16_t(port)};
}

}  // namespace affine::net
