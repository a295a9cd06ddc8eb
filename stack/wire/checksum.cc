#include "stack/wire/checksum.hh"

#include <bit>
#include <cstring>

#include "stack/wire/endian.hh"

namespace affine::stack {
namespace {

// Ones' complement addition is commutative (RFC 1071 2(A)) and byte order
// independent (2(B)): words are summed as the machine loads them, 32 bits at a
// time into 64-bit accumulators so carries are kept rather than folded on
// every step, and the folded result is converted to big-endian at the end.
std::uint64_t native_sum(const std::byte* p, std::size_t n) noexcept {
  std::uint64_t a = 0, b = 0;  // two chains so the adds can overlap
  auto load64 = [](const std::byte* q) {
    std::uint64_t w;
    std::memcpy(&w, q, sizeof w);
    return w;
  };
  for (; n >= 16; p += 16, n -= 16) {
    const std::uint64_t w0 = load64(p), w1 = load64(p + 8);
    a += (w0 & 0xffffffff) + (w0 >> 32);
    b += (w1 & 0xffffffff) + (w1 >> 32);
  }
  if (n > 8) {
    const std::uint64_t w = load64(p);
    a += (w & 0xffffffff) + (w >> 32);
    p += 8;
    n -= 8;
  }
  if (n > 0) {
    // The tail, zero padded: a last odd byte is the high half of its word
    // (RFC 1071 4.1), which is where memory order puts it.
    std::uint64_t w = 0;
    std::memcpy(&w, p, n);
    b += (w & 0xffffffff) + (w >> 32);
  }
  // Each step adds under 2^33, so neither chain can wrap below 2^31 steps
  // (32 GiB of data).
  return a + b < a ? a + b + 1 : a + b;
}

std::uint16_t fold(std::uint64_t s) noexcept {
  s = (s & 0xffffffff) + (s >> 32);
  s = (s & 0xffffffff) + (s >> 32);
  s = (s & 0xffff) + (s >> 16);
  s = (s & 0xffff) + (s >> 16);
  return std::uint16_t(s);
}

}  // namespace

void checksum_accumulator::add(std::span<const std::byte> bytes) noexcept {
  std::uint16_t part = from_big_endian(fold(native_sum(bytes.data(), bytes.size())));
  // After odd-length data this span's first byte is the low half of a word:
  // its sum is the byte-swapped one (RFC 1071 2(B)).
  if (odd_) part = std::byteswap(part);
  sum_ += part;
  odd_ ^= (bytes.size() & 1) != 0;
}

std::uint16_t checksum_accumulator::sum() const noexcept { return fold(sum_); }

std::uint16_t internet_checksum(std::span<const std::byte> bytes) noexcept {
  checksum_accumulator c;
  c.add(bytes);
  return c.checksum();
}

checksum_accumulator ipv4_pseudo_header(std::uint32_t src, std::uint32_t dst, std::uint8_t protocol,
                                        std::uint16_t length) noexcept {
  checksum_accumulator c;
  c.add32(src);
  c.add32(dst);
  c.add16(protocol);
  c.add16(length);
  return c;
}

std::uint16_t ipv4_transport_checksum(std::uint32_t src, std::uint32_t dst, std::uint8_t protocol,
                                      std::span<const std::byte> header, std::span<const std::byte> payload,
                                      checksum_mode mode) noexcept {
  checksum_accumulator c =
      ipv4_pseudo_header(src, dst, protocol, std::uint16_t(header.size() + payload.size()));
  if (mode == checksum_mode::offload) return c.sum();
  c.add(header);
  c.add(payload);
  return c.checksum();
}

bool ipv4_transport_verifies(std::uint32_t src, std::uint32_t dst, std::uint8_t protocol,
                             std::span<const std::byte> segment) noexcept {
  checksum_accumulator c = ipv4_pseudo_header(src, dst, protocol, std::uint16_t(segment.size()));
  c.add(segment);
  return c.verifies();
}

}  // namespace affine::stack
