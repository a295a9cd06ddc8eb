#pragma once
// One client connection, from accept to close:
//
//   1. Take a backend (backends.hh: least connections among healthy
//      primaries) and connect to it with a deadline. If that fails, try the
//      next healthy one; when none is left, the client gets an ERR packet
//      where it expects the server's greeting, in the pre-handshake form
//      (code, message, no SQL state: the client knows no capabilities yet),
//      sequence id 0, and the connection closes:
//        1429 "Can't connect to backend 10.0.0.5:3306: connection refused"
//        1429 "Can't connect to a backend: none is healthy"
//        1040 "Too many connections: every healthy backend is at its limit"
//      1429 is ER_CONNECT_TO_FOREIGN_DATA_SOURCE. Not 2003: that is a client
//      library's own code, and libmariadb 3.3 (Debian 12's mariadb client)
//      reports a 2xxx code from a server as "ERROR 2027: Received malformed
//      packet", hiding the message. The mariadb client prints: "ERROR 2002
//      (HY000): Received error packet before completion of TLS handshake.
//      The authenticity of the following error cannot be verified: 1429 -
//      Can't connect to backend 10.0.0.5:3306: connection refused".
//   2. Relay the backend's greeting with the capabilities the proxy cannot
//      carry cleared, the client's answer likewise, and the authentication
//      exchange (handshake.hh), all within the handshake deadline. An ERR
//      greeting (too many connections, host blocked) goes to the client
//      unchanged and ends the session.
//   3. Relay commands, following each with command_tracker so that every
//      command's latency and outcome is counted where its response ends.
//
// Later failures reach the client as an ERR in the place of the server's
// next packet (sequence id 0 between commands): the backend connection lost
// or the backend marked down, 1158 (08S01) "Lost connection to backend
// 10.0.0.5:3306[: why]"; it took longer than a deadline, 1159; it sent what
// the proxy cannot follow, 1835 "Malformed packet from backend ..."; the
// proxy stopping, 1053.
//
// A stop request on the session fiber's token (the proxy shutting down:
// SIGINT, SIGTERM) ends whatever it waits in at once. The session waits
// for packets in steps of check_interval_ns, and between steps looks for
// the other reasons to end: the backend marked down by the health check
// (also between commands), and,
// while the backend works on a command, the client gone (the backend
// connection is then closed, which ends the backend's work for it). Every
// session runs in its own fiber, so a slow backend delays only its own
// sessions. Every end of a session is counted with its reason (stats.hh).

#include <cstddef>
#include <cstdint>
#include <functional>

#include "affine/net.hh"
#include "apps/mysql-proxy/backends.hh"
#include "apps/mysql-proxy/packet.hh"
#include "apps/mysql-proxy/stats.hh"

namespace affine_mysql {

struct session_options {
  std::size_t max_packet = default_max_packet;
  std::uint64_t connect_timeout_ns = 2'000'000'000;
  std::uint64_t handshake_timeout_ns = 10'000'000'000;  // from accept to authenticated
  std::uint64_t exchange_timeout_ns = 30'000'000'000;   // a client's packet inside an exchange; each write
  std::uint64_t check_interval_ns = 100'000'000;
};

struct proxy_context {
  backend_set& backends;
  proxy_stats& stats;
  session_options options;
  std::function<bool()> stopping;  // the proxy shuts down: this_fiber::stop_requested() in the proxy
};

// Serves one client connection to its end and returns why it ended (also
// counted in ctx.stats). Precondition: in a fiber.
close_reason run_session(affine::net::tcp_stream client, proxy_context& ctx);

}  // namespace affine_mysql
