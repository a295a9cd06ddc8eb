#pragma once
// net_tap and SIGIO. DPDK's tap PMD sets O_ASYNC on every queue's tap fd and
// reads a queue only after its SIGIO handler has bumped a trigger counter:
// one signal per received packet, to whichever thread the kernel picks
// (EINTR in unrelated system calls, two EAL threads woken per packet; on
// the mysql-proxy that was 63 signals and 55 context switches per sysbench
// transaction). affine does not need the signal: a sleeping reactor waits on
// the queue fd itself (the RX interrupt), and a polling one calls rx_burst.
// So the port clears O_ASYNC on the queue fds and pulls the PMD's trigger
// itself before each burst, which costs one empty readv on an empty poll.
// The trigger is one unsynchronised counter in the PMD, as it was for its own
// handler: reactors pulling it at once can each write the same value, and a
// queue whose last burst saw that value skips one poll (the next pull reads
// it). A packet is never lost by that, only looked at one turn later.

#include <cstdint>

namespace affine::drivers::dpdk {

// The PMD's SIGIO handler, if `port_id` is a net_tap port whose queue fds
// now raise no SIGIO; nullptr to leave the port as it is (another PMD, no
// RX interrupt fds to find the queues by, or a handler of another shape).
using tap_trigger_fn = void (*)(int);
tap_trigger_fn quiet_tap_sigio(std::uint16_t port_id, unsigned rx_queues);

}  // namespace affine::drivers::dpdk
