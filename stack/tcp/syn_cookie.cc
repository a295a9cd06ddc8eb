#include "stack/tcp/syn_cookie.hh"

#include <array>

namespace affine::stack::tcp {

namespace {

// Common MSS values (Linux's table, with 8960 for jumbo frames added); the
// cookie carries the index of the largest not above the peer's.
constexpr std::array<std::uint16_t, 8> mss_table{536, 1200, 1300, 1360, 1400, 1440, 1460, 8960};

constexpr std::uint32_t ts_bits = 7;
constexpr std::uint32_t ts_mask = (1u << ts_bits) - 1;
constexpr std::uint32_t ts_ecn = 1u << 6;
constexpr std::uint32_t ts_marker = 1u << 5;
constexpr std::uint32_t ts_sack = 1u << 4;
constexpr std::uint32_t ts_no_scale = 15;

}  // namespace

syn_cookies syn_cookies::from_random_device() { return syn_cookies(random_siphash_key()); }

std::uint32_t syn_cookies::hash24(const flow_tuple& t, seq32 peer_isn, std::uint32_t slot, unsigned mss_index) const {
  std::array<std::byte, max_connection_id + 9> m;
  const std::size_t n = put_connection_id(t, std::span(m).first<max_connection_id>());
  put_be(std::span(m).subspan(n, 4), peer_isn.raw(), 4);
  put_be(std::span(m).subspan(n + 4, 4), slot, 4);
  put_be(std::span(m).subspan(n + 8, 1), mss_index, 1);
  return std::uint32_t(siphash_2_4(secret_, std::span(m).first(n + 9))) & 0xffffff;
}

seq32 syn_cookies::make(const flow_tuple& t, seq32 peer_isn, std::uint16_t mss, std::uint64_t now_ns) const {
  unsigned index = 0;
  while (index + 1 < mss_table.size() && mss_table[index + 1] <= mss) ++index;
  const auto slot = std::uint32_t(now_ns / slot_ns);
  return seq32((slot & 31) << 27 | index << 24 | hash24(t, peer_isn, slot, index));
}

std::optional<std::uint16_t> syn_cookies::check(const flow_tuple& t, seq32 peer_isn, seq32 cookie,
                                                std::uint64_t now_ns) const {
  const std::uint32_t c = cookie.raw();
  const auto now_slot = std::uint32_t(now_ns / slot_ns);
  const std::uint32_t age = (now_slot - (c >> 27)) & 31;  // slots since it was made, mod 32
  if (age > 1 || age > now_slot) return std::nullopt;
  const unsigned index = (c >> 24) & 7;
  if (hash24(t, peer_isn, now_slot - age, index) != (c & 0xffffff)) return std::nullopt;
  return mss_table[index];
}

std::uint32_t syn_cookies::encode_ts(std::uint32_t now, const cookie_ts_options& o) {
  const std::uint32_t bits = ts_marker | (o.ecn ? ts_ecn : 0) | (o.sack_permitted ? ts_sack : 0) |
                             (o.window_scale ? std::min<std::uint32_t>(*o.window_scale, 14) : ts_no_scale);
  std::uint32_t ts = (now & ~ts_mask) | bits;
  if (std::int32_t(ts - now) > 0) ts -= ts_mask + 1;
  return ts;
}

std::optional<cookie_ts_options> syn_cookies::decode_ts(std::uint32_t echo) {
  if ((echo & ts_marker) == 0) return std::nullopt;
  cookie_ts_options o;
  o.sack_permitted = (echo & ts_sack) != 0;
  o.ecn = (echo & ts_ecn) != 0;
  if (const std::uint32_t s = echo & 15; s != ts_no_scale) o.window_scale = std::uint8_t(s);
  return o;
}

}  // namespace affine::stack::tcp
