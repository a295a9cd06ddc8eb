#pragma once
// A small HTTP/1.1 server (RFC 9112) for the metrics endpoint: one request
// per connection, answered and closed.
//
//   GET or HEAD /metrics (any query) -> 200, the body metrics_body() makes
//   another path                      -> 404
//   another method                    -> 405, Allow: GET, HEAD
//   a head that is not HTTP/1.x       -> 400 (also: a 1.1 request without Host, RFC 9112 3.2)
//   a head over max_head bytes        -> 431
//   no whole head within head_timeout -> 408 (a slow client holds a fiber that long, no more)
//
// Any bytes a client sends end in one of these answers and a closed
// connection, never in an error of the server.

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>

#include "affine/net.hh"

namespace affine_mysql {

struct http_options {
  std::size_t max_head = 8192;                     // request line, fields and blank line, bytes
  std::uint64_t head_timeout_ns = 5'000'000'000;   // from accept to the head's end
  std::uint64_t write_timeout_ns = 5'000'000'000;  // to send the answer
  unsigned max_connections = 64;                   // served at once; more are reset on accept
};

// The answer serve_http sends to a request head (`head`: the bytes before
// its blank line), whole: status line, headers, body. Apart, so that tests
// can feed it heads.
std::string http_answer(std::string_view head, const std::function<std::string()>& metrics_body);

// Precondition: in a fiber. Accepts on `l` until a stop is requested on
// the fiber's token (affine/fiber.hh), serving each connection in its own
// fiber; closes `l` and returns once every such fiber has ended (they end
// on the stop too). metrics_body() runs in the connections' fibers, on any
// core, possibly at once.
void serve_http(affine::net::tcp_listener& l, std::function<std::string()> metrics_body, const http_options& o = {});

}  // namespace affine_mysql
