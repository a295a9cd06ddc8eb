// idle_state: the sleep/wake cost and the nap length (idle.hh).

#include "reactor/idle.hh"

#include <sys/epoll.h>

#include <algorithm>

#include "affine/time.hh"

namespace affine::detail {

void idle_state::calibrate(int epoll_fd) {
  // Eight 20 us sleeps with nothing to wake them: how late each wakes is
  // the timer's path to a running reactor (about what a kick's is).
  constexpr int rounds = 8;
  constexpr std::uint64_t nap = 20'000;
  std::uint64_t sum = 0;
  for (int i = 0; i < rounds; ++i) {
    epoll_event ev;
    const timespec ts{0, long(nap)};
    const std::uint64_t t0 = now_ns();
    if (::epoll_pwait2(epoll_fd, &ev, 1, &ts, nullptr) != 0) return;  // something came: leave it for the loop
    const std::uint64_t late = now_ns() - t0;
    sum += std::min(late > nap ? late - nap : 0, max_wake_sample_ns);
  }
  wake_ns = sum / rounds;
}

void idle_state::note_wake(std::uint64_t latency_ns) {
  latency_ns = std::min(latency_ns, max_wake_sample_ns);
  wake_ns = wake_ns - wake_ns / 8 + latency_ns / 8;
}

std::uint64_t idle_state::nap_ns(std::uint64_t now) const {
  const std::uint64_t silence = now > last_work ? now - last_work : 0;
  return std::clamp(silence / 4, min_nap_ns, max_nap_ns);
}

}  // namespace affine::detail
