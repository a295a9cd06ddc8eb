#include "runtime/signal_stop.hh"

#include <atomic>
#include <chrono>
#include <optional>

#include "affine/log.hh"

namespace affine::detail {

namespace {

// Two SIGINTs closer than this are one (a terminal and a script may both
// send it).
constexpr auto second_signal_gap = std::chrono::milliseconds(500);

sigset_t stop_signals() {
  sigset_t s;
  sigemptyset(&s);
  sigaddset(&s, SIGINT);
  sigaddset(&s, SIGTERM);
  return s;
}

}  // namespace

signal_stop::signal_stop() {
  const sigset_t s = stop_signals();
  pthread_sigmask(SIG_BLOCK, &s, &old_mask_);
  thread_ = std::thread([this] { wait_for_signals(); });
}

signal_stop::~signal_stop() {
  done_.store(true, std::memory_order_release);
  pthread_kill(thread_.native_handle(), SIGTERM);  // blocked there: sigwait takes it
  thread_.join();
  // A signal that came while nothing waited stays pending: it is the
  // program's again once unblocked, as if this object had never been.
  pthread_sigmask(SIG_SETMASK, &old_mask_, nullptr);
}

void signal_stop::wait_for_signals() {
  const sigset_t s = stop_signals();
  std::optional<std::chrono::steady_clock::time_point> stopped_at;
  for (;;) {
    int sig = 0;
    if (sigwait(&s, &sig) != 0) continue;
    if (done_.load(std::memory_order_acquire)) return;
    if (stopped_at) {
      // Ctrl-C again, a moment later: the default action, now. A SIGTERM
      // again changes nothing (timeout(1) sends two at once, to the child
      // and to its process group; a supervisor that means it sends SIGKILL).
      if (sig != SIGINT || std::chrono::steady_clock::now() - *stopped_at < second_signal_gap) continue;
      signal(sig, SIG_DFL);
      const sigset_t one = [sig] {
        sigset_t o;
        sigemptyset(&o);
        sigaddset(&o, sig);
        return o;
      }();
      pthread_sigmask(SIG_UNBLOCK, &one, nullptr);
      raise(sig);
      return;
    }
    stopped_at = std::chrono::steady_clock::now();
    AFFINE_LOG_INFO("affine: {}: stop requested{}", sig == SIGINT ? "SIGINT" : "SIGTERM",
                    sig == SIGINT ? " (Ctrl-C again to end at once)" : "");
    source_.request_stop();
  }
}

}  // namespace affine::detail
