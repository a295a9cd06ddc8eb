#include "apps/echo/server.hh"

#include <atomic>
#include <csignal>
#include <cstdio>

#include <fmt/format.h>

#include "affine/affine.hh"
#include "affine/net.hh"

namespace affine_echo {

namespace {

using namespace affine;

std::atomic<bool> stop_requested{false};
extern "C" void request_stop(int) { stop_requested.store(true); }

// How often a blocked accept or read looks at the stop flag.
constexpr std::uint64_t stop_check_ns = 100'000'000;
constexpr std::uint64_t write_timeout_ns = 10'000'000'000;

struct totals {
  std::atomic<std::uint64_t> bytes{0};
  std::atomic<std::uint64_t> live{0};  // connection fibers still running
};

void serve(net::tcp_stream s, totals& t) {
  std::array<std::byte, 16384> buf;
  while (!stop_requested.load(std::memory_order_relaxed)) {
    auto n = s.read(buf, now_ns() + stop_check_ns);
    if (!n && n.error() == std::errc::timed_out) continue;
    if (!n || *n == 0) return;
    if (!s.write({buf.data(), *n}, now_ns() + write_timeout_ns)) return;
    t.bytes.fetch_add(*n, std::memory_order_relaxed);
  }
}

}  // namespace

int run_server(const server_options& o) {
  std::signal(SIGINT, request_stop);
  std::signal(SIGTERM, request_stop);
  auto l = net::listen({.local = {net::any_address, o.port}, .backlog = 1024, .accepted = {.no_delay = true}});
  if (!l) {
    fmt::print(stderr, "affine-echo: listen on port {}: {}\n", o.port, l.error().message());
    return 1;
  }
  fmt::print("{{\"app\":\"echo\",\"role\":\"server\",\"port\":{}}}\n", l->local().port);
  std::fflush(stdout);

  totals t;
  std::uint64_t accepted = 0;
  int code = 0;
  while (!stop_requested.load() && (o.max_connections == 0 || accepted < o.max_connections)) {
    auto s = l->accept(now_ns() + stop_check_ns);
    if (!s && s.error() == std::errc::timed_out) continue;
    if (!s) {
      fmt::print(stderr, "affine-echo: accept: {}\n", s.error().message());
      code = 1;
      break;
    }
    ++accepted;
    t.live.fetch_add(1);
    spawn([&t, c = std::move(*s)]() mutable {
      serve(std::move(c), t);
      t.live.fetch_sub(1);
    }).detach();
  }
  l->close();
  while (t.live.load() > 0) this_fiber::sleep_for(std::chrono::milliseconds(10));
  fmt::print("{{\"app\":\"echo\",\"role\":\"server\",\"connections\":{},\"bytes\":{}}}\n", accepted, t.bytes.load());
  return code;
}

}  // namespace affine_echo
