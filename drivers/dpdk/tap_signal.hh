#pragma once
// net_tap and its RX signal. DPDK's tap PMD sets O_ASYNC on every queue's tap
// fd and reads a queue only after its signal handler has bumped a trigger
// counter: one signal per received packet, to whichever thread the kernel
// picks (EINTR in unrelated system calls, two EAL threads woken per packet;
// on the mysql-proxy that was about 60 signals and 55 context switches per
// sysbench transaction). Which signal depends on the DPDK release: SIGIO in
// 22.11.0, a real-time signal it picks with F_SETSIG in later 22.11 releases
// (22.11.11 here: SIGRTMIN+1, number 35). So the signal is read from the
// queue fd itself (F_GETSIG; 0 means SIGIO), not assumed.
//
// affine does not need the signal: a sleeping reactor waits on the queue fd
// itself (the RX interrupt), and a polling one calls rx_burst. So the port
// clears O_ASYNC on the queue fds and pulls the PMD's trigger itself before
// each burst, which costs one empty readv on an empty poll. The trigger is
// one unsynchronised counter in the PMD, as it was for its own handler:
// reactors pulling it at once can each write the same value, and a queue
// whose last burst saw that value skips one poll (the next pull reads it).
// A packet is never lost by that, only looked at one turn later.

#include <cstdint>

namespace affine::drivers::dpdk {

// The PMD's handler and the signal it was installed for.
struct tap_trigger {
  void (*handler)(int) = nullptr;
  int signal = 0;

  explicit operator bool() const { return handler != nullptr; }
  void pull() const { handler(signal); }
};

// The trigger of `port_id` if it is a net_tap port whose queue fds now raise
// no signal; an empty one to leave the port as it is (another PMD, no RX
// interrupt fds to find the queues by, queues with different signals, or a
// handler of another shape).
tap_trigger quiet_tap_signal(std::uint16_t port_id, unsigned rx_queues);

}  // namespace affine::drivers::dpdk
