// Log lines: prefix, level, message, held-back count; one write per line so
// lines from different reactors never interleave.

#include "affine/log.hh"

#include <array>
#include <chrono>
#include <cstdio>
#include <iterator>
#include <mutex>
#include <utility>

namespace affine::log {

namespace {

constexpr std::array<std::string_view, 5> level_names{"trace", "debug", "info", "warn", "error"};
constexpr std::uint64_t ns_per_s = 1'000'000'000;

thread_local int this_thread_core = -1;

std::atomic<std::uint32_t> ratelimit_per_s{10};

std::uint64_t steady_now_ns() noexcept {
  return static_cast<std::uint64_t>(
      std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
          .count());
}
std::atomic<clock_fn> clock{&steady_now_ns};

// Guards the sink; also keeps stderr lines whole.
std::mutex sink_mutex;
sink current_sink;

}  // namespace

std::string_view level_name(level l) noexcept { return level_names[static_cast<std::size_t>(l)]; }

std::optional<level> parse_level(std::string_view name) noexcept {
  for (std::size_t i = 0; i < level_names.size(); ++i) {
    if (level_names[i] == name) return static_cast<level>(i);
  }
  return std::nullopt;
}

void set_level(level l) noexcept { detail::min_level.store(l, std::memory_order_relaxed); }
level current_level() noexcept { return detail::min_level.load(std::memory_order_relaxed); }

void set_thread_core(int core) noexcept { this_thread_core = core; }

// noinline: see the header; the address of this_thread_core must be computed
// afresh on every call, on whatever thread the caller now runs.
[[gnu::noinline]] int thread_core() noexcept { return this_thread_core; }

sink set_sink(sink s) {
  const std::lock_guard lock(sink_mutex);
  return std::exchange(current_sink, std::move(s));
}

void set_ratelimit_per_s(std::uint32_t lines) noexcept { ratelimit_per_s.store(lines, std::memory_order_relaxed); }

void set_clock(clock_fn now) noexcept { clock.store(now ? now : &steady_now_ns, std::memory_order_relaxed); }

namespace detail {

namespace {
std::atomic<void (*)(bool)> critical_hook{nullptr};
}  // namespace

void set_critical_hook(void (*hook)(bool enter)) noexcept { critical_hook.store(hook, std::memory_order_relaxed); }

void vwrite(level l, std::uint32_t suppressed, fmt::string_view format, fmt::format_args args) {
  // The sink runs under a mutex: the calling fiber must not be preempted
  // holding it (another fiber of its thread would block on it).
  struct critical {
    void (*hook)(bool) = critical_hook.load(std::memory_order_relaxed);
    critical() { if (hook != nullptr) hook(true); }
    ~critical() { if (hook != nullptr) hook(false); }
  } const section;
  fmt::memory_buffer line;
  auto out = std::back_inserter(line);
  const int core = thread_core();
  if (core >= 0) {
    fmt::format_to(out, "[c{}] {}: ", core, level_name(l));
  } else {
    fmt::format_to(out, "[--] {}: ", level_name(l));
  }
  fmt::vformat_to(out, format, args);
  if (suppressed > 0) fmt::format_to(out, " ({} similar suppressed)", suppressed);

  const std::lock_guard lock(sink_mutex);
  if (current_sink) {
    current_sink(l, std::string_view(line.data(), line.size()));
    return;
  }
  line.push_back('\n');
  std::fwrite(line.data(), 1, line.size(), stderr);
}

std::optional<std::uint32_t> admit(ratelimit_site& site) noexcept {
  const std::uint64_t now = clock.load(std::memory_order_relaxed)();
  std::uint64_t start = site.window_start_ns.load(std::memory_order_relaxed);
  // One thread wins the window change and resets the count; a line racing
  // with it may be counted in either window.
  if (now - start >= ns_per_s && site.window_start_ns.compare_exchange_strong(start, now, std::memory_order_relaxed)) {
    site.printed.store(0, std::memory_order_relaxed);
  }
  if (site.printed.fetch_add(1, std::memory_order_relaxed) < ratelimit_per_s.load(std::memory_order_relaxed)) {
    return site.suppressed.exchange(0, std::memory_order_relaxed);
  }
  site.suppressed.fetch_add(1, std::memory_order_relaxed);
  return std::nullopt;
}

}  // namespace detail

}  // namespace affine::log
