#pragma once
// affine-rr's command line (what affine::run leaves after --config/--set):
//
//   affine-rr server [--port N] [--listeners K] [--keepalive] [--serve-cores C,...] [--antagonist-core C]
//                    [--antagonist-slice-us U] [--congestion C] [--zero-copy]
//   affine-rr client --to IP:PORT [--flows F] [--request-size B] [--response-size B]
//                    [--duration-s S] [--warmup-s W] [--timeout-ms T] [--variant NAME] [--congestion C]
//                    [--zero-copy] [--idle-connections N [--idle-ports P,...]]
//   affine-rr client --bulk --to IP:PORT [--flows F] [--duration-s S] [--timeout-ms T] [--variant NAME]
//                    [--congestion C] [--zero-copy]
//
// --congestion cubic|newreno: every connection's congestion control
// (net::stream_options::congestion); without it, the configured one (the
// stack's tcp.congestion, or on kernel sockets the kernel's default, which
// a machine may have set to something else, e.g. bbr).
//
// --zero-copy: messages are read and written where the stack holds them
// (apps/rr/in_place.hh), not through buffers of the program's own.
//
// --idle-connections N: before the measured flows start, N more
// connections that each make one transaction and then stay open and silent
// with keepalive on, to --to's address on the --idle-ports in turn (or
// --to's port); the flows are measured beside them (apps/rr/idle.hh). A
// server with --listeners K listens on K ports (from --port N: N..N+K-1)
// and names them in its first line, since one client address reaches one
// server port from at most 16,384 ephemeral ports; --keepalive turns
// keepalive on for every accepted connection.
//
// The server takes its message sizes from each client's hello
// (apps/rr/protocol.hh), so it has none of its own.

#include <cstdint>
#include <expected>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "affine/net.hh"
#include "apps/common/args.hh"

namespace affine_rr {

struct server_options {
  std::uint16_t port = 0;  // 0: the backend picks one (printed at start)
  unsigned listeners = 1;  // ports listened on: port, port+1, ... (or each picked by the backend)
  bool keepalive = false;  // on every accepted connection
  // Each new connection's fiber moves to the next of these reactors in turn
  // when it starts (unpinned: its wakeups decide where it runs next), so
  // that an experiment knows where the readers last ran; empty: they start
  // where the acceptor spawned them.
  std::vector<unsigned> serve_cores;
  // Seed 004's antagonist: a fiber pinned on this reactor that runs for a
  // whole slice, gives the core up, and runs again, as long as the server;
  // slice 0: it never gives the core up (only reactor.preempt takes it).
  std::optional<unsigned> antagonist_core;
  std::uint32_t antagonist_slice_us = 500;  // the default reactor.task_quota_us
  affine::net::congestion_control congestion = affine::net::congestion_control::configured;
  bool zero_copy = false;
};

struct client_options {
  affine::net::endpoint to;
  bool bulk = false;                // one-way bulk transfer instead of request/response
  unsigned flows = 1;               // concurrent connections, one fiber each
  std::uint32_t request_bytes = 64;
  std::uint32_t response_bytes = 64;
  double duration_s = 10;           // measured
  double warmup_s = 1;              // request/response only: run, but not measured, first
  std::uint64_t timeout_ms = 10'000;  // per connect, read or write
  std::string variant;              // the JSON line's "variant"; default: "rr" or "bulk"
  affine::net::congestion_control congestion = affine::net::congestion_control::configured;
  bool zero_copy = false;
  unsigned idle_connections = 0;
  std::vector<std::uint16_t> idle_ports;  // empty: to.port
};

struct options {
  affine_apps::role what = affine_apps::role::server;
  server_options server;
  client_options client;
};

// Errors are one line, without the "affine-rr: " prefix.
std::expected<options, std::string> parse_args(std::span<const std::string> args);
std::string usage();

}  // namespace affine_rr
