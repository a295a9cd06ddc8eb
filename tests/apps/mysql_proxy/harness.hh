#pragma once
// Sessions under test: a runtime on kernel sockets (loopback), a fake
// backend and a fake client that speak packets by script, and the proxy's
// accept side running run_session for each client. The fakes frame packets
// with their own few lines, not with the proxy's framer, and every wait
// has a deadline, so a broken proxy fails a test instead of hanging it.

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <vector>

#include "affine/channel.hh"
#include "affine/fiber.hh"
#include "affine/net.hh"
#include "affine/sync.hh"
#include "apps/mysql-proxy/backends.hh"
#include "apps/mysql-proxy/session.hh"
#include "apps/mysql-proxy/stats.hh"
#include "tests/apps/mysql_proxy/captures.hh"

namespace affine_mysql_test {

inline constexpr std::uint64_t peer_timeout_ns = 5'000'000'000;

// Runs `body` in the main fiber of a fresh runtime with two reactors.
void in_runtime(std::function<void()> body);

struct packet {
  std::uint8_t seq = 0;
  std::vector<std::byte> payload;
};

// One end of a connection, speaking whole packets.
class peer {
 public:
  // Holds no stream when the connection failed (the test has failed then).
  explicit peer(std::optional<affine::net::tcp_stream> s) : s_(std::move(s)) {}
  void send(std::uint8_t seq, std::span<const std::byte> payload);
  // The next packet; nullopt at the end of the stream, on an error or after
  // `timeout_ns`.
  std::optional<packet> receive(std::uint64_t timeout_ns = peer_timeout_ns);
  // The peer closes the connection within `timeout_ns` (bytes before the
  // end are skipped).
  bool closed_within(std::uint64_t timeout_ns);
  void close() {
    if (s_) s_->close();
  }

 private:
  // optional: net.hh's streams and listeners cannot be default-constructed
  // where their implementation is incomplete.
  std::optional<affine::net::tcp_stream> s_;
};

// A backend on a loopback port.
class fake_backend {
 public:
  fake_backend();
  affine::net::endpoint address() const { return listener_->local(); }
  peer accept();

 private:
  std::optional<affine::net::tcp_listener> listener_;
};

// A port nothing listens on (connections to it are refused).
affine::net::endpoint refusing_address();

// The proxy's side: a loopback listener whose connections run run_session.
class proxy_under_test {
 public:
  explicit proxy_under_test(std::vector<affine_mysql::backend_config> backends,
                            affine_mysql::session_options o = test_options());
  ~proxy_under_test();  // waits for every session to end

  static affine_mysql::session_options test_options();

  peer connect();
  // Why the next session (in the order they end) ended.
  affine_mysql::close_reason next_end();
  void stop() { stopping_.store(true); }

  affine_mysql::backend_set backends;
  affine_mysql::proxy_stats stats;

 private:
  affine_mysql::proxy_context ctx_;
  std::optional<affine::net::tcp_listener> listener_;
  std::atomic<bool> stopping_{false};
  std::atomic<bool> closing_{false};
  affine::channel<affine_mysql::close_reason> ends_{64};
  affine::fiber_handle acceptor_;
  std::atomic<unsigned> live_{0};
};

// Plays both sides of a captured session through the proxy: the client's
// packets from a fake client, the server's from a fake backend. Each side
// must receive exactly what the other sent, except the greeting and the
// handshake answer, whose capabilities the proxy rewrites. Returns the
// proxy's counters after the session ended.
std::unique_ptr<affine_mysql::stats_snapshot> replay_through_proxy(std::span<const captured_packet> session);

// The greeting, answer and OK of mariadb_session: `client` and `server`
// are logged in (the next command starts at sequence id 0).
void log_in(peer& client, peer& server);

// A client logged in through the proxy to a fake backend.
struct logged_in {
  explicit logged_in(affine_mysql::session_options o = proxy_under_test::test_options());
  fake_backend backend;
  proxy_under_test proxy;
  peer client;
  peer server;
};

}  // namespace affine_mysql_test
