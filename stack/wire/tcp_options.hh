#pragma once
// TCP options (RFC 9293 3.1, 3.2): the ones this stack uses are read into
// tcp_options, the rest skipped by their length.

#include <cstddef>
#include <expected>
#include <span>

#include "stack/wire/error.hh"
#include "stack/wire/tcp_segment.hh"

namespace affine::stack {

inline constexpr std::size_t tcp_max_options_length = 40;  // data offset 15 less the fixed 20 bytes

// bad_option: a kind other than EOL and NOP without room for its length
// byte, a length under 2 or running past the option space, or a known kind
// with the wrong length. A window scale over 14 is clamped to 14.
std::expected<tcp_options, parse_error> parse_tcp_options(std::span<const std::byte> bytes) noexcept;
// The same into `out` (reset first): false for bad_option. The RX path reads
// into the segment it hands on: a tcp_options built field by field and then
// copied whole stalls on store forwarding (a tenth of a bulk receiver's time).
bool read_tcp_options(std::span<const std::byte> bytes, tcp_options& out) noexcept;

// The bytes emit_tcp_options writes: a multiple of 4 (the data offset
// counts 32-bit words).
std::size_t tcp_options_length(const tcp_options& o) noexcept;

// Writes the options, NOP-aligned as Linux lays them out; returns
// tcp_options_length(o). options_too_long: over 40 bytes (four SACK blocks
// and timestamps cannot travel together). Precondition: o.sack_count <= 4,
// o.window_scale <= 14.
std::expected<std::size_t, emit_error> emit_tcp_options(const tcp_options& o, std::span<std::byte> out) noexcept;

}  // namespace affine::stack
