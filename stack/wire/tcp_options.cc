#include "stack/wire/tcp_options.hh"

#include <algorithm>
#include <cassert>
#include <cstdint>

#include "stack/wire/endian.hh"

namespace affine::stack {
namespace {

enum kind : std::uint8_t {
  end_of_list = 0,
  no_operation = 1,
  max_segment_size = 2,  // RFC 9293 3.2
  window_scale = 3,      // RFC 7323 2.2
  sack_permitted = 4,    // RFC 2018 2
  sack = 5,              // RFC 2018 3
  timestamps = 8,        // RFC 7323 3.2
};

constexpr std::uint8_t max_window_shift = 14;  // RFC 7323 2.3
constexpr std::size_t sack_block_length = 8;

}  // namespace

std::expected<tcp_options, parse_error> parse_tcp_options(std::span<const std::byte> bytes) noexcept {
  tcp_options o;
  if (!read_tcp_options(bytes, o)) return std::unexpected(parse_error::bad_option);
  return o;
}

bool read_tcp_options(std::span<const std::byte> bytes, tcp_options& o) noexcept {
  o = tcp_options{};
  constexpr bool bad = false;
  std::size_t i = 0;
  while (i < bytes.size()) {
    const auto k = std::uint8_t(bytes[i]);
    if (k == end_of_list) break;
    if (k == no_operation) {
      ++i;
      continue;
    }
    // RFC 9293 3.1: every other option is kind, length (counting both), data.
    if (i + 1 >= bytes.size()) return bad;
    const std::size_t len = std::size_t(bytes[i + 1]);
    if (len < 2 || len > bytes.size() - i) return bad;
    const std::span<const std::byte> option = bytes.subspan(i, len);
    switch (k) {
      case max_segment_size:
        if (len != 4) return bad;
        o.mss = load_be16(option.data() + 2);
        break;
      case window_scale:
        if (len != 3) return bad;
        // RFC 7323 2.3: a shift over 14 is logged and used as 14.
        o.window_scale = std::min(std::uint8_t(option[2]), max_window_shift);
        break;
      case sack_permitted:
        if (len != 2) return bad;
        o.sack_permitted = true;
        break;
      case sack: {
        const std::size_t n = (len - 2) / sack_block_length;
        if ((len - 2) % sack_block_length != 0 || n < 1 || n > 4) return bad;
        // A later SACK option replaces an earlier one whole: no block of
        // the first is left past the count (tcp_options compares all four).
        std::fill(std::begin(o.sack), std::end(o.sack), tcp_sack_block{});
        o.sack_count = std::uint8_t(n);
        for (std::size_t b = 0; b < n; ++b) {
          const std::byte* p = option.data() + 2 + b * sack_block_length;
          o.sack[b] = {seq32(load_be32(p)), seq32(load_be32(p + 4))};
        }
        break;
      }
      case timestamps:
        if (len != 10) return bad;
        o.timestamps = tcp_timestamps{load_be32(option.data() + 2), load_be32(option.data() + 6)};
        break;
      default:
        break;  // RFC 9293 3.1: unknown options are skipped by their length
    }
    i += len;
  }
  return true;
}

std::size_t tcp_options_length(const tcp_options& o) noexcept {
  std::size_t n = 0;
  if (o.mss) n += 4;
  if (o.timestamps) n += 12;  // with SACK-permitted in its two leading bytes, or two NOPs
  else if (o.sack_permitted) n += 4;
  if (o.window_scale) n += 4;
  if (o.sack_count > 0) n += 4 + sack_block_length * o.sack_count;
  return n;
}

std::expected<std::size_t, emit_error> emit_tcp_options(const tcp_options& o, std::span<std::byte> out) noexcept {
  assert(o.sack_count <= 4);
  assert(!o.window_scale || *o.window_scale <= max_window_shift);
  const std::size_t n = tcp_options_length(o);
  if (n > tcp_max_options_length) return std::unexpected(emit_error::options_too_long);
  if (out.size() < n) return std::unexpected(emit_error::buffer_too_small);
  std::byte* p = out.data();
  auto put = [&p](std::uint8_t b) { *p++ = std::byte(b); };
  if (o.mss) {
    put(max_segment_size);
    put(4);
    store_be16(p, *o.mss);
    p += 2;
  }
  if (o.timestamps) {
    if (o.sack_permitted) {
      put(sack_permitted);
      put(2);
    } else {
      put(no_operation);
      put(no_operation);
    }
    put(timestamps);
    put(10);
    store_be32(p, o.timestamps->value);
    store_be32(p + 4, o.timestamps->echo);
    p += 8;
  } else if (o.sack_permitted) {
    put(no_operation);
    put(no_operation);
    put(sack_permitted);
    put(2);
  }
  if (o.window_scale) {
    put(no_operation);
    put(window_scale);
    put(3);
    put(*o.window_scale);
  }
  if (o.sack_count > 0) {
    put(no_operation);
    put(no_operation);
    put(sack);
    put(std::uint8_t(2 + sack_block_length * o.sack_count));
    for (std::size_t b = 0; b < o.sack_count; ++b) {
      store_be32(p, o.sack[b].left.raw());
      store_be32(p + 4, o.sack[b].right.raw());
      p += sack_block_length;
    }
  }
  assert(std::size_t(p - out.data()) == n);
  return n;
}

}  // namespace affine::stack
