#include "drivers/wire/frame.hh"

#include <rte_mbuf.h>

#include <cassert>
#include <cstdint>

namespace affine::drivers::wire {

rte_mbuf* copy_frame(const rte_mbuf* m, rte_mempool* pool) noexcept {
  // rte_pktmbuf_copy refuses an offset at or past the end, which is every
  // offset of an empty frame; a malformed (empty) frame must still cross.
  if (m->pkt_len == 0) {
    rte_mbuf* empty = rte_pktmbuf_alloc(pool);
    if (empty != nullptr) {
      empty->ol_flags = m->ol_flags;
      empty->packet_type = m->packet_type;
    }
    return empty;
  }
  return rte_pktmbuf_copy(m, pool, 0, UINT32_MAX);
}

void flip_bit(rte_mbuf* m, std::uint64_t bit) noexcept {
  assert(bit < std::uint64_t(m->pkt_len) * 8);
  std::uint64_t byte = bit / 8;
  for (rte_mbuf* seg = m; seg != nullptr; seg = seg->next) {
    if (byte < seg->data_len) {
      rte_pktmbuf_mtod(seg, std::uint8_t*)[byte] ^= std::uint8_t(1u << (bit % 8));
      return;
    }
    byte -= seg->data_len;
  }
}

bool mark_ce(rte_mbuf* m) noexcept {
  constexpr std::uint32_t eth = 14;
  if (m->data_len < eth + 20) return false;  // the IP header's first 20 bytes in the first segment
  std::uint8_t* b = rte_pktmbuf_mtod(m, std::uint8_t*);
  const unsigned type = unsigned(b[12]) << 8 | b[13];
  if (type == 0x0800 && b[eth] >> 4 == 4) {
    const std::uint8_t ecn = b[eth + 1] & 3;
    if (ecn == 0 || ecn == 3) return false;
    // RFC 1624 3: HC' = ~(~HC + ~m + m'), m the 16-bit word holding the TOS.
    const std::uint16_t old_word = std::uint16_t(b[eth] << 8 | b[eth + 1]);
    b[eth + 1] |= 3;
    const std::uint16_t new_word = std::uint16_t(b[eth] << 8 | b[eth + 1]);
    std::uint32_t sum = std::uint16_t(~(b[eth + 10] << 8 | b[eth + 11])) + std::uint16_t(~old_word) + new_word;
    sum = (sum & 0xffff) + (sum >> 16);
    sum = (sum & 0xffff) + (sum >> 16);
    const auto check = std::uint16_t(~sum);
    b[eth + 10] = std::uint8_t(check >> 8);
    b[eth + 11] = std::uint8_t(check);
    return true;
  }
  if (type == 0x86dd && b[eth] >> 4 == 6) {
    // The Traffic Class spans bytes 0 and 1; its ECN bits are bits 4-5 of byte 1.
    const std::uint8_t ecn = (b[eth + 1] >> 4) & 3;
    if (ecn == 0 || ecn == 3) return false;
    b[eth + 1] |= 0x30;
    return true;
  }
  return false;
}

}  // namespace affine::drivers::wire
