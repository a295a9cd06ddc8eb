#pragma once
// DPDK's failures in words a user can act on. DPDK reports most failures as
// an errno plus log lines that hold the real reason ("nb_rx_queues=8 > 1"),
// so set-up calls run under a log_capture and the reason goes into the
// one-line message.

#include <cstdio>
#include <string>
#include <string_view>
#include <vector>

namespace affine::drivers::dpdk {

// An errno from DPDK (positive or negative), explained.
std::string explain(int err);

// Redirects DPDK's log into memory while it lives, keeping each line's
// level, then restores the previous stream and replays what it caught at
// debug level. Set-up paths only: the log stream is process-wide, so a
// capture also catches lines from other threads logging meanwhile.
class log_capture {
 public:
  log_capture();
  ~log_capture();
  log_capture(const log_capture&) = delete;
  log_capture& operator=(const log_capture&) = delete;

  // Warning and error lines, without a PMD's "function(): " or the "EAL: " prefix.
  // The EAL logs its reason first and generic summaries after it ("Failed
  // to attach device"), so first_error() suits rte_eal_init; reason() is the
  // last error that is not from the EAL, else the last error, which suits
  // device and queue calls.
  std::string first_error() const;
  std::string reason() const;
  // Whether any line (any level) contains `needle`.
  bool mentions(std::string_view needle) const;

 private:
  struct line {
    int level;
    std::string text;
  };
  static ssize_t write(void* self, const char* buf, std::size_t size);

  FILE* previous_ = nullptr;
  FILE* stream_ = nullptr;
  std::vector<line> lines_;
  bool line_open_ = false;  // the last line has no newline yet
};

// "<what>: <explain(rc)>", plus ": <log.reason()>" when there is one.
std::string failure(std::string_view what, int rc, const log_capture& log);

}  // namespace affine::drivers::dpdk
