#pragma once
// A process that keeps one CPU busy until it is destroyed: "another task
// waits for this CPU" for the adaptive idle spin and busy poll tests
// (reactor/cpu_share.hh). A child process, not a thread: seed 001's rule is
// about other processes, and a thread of ours could be mistaken for ours.

#include <sched.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

namespace affine::test {

class cpu_hog {
 public:
  explicit cpu_hog(unsigned cpu) {
    pid_ = ::fork();
    if (pid_ == 0) {
      cpu_set_t set;
      CPU_ZERO(&set);
      CPU_SET(cpu, &set);
      ::sched_setaffinity(0, sizeof set, &set);
      for (;;) asm volatile("" ::: "memory");  // spin until killed
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
