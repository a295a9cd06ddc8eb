// affine-rr: a request/response (netperf TCP_RR-style) server and load
// generator with many concurrent flows, and a one-way bulk transfer, on
// affine's socket API: the same binary on a dpdk port (affine's stack) or
// on kernel sockets (uring), as the configuration says.
//
// Exit status: 0 success, 2 bad command line or configuration (one line on
// stderr, then the usage), 1 anything else.

#include <fmt/format.h>

#include "affine/affine.hh"
#include "apps/rr/client.hh"
#include "apps/rr/options.hh"
#include "apps/rr/server.hh"

int main(int argc, char** argv) {
  return affine::run(argc, argv, [](std::span<const std::string> args) {
    auto o = affine_rr::parse_args(args);
    if (!o) {
      fmt::print(stderr, "affine-rr: {}\n{}", o.error(), affine_rr::usage());
      return 2;
    }
    if (o->what == affine_apps::role::server) return affine_rr::run_server(o->server);
    return o->client.bulk ? affine_rr::run_bulk_client(o->client) : affine_rr::run_rr_client(o->client);
  });
}
