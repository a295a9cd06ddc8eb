#include "apps/common/serve.hh"

#include <atomic>
#include <stop_token>

#include <fmt/format.h>

#include "affine/fiber.hh"
#include "affine/sync.hh"

namespace affine_apps {

namespace {

// The connection fibers still running, and an event set when the last one
// has ended (and the accept loop has, which holds one count of its own).
struct live_fibers {
  std::atomic<std::uint64_t> count{1};
  affine::event none_left;
  void add() { count.fetch_add(1, std::memory_order_relaxed); }  // count - 1 fibers run
  void done() {
    if (count.fetch_sub(1, std::memory_order_acq_rel) == 1) none_left.set();
  }
};

}  // namespace

serve_result serve_until_stopped(affine::net::tcp_listener& l, std::string_view app,
                                 const std::function<void(affine::net::tcp_stream)>& serve,
                                 serve_limits limits) {
  using namespace affine;
  serve_result r;
  live_fibers live;
  while (limits.max_connections == 0 || r.accepted < limits.max_connections) {
    auto s = l.accept();
    if (!s && s.error() == std::errc::operation_canceled) break;  // the stop
    if (!s) {
      fmt::print(stderr, "{}: accept: {}\n", app, s.error().message());
      r.code = 1;
      break;
    }
    ++r.accepted;
    if (limits.max_live != 0 && live.count.load(std::memory_order_relaxed) > limits.max_live) {
      ++r.refused;
      s->abort();
      continue;
    }
    live.add();
    auto f = spawn([&serve, &live, c = std::move(*s)]() mutable {
      serve(std::move(c));
      live.done();
    });
    if (!f) {
      ++r.refused;
      live.done();  // the stream went with the callable: closed
      continue;
    }
    f->detach();
  }
  l.close();
  live.done();
  // The fibers end on the stop themselves; wait for them whatever comes.
  live.none_left.wait({}, stop_mode::ignore);
  return r;
}

}  // namespace affine_apps
