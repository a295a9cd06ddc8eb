#include "apps/echo/server.hh"

#include <atomic>
#include <cstdio>

#include <fmt/format.h>

#include "affine/affine.hh"
#include "affine/net.hh"
#include "apps/common/serve.hh"

namespace affine_echo {

namespace {

using namespace affine;

constexpr std::uint64_t write_timeout_ns = 10'000'000'000;

// Until the peer closes, an error, or the stop (every call here ends on it).
std::uint64_t serve(net::tcp_stream s) {
  std::array<std::byte, 16384> buf;
  std::uint64_t echoed = 0;
  for (;;) {
    auto n = s.read(buf);
    if (!n || *n == 0) return echoed;
    if (!s.write({buf.data(), *n}, now_ns() + write_timeout_ns)) return echoed;
    echoed += *n;
  }
}

}  // namespace

int run_server(const server_options& o) {
  auto l = net::listen({.local = {net::any_address, o.port}, .backlog = 1024, .accepted = {.no_delay = true}});
  if (!l) {
    fmt::print(stderr, "affine-echo: listen on port {}: {}\n", o.port, l.error().message());
    return 1;
  }
  fmt::print("{{\"app\":\"echo\",\"role\":\"server\",\"port\":{}}}\n", l->local().port);
  std::fflush(stdout);

  std::atomic<std::uint64_t> bytes{0};
  const auto r = affine_apps::serve_until_stopped(
      *l, "affine-echo", [&bytes](net::tcp_stream s) { bytes.fetch_add(serve(std::move(s)), std::memory_order_relaxed); },
      {.max_connections = o.max_connections});
  fmt::print("{{\"app\":\"echo\",\"role\":\"server\",\"connections\":{},\"bytes\":{}}}\n", r.accepted, bytes.load());
  return r.code;
}

}  // namespace affine_echo
