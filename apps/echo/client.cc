#include "apps/echo/client.hh"

#include <cstring>
#include <vector>

#include <fmt/format.h>

#include "affine/affine.hh"
#include "affine/net.hh"
#include "apps/common/histogram.hh"

namespace affine_echo {

namespace {

using namespace affine;
using affine_apps::latency_histogram;

struct connection_result {
  latency_histogram rtt;
  std::uint64_t errors = 0;
  std::string first_error;
};

// A payload the echo must return unchanged; differs per connection and request.
void fill(std::vector<std::byte>& buf, unsigned conn, std::uint64_t request) {
  for (std::size_t i = 0; i < buf.size(); ++i) buf[i] = std::byte(conn * 131 + request * 7 + i);
}

void one_connection(const client_options& o, unsigned conn, connection_result& out) {
  const std::uint64_t timeout_ns = o.timeout_ms * 1'000'000;
  auto fail = [&](std::string what) {
    ++out.errors;
    out.first_error = std::move(what);
  };
  auto s = net::connect(o.to, now_ns() + timeout_ns, {.no_delay = true});
  if (!s) return fail(fmt::format("connect to {}: {}", o.to.to_string(), s.error().message()));
  std::vector<std::byte> sent(o.size), echoed(o.size);
  for (std::uint64_t r = 0; r < o.requests; ++r) {
    fill(sent, conn, r);
    const std::uint64_t t0 = now_ns();
    if (auto w = s->write(sent, t0 + timeout_ns); !w) return fail("write: " + w.error().message());
    if (auto e = s->read_exactly(echoed, now_ns() + timeout_ns); !e) return fail("read: " + e.error().message());
    out.rtt.add(now_ns() - t0);
    if (std::memcmp(sent.data(), echoed.data(), sent.size()) != 0) return fail("the echo differs from what was sent");
  }
}

}  // namespace

int run_client(const client_options& o) {
  std::vector<connection_result> results(o.connections);
  std::vector<fiber_handle> fibers;
  const std::uint64_t t0 = now_ns();
  for (unsigned c = 0; c < o.connections; ++c) {
    auto f = spawn([&o, c, &out = results[c]] { one_connection(o, c, out); });
    if (f) {
      fibers.push_back(std::move(*f));
    } else {
      results[c].errors = 1;
      results[c].first_error = "no fiber: " + f.error().message();
    }
  }
  // They end on a stop themselves (operation_canceled), and use `results`.
  for (auto& f : fibers) f.join(stop_mode::ignore);
  const double seconds = double(now_ns() - t0) / 1e9;

  latency_histogram rtt;
  std::uint64_t errors = 0;
  std::string first_error;
  for (const auto& r : results) {
    rtt.merge(r.rtt);
    errors += r.errors;
    if (first_error.empty()) first_error = r.first_error;
  }
  std::string line = fmt::format(
      "{{\"bench\":\"echo\",\"variant\":\"affine-uring\",\"connections\":{},\"requests\":{},\"size_bytes\":{},"
      "\"round_trips_per_s\":{:.0f},\"rtt_p50_us\":{:.1f},\"rtt_p99_us\":{:.1f},\"errors\":{}",
      o.connections, o.requests, o.size, double(rtt.count()) / seconds, double(rtt.quantile_ns(0.5)) / 1e3,
      double(rtt.quantile_ns(0.99)) / 1e3, errors);
  if (!first_error.empty()) line += fmt::format(",\"first_error\":\"{}\"", first_error);
  fmt::print("{}}}\n", line);
  return errors == 0 ? 0 : 1;
}

}  // namespace affine_echo
