#include "apps/echo/server.hh"

#include <atomic>
#include <optional>
#include <stop_token>
#include <cstdio>

#include <fmt/format.h>

#include "affine/affine.hh"
#include "affine/fiber.hh"
#include "affine/net.hh"
#include "affine/stats.hh"
#include "apps/common/json.hh"
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

// Every sample of collect_metrics, one JSON object a line:
// {"name":"affine_stack_drops_total","labels":{"port":"0","core":"1","reason":"tcp.bad_ack"},"value":3}
void write_metrics(net::tcp_stream s) {
  std::string out;
  for (const metric_sample& m : collect_metrics()) {
    out += fmt::format("{{\"name\":{},\"labels\":{{", affine_apps::json_string(m.name));
    for (std::size_t i = 0; i < m.labels.size(); ++i)
      out += fmt::format("{}{}:{}", i ? "," : "", affine_apps::json_string(m.labels[i].first),
                         affine_apps::json_string(m.labels[i].second));
    out += fmt::format("}},\"value\":{}}}\n", m.value);
  }
  (void)s.write(std::as_bytes(std::span(out)), now_ns() + write_timeout_ns);
}

}  // namespace

int run_server(const server_options& o) {
  auto l = net::listen({.local = {o.listen, o.port}, .backlog = o.backlog, .accepted = {.no_delay = true}});
  if (!l) {
    fmt::print(stderr, "affine-echo: listen on port {}: {}\n", o.port, l.error().message());
    return 1;
  }
  std::optional<net::tcp_listener> metrics;
  if (o.metrics_port != 0) {
    auto m = net::listen({.local = {o.listen, o.metrics_port}, .accepted = {.no_delay = true}});
    if (!m) {
      fmt::print(stderr, "affine-echo: listen on metrics port {}: {}\n", o.metrics_port, m.error().message());
      return 1;
    }
    metrics = std::move(*m);
  }
  fmt::print("{{\"app\":\"echo\",\"role\":\"server\",\"port\":{}}}\n", l->local().port);
  std::fflush(stdout);

  // The metrics port's accept loop, beside the echo one: it ends on the
  // stop, or when the echo loop has served --max-connections.
  std::stop_source metrics_stop;
  const std::stop_callback forward(this_fiber::stop_token(), [&metrics_stop] { metrics_stop.request_stop(); });
  fiber_handle metrics_loop;
  if (metrics) {
    auto f = spawn([&metrics] { (void)affine_apps::serve_until_stopped(*metrics, "affine-echo metrics", write_metrics); },
                   {.stop = metrics_stop.get_token()});
    if (!f) {
      fmt::print(stderr, "affine-echo: metrics port: {}\n", f.error().message());
      return 1;
    }
    metrics_loop = std::move(*f);
  }

  std::atomic<std::uint64_t> bytes{0};
  const auto r = affine_apps::serve_until_stopped(
      *l, "affine-echo", [&bytes](net::tcp_stream s) { bytes.fetch_add(serve(std::move(s)), std::memory_order_relaxed); },
      {.max_connections = o.max_connections});
  metrics_stop.request_stop();
  if (metrics_loop.joinable()) (void)metrics_loop.join(stop_mode::ignore);
  fmt::print("{{\"app\":\"echo\",\"role\":\"server\",\"connections\":{},\"bytes\":{}}}\n", r.accepted, bytes.load());
  return r.code;
}

}  // namespace affine_echo
