#pragma once
// affine-mysql-proxy's settings: the configuration file's [proxy] table and
// [[backend]] tables (proxy_schema(): affine's schema plus these), then the
// command line (what affine::run leaves after --config/--set), whose flags
// override the file (any --backend replaces the file's backends):
//
//   affine-mysql-proxy --listen [IP:]PORT --backend IP:PORT[,role=primary|replica][,weight=N][,max=N] ...
//                      [--stats-interval-s S] [--connect-timeout-ms T] [--handshake-timeout-ms T]
//                      [--health-interval-ms T] [--health-timeout-ms T] [--max-packet-mib M]
//
//   [proxy]
//   listen = "10.88.0.2:3307"     # [IP:]PORT
//   metrics = "10.88.0.2:9104"    # Prometheus endpoint, [IP:]PORT; "" = none
//   [[backend]]
//   address = "10.88.0.1:3306"
//   role = "primary"
//
// Backends are IPv4 addresses (the stack resolves no names); at least one.
// role defaults to primary, weight to 1, max (connections) to 0 = no limit.
// --health-interval-ms 0 turns health checks off (backends stay up).

#include <cstdint>
#include <expected>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "affine/config.hh"
#include "affine/net.hh"
#include "apps/mysql-proxy/backends.hh"
#include "apps/mysql-proxy/health.hh"
#include "apps/mysql-proxy/session.hh"

namespace affine_mysql {

struct options {
  std::optional<affine::net::endpoint> listen;   // required, from the file or --listen
  std::optional<affine::net::endpoint> metrics;  // none: no endpoint
  std::vector<backend_config> backends;
  double stats_interval_s = 10;  // 0: only the line at exit
  bool health_checks = true;
  health_options health;
  session_options session;
};

// One --backend value.
std::expected<backend_config, std::string> parse_backend(std::string_view spec);

// affine's schema with [proxy] and [[backend]].
const affine::config::schema& proxy_schema();
// The file's settings (already checked against proxy_schema()).
options options_from(const affine::config::settings& cfg);

// `base` (the file's settings) with the command line applied. Errors are one
// line, without the "affine-mysql-proxy: " prefix.
std::expected<options, std::string> parse_args(std::span<const std::string> args, options base = {});
std::string usage();

}  // namespace affine_mysql
