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

}  // namespace affine::drivers::wire
