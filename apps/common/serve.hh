#pragma once
// A server's accept loop that SIGINT or SIGTERM ends cleanly: each
// connection is served in its own fiber, and the loop returns once they
// have all ended, so the app can print its summary and exit 0.
//
// A signal cannot wake a fiber, a deadline can: the loop and the serving
// fibers wait in steps of stop_check_ns and look at stop_requested()
// between them, so a stop takes effect within about that long.

#include <cstddef>
#include <cstdint>
#include <expected>
#include <functional>
#include <span>
#include <string_view>
#include <system_error>

#include "affine/net.hh"

namespace affine_apps {

inline constexpr std::uint64_t stop_check_ns = 100'000'000;

// Precondition: the handlers are not yet installed by another part of the
// process. Sets the flag stop_requested() reads on SIGINT and SIGTERM.
void stop_on_signals();
bool stop_requested();

// One read that waits for data as long as no stop is requested: the bytes
// read (0 at the end of the stream), or std::errc::operation_canceled.
std::expected<std::size_t, std::error_code> read_unless_stopped(affine::net::tcp_stream& s, std::span<std::byte> buf);

struct serve_result {
  std::uint64_t accepted = 0;
  int code = 0;  // 1 when accept failed (one line on stderr, prefixed with `app`), else 0
};

// Precondition: in a fiber of affine::run, stop_on_signals() called.
// Accepts until a stop is requested (or `max_connections` accepted; 0: no
// limit), runs serve(stream) in a fiber per connection, closes `l`, and
// returns when every such fiber has ended.
serve_result serve_until_stopped(affine::net::tcp_listener& l, std::string_view app,
                                 const std::function<void(affine::net::tcp_stream)>& serve,
                                 std::uint64_t max_connections = 0);

}  // namespace affine_apps
