#pragma once
// Why a frame was refused, and why a header could not be written. The stack
// counts every drop under its reason's name (STYLE.md "Errors"), so the names
// below are part of the stats output and do not change lightly.

#include <cstdint>
#include <string_view>

namespace affine::stack {

enum class parse_error : std::uint8_t {
  truncated,           // the buffer ends inside the fixed part of the header
  bad_version,         // IPv4 version field is not 4
  bad_header_length,   // IHL or TCP data offset under the minimum or past the buffer
  bad_total_length,    // IPv4 total length under the header or past the buffer
  bad_length,          // UDP length under 8 or past the buffer
  bad_checksum,
  bad_flags,           // IPv4 reserved bit; TCP SYN/FIN/RST combinations; Solicited in a multicast Neighbor Advertisement
  bad_option,          // TCP option with an impossible or illegal length; an IPv6 option whose type says discard;
                       // a Neighbor Discovery option of length 0, past the message, or not allowed there
  bad_payload_length,  // IPv6 payload length past the buffer
  bad_extension,       // an IPv6 extension header out of place, past its bounds, or a chain past the bound
  bad_hop_limit,       // Neighbor Discovery not sent with hop limit 255 (RFC 4861 6.1, 7.1, 8.1): not from the link
  bad_code,            // an ICMPv6 code that must be 0
  bad_source,          // a source address the message may not come from (RFC 4861: routers speak from link-local ones)
  bad_destination,     // a destination address the message may not go to, or name
  bad_target,          // a Neighbor Discovery target address that cannot be one
  unsupported,         // well formed, but not something this stack handles
  // Stays last: stack/counters.hh sizes its per-reason table by it.
};

enum class emit_error : std::uint8_t {
  buffer_too_small,  // the caller's span cannot hold what was asked for
  too_long,          // a length field would overflow (IPv4 total length, UDP length)
  options_too_long,  // TCP options beyond the 40 bytes a header can carry
};

constexpr std::string_view to_string(parse_error e) noexcept {
  switch (e) {
    case parse_error::truncated: return "truncated";
    case parse_error::bad_version: return "bad_version";
    case parse_error::bad_header_length: return "bad_header_length";
    case parse_error::bad_total_length: return "bad_total_length";
    case parse_error::bad_length: return "bad_length";
    case parse_error::bad_checksum: return "bad_checksum";
    case parse_error::bad_flags: return "bad_flags";
    case parse_error::bad_option: return "bad_option";
    case parse_error::bad_payload_length: return "bad_payload_length";
    case parse_error::bad_extension: return "bad_extension";
    case parse_error::bad_hop_limit: return "bad_hop_limit";
    case parse_error::bad_code: return "bad_code";
    case parse_error::bad_source: return "bad_source";
    case parse_error::bad_destination: return "bad_destination";
    case parse_error::bad_target: return "bad_target";
    case parse_error::unsupported: return "unsupported";
  }
  return "unknown";
}

constexpr std::string_view to_string(emit_error e) noexcept {
  switch (e) {
    case emit_error::buffer_too_small: return "buffer_too_small";
    case emit_error::too_long: return "too_long";
    case emit_error::options_too_long: return "options_too_long";
  }
  return "unknown";
}

}  // namespace affine::stack
