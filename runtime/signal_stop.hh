#pragma once
// SIGINT and SIGTERM as a stop request (internal to affine::run).
//
// A stop_source is not async-signal-safe, so no handler calls it: while
// this object lives, the two signals are blocked in the constructing
// thread (and in the threads it starts later: the reactors) and a thread
// of its own takes them with sigwait(2), where request_stop() is safe. A
// second SIGINT, half a second or more after the first, ends the process
// the default way (the user pressing Ctrl-C again means it); SIGTERM again
// changes nothing. The destructor ends the thread and restores the
// constructing thread's signal mask.

#include <pthread.h>
#include <signal.h>

#include <atomic>
#include <stop_token>
#include <thread>

namespace affine::detail {

class signal_stop {
 public:
  signal_stop();
  ~signal_stop();
  signal_stop(const signal_stop&) = delete;
  signal_stop& operator=(const signal_stop&) = delete;

  std::stop_token token() const { return source_.get_token(); }
  // As a signal would (affine::run, once the main fiber is done).
  void request_stop() { source_.request_stop(); }

 private:
  void wait_for_signals();

  std::stop_source source_;
  sigset_t old_mask_{};
  std::atomic<bool> done_{false};
  std::thread thread_;
};

}  // namespace affine::detail
