#pragma once
// A server's accept loop that SIGINT or SIGTERM ends cleanly: each
// connection is served in its own fiber, and the loop returns once they
// have all ended, so the app can print its summary and exit 0.
//
// affine::run turns the signals into a stop request on the main fiber's
// token (affine/fiber.hh); the loop and the serving fibers, which inherit
// it, see it as std::errc::operation_canceled from whatever call they wait
// in, at once: nothing here looks at a flag.

#include <cstdint>
#include <functional>
#include <string_view>

#include "affine/net.hh"

namespace affine_apps {

struct serve_result {
  std::uint64_t accepted = 0;
  std::uint64_t refused = 0;  // accepted, but reset: max_live reached, or no fiber could be spawned
  int code = 0;  // 1 when accept failed (one line on stderr, prefixed with `app`), else 0
};

struct serve_limits {
  std::uint64_t max_connections = 0;  // accept this many, then stop accepting; 0: no limit
  std::uint64_t max_live = 0;         // served at once; more are reset on accept (refused); 0: no limit
};

// Precondition: in a fiber. Accepts until a stop is requested on the
// fiber's token (or the limit is reached), runs serve(stream) in a fiber
// per connection, closes `l`, and returns when every such fiber has ended.
serve_result serve_until_stopped(affine::net::tcp_listener& l, std::string_view app,
                                 const std::function<void(affine::net::tcp_stream)>& serve,
                                 serve_limits limits = {});

}  // namespace affine_apps
