#pragma once
// affine-echo's command line (what affine::run leaves after --config/--set):
//
//   affine-echo server --port N [--listen ADDR] [--max-connections K] [--backlog B] [--metrics-port M]
//   affine-echo client --to IP:PORT --connections C --requests R --size S [--timeout-ms T]

#include <cstdint>
#include <expected>
#include <span>
#include <string>

#include "affine/net.hh"

namespace affine_echo {

struct server_options {
  std::uint16_t port = 0;                // 0: the kernel picks one (printed at start)
  // The address both listeners bind: 0.0.0.0 every IPv4 address of the
  // port, :: every address of either family (net::listen_options::local).
  affine::net::address listen = affine::net::any_address;
  std::uint64_t max_connections = 0;     // stop after serving this many; 0 = until SIGINT/SIGTERM
  unsigned backlog = 1024;               // the listener's SYN and accept queues (net::listen_options)
  // A second port where each connection gets affine::collect_metrics() as
  // JSON lines, then the close (the attack suite reads the stack's drops,
  // connections and packet pools there); 0: none.
  std::uint16_t metrics_port = 0;
};

struct client_options {
  affine::net::endpoint to;
  unsigned connections = 1;
  std::uint64_t requests = 1000;   // round trips per connection
  std::size_t size = 64;           // bytes per request
  std::uint64_t timeout_ms = 10'000;  // per read or write
};

struct options {
  enum class role : std::uint8_t { server, client };
  role what = role::server;
  server_options server;
  client_options client;
};

// Errors are one line, without the "affine-echo: " prefix.
std::expected<options, std::string> parse_args(std::span<const std::string> args);
std::string usage();

}  // namespace affine_echo
