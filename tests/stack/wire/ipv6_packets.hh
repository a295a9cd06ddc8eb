#pragma once
// What the ICMPv6, Neighbor Discovery and MLD tests share: the captured
// IPv6 frames of frames.hh taken apart the way the receive path takes them
// (ipv6_view, the extension-header walk, icmpv6_view), and a builder for
// messages written byte by byte as the RFC draws them.

#include <gtest/gtest.h>

#include <cstdint>
#include <initializer_list>
#include <span>
#include <string_view>
#include <vector>

#include "affine/address.hh"
#include "stack/wire/endian.hh"
#include "stack/wire/ethernet.hh"
#include "stack/wire/icmpv6.hh"
#include "stack/wire/ipv6.hh"
#include "tests/stack/wire/frames.hh"

namespace affine::stack::test {

// Text as RFC 4291 2.2 writes it; a test's own typo throws.
inline ipv6_bytes ip6(std::string_view text) { return net::ipv6_address::parse(text).value().bytes; }

// The two ends of the captures (frames.hh).
inline const ipv6_bytes a_link_local = ip6("fe80::ff:fe00:1");
inline const ipv6_bytes b_link_local = ip6("fe80::ff:fe00:2");
inline const ipv6_bytes a_global = ip6("2001:db8:77::1");
inline const ipv6_bytes b_global = ip6("2001:db8:77::2");
inline constexpr mac_address a_mac{2, 0, 0, 0, 0, 1};
inline constexpr mac_address b_mac{2, 0, 0, 0, 0, 2};

// A captured frame, taken apart as the receive path does.
class captured_ipv6 {
 public:
  explicit captured_ipv6(std::string_view hex) : frame_(from_hex(hex)) {}

  std::span<const std::byte> frame() const { return frame_; }
  std::span<const std::byte> packet() const { return frame().subspan(ethernet_length); }
  ipv6_view ip() const { return *ipv6_view::parse(packet()); }
  // The upper layer, after the extension headers.
  std::span<const std::byte> upper() const { return walk_ipv6_chain(ip())->payload; }
  icmpv6_view icmp() const {
    const auto v = icmpv6_view::parse(upper(), ip().src(), ip().dst());
    EXPECT_TRUE(v.has_value());
    return *v;
  }
  // A copy of the upper layer's bytes, to change or compare.
  std::vector<std::byte> upper_bytes() const { return {upper().begin(), upper().end()}; }

 private:
  std::vector<std::byte> frame_;
};

// A message written field by field, big-endian, as the RFC's diagrams
// have it.
class message_builder {
 public:
  message_builder& u8(unsigned v) {
    bytes_.push_back(std::byte(v));
    return *this;
  }
  message_builder& u16(std::uint16_t v) {
    bytes_.resize(bytes_.size() + 2);
    store_be16(bytes_.data() + bytes_.size() - 2, v);
    return *this;
  }
  message_builder& u32(std::uint32_t v) {
    bytes_.resize(bytes_.size() + 4);
    store_be32(bytes_.data() + bytes_.size() - 4, v);
    return *this;
  }
  message_builder& address(const ipv6_bytes& a) {
    for (const auto b : a) u8(b);
    return *this;
  }
  message_builder& mac(const mac_address& m) {
    for (const auto b : m) u8(b);
    return *this;
  }
  message_builder& zeros(std::size_t n) {
    bytes_.resize(bytes_.size() + n);
    return *this;
  }
  // An ICMPv6 start: type, code, checksum 0 (finish() fills it).
  message_builder& icmpv6(icmpv6_type type, std::uint8_t code = 0) { return u8(std::uint8_t(type)).u8(code).u16(0); }
  // The bytes, with the ICMPv6 checksum for `src` to `dst`.
  std::vector<std::byte> finish(const ipv6_bytes& src, const ipv6_bytes& dst) const {
    auto out = bytes_;
    set_icmpv6_checksum(out, src, dst);
    return out;
  }
  std::vector<std::byte> bytes() const { return bytes_; }

 private:
  std::vector<std::byte> bytes_;
};

}  // namespace affine::stack::test
