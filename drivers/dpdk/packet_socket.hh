#pragma once
// net_af_packet and sleeping reactors. DPDK's af_packet PMD reads each RX
// queue from a TPACKET ring mapped from an AF_PACKET socket, and offers no
// RX interrupt: a reactor with nothing to do could only nap (100 us to 2 ms,
// reactor/loop.cc) and look again. The socket itself is the interrupt: it
// polls readable while the ring holds a frame user space has not taken
// (level-triggered, so nothing to arm or to consume), and the kernel wakes
// its waiters as it fills a frame.
//
// The PMD keeps those sockets to itself, so they are found the way a
// debugger would: the process's AF_PACKET sockets bound to the port's
// interface. The PMD opens them one queue after another at probe, so in
// ascending fd order they are queues 0, 1, ...; where the count is not the
// PMD's queue pairs (another packet socket on that interface: libpcap,
// a second port), the port keeps napping rather than guess.

#include <string>
#include <vector>

namespace affine::drivers::dpdk {

// The queue sockets of a net_af_packet port on interface `if_index` whose
// PMD has `queue_pairs` of them, by queue; empty (and `why` says why) when
// they cannot be told apart.
std::vector<int> af_packet_queue_sockets(unsigned if_index, unsigned queue_pairs, std::string& why);

}  // namespace affine::drivers::dpdk
