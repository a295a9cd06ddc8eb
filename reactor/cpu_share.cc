// cpu_share_monitor: run-queue delay from /proc/thread-self/schedstat.

#include "reactor/cpu_share.hh"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <charconv>

namespace affine::detail {

bool read_schedstat(int fd, std::uint64_t& delay_ns, std::uint64_t& runs) {
  // "<ns on the CPU> <ns waiting on a run queue> <times run>\n"
  char buf[96];
  const ssize_t n = ::pread(fd, buf, sizeof buf, 0);
  if (n <= 0) return false;
  const char* const end = buf + n;
  std::uint64_t fields[3];
  const char* p = buf;
  for (std::uint64_t& f : fields) {
    const auto r = std::from_chars(p, end, f);
    if (r.ec != std::errc{}) return false;
    p = r.ptr + 1;  // the space or the newline
  }
  delay_ns = fields[1];
  runs = fields[2];
  return true;
}

cpu_share_monitor::~cpu_share_monitor() {
  if (fd_ >= 0) ::close(fd_);
}

bool cpu_share_monitor::open(std::uint64_t now) {
  fd_ = ::open("/proc/thread-self/schedstat", O_RDONLY | O_CLOEXEC);
  if (fd_ < 0) return false;
  if (!read_schedstat(fd_, last_delay_ns_, last_runs_)) {
    ::close(fd_);
    fd_ = -1;
    return false;
  }
  last_sample_ns_ = now;
  return true;
}

void cpu_share_monitor::sample(std::uint64_t now) {
  const std::uint64_t period = now - last_sample_ns_;
  last_sample_ns_ = now;
  std::uint64_t delay = 0, runs = 0;
  if (fd_ < 0 || !read_schedstat(fd_, delay, runs)) return;
  const std::uint64_t waited = delay - last_delay_ns_;
  const std::uint64_t times = runs - last_runs_;
  last_delay_ns_ = delay;
  last_runs_ = runs;
  account(now, period, waited, times);
}

void cpu_share_monitor::account(std::uint64_t now, std::uint64_t period, std::uint64_t waited, std::uint64_t times) {
  waited_ns_ += waited;
  // Waits of a wakeup from idle are no one else's doing. Waits of a whole
  // slice, one after another or amid other waits (a mean already at half
  // the threshold), mean tasks that want the CPU, and count in full; a
  // lone one on a quiet CPU, and the short ones of kernel threads and
  // daemons, count as a rate, at most burst_permille a sample, so that one
  // burst alone does not make the CPU shared.
  std::uint64_t permille = 0;
  if (period != 0 && waited >= times * shared_wait_ns) {
    const std::uint64_t share = std::min<std::uint64_t>(waited * 1000 / period, 1000);
    bool again = false;
    if (waited >= slice_wait_ns) {
      again = (last_slice_wait_at_ != 0 && now - last_slice_wait_at_ <= slice_recur_ns) ||
              score_ >= shared_permille * 4;
      last_slice_wait_at_ = now;
    }
    permille = again ? share : std::min(share, burst_permille);
  }
  score_ = score_ - score_ / 8 + permille;
  if (score_ >= shared_permille * 8) ++shared_samples_;
}

}  // namespace affine::detail
