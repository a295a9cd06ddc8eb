// Fuzz target: address text (include/affine/address.hh, base/address.cc),
// the bytes taken as the text.
//
// Invariants:
// - an address that parses is written in one canonical form that parses
//   back to the same address and is written again the same (RFC 5952);
// - without a zone, IPv6 text parses exactly when inet_pton(AF_INET6) takes
//   it, to the same bytes; IPv4 text exactly when inet_pton(AF_INET) does;
// - an endpoint that parses ("a.b.c.d:port", "[v6]:port") is written in a
//   form that parses back to it;
// - a refusal is one line that quotes the text.

#include <arpa/inet.h>

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>

#include "affine/address.hh"
#include "tests/fuzz/check.hh"

namespace {

using affine_fuzz::require;
namespace net = affine::net;

void one_line(const std::string& error) {
  require(!error.empty() && error.find('\n') == std::string::npos, "a refusal is one line");
  require(error.starts_with("\""), "a refusal quotes the text");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  const bool has_nul = text.find('\0') != std::string::npos;

  const auto v6 = net::ipv6_address::parse(text);
  if (v6) {
    const std::string written = v6->to_string();
    const auto again = net::ipv6_address::parse(written);
    require(again.has_value() && *again == *v6, "IPv6 canonical text reads back to the same address");
    require(again->to_string() == written, "IPv6 canonical text is a fixed point");
  } else {
    one_line(v6.error());
  }
  if (!has_nul && text.find('%') == std::string::npos) {
    in6_addr c{};
    const bool libc = inet_pton(AF_INET6, text.c_str(), &c) == 1;
    require(libc == v6.has_value(), "IPv6 parse agrees with inet_pton on what is an address");
    if (libc) require(std::memcmp(c.s6_addr, v6->bytes.data(), 16) == 0, "IPv6 parse agrees with inet_pton's bytes");
  }

  const auto v4 = net::ipv4_address::parse(text);
  if (v4) {
    require(net::ipv4_address::parse(v4->to_string()) == v4, "IPv4 text reads back to the same address");
  } else {
    one_line(v4.error());
  }
  if (!has_nul) {
    in_addr c{};
    const bool libc = inet_pton(AF_INET, text.c_str(), &c) == 1;
    require(libc == v4.has_value(), "IPv4 parse agrees with inet_pton on what is an address");
    if (libc) require(ntohl(c.s_addr) == v4->value, "IPv4 parse agrees with inet_pton's value");
  }

  const auto any = net::address::parse(text);
  if (any) {
    const auto again = net::address::parse(any->to_string());
    require(again.has_value() && *again == *any, "address text reads back to the same address");
  } else {
    one_line(any.error());
  }

  const auto ep = net::endpoint::parse(text);
  if (ep) {
    const auto again = net::endpoint::parse(ep->to_string());
    require(again.has_value() && *again == *ep, "endpoint text reads back to the same endpoint");
  } else {
    one_line(ep.error());
  }
  return 0;
}
