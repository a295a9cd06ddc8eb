#pragma once
// The Internet checksum (RFC 1071): the 16-bit ones' complement of the ones'
// complement sum of the data taken as big-endian 16-bit words. The sum is
// accumulated piece by piece (pseudo-header, header, payload in the send
// buffer) and a piece of odd length shifts the pairing of the next one by a
// byte: its sum is then byte-swapped (RFC 1071 2(B), byte order independence).

#include <cassert>
#include <cstddef>
#include <cstdint>
#include <span>

namespace affine::stack {

// Who computes checksums. On receive, `offload` means the NIC has verified
// them (DPDK's RTE_MBUF_F_RX_*_CKSUM_GOOD) and parse skips the check; on
// transmit it means the NIC fills them in: IPv4 writes 0, TCP and UDP write
// the pseudo-header sum, which is what DPDK's TX L4 checksum offload expects.
enum class checksum_mode : std::uint8_t { software, offload };

class checksum_accumulator {
 public:
  // Appends bytes to the data summed so far.
  void add(std::span<const std::byte> bytes) noexcept;
  // The same, and copies them to `to` in the same pass. Precondition: `to`
  // has room for them and does not overlap them.
  void copy_and_add(std::byte* to, std::span<const std::byte> bytes) noexcept;
  // Appends one big-endian word given in host order. Precondition: the data
  // added so far has even length (true for every header field).
  void add16(std::uint16_t v) noexcept {
    assert(!odd_);
    sum_ += v;
  }
  void add32(std::uint32_t v) noexcept {
    assert(!odd_);
    sum_ += (v >> 16) + (v & 0xffff);
  }
  // Adds the words `part` summed, for data that sits at an even offset of
  // the whole whatever was added here before it (the sum commutes, RFC 1071
  // 2(A)): a header's options summed after an odd-length payload.
  void join_even(const checksum_accumulator& part) noexcept { sum_ += part.sum(); }

  // The ones' complement sum folded to 16 bits, host order. Data that
  // includes a correct checksum sums to 0xffff.
  std::uint16_t sum() const noexcept;
  // The value to store in a checksum field (host order).
  std::uint16_t checksum() const noexcept { return std::uint16_t(~sum()); }
  bool verifies() const noexcept { return sum() == 0xffff; }

 private:
  void add_native(std::uint64_t native, std::size_t length) noexcept;

  std::uint64_t sum_ = 0;  // unfolded; 2^48 additions of 16-bit words before it could wrap
  bool odd_ = false;       // the data so far has odd length
};

// RFC 1071 over one span: the value for a checksum field.
std::uint16_t internet_checksum(std::span<const std::byte> bytes) noexcept;

// The TCP/UDP pseudo-header over IPv4 (RFC 9293 3.1, RFC 768): source,
// destination, zero, protocol, transport length. Addresses in host order.
checksum_accumulator ipv4_pseudo_header(std::uint32_t src, std::uint32_t dst, std::uint8_t protocol,
                                        std::uint16_t length) noexcept;

// A TCP or UDP pseudo-header less its length: the addresses and the
// protocol. IPv4's (RFC 9293 3.1, RFC 768) and IPv6's (RFC 8200 8.1) sum
// alike (the address words, the protocol, the length), so a segment's
// checksum is written and checked by one piece of code for both families;
// ipv6_pseudo (wire/ipv6.hh) makes IPv6's.
class pseudo_header {
 public:
  static pseudo_header ipv4(std::uint32_t src, std::uint32_t dst, std::uint8_t protocol) noexcept;
  // `sum`: the addresses' and the protocol's words.
  static pseudo_header of(const checksum_accumulator& sum, bool ipv6) noexcept { return {sum, ipv6}; }

  checksum_accumulator with_length(std::uint32_t length) const noexcept {
    checksum_accumulator c = sum_;
    c.add32(length);
    return c;
  }
  // As ipv4_transport_checksum and ipv4_transport_verifies below.
  std::uint16_t checksum(std::span<const std::byte> header, std::span<const std::byte> payload,
                         checksum_mode mode) const noexcept;
  bool verifies(std::span<const std::byte> segment) const noexcept;
  // RFC 8200 8.1: over IPv6 a UDP checksum is never optional.
  bool ipv6() const noexcept { return ipv6_; }

 private:
  pseudo_header(const checksum_accumulator& sum, bool ipv6) noexcept : sum_(sum), ipv6_(ipv6) {}
  checksum_accumulator sum_;
  bool ipv6_ = false;
};

// A TCP or UDP checksum over IPv4 for the segment `header` + `payload` of
// `protocol`. For checksum_mode::software it is the value for the checksum
// field, and the field must hold zero in `header`; for offload it is the
// pseudo-header sum alone, which the NIC completes.
std::uint16_t ipv4_transport_checksum(std::uint32_t src, std::uint32_t dst, std::uint8_t protocol,
                                      std::span<const std::byte> header, std::span<const std::byte> payload,
                                      checksum_mode mode) noexcept;

// Whether a received TCP or UDP segment (checksum field included) checks.
bool ipv4_transport_verifies(std::uint32_t src, std::uint32_t dst, std::uint8_t protocol,
                             std::span<const std::byte> segment) noexcept;

// The unfolded sum of the words of [p, p + n) in the machine's byte order,
// copying them to `to` on the way unless it is null: native_sum is what
// checksum_accumulator uses (vectors where the CPU has them), portable_sum
// the same without instructions chosen at run time. Declared for the
// tests, which hold each against the other.
namespace checksum_detail {
std::uint64_t native_sum(const std::byte* p, std::size_t n, std::byte* to = nullptr) noexcept;
std::uint64_t portable_sum(const std::byte* p, std::size_t n, std::byte* to = nullptr) noexcept;
}  // namespace checksum_detail

}  // namespace affine::stack
