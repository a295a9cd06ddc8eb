#pragma once
// IPv6 headers (RFC 8200) and the extension headers a host walks to reach
// the upper layer (section 4): hop-by-hop options, routing, fragment and
// destination options. The walk says why a chain is refused and what
// ICMPv6 Parameter Problem (RFC 4443 3.4), if any, answers it. Also the
// upper-layer checksum's pseudo-header (section 8.1) and the packet an
// ICMPv6 error quotes (RFC 4443 2.4(c)).

#include <array>
#include <cstddef>
#include <cstdint>
#include <expected>
#include <optional>
#include <span>

#include "affine/address.hh"
#include "stack/wire/checksum.hh"
#include "stack/wire/endian.hh"
#include "stack/wire/error.hh"

namespace affine::stack {

using ipv6_bytes = std::array<std::uint8_t, 16>;

// Address classes (RFC 4291 2.4), as net::ipv6_address tells them.
inline bool is_unspecified(const ipv6_bytes& a) noexcept { return net::ipv6_address{a}.is_unspecified(); }
inline bool is_link_local(const ipv6_bytes& a) noexcept { return net::ipv6_address{a}.is_link_local(); }
inline bool is_multicast(const ipv6_bytes& a) noexcept { return net::ipv6_address{a}.is_multicast(); }

// An IPv6 address at a byte offset.
using ipv6_address_field = bytes_field<16>;

// Next Header values (IANA "Assigned Internet Protocol Numbers").
namespace next_header {
inline constexpr std::uint8_t hop_by_hop = 0;
inline constexpr std::uint8_t tcp = 6;
inline constexpr std::uint8_t udp = 17;
inline constexpr std::uint8_t routing = 43;
inline constexpr std::uint8_t fragment = 44;
inline constexpr std::uint8_t icmpv6 = 58;
inline constexpr std::uint8_t none = 59;
inline constexpr std::uint8_t destination = 60;
}  // namespace next_header

struct ipv6_header {
  ipv6_bytes src{};
  ipv6_bytes dst{};
  std::uint8_t traffic_class = 0;  // DSCP and ECN
  std::uint32_t flow_label = 0;    // 20 bits
  std::uint8_t next = 0;           // Next Header
  std::uint8_t hop_limit = 64;
  std::uint16_t payload_length = 0;
  friend constexpr bool operator==(const ipv6_header&, const ipv6_header&) = default;
};

class ipv6_view {
 public:
  static constexpr std::size_t header_length = 40;

  // truncated (under 40 bytes), bad_version (not 6), bad_payload_length
  // (past the buffer), unsupported (payload length 0 with bytes after the
  // header: a jumbogram, RFC 2675, which needs a link this stack has not).
  static std::expected<ipv6_view, parse_error> parse(std::span<const std::byte> bytes) noexcept;

  std::uint8_t traffic_class() const noexcept;
  std::uint32_t flow_label() const noexcept;
  std::uint16_t payload_length() const noexcept { return std::uint16_t(packet_.size() - header_length); }
  std::uint8_t next() const noexcept;
  std::uint8_t hop_limit() const noexcept;
  ipv6_bytes src() const noexcept;
  ipv6_bytes dst() const noexcept;
  // Up to the payload length: link-layer padding after it is not payload.
  std::span<const std::byte> payload() const noexcept { return packet_.subspan(header_length); }
  std::span<const std::byte> packet() const noexcept { return packet_; }
  ipv6_header header() const noexcept;

 private:
  explicit ipv6_view(std::span<const std::byte> packet) noexcept : packet_(packet) {}
  std::span<const std::byte> packet_;  // exactly 40 + payload_length() bytes
};

// The extension headers a walk steps over to reach the upper layer (RFC
// 8200 4.1).
bool is_extension(std::uint8_t next) noexcept;

// A Fragment header met on the way (RFC 8200 4.5).
struct ipv6_fragment {
  std::uint32_t id = 0;
  std::uint16_t offset = 0;     // in bytes, a multiple of 8
  bool more = false;
  std::size_t header_at = 0;    // where the Fragment header starts (the unfragmentable part's length)
  // Offset 0 and no more fragments: an atomic fragment, processed on its own
  // and never reassembled with anything (RFC 6946).
  bool atomic() const noexcept { return offset == 0 && !more; }
};

// Where the upper layer starts. For a fragment that is not atomic the walk
// ends at its Fragment header: `protocol` is what the fragments carry and
// `payload` this fragment's part, for reassembly.
struct ipv6_upper {
  std::uint8_t protocol = 0;            // TCP, UDP, ICMPv6, none (59), or what the caller must refuse
  std::size_t protocol_field = 6;       // where the Next Header field that names it is (a Parameter Problem's pointer)
  std::size_t offset = 0;               // where the upper layer (or the fragment's data) starts
  std::span<const std::byte> payload{};
  std::optional<ipv6_fragment> fragment{};
};

// A chain refused, and the Parameter Problem to answer it with (code 0:
// erroneous header field, 1: unrecognized Next Header, 2: unrecognized
// option; pointer: the offending byte's offset in the packet), or none.
struct ipv6_chain_error {
  parse_error reason = parse_error::bad_extension;
  std::optional<std::uint8_t> icmp_code{};
  std::uint32_t pointer = 0;
};

// The walk of RFC 8200 section 4, for a host (it forwards nothing), over at
// most `max_headers` extension headers. Refused, each with its reason:
// - hop-by-hop options anywhere but first (code 1 at the Next Header that
//   names it), an extension header running past the packet, a chain longer
//   than the bound, an option running past its header: bad_extension;
// - an unrecognized option whose type says discard (RFC 8200 4.2; code 2
//   at the option where its type asks for an answer: always for 10, unless
//   the destination is multicast for 11): bad_option;
// - a Routing header with segments left (this host is the final one only
//   when none are left; type 0 is deprecated anyway, RFC 5095): code 0 at
//   its Routing Type; with none left it is skipped;
// - a fragment whose offset and more-fragments flag leave its data not a
//   multiple of 8 bytes (RFC 8200 4.5: code 0 at the Payload Length);
// - a second Fragment header (no code);
// - a first fragment (offset 0, more to come) whose chain after the
//   Fragment header, walked by the same rules, does not end in it with the
//   upper layer's fixed header (TCP's 20 bytes, UDP's 8, ICMPv6's 4): RFC
//   8200 4.5 and RFC 7112, code 3 at pointer 0.
// For a fragment that is not atomic the result is its Fragment header's:
// the chain after it is stepped over once the datagram is whole
// (skip_ipv6_chain).
std::expected<ipv6_upper, ipv6_chain_error> walk_ipv6_chain(const ipv6_view& v, unsigned max_headers = 8) noexcept;

// Where a walk by the extension headers' lengths alone ends (their options
// left unread): at the upper layer; at a Fragment header of a fragment
// other than the first (`protocol` is what it carries, `at` just past it:
// only the first fragment holds the upper layer's header); or cut short, at
// the bound or where a header runs past the bytes (`protocol` then is the
// extension header not stepped over).
struct ipv6_chain_end {
  enum class stop : std::uint8_t { upper, later_fragment, cut };
  std::uint8_t protocol = 0;
  std::size_t protocol_field = 0;  // where the Next Header field that names it is
  std::size_t at = 0;
  stop how = stop::upper;
};
// From extension header `next` at `at` in `packet`, named by the Next
// Header field at `field`, over at most `max_headers` headers. An ICMPv6
// error's quote is walked so, and a reassembled datagram from its Fragment
// header on, once walk_ipv6_chain has checked that chain in its first
// fragment.
ipv6_chain_end skip_ipv6_chain(std::span<const std::byte> packet, std::uint8_t next, std::size_t field,
                               std::size_t at, unsigned max_headers = 8) noexcept;

// Writes the 40-byte header for a payload of h.payload_length bytes;
// returns 40.
std::expected<std::size_t, emit_error> emit_ipv6(const ipv6_header& h, std::span<std::byte> out) noexcept;

// The start of a packet quoted in an ICMPv6 error: as much of it as fits
// in the error (RFC 4443 2.4(c)), so usually cut short, and not checked
// beyond what is read. The walk over its extension headers skips them by
// their lengths (their options were the sender's to judge) and stops,
// without an error, where the quote does.
struct ipv6_quote {
  ipv6_header header{};  // as quoted: payload_length is the invoking packet's, which the quote usually falls short of
  // The upper-layer protocol, where the quote holds the Next Header field
  // that names it (after the extension headers, or in the Fragment header
  // of a fragment other than the first); nullopt where it ends sooner.
  std::optional<std::uint8_t> protocol{};
  // The upper layer from its start to the end of the quote: 8 bytes or
  // more (ports, TCP's sequence number), else empty (the quote holds fewer,
  // or the packet was a fragment other than the first), at the quote's end.
  std::span<const std::byte> transport{};
};

// truncated (no room for the 40-byte header), bad_version (not 6).
// The walk goes over at most `max_headers` extension headers.
std::expected<ipv6_quote, parse_error> parse_ipv6_quote(std::span<const std::byte> bytes,
                                                        unsigned max_headers = 8) noexcept;

// The pseudo-header of an upper-layer checksum over IPv6, less its length
// (wire/checksum.hh's pseudo_header).
pseudo_header ipv6_pseudo(const ipv6_bytes& src, const ipv6_bytes& dst, std::uint8_t next) noexcept;

// The pseudo-header of an upper-layer checksum over IPv6 (RFC 8200 8.1):
// source, destination, upper-layer packet length (32 bits), three zero
// bytes, Next Header (the upper layer's, not the first extension header's).
checksum_accumulator ipv6_pseudo_header(const ipv6_bytes& src, const ipv6_bytes& dst, std::uint8_t next,
                                        std::uint32_t length) noexcept;

// A TCP, UDP or ICMPv6 checksum over IPv6 for `header` + `payload` of
// protocol `next`, as ipv4_transport_checksum: for checksum_mode::software
// the value for the checksum field, which must hold zero in `header`; for
// offload the pseudo-header sum alone, which the NIC completes.
std::uint16_t ipv6_transport_checksum(const ipv6_bytes& src, const ipv6_bytes& dst, std::uint8_t next,
                                      std::span<const std::byte> header, std::span<const std::byte> payload,
                                      checksum_mode mode) noexcept;

// Whether a received upper-layer packet (checksum field included) checks.
bool ipv6_transport_verifies(const ipv6_bytes& src, const ipv6_bytes& dst, std::uint8_t next,
                             std::span<const std::byte> segment) noexcept;

}  // namespace affine::stack
