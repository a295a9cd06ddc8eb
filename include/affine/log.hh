#pragma once
// Logging: one line per call, prefixed with the core it ran on and its level:
//
//   [c3] warn: port 0: rx queue 2 overflowed
//   [--] info: affine 0.1.0 starting         (a thread that is not a reactor)
//
// The macros skip formatting (and evaluating their arguments) when the level
// is off. AFFINE_LOG_RATELIMITED is for the data path: each call site prints
// at most `ratelimit_per_s` lines a second, then says how many it held back.
// Lines go to stderr unless a sink is set (tests capture them that way).

#include <atomic>
#include <cstdint>
#include <functional>
#include <optional>
#include <string_view>

#include <fmt/format.h>

namespace affine::log {

enum class level : std::uint8_t { trace, debug, info, warn, error };

// "trace", "debug", "info", "warn", "error": the names [log] level takes.
std::string_view level_name(level l) noexcept;
std::optional<level> parse_level(std::string_view name) noexcept;

// The least severe level printed (info at start).
void set_level(level l) noexcept;
level current_level() noexcept;

// The core the calling thread runs a reactor for; -1 (the default) prints
// "[--]". Read through a non-inlined call: fibers migrate between threads, so
// a TLS address cached across a suspension would name the wrong core
// (DESIGN.md section 4).
void set_thread_core(int core) noexcept;
int thread_core() noexcept;

// Receives each finished line (no newline). An empty sink restores stderr.
// Returns the sink it replaces. Calls are serialised.
using sink = std::function<void(level, std::string_view line)>;
sink set_sink(sink s);

// Lines per second per rate-limited call site ([log] ratelimit_per_s; 10).
void set_ratelimit_per_s(std::uint32_t lines) noexcept;

// Monotonic nanoseconds for the rate limiter; nullptr restores
// std::chrono::steady_clock. Lets tests step time instead of sleeping.
using clock_fn = std::uint64_t (*)() noexcept;
void set_clock(clock_fn now) noexcept;

namespace detail {

inline std::atomic<level> min_level{level::info};

void vwrite(level l, std::uint32_t suppressed, fmt::string_view format, fmt::format_args args);
// Called with true before a line is written and false after (the runtime
// keeps a preemptible fiber from being preempted in between); null: none.
void set_critical_hook(void (*hook)(bool enter)) noexcept;

template <typename... Args>
void write(level l, std::uint32_t suppressed, fmt::format_string<Args...> format, Args&&... args) {
  vwrite(l, suppressed, format, fmt::make_format_args(args...));
}

// One per rate-limited call site: a one-second window, lines printed in it,
// lines held back since the last one printed. Constant-initialised, so a
// function-local static of this type needs no guard and no allocation.
struct ratelimit_site {
  std::atomic<std::uint64_t> window_start_ns{0};
  std::atomic<std::uint32_t> printed{0};
  std::atomic<std::uint32_t> suppressed{0};
};

// Whether the site may print now; if so, how many lines it held back since
// its last printed line. Lock-free; approximate under contention (a few
// lines more or fewer at a window boundary), which a log limit can afford.
std::optional<std::uint32_t> admit(ratelimit_site& site) noexcept;

}  // namespace detail

inline bool enabled(level l) noexcept { return l >= detail::min_level.load(std::memory_order_relaxed); }

}  // namespace affine::log

#define AFFINE_LOG_AT_(lvl, ...)                                                        \
  do {                                                                                  \
    if (::affine::log::enabled(lvl)) ::affine::log::detail::write(lvl, 0, __VA_ARGS__); \
  } while (false)

#define AFFINE_LOG_TRACE(...) AFFINE_LOG_AT_(::affine::log::level::trace, __VA_ARGS__)
#define AFFINE_LOG_DEBUG(...) AFFINE_LOG_AT_(::affine::log::level::debug, __VA_ARGS__)
#define AFFINE_LOG_INFO(...) AFFINE_LOG_AT_(::affine::log::level::info, __VA_ARGS__)
#define AFFINE_LOG_WARN(...) AFFINE_LOG_AT_(::affine::log::level::warn, __VA_ARGS__)
#define AFFINE_LOG_ERROR(...) AFFINE_LOG_AT_(::affine::log::level::error, __VA_ARGS__)

// `lvl` is a bare level name: AFFINE_LOG_RATELIMITED(warn, "bad checksum from {}", src).
// A suppressed call costs a clock read and two atomic adds; nothing is
// formatted and nothing allocated.
#define AFFINE_LOG_RATELIMITED(lvl, ...)                                                         \
  do {                                                                                           \
    if (::affine::log::enabled(::affine::log::level::lvl)) {                                     \
      static ::affine::log::detail::ratelimit_site affine_log_site_;                             \
      if (const auto affine_log_held_ = ::affine::log::detail::admit(affine_log_site_))          \
        ::affine::log::detail::write(::affine::log::level::lvl, *affine_log_held_, __VA_ARGS__); \
    }                                                                                            \
  } while (false)
