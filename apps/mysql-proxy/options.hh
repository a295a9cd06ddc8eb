#pragma once
// affine-mysql-proxy's command line (what affine::run leaves after
// --config/--set):
//
//   affine-mysql-proxy --listen [IP:]PORT --backend IP:PORT[,role=primary|replica][,weight=N][,max=N] ...
//                      [--stats-interval-s S] [--connect-timeout-ms T] [--handshake-timeout-ms T]
//                      [--health-interval-ms T] [--health-timeout-ms T] [--max-packet-mib M]
//
// Backends are IPv4 addresses (the stack resolves no names); at least one.
// role defaults to primary, weight to 1, max (connections) to 0 = no limit.
// --health-interval-ms 0 turns health checks off (backends stay up).

#include <cstdint>
#include <expected>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "affine/net.hh"
#include "apps/mysql-proxy/backends.hh"
#include "apps/mysql-proxy/health.hh"
#include "apps/mysql-proxy/session.hh"

namespace affine_mysql {

struct options {
  affine::net::endpoint listen{affine::net::any_address, 0};
  std::vector<backend_config> backends;
  double stats_interval_s = 10;  // 0: only the line at exit
  bool health_checks = true;
  health_options health;
  session_options session;
};

// One --backend value.
std::expected<backend_config, std::string> parse_backend(std::string_view spec);

// Errors are one line, without the "affine-mysql-proxy: " prefix.
std::expected<options, std::string> parse_args(std::span<const std::string> args);
std::string usage();

}  // namespace affine_mysql
