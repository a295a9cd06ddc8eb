#pragma once
// Health checks: one fiber per backend connects, reads the server's
// greeting and closes, every interval. `fall` failures in a row mark the
// backend down (its sessions end with an ERR to their clients: see
// session.hh), `rise` successes in a row mark it up again.
//
// Why no COM_QUIT after the greeting: the server expects a handshake answer
// there, so a COM_QUIT is a protocol error to it (MariaDB 10.11 answers
// "Got packets out of order" or "Bad handshake" and logs it), while a close
// is logged as "closed normally without authentication". Both count in the
// server's Aborted_connects; mind max_connect_errors for checks from
// another host (MariaDB's host cache does not count loopback clients).

#include <cstdint>
#include <expected>
#include <functional>
#include <string>

#include "affine/net.hh"
#include "apps/mysql-proxy/backends.hh"

namespace affine_mysql {

struct health_options {
  std::uint64_t interval_ns = 2'000'000'000;
  std::uint64_t timeout_ns = 1'000'000'000;  // connect and greeting, together
  unsigned fall = 2;
  unsigned rise = 1;
};

// One check: the error says what is wrong ("connect: connection refused",
// "greeting: ERR 1129 Host '10.0.0.9' is blocked ...").
std::expected<void, std::string> check_backend(affine::net::endpoint to, std::uint64_t timeout_ns);

// Precondition: in a fiber. Checks every backend of `set` until a stop is
// requested on the fiber's token (affine/fiber.hh), then returns when every
// checker fiber has ended.
void run_health_checks(backend_set& set, const health_options& o);

}  // namespace affine_mysql
