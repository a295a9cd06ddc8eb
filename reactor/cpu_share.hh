#pragma once
// Whether other threads or processes wait for this reactor's CPU: seed
// 001's `nr_running_this_cpu() < 2` counts them, and a reactor that spins
// or busy-polls while one waits only delays it (issue 23: the proxy's
// reactors spun on CPUs that MariaDB and sysbench needed).
//
// The kernel tells a thread how long it has waited on a run queue, runnable
// but not running, and how many times it got the CPU: the second and third
// fields of /proc/thread-self/schedstat (sched_info's run_delay and pcount,
// on with CONFIG_SCHED_INFO). Every wakeup waits a little, even on an idle
// CPU (0.1-0.2 us each here, up to 1 % of the time for a reactor that naps
// 100,000 times a second); one that waits for another task waits longer (a
// sleeper beside a busy process 5-10 us a wakeup here, a spinner a whole
// slice, 4 ms). A sample period's share of waiting counts where the thread
// waited at least shared_wait_ns a time it got the CPU; the CPU counts as
// shared while a decaying mean of those shares (each sample weighing 1/8)
// is at least shared_permille. A period with a wait of a whole slice
// (slice_wait_ns or more) that comes within slice_recur_ns of another one,
// or amid other waits (the mean at half the threshold or more), counts its
// whole share: a task that wants the CPU for long comes back slice after
// slice, and MariaDB and sysbench beside the proxy's reactor make it wait
// in almost every period besides. Other waits count at most burst_permille
// a period: one burst in one sample stays under the threshold, one split
// over two samples crosses it for two samples (100 + 87 >= 160), a third
// such sample keeps it there. The kernel threads and daemons of a quiet
// machine take the CPU now and then: kdamond and an agent on the VM here,
// 36-78 us in one millisecond, now and then 440 us, and kdamond 1-1.2 ms a
// few times a second. One such
// burst used to stop the reactor's spin and busy poll for ten
// milliseconds, and each of those naps costs a request a wake (35-45 us
// here): the p99 of `bench/run sched-001`. So a kernel worker's 20 us in
// one millisecond, or one burst alone, short or a slice long, does not make
// the CPU shared; waits in period after period do, and so do two samples
// behind a busy process (half the time or more), and it stays so for some
// twenty samples after the process is gone: a reactor that stopped
// spinning is no longer preempted, and must not take that at once as a
// sign that the CPU became its own. One pread costs 1.3 us on the 2-core
// VM here (docs/tuning.md, "Adaptive polling"), so the monitor samples at
// most once per sample_period_ns, when the reactor asks (at the start of
// an idle wait or a busy poll).

#include <cstdint>

namespace affine::detail {

class cpu_share_monitor {
 public:
  static constexpr std::uint64_t sample_period_ns = 1'000'000;
  static constexpr std::uint64_t shared_permille = 20;
  static constexpr std::uint64_t shared_wait_ns = 3'000;
  static constexpr std::uint64_t slice_wait_ns = 1'000'000;
  static constexpr std::uint64_t slice_recur_ns = 20'000'000;
  static constexpr std::uint64_t burst_permille = 100;

  cpu_share_monitor() = default;
  cpu_share_monitor(const cpu_share_monitor&) = delete;
  cpu_share_monitor& operator=(const cpu_share_monitor&) = delete;
  ~cpu_share_monitor();

  // On the thread to watch. False: no schedstat here (the monitor then
  // always says "not shared", and the reactor spins as configured).
  bool open(std::uint64_t now);
  // Whether the CPU counts as shared at `now` (samples when a period has
  // passed). Cheap when it does not sample: one comparison.
  bool shared(std::uint64_t now) {
    if (now - last_sample_ns_ >= sample_period_ns) sample(now);
    return shared_now();
  }
  // One sample: `waited` ns on a run queue over the `period` ns before
  // `now`, in which the thread got the CPU `times` times. sample() feeds it
  // what schedstat says; the rule's tests feed it numbers.
  void account(std::uint64_t now, std::uint64_t period, std::uint64_t waited, std::uint64_t times);
  bool shared_now() const { return score_ >= shared_permille * 8; }
  std::uint64_t waited_ns() const { return waited_ns_; }    // run-queue delay seen since open
  std::uint64_t shared_samples() const { return shared_samples_; }

 private:
  void sample(std::uint64_t now);
  int fd_ = -1;
  std::uint64_t last_sample_ns_ = 0;
  std::uint64_t last_delay_ns_ = 0;
  std::uint64_t last_runs_ = 0;
  std::uint64_t score_ = 0;  // the decaying mean share of waiting, in permille x 8
  std::uint64_t last_slice_wait_at_ = 0;  // when a sample last saw a whole slice's wait (0: never)
  std::uint64_t waited_ns_ = 0;
  std::uint64_t shared_samples_ = 0;
};

// The thread's run-queue delay and how many times it got the CPU, so far,
// from /proc/thread-self/schedstat read through `fd`; false when it cannot
// be read.
bool read_schedstat(int fd, std::uint64_t& delay_ns, std::uint64_t& runs);

}  // namespace affine::detail
