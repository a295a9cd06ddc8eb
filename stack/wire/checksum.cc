#include "stack/wire/checksum.hh"

#include <algorithm>
#include <bit>
#include <cstring>

#include "stack/wire/endian.hh"

namespace affine::stack {
namespace {

std::uint64_t load64(const std::byte* q) noexcept {
  std::uint64_t w;
  std::memcpy(&w, q, sizeof w);
  return w;
}

// The last n < 8 bytes at p as the word memcpy would make of them in a
// zeroed one (memory order, zeros after), built in registers: a word stored
// a byte at a time and then loaded whole stalls on store forwarding.
std::uint64_t tail_word(const std::byte* p, std::size_t n) noexcept {
  std::uint64_t w = 0;
  std::size_t at = 0;
  const auto put = [&](std::uint64_t v, std::size_t size) {
    w |= v << (std::endian::native == std::endian::little ? 8 * at : 64 - 8 * (at + size));
    at += size;
  };
  if (n & 4) {
    std::uint32_t v;
    std::memcpy(&v, p, sizeof v);
    put(v, sizeof v);
  }
  if (n & 2) {
    std::uint16_t v;
    std::memcpy(&v, p + at, sizeof v);
    put(v, sizeof v);
  }
  if (n & 1) put(std::uint8_t(p[at]), 1);
  return w;
}

// Ones' complement addition is commutative (RFC 1071 2(A)) and byte order
// independent (2(B)): words are summed as the machine loads them, 32 bits at a
// time into 64-bit accumulators so carries are kept rather than folded on
// every step, and the folded result is converted to big-endian at the end.
std::uint64_t scalar_sum(const std::byte* p, std::size_t n) noexcept {
  std::uint64_t a = 0, b = 0;  // two chains so the adds can overlap
  for (; n >= 16; p += 16, n -= 16) {
    const std::uint64_t w0 = load64(p), w1 = load64(p + 8);
    a += (w0 & 0xffffffff) + (w0 >> 32);
    b += (w1 & 0xffffffff) + (w1 >> 32);
  }
  if (n >= 8) {
    const std::uint64_t w = load64(p);
    a += (w & 0xffffffff) + (w >> 32);
    p += 8;
    n -= 8;
  }
  if (n > 0) {
    // The tail, zero padded: a last odd byte is the high half of its word
    // (RFC 1071 4.1), which is where memory order puts it.
    const std::uint64_t w = tail_word(p, n);
    b += (w & 0xffffffff) + (w >> 32);
  }
  // Each step adds under 2^33, so neither chain can wrap below 2^31 steps
  // (32 GiB of data).
  return a + b < a ? a + b + 1 : a + b;
}

using lanes16 = std::uint32_t __attribute__((vector_size(16)));
using lanes32 = std::uint32_t __attribute__((vector_size(32)));

// The same sum, a vector at a time, and with `to` a copy of the bytes
// made in the same pass (the TX path copies a payload into its packet and
// sums it: one read of each byte instead of two). Each 32-bit lane adds the
// two 16-bit halves of its word separately (2^32 = 1 mod 2^16 - 1, so the
// halves sum to what the word does), and a step adds under 2^17 to each
// lane, so blocks of 2^14 steps cannot wrap one; each block is folded into
// 64 bits. Whatever is shorter than two vectors is left for scalar_sum,
// which starts at an even offset, so the word pairing holds.
template <class V, bool copy>
[[gnu::always_inline]] inline std::uint64_t lanes_sum(const std::byte* p, std::size_t n, std::byte* to) noexcept {
  constexpr std::size_t step = 2 * sizeof(V);
  constexpr std::size_t lanes = sizeof(V) / sizeof(std::uint32_t);
  constexpr std::size_t block = std::size_t(1) << 14;  // steps; each adds under 2^17 per lane
  std::uint64_t total = 0;
  while (n >= step) {
    V lo{}, hi{};
    for (std::size_t i = std::min(n / step, block); i > 0; --i, p += step, n -= step) {
      V x, y;
      std::memcpy(&x, p, sizeof x);
      std::memcpy(&y, p + sizeof x, sizeof y);
      if constexpr (copy) {
        std::memcpy(to, &x, sizeof x);
        std::memcpy(to + sizeof x, &y, sizeof y);
        to += step;
      }
      lo += (x & 0xffff) + (y & 0xffff);
      hi += (x >> 16) + (y >> 16);
    }
    for (std::size_t l = 0; l < lanes; ++l) total += std::uint64_t(lo[l]) + hi[l];
  }
  if constexpr (copy) {
    if (n > 0) std::memcpy(to, p, n);
  }
  const std::uint64_t rest = scalar_sum(p, n);
  return total + rest < total ? total + rest + 1 : total + rest;
}

#if defined(__x86_64__)
[[gnu::target("avx2")]] std::uint64_t avx2_sum(const std::byte* p, std::size_t n, std::byte* to) noexcept {
  return to != nullptr ? lanes_sum<lanes32, true>(p, n, to) : lanes_sum<lanes32, false>(p, n, to);
}

bool have_avx2() noexcept {
  __builtin_cpu_init();
  return __builtin_cpu_supports("avx2");
}
#endif

std::uint16_t fold(std::uint64_t s) noexcept {
  s = (s & 0xffffffff) + (s >> 32);
  s = (s & 0xffffffff) + (s >> 32);
  s = (s & 0xffff) + (s >> 16);
  s = (s & 0xffff) + (s >> 16);
  return std::uint16_t(s);
}

}  // namespace

namespace checksum_detail {

std::uint64_t portable_sum(const std::byte* p, std::size_t n, std::byte* to) noexcept {
  return to != nullptr ? lanes_sum<lanes16, true>(p, n, to) : lanes_sum<lanes16, false>(p, n, to);
}

std::uint64_t native_sum(const std::byte* p, std::size_t n, std::byte* to) noexcept {
  // Headers are short: the vectors pay from a few hundred bytes on.
  if (n < 256) {
    if (to != nullptr && n > 0) std::memcpy(to, p, n);
    return scalar_sum(p, n);
  }
#if defined(__x86_64__)
  static const bool avx2 = have_avx2();
  if (avx2) return avx2_sum(p, n, to);
#endif
  return portable_sum(p, n, to);
}

}  // namespace checksum_detail

void checksum_accumulator::add_native(std::uint64_t native, std::size_t length) noexcept {
  std::uint16_t part = from_big_endian(fold(native));
  // After odd-length data this span's first byte is the low half of a word:
  // its sum is the byte-swapped one (RFC 1071 2(B)).
  if (odd_) part = std::byteswap(part);
  sum_ += part;
  odd_ ^= (length & 1) != 0;
}

void checksum_accumulator::add(std::span<const std::byte> bytes) noexcept {
  add_native(checksum_detail::native_sum(bytes.data(), bytes.size()), bytes.size());
}

void checksum_accumulator::copy_and_add(std::byte* to, std::span<const std::byte> bytes) noexcept {
  add_native(checksum_detail::native_sum(bytes.data(), bytes.size(), to), bytes.size());
}

std::uint16_t checksum_accumulator::sum() const noexcept { return fold(sum_); }

std::uint16_t internet_checksum(std::span<const std::byte> bytes) noexcept {
  checksum_accumulator c;
  c.add(bytes);
  return c.checksum();
}

pseudo_header pseudo_header::ipv4(std::uint32_t src, std::uint32_t dst, std::uint8_t protocol) noexcept {
  checksum_accumulator c;
  c.add32(src);
  c.add32(dst);
  c.add16(protocol);
  return {c, false};
}

std::uint16_t pseudo_header::checksum(std::span<const std::byte> header, std::span<const std::byte> payload,
                                      checksum_mode mode) const noexcept {
  checksum_accumulator c = with_length(std::uint32_t(header.size() + payload.size()));
  if (mode == checksum_mode::offload) return c.sum();
  c.add(header);
  c.add(payload);
  return c.checksum();
}

bool pseudo_header::verifies(std::span<const std::byte> segment) const noexcept {
  checksum_accumulator c = with_length(std::uint32_t(segment.size()));
  c.add(segment);
  return c.verifies();
}

checksum_accumulator ipv4_pseudo_header(std::uint32_t src, std::uint32_t dst, std::uint8_t protocol,
                                        std::uint16_t length) noexcept {
  return pseudo_header::ipv4(src, dst, protocol).with_length(length);
}

std::uint16_t ipv4_transport_checksum(std::uint32_t src, std::uint32_t dst, std::uint8_t protocol,
                                      std::span<const std::byte> header, std::span<const std::byte> payload,
                                      checksum_mode mode) noexcept {
  return pseudo_header::ipv4(src, dst, protocol).checksum(header, payload, mode);
}

bool ipv4_transport_verifies(std::uint32_t src, std::uint32_t dst, std::uint8_t protocol,
                             std::span<const std::byte> segment) noexcept {
  return pseudo_header::ipv4(src, dst, protocol).verifies(segment);
}

}  // namespace affine::stack
