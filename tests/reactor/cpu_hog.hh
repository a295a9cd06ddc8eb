#pragma once
// A process that keeps one CPU busy until it is destroyed: "another task
// waits for this CPU" for the adaptive idle spin and busy poll tests
// (reactor/cpu_share.hh). Or, given a burst, one that takes the CPU for
// `burst` once every `every` and sleeps between: the kernel thread or
// daemon of a quiet machine, which must not make the CPU count as shared.
// A child process, not a thread: seed 001's rule is about other processes,
// and a thread of ours could be mistaken for ours.

#include <sched.h>
#include <sys/prctl.h>
#include <signal.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <chrono>

namespace affine::test {

class cpu_hog {
 public:
  explicit cpu_hog(unsigned cpu, std::chrono::microseconds burst = {}, std::chrono::microseconds every = {}) {
    pid_ = ::fork();
    if (pid_ == 0) {
      ::prctl(PR_SET_PDEATHSIG, SIGKILL);  // a test killed before its destructor must not leave a spinner behind
      cpu_set_t set;
      CPU_ZERO(&set);
      CPU_SET(cpu, &set);
      ::sched_setaffinity(0, sizeof set, &set);
      if (burst.count() == 0)
        for (;;) asm volatile("" ::: "memory");  // spin until killed
      const auto now = [] {
        timespec t;
        ::clock_gettime(CLOCK_MONOTONIC, &t);
        return std::chrono::seconds(t.tv_sec) + std::chrono::nanoseconds(t.tv_nsec);
      };
      for (;;) {  // until killed
        const auto end = now() + burst;
        while (now() < end) asm volatile("" ::: "memory");
        ::usleep(unsigned((every - burst).count()));
      }
    }
  }
  ~cpu_hog() {
    if (pid_ <= 0) return;
    ::kill(pid_, SIGKILL);
    ::waitpid(pid_, nullptr, 0);
  }
  cpu_hog(const cpu_hog&) = delete;
  cpu_hog& operator=(const cpu_hog&) = delete;
  bool started() const { return pid_ > 0; }

 private:
  pid_t pid_;
};

}  // namespace affine::test
