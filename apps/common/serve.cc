#include "apps/common/serve.hh"

#include <atomic>
#include <chrono>
#include <csignal>

#include <fmt/format.h>

#include "affine/fiber.hh"

namespace affine_apps {

namespace {

std::atomic<bool> stop_flag{false};
extern "C" void request_stop(int) { stop_flag.store(true); }

}  // namespace

void stop_on_signals() {
  std::signal(SIGINT, request_stop);
  std::signal(SIGTERM, request_stop);
}

bool stop_requested() { return stop_flag.load(std::memory_order_relaxed); }

std::expected<std::size_t, std::error_code> read_unless_stopped(affine::net::tcp_stream& s, std::span<std::byte> buf) {
  for (;;) {
    if (stop_requested()) return std::unexpected(std::make_error_code(std::errc::operation_canceled));
    auto n = s.read(buf, affine::now_ns() + stop_check_ns);
    if (n || n.error() != std::errc::timed_out) return n;
  }
}

serve_result serve_until_stopped(affine::net::tcp_listener& l, std::string_view app,
                                 const std::function<void(affine::net::tcp_stream)>& serve,
                                 std::uint64_t max_connections) {
  using namespace affine;
  serve_result r;
  std::atomic<std::uint64_t> live{0};  // connection fibers still running
  while (!stop_requested() && (max_connections == 0 || r.accepted < max_connections)) {
    auto s = l.accept(now_ns() + stop_check_ns);
    if (!s && s.error() == std::errc::timed_out) continue;
    if (!s) {
      fmt::print(stderr, "{}: accept: {}\n", app, s.error().message());
      r.code = 1;
      break;
    }
    ++r.accepted;
    live.fetch_add(1);
    spawn([&serve, &live, c = std::move(*s)]() mutable {
      serve(std::move(c));
      live.fetch_sub(1);
    }).detach();
  }
  l.close();
  while (live.load() > 0) this_fiber::sleep_for(std::chrono::milliseconds(10));
  return r;
}

}  // namespace affine_apps
