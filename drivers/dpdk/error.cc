#include "drivers/dpdk/error.hh"

#include <rte_errno.h>
#include <rte_log.h>

#include <fmt/format.h>

#include "affine/log.hh"

namespace affine::drivers::dpdk {

namespace {

// PMDs log the reasons for refusing their arguments at warning level as
// often as at error level.
bool is_problem(int level) { return level > 0 && level <= int(RTE_LOG_WARNING); }

std::string tidy(std::string_view line) {
  if (line.starts_with("EAL: ")) line.remove_prefix(5);
  // PMD lines start with "function(): "; the function name helps no user.
  if (const auto p = line.find("(): "); p != std::string_view::npos && line.find(' ') > p) line.remove_prefix(p + 4);
  while (!line.empty() && line.back() == ' ') line.remove_suffix(1);
  return std::string(line);
}

}  // namespace

std::string explain(int err) {
  if (err < 0) err = -err;
  switch (err) {
    case EACCES: return "permission denied (run as root, or give the process access to hugepages and devices)";
    case ENOMEM:
      return "not enough memory: no hugepages reserved? Reserve some (docs/dpdk.md) or pass --no-huge with -m";
    case EALREADY: return "the EAL was already initialised in this process";
    case ENODEV: return "no such device";
    case ENOTSUP:
    case ENOSYS: return "not supported by this PMD";
    case EINVAL: return "invalid argument";
    case EPROTO: return "the EAL cannot run here (no IOVA mode fits; try --no-huge --iova-mode=va)";
    default: return fmt::format("{} ({})", rte_strerror(err), err);
  }
}

log_capture::log_capture() : previous_(rte_log_get_stream()) {
  cookie_io_functions_t io{};
  io.write = &log_capture::write;
  stream_ = fopencookie(this, "w", io);
  if (stream_ == nullptr) return;
  // rte_vlog flushes after every message; unbuffered, each write then
  // belongs to the message whose level rte_log_cur_msg_loglevel() reports.
  std::setvbuf(stream_, nullptr, _IONBF, 0);
  rte_openlog_stream(stream_);
}

log_capture::~log_capture() {
  if (stream_ == nullptr) return;
  rte_openlog_stream(previous_);
  std::fclose(stream_);
  for (const auto& l : lines_)
    if (!l.text.empty()) AFFINE_LOG_DEBUG("dpdk: {}", l.text);
}

ssize_t log_capture::write(void* self, const char* buf, std::size_t size) {
  auto& c = *static_cast<log_capture*>(self);
  std::string_view text(buf, size);
  while (!text.empty()) {
    if (!c.line_open_) c.lines_.push_back({rte_log_cur_msg_loglevel(), {}});
    const auto nl = text.find('\n');
    c.lines_.back().text.append(text.substr(0, nl));
    c.line_open_ = nl == std::string_view::npos;
    text.remove_prefix(nl == std::string_view::npos ? text.size() : nl + 1);
  }
  return ssize_t(size);
}

std::string log_capture::first_error() const {
  for (const auto& l : lines_)
    if (is_problem(l.level) && !l.text.empty()) return tidy(l.text);
  return {};
}

std::string log_capture::reason() const {
  // A PMD's own line ("function(): why") says most, then other libraries'
  // lines, then the EAL's summaries.
  std::string pmd, other, eal;
  for (const auto& l : lines_) {
    if (!is_problem(l.level) || l.text.empty()) continue;
    if (l.text.starts_with("EAL: ")) {
      eal = l.text;
    } else if (const auto p = l.text.find("(): "); p != std::string::npos && l.text.find(' ') > p) {
      pmd = l.text;
    } else {
      other = l.text;
    }
  }
  return tidy(!pmd.empty() ? pmd : !other.empty() ? other : eal);
}

bool log_capture::mentions(std::string_view needle) const {
  for (const auto& l : lines_)
    if (l.text.find(needle) != std::string::npos) return true;
  return false;
}

std::string failure(std::string_view what, int rc, const log_capture& log) {
  const std::string reason = log.reason();
  if (reason.empty()) return fmt::format("{}: {}", what, explain(rc));
  // PMDs return -1 for "no, and the log says why": the errno would mislead.
  if (rc == -1) return fmt::format("{}: {}", what, reason);
  return fmt::format("{}: {}: {}", what, explain(rc), reason);
}

}  // namespace affine::drivers::dpdk
