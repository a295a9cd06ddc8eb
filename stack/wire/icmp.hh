#pragma once
// The ICMP messages this stack handles (RFC 792): echo request and reply,
// and destination unreachable, whose code 4 carries the next-hop MTU for
// path MTU discovery (RFC 1191 4). Other types parse as unsupported.

#include <cstddef>
#include <cstdint>
#include <expected>
#include <optional>
#include <span>

#include "stack/wire/checksum.hh"
#include "stack/wire/error.hh"
#include "stack/wire/ipv4.hh"

namespace affine::stack {

enum class icmp_type : std::uint8_t { echo_reply = 0, dest_unreachable = 3, echo_request = 8, time_exceeded = 11 };

// Time exceeded codes (RFC 792).
enum class time_exceeded_code : std::uint8_t { ttl = 0, reassembly = 1 };

// Destination unreachable codes (RFC 792, RFC 1191 4 for code 4).
enum class unreachable_code : std::uint8_t {
  net = 0,
  host = 1,
  protocol = 2,
  port = 3,
  fragmentation_needed = 4,
  source_route_failed = 5,
};

struct icmp_message {
  icmp_type type = icmp_type::echo_request;
  std::uint8_t code = 0;
  std::uint16_t id = 0;            // echo
  std::uint16_t seq = 0;           // echo
  std::uint16_t next_hop_mtu = 0;  // destination unreachable, code 4
  // Echo: the data to return. Destination unreachable, time exceeded: the
  // quoted datagram, its IP header and at least 8 bytes after it.
  std::span<const std::byte> data{};
};

class icmp_view {
 public:
  static constexpr std::size_t header_length = 8;

  // truncated; bad_checksum (unless checksum_mode::offload); unsupported (a
  // type other than the four above). An error (destination unreachable,
  // time exceeded) whose quote is not an IPv4 header and 8 bytes fails as
  // parse_ipv4_quote says.
  static std::expected<icmp_view, parse_error> parse(std::span<const std::byte> bytes,
                                                     checksum_mode mode = checksum_mode::software) noexcept;

  icmp_type type() const noexcept;
  std::uint8_t code() const noexcept;
  std::uint16_t checksum() const noexcept;
  std::uint16_t id() const noexcept;            // echo only
  std::uint16_t seq() const noexcept;           // echo only
  std::uint16_t next_hop_mtu() const noexcept;  // destination unreachable only
  std::span<const std::byte> data() const noexcept { return bytes_.subspan(header_length); }
  // The quoted datagram of an error; nullopt for echo.
  std::optional<ipv4_quote> quote() const noexcept;
  icmp_message message() const noexcept;

 private:
  explicit icmp_view(std::span<const std::byte> bytes) noexcept : bytes_(bytes) {}

  std::span<const std::byte> bytes_;
};

// Writes the header and copies m.data after it; returns 8 + data size. The
// checksum is always computed here: NICs do not offload ICMP. m.data may lie
// where it is being written (an echo reply built in the request's buffer).
std::expected<std::size_t, emit_error> emit_icmp(const icmp_message& m, std::span<std::byte> out) noexcept;

}  // namespace affine::stack
