#include "apps/rr/flows.hh"

#include <system_error>
#include <vector>

#include <fmt/format.h>

#include "affine/fiber.hh"
#include "apps/common/json.hh"

namespace affine_rr {

using namespace affine;

void start_line::start(const client_options& o, unsigned flows) {
  for (unsigned f = 0; f < flows; ++f) arrived_.acquire();
  from_ns_ = now_ns() + std::uint64_t(o.warmup_s * 1e9);
  to_ns_ = from_ns_ + std::uint64_t(o.duration_s * 1e9);
  go_.set();  // publishes the window to the flows
}

namespace {

std::expected<net::tcp_stream, std::string> connect_and_greet(const client_options& o, const hello& h) {
  const std::uint64_t timeout_ns = o.timeout_ms * 1'000'000;
  auto s = net::connect(o.to, now_ns() + timeout_ns, {.no_delay = true, .congestion = o.congestion});
  if (!s) return std::unexpected(fmt::format("connect to {}: {}", o.to.to_string(), s.error().message()));
  if (auto w = s->write(encode(h), now_ns() + timeout_ns); !w)
    return std::unexpected("hello: " + w.error().message());
  return std::move(*s);
}

}  // namespace

std::expected<net::tcp_stream, std::string> start_line::open(const client_options& o, const hello& h) {
  auto s = connect_and_greet(o, h);
  arrived_.release();
  if (s) go_.wait();
  return s;
}

void run_flows(const client_options& o, start_line& line, const std::function<void(unsigned)>& flow) {
  std::vector<fiber_handle> fibers;
  fibers.reserve(o.flows);
  std::error_code failed;
  for (unsigned f = 0; f < o.flows && !failed; ++f) {
    auto h = spawn([&flow, f] { flow(f); });
    if (h) {
      fibers.push_back(std::move(*h));
    } else {
      failed = h.error();
    }
  }
  line.start(o, unsigned(fibers.size()));  // the ones started run, and end
  // They end on a stop themselves (their calls return operation_canceled):
  // wait for that, whatever comes, since they use `flow`.
  for (auto& f : fibers) f.join(stop_mode::ignore);
  if (failed) throw std::system_error(failed, fmt::format("affine-rr: {} of {} flows started", fibers.size(), o.flows));
}

std::string json_head(std::string_view bench, const client_options& o) {
  return fmt::format("{{\"bench\":{},\"variant\":{},\"flows\":{}", affine_apps::json_string(bench),
                     affine_apps::json_string(o.variant), o.flows);
}

std::string json_tail(std::uint64_t errors, std::string_view first_error) {
  std::string tail = fmt::format(",\"errors\":{}", errors);
  if (errors != 0) tail += ",\"first_error\":" + affine_apps::json_string(first_error);
  return tail + "}";
}

}  // namespace affine_rr
