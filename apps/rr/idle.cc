#include "apps/rr/idle.hh"

#include <algorithm>
#include <atomic>
#include <system_error>

#include <fmt/format.h>

#include "affine/fiber.hh"
#include "apps/common/memory.hh"
#include "apps/rr/protocol.hh"

namespace affine_rr {

namespace {

using namespace affine;

// Fibers opening connections at once: enough to hide the round trips,
// few enough not to overrun the server's accept queue (affine-rr's is 1024).
constexpr unsigned openers = 32;

constexpr std::uint32_t message_bytes = 64;

std::expected<net::tcp_stream, std::string> open_one(const client_options& o, net::endpoint to) {
  const std::uint64_t timeout_ns = o.timeout_ms * 1'000'000;
  auto s = net::connect(to, now_ns() + timeout_ns, {.no_delay = true, .keepalive = true, .congestion = o.congestion});
  if (!s) return std::unexpected(fmt::format("idle connect to {}: {}", to.to_string(), s.error().message()));
  const hello h{.what = mode::request_response, .request_bytes = message_bytes, .response_bytes = message_bytes};
  std::vector<std::byte> message(message_bytes);
  if (auto w = s->write(encode(h), now_ns() + timeout_ns); !w) return std::unexpected("idle hello: " + w.error().message());
  if (auto w = s->write(message, now_ns() + timeout_ns); !w)
    return std::unexpected("idle request: " + w.error().message());
  if (auto r = s->read_exactly(message, now_ns() + timeout_ns); !r)
    return std::unexpected("idle response: " + r.error().message());
  return std::move(*s);
}

std::int64_t delta(std::optional<std::uint64_t> before, std::optional<std::uint64_t> after) {
  return before && after ? std::int64_t(*after) - std::int64_t(*before) : 0;
}

}  // namespace

std::string idle_connections::json() const {
  if (streams.empty()) return {};
  const double n = double(streams.size());
  return fmt::format(",\"idle_connections\":{},\"idle_setup_s\":{:.2f},\"rss_bytes_per_idle_connection\":{:.0f},"
                     "\"kernel_slab_bytes_per_idle_connection\":{:.0f}",
                     streams.size(), setup_s, double(rss_bytes) / n, double(kernel_slab_bytes) / n);
}

std::expected<idle_connections, std::string> open_idle(const client_options& o) {
  idle_connections idle;
  if (o.idle_connections == 0) return idle;
  const auto rss0 = affine_apps::process_memory_bytes("VmRSS");
  const auto slab0 = affine_apps::system_memory_bytes("Slab");
  const std::uint64_t t0 = now_ns();

  std::vector<net::tcp_stream> streams(o.idle_connections);
  std::atomic<unsigned> next{0};
  std::atomic<bool> failed{false};
  std::string first_error;  // written by the one fiber that set `failed`
  auto opener = [&] {
    while (!failed.load(std::memory_order_relaxed)) {
      const unsigned i = next.fetch_add(1, std::memory_order_relaxed);
      if (i >= o.idle_connections) return;
      const std::uint16_t port = o.idle_ports.empty() ? o.to.port : o.idle_ports[i % o.idle_ports.size()];
      auto s = open_one(o, {o.to.addr, port});
      if (!s) {
        if (!failed.exchange(true))
          first_error = fmt::format("{} (connection {} of {})", s.error(), i + 1, o.idle_connections);
        return;
      }
      streams[i] = std::move(*s);
    }
  };
  std::vector<fiber_handle> fibers;
  std::error_code spawn_error;
  for (unsigned f = 0; f < std::min(openers, o.idle_connections); ++f) {
    auto h = spawn(opener);
    if (!h) {
      spawn_error = h.error();
      break;
    }
    fibers.push_back(std::move(*h));
  }
  for (auto& f : fibers) f.join(stop_mode::ignore);  // they use the locals above
  if (failed) return std::unexpected(first_error);
  if (fibers.empty()) return std::unexpected("idle connections: no fiber: " + spawn_error.message());

  idle.setup_s = double(now_ns() - t0) / 1e9;
  idle.rss_bytes = delta(rss0, affine_apps::process_memory_bytes("VmRSS"));
  idle.kernel_slab_bytes = delta(slab0, affine_apps::system_memory_bytes("Slab"));
  idle.streams = std::move(streams);
  return idle;
}

}  // namespace affine_rr
