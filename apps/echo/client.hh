#pragma once
// The echo client: --connections fibers, each doing --requests round trips
// of --size bytes (write, read the echo back, check it), then one JSON line
// (DESIGN.md section 9):
//
//   {"bench":"echo","variant":"affine-uring","connections":8,"requests":1000,"size_bytes":64,
//    "round_trips_per_s":51234,"rtt_p50_us":140.2,"rtt_p99_us":310.5,"errors":0}
//
// Exit status 0 when every round trip came back intact, else 1.

#include "apps/echo/options.hh"

namespace affine_echo {

// Precondition: in a fiber of affine::run (which installs the network backend).
int run_client(const client_options& o);

}  // namespace affine_echo
