#include <algorithm>
#include <cstdio>
#include <memory>
#include <vector>

#include <fmt/format.h>

#include "affine/fiber.hh"
#include "apps/common/histogram.hh"
#include "apps/rr/client.hh"
#include "apps/rr/flows.hh"
#include "apps/rr/idle.hh"
#include "apps/rr/in_place.hh"

namespace affine_rr {

namespace {

using namespace affine;

struct flow_result {
  affine_apps::latency_histogram rtt;  // transactions begun and ended in the window
  flow_error error;
};

// The request number in the first bytes of a request (big-endian, as many
// as fit in request_tag_size); the server copies them into the response.
std::size_t tag_size(const client_options& o) {
  return std::min({request_tag_size, std::size_t(o.request_bytes), std::size_t(o.response_bytes)});
}

void one_flow(const client_options& o, start_line& line, flow_result& out) {
  auto s = line.open(o, {.what = mode::request_response, .request_bytes = o.request_bytes,
                         .response_bytes = o.response_bytes});
  if (!s) return out.error.set(s.error());
  const std::uint64_t timeout_ns = o.timeout_ms * 1'000'000;
  const std::size_t tag = tag_size(o);
  std::vector<std::byte> request(o.request_bytes), response(o.response_bytes);
  for (std::uint64_t n = 0;; ++n) {
    const std::uint64_t t0 = now_ns();
    if (t0 >= line.to_ns()) return;
    const auto number = encode_u64(n);
    std::copy_n(number.end() - tag, tag, request.begin());
    if (auto w = o.zero_copy ? send_in_place(*s, request.size(), std::span(request).first(tag), t0 + timeout_ns)
                             : s->write(request, t0 + timeout_ns);
        !w)
      return out.error.set("request: " + w.error().message());
    if (o.zero_copy) {
      auto r = take_in_place(*s, response.size(), std::span(response).first(tag), now_ns() + timeout_ns);
      if (!r || !*r) return out.error.set("response: " + (r ? std::string("end of stream") : r.error().message()));
    } else if (auto r = s->read_exactly(response, now_ns() + timeout_ns); !r) {
      return out.error.set("response: " + r.error().message());
    }
    const std::uint64_t t1 = now_ns();
    if (!std::equal(request.begin(), request.begin() + std::ptrdiff_t(tag), response.begin()))
      return out.error.set(fmt::format("response {} answers another request", n));
    if (t0 >= line.from_ns() && t1 <= line.to_ns()) out.rtt.add(t1 - t0);
  }
}

}  // namespace

int run_rr_client(const client_options& o) {
  auto idle = open_idle(o);  // held open until the report is out
  if (!idle) {
    fmt::print("{}\n", json_head("rr", o) + json_tail(o.flows, idle.error()));
    return 1;
  }
  std::vector<flow_result> flows(o.flows);
  start_line line;
  run_flows(o, line, [&](unsigned f) { one_flow(o, line, flows[f]); });

  auto all = std::make_unique<affine_apps::latency_histogram>();  // 30 KiB: not on a fiber's stack
  std::uint64_t failed = 0;
  std::string first_error;
  for (const auto& f : flows) {
    all->merge(f.rtt);
    if (f.error.failed && failed++ == 0) first_error = f.error.first;
  }
  std::string line_out = json_head("rr", o) +
                         fmt::format(",\"request_bytes\":{},\"response_bytes\":{},\"duration_s\":{},\"transactions\":{},"
                                     "\"transactions_per_s\":{:.0f}",
                                     o.request_bytes, o.response_bytes, o.duration_s, all->count(),
                                     double(all->count()) / o.duration_s);
  auto us = [&](double q) { return double(all->quantile_ns(q)) / 1e3; };
  if (all->count() != 0) {
    line_out += fmt::format(",\"p50_us\":{:.2f},\"p98_us\":{:.2f},\"p99_us\":{:.2f},\"p995_us\":{:.2f},"
                            "\"p999_us\":{:.2f},\"p9999_us\":{:.2f}",
                            us(0.5), us(0.98), us(0.99), us(0.995), us(0.999), us(0.9999));
    // The share of transactions that took 20 us or more: on a quiet pair,
    // those a stall of a CPU caught (bench/run stall counts the stalls).
    line_out += fmt::format(",\"over_20us_pct\":{:.3f}",
                            100.0 * double(all->count() - all->count_at_most(19'999)) / double(all->count()));
    // A flow held back for milliseconds finishes few transactions, and so
    // weighs little in the quantiles: its share says it (1 = all alike).
    std::uint64_t least = all->count();
    for (const auto& f : flows) least = std::min(least, f.rtt.count());
    line_out += fmt::format(",\"least_flow_share\":{:.3f}", double(least) * double(o.flows) / double(all->count()));
  }
  fmt::print("{}\n", line_out + idle->json() + json_tail(failed, first_error));
  std::fflush(stdout);  // before the idle connections close
  return failed == o.flows ? 1 : 0;
}

}  // namespace affine_rr
