#include "apps/rr/server.hh"

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstring>
#include <functional>
#include <string>
#include <optional>
#include <stdexcept>
#include <stop_token>
#include <utility>
#include <vector>

#include <system_error>

#include <fmt/format.h>

#include "affine/affine.hh"
#include "affine/net.hh"
#include "apps/common/memory.hh"
#include "apps/common/serve.hh"
#include "apps/rr/in_place.hh"
#include "apps/rr/protocol.hh"

namespace affine_rr {

namespace {

using namespace affine;

// For each write (a client that stops reading).
constexpr std::uint64_t io_timeout_ns = 10'000'000'000;

struct totals {
  std::atomic<std::uint64_t> transactions{0};
  std::atomic<std::uint64_t> bulk_bytes{0};
  std::atomic<std::uint64_t> errors{0};
  std::atomic<bool> error_logged{false};

  // Counts every failed connection; logs the first (a client killed
  // mid-run fails all its flows alike).
  void fail(const net::tcp_stream& s, std::string_view what) {
    errors.fetch_add(1, std::memory_order_relaxed);
    if (!error_logged.exchange(true))
      fmt::print(stderr, "affine-rr: connection from {}: {}\n", s.remote().to_string(), what);
  }
};

// All of `buf`: true; the stream ended (or a stop came) before its first
// byte: false. A stream that ends mid-message is an error; a stop ends the
// wait for the rest too (the read returns operation_canceled at once), so
// a stalled client cannot delay the exit.
std::expected<bool, std::error_code> receive(net::tcp_stream& s, std::span<std::byte> buf) {
  for (std::size_t got = 0; got < buf.size();) {
    auto n = s.read(buf.subspan(got));
    if (!n && n.error() == std::errc::operation_canceled) return false;
    if (!n) return std::unexpected(n.error());
    if (*n == 0) return got == 0 ? std::expected<bool, std::error_code>(false)
                                 : std::unexpected(std::make_error_code(std::errc::connection_reset));
    got += *n;
  }
  return true;
}

void answer(net::tcp_stream& s, const hello& h, totals& t, bool zero_copy) {
  std::vector<std::byte> request(h.request_bytes), response(h.response_bytes);
  const std::size_t tag = std::min({request_tag_size, request.size(), response.size()});
  std::uint64_t served = 0;  // added to the totals once: no shared cache line per transaction
  for (;;) {
    auto got = zero_copy ? take_in_place(s, request.size(), std::span(request).first(tag)) : receive(s, request);
    if (!got) t.fail(s, "request: " + got.error().message());
    if (!got || !*got) break;
    std::memcpy(response.data(), request.data(), tag);
    const deadline until = now_ns() + io_timeout_ns;
    if (auto w = zero_copy ? send_in_place(s, response.size(), std::span(response).first(tag), until)
                           : s.write(response, until);
        !w) {
      t.fail(s, "response: " + w.error().message());
      break;
    }
    ++served;
  }
  t.transactions.fetch_add(served, std::memory_order_relaxed);
}

std::expected<std::uint64_t, std::error_code> count_copied(net::tcp_stream& s) {
  std::vector<std::byte> buf(bulk_chunk_bytes);
  std::uint64_t received = 0;
  for (;;) {
    auto n = s.read(buf);
    if (!n) return std::unexpected(n.error());
    if (*n == 0) return received;
    received += *n;
  }
}

void sink(net::tcp_stream& s, totals& t, bool zero_copy) {
  auto received = zero_copy ? count_in_place(s) : count_copied(s);
  if (!received && received.error() == std::errc::operation_canceled) return;
  if (!received) return t.fail(s, "bulk read: " + received.error().message());
  t.bulk_bytes.fetch_add(*received, std::memory_order_relaxed);
  if (auto w = s.write(encode_u64(*received), now_ns() + io_timeout_ns); !w)
    t.fail(s, "bulk count: " + w.error().message());
}

void serve(net::tcp_stream s, totals& t, bool zero_copy) {
  std::array<std::byte, hello_size> raw;
  auto got = receive(s, raw);
  if (!got) return t.fail(s, "hello: " + got.error().message());
  if (!*got) return;
  auto h = decode(raw);
  if (!h) return t.fail(s, h.error());
  if (h->what == mode::bulk) return sink(s, t, zero_copy);
  answer(s, *h, t, zero_copy);
}

// Seed 004's antagonist (server_options::antagonist_core): runs until
// its stop is requested, using its whole slice each time, then yielding so that the
// reactor's other rungs (its RX queues among them) get their turn, as an
// interrupt would preempt a CPU-bound task. Slice 0: a pure compute loop that
// never yields, which only reactor.preempt takes the core from.
class antagonist {
 public:
  antagonist(unsigned core, std::uint32_t slice_us) {
    auto f = spawn(
        [this, slice_ns = std::uint64_t(slice_us) * 1000] {
          const std::stop_token token = stop_.get_token();  // it computes, never waits: it looks at its token
          while (!token.stop_requested()) {
            if (slice_ns == 0) continue;
            const std::uint64_t until = now_ns() + slice_ns;
            while (now_ns() < until) {
            }
            this_fiber::yield();
          }
        },
        {.core = core, .pinned = true, .stop = stop_.get_token()});
    if (!f) throw std::system_error(f.error(), "affine-rr: the antagonist fiber");
    fiber_ = std::move(*f);
  }
  ~antagonist() {
    stop_.request_stop();
    fiber_.join(stop_mode::ignore);
  }
  antagonist(const antagonist&) = delete;
  antagonist& operator=(const antagonist&) = delete;

 private:
  std::stop_source stop_;
  fiber_handle fiber_;
};

// Whether `core` is a reactor of this runtime: spawn refuses any other.
bool is_reactor(unsigned core) {
  auto f = spawn([] {}, {.core = core});
  if (!f) return f.error() != std::errc::invalid_argument;
  f->join(stop_mode::ignore);
  return true;
}

}  // namespace

int run_server(const server_options& o) {
  std::vector<std::pair<const char*, unsigned>> cores;
  for (unsigned c : o.serve_cores) cores.emplace_back("--serve-cores", c);
  if (o.antagonist_core) cores.emplace_back("--antagonist-core", *o.antagonist_core);
  for (const auto& [flag, core] : cores)
    if (!is_reactor(core)) {
      fmt::print(stderr, "affine-rr: {} {}: not a reactor core (see reactor.cores)\n", flag, core);
      return 2;
    }
  std::vector<net::tcp_listener> listeners;
  std::string ports;
  for (unsigned i = 0; i < o.listeners; ++i) {
    const std::uint16_t port = o.port == 0 ? 0 : std::uint16_t(o.port + i);
    // On [::], which takes IPv4 and IPv6 alike (bench/run rr's IPv6
    // variant); on 0.0.0.0 where the host has no IPv6.
    net::listen_options lo{.local = {net::any_address_v6, port},
                           .backlog = 1024,
                           .accepted = {.no_delay = true, .keepalive = o.keepalive, .congestion = o.congestion}};
    auto l = net::listen(lo);
    if (!l && l.error() == std::errc::address_family_not_supported) {
      lo.local.addr = net::any_address;
      l = net::listen(lo);
    }
    if (!l) {
      fmt::print(stderr, "affine-rr: listen on port {}: {}\n", port, l.error().message());
      return 1;
    }
    ports += fmt::format("{}{}", i ? "," : "", l->local().port);
    listeners.push_back(std::move(*l));
  }
  // Resident memory now, and its peak at the end: what the connections
  // served cost this process (bench/run rr --idle-connections).
  const auto rss = affine_apps::process_memory_bytes("VmRSS");
  fmt::print("{{\"app\":\"rr\",\"role\":\"server\",\"port\":{},\"ports\":[{}],\"rss_bytes\":{}}}\n",
             listeners[0].local().port, ports, rss.value_or(0));
  std::fflush(stdout);

  std::optional<antagonist> hog;
  if (o.antagonist_core) hog.emplace(*o.antagonist_core, o.antagonist_slice_us);
  totals t;
  std::atomic<std::size_t> next_core{0};
  const std::function<void(net::tcp_stream)> each = [&](net::tcp_stream s) {
    if (!o.serve_cores.empty())
      this_fiber::migrate(o.serve_cores[next_core.fetch_add(1, std::memory_order_relaxed) % o.serve_cores.size()]);
    serve(std::move(s), t, o.zero_copy);
  };
  // The first listener's loop here, each other's in a fiber of its own
  // (which inherits this fiber's stop, so a signal ends them all).
  std::vector<affine_apps::serve_result> results(listeners.size());
  std::vector<fiber_handle> loops;
  for (std::size_t i = 1; i < listeners.size(); ++i) {
    auto f = spawn([&, i] { results[i] = affine_apps::serve_until_stopped(listeners[i], "affine-rr", each); });
    if (!f) throw std::system_error(f.error(), "affine-rr: an accept loop's fiber");
    loops.push_back(std::move(*f));
  }
  results[0] = affine_apps::serve_until_stopped(listeners[0], "affine-rr", each);
  for (auto& f : loops) f.join(stop_mode::ignore);
  std::uint64_t accepted = 0;
  int code = 0;
  for (const auto& r : results) {
    accepted += r.accepted;
    code = std::max(code, r.code);
  }
  fmt::print("{{\"app\":\"rr\",\"role\":\"server\",\"connections\":{},\"transactions\":{},\"bulk_bytes\":{},"
             "\"errors\":{},\"rss_peak_bytes\":{}}}\n",
             accepted, t.transactions.load(), t.bulk_bytes.load(), t.errors.load(),
             affine_apps::process_memory_bytes("VmHWM").value_or(0));
  return code;
}

}  // namespace affine_rr
