#pragma once
// The two things the wire does to a frame's bytes: copy it into another
// pool (the receiving end's), and damage one bit of it. Both walk segment
// chains, so chained TX mbufs and frames of any length (0 included) are fine.

#include <cstdint>

struct rte_mbuf;
struct rte_mempool;

namespace affine::drivers::wire {

// A private copy of `m` (data and packet metadata) in mbufs from `pool`,
// chained when the pool's data room is smaller than the frame; nullptr when
// the pool is empty. A zero-length frame copies to an empty mbuf.
rte_mbuf* copy_frame(const rte_mbuf* m, rte_mempool* pool) noexcept;

// Flip bit `bit` (0 = the least significant bit of byte 0) of the frame's
// data. Precondition: bit < 8 * pkt_len.
void flip_bit(rte_mbuf* m, std::uint64_t bit) noexcept;

// A router's congestion mark (RFC 3168 5): when the frame is IPv4 or IPv6
// straight over Ethernet and its ECN field says ECT(0) or ECT(1), the field
// becomes CE (IPv4's header checksum updated as RFC 1624 3 does). Returns
// whether it marked; any other frame is left as it is.
bool mark_ce(rte_mbuf* m) noexcept;

}  // namespace affine::drivers::wire
