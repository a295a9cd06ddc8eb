#pragma once
// A frame built in one mbuf on the TX path (tx_frames.cc, tx_ipv6.cc): the
// room the mbuf has for it, and its length once written.

#include <rte_mbuf.h>

#include <cstddef>
#include <cstdint>
#include <span>

namespace affine::stack {

inline std::span<std::byte> tx_room(rte_mbuf* m) {
  return {rte_pktmbuf_mtod(m, std::byte*), std::size_t(rte_pktmbuf_tailroom(m)) + m->data_len};
}

inline void set_frame_length(rte_mbuf* m, std::size_t n) {
  m->data_len = std::uint16_t(n);
  m->pkt_len = std::uint32_t(n);
}

}  // namespace affine::stack
