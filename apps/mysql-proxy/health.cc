#include "apps/mysql-proxy/health.hh"

#include <algorithm>
#include <vector>

#include <fmt/format.h>

#include "affine/fiber.hh"
#include "affine/log.hh"
#include "apps/mysql-proxy/generic.hh"
#include "apps/mysql-proxy/handshake.hh"
#include "apps/mysql-proxy/packet_io.hh"

namespace affine_mysql {

namespace {

// A greeting is about 100 bytes; anything larger is not one.
constexpr std::size_t max_greeting = 4096;

// Until a stop request on the fiber's token, which ends the sleep (or the
// check's connect or read) at once.
void check_loop(backend_set& set, std::size_t index, const health_options& o) {
  const std::string name = set.at(index).config().address.to_string();
  unsigned failures = 0;
  unsigned successes = 0;
  for (;;) {
    const std::uint64_t started = affine::now_ns();
    auto r = check_backend(set.at(index).config().address, o.timeout_ns);
    if (r) {
      failures = 0;
      if (++successes >= o.rise && set.mark(index, true)) AFFINE_LOG_INFO("mysql-proxy: backend {} is up", name);
    } else {
      successes = 0;
      if (++failures >= o.fall && set.mark(index, false))
        AFFINE_LOG_WARN("mysql-proxy: backend {} is down: {}", name, r.error());
    }
    if (affine::this_fiber::stop_requested() || !affine::this_fiber::sleep_until(started + o.interval_ns)) return;
  }
}

}  // namespace

std::expected<void, std::string> check_backend(affine::net::endpoint to, std::uint64_t timeout_ns) {
  const std::uint64_t deadline = affine::now_ns() + timeout_ns;
  auto s = affine::net::connect(to, deadline);
  if (!s) return std::unexpected("connect: " + s.error().message());
  packet_io io(std::move(*s), max_greeting);
  auto p = io.read(0, deadline);
  if (!p) {
    switch (p.error().what) {
      case read_error::kind::closed: return std::unexpected(std::string("greeting: connection closed"));
      case read_error::kind::timed_out: return std::unexpected(std::string("greeting: timed out"));
      case read_error::kind::failed: return std::unexpected("greeting: " + p.error().code.message());
      case read_error::kind::protocol: return std::unexpected(fmt::format("greeting: {}", to_string(p.error().packet)));
    }
  }
  if (header_of(p->payload) == err_header) {
    auto e = parse_err(p->payload);
    if (!e) return std::unexpected(std::string("greeting: malformed ERR"));
    return std::unexpected(fmt::format("greeting: ERR {} {}", e->code, e->message));
  }
  if (auto g = parse_greeting(p->payload); !g)
    return std::unexpected(fmt::format("greeting: {}", to_string(g.error())));
  return {};
}

void run_health_checks(backend_set& set, const health_options& o) {
  std::vector<affine::fiber_handle> checkers;
  checkers.reserve(set.size());
  for (std::size_t i = 0; i < set.size(); ++i) {
    auto c = affine::spawn([&set, i, &o] { check_loop(set, i, o); });
    if (c) {
      checkers.push_back(std::move(*c));
    } else {
      AFFINE_LOG_ERROR("mysql-proxy: no health check for backend {}: {}", set.at(i).config().address.to_string(),
                       c.error().message());
    }
  }
  // They end on the same stop: wait for that, whatever comes.
  for (auto& c : checkers) c.join(affine::stop_mode::ignore);
}

}  // namespace affine_mysql
