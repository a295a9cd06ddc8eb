#pragma once
// The proxy's counters: per command type (count, errors, latency from the
// command's first byte forwarded to its response's last), sessions, and
// why sessions ended. Session fibers on every core add to them; the stats
// line reads them. Each core adds to its own shard (a spinlock nobody else
// takes except the reader), so cores do not share a cache line per command.

#include <array>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "affine/sync.hh"
#include "apps/common/histogram.hh"
#include "apps/mysql-proxy/command.hh"

namespace affine_mysql {

enum class close_reason : std::uint8_t {
  client_quit,              // COM_QUIT
  client_closed,            // the client closed between commands
  client_gone_mid_command,  // the client went away while its command ran: the backend connection is closed
  client_protocol_error,    // bytes from the client the proxy cannot follow
  client_wants_tls,         // an SSLRequest although the proxy offered no TLS
  unknown_command,          // answered with ERR 1047
  packet_too_large,         // over the proxy's packet limit, from either side
  auth_failed,              // the backend refused the login
  no_backend,               // no healthy backend with room
  backend_unreachable,      // connect failed or timed out
  backend_refused,          // the backend's first packet was an ERR
  backend_closed,           // the backend closed or reset the connection
  backend_down,             // the health check marked the backend down
  server_protocol_error,    // bytes from the backend the proxy cannot follow
  timeout,                  // the handshake, a client's part of an exchange, or a write took too long
  io_error,
  shutdown,  // the proxy is stopping
  count_
};
std::string_view to_string(close_reason r);

inline constexpr std::size_t command_kinds = std::size_t(command_kind::count_);
inline constexpr std::size_t close_reasons = std::size_t(close_reason::count_);

struct command_counters {
  std::uint64_t count = 0;
  std::uint64_t errors = 0;
  affine_apps::latency_histogram latency;
};

struct stats_snapshot {
  std::uint64_t sessions_opened = 0;
  std::array<std::uint64_t, close_reasons> closes{};
  std::array<command_counters, command_kinds> commands{};
  std::uint64_t sessions_open() const;
};

class proxy_stats {
 public:
  proxy_stats() = default;
  proxy_stats(const proxy_stats&) = delete;
  proxy_stats& operator=(const proxy_stats&) = delete;

  void session_opened();
  void session_closed(close_reason r);
  void command_done(command_kind k, bool ok, std::uint64_t latency_ns);
  // Sums every shard. The histograms are large: off the data path.
  std::unique_ptr<stats_snapshot> snapshot() const;

 private:
  // Cores beyond this share shards (core % shards).
  static constexpr std::size_t shards = 64;
  struct alignas(64) shard {
    mutable affine::spinlock lock;
    std::uint64_t opened = 0;
    std::array<std::uint64_t, close_reasons> closes{};
    std::array<std::uint64_t, command_kinds> count{};
    std::array<std::uint64_t, command_kinds> errors{};
    // A histogram is 30 KiB: made on a core's first command of a kind.
    std::array<std::unique_ptr<affine_apps::latency_histogram>, command_kinds> latency;
  };
  shard& here();

  std::array<shard, shards> shards_;
};

// One line: sessions, then each command type and close reason seen so far.
//   sessions open=3 opened=120 | query n=5231 err=2 p50=180us p99=950us | closes client_quit=117
std::string format_stats(const stats_snapshot& s);

}  // namespace affine_mysql
