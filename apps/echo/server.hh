#pragma once
// The echo server: every byte read is written back, one fiber per
// connection. Prints {"app":"echo","role":"server","port":P} once listening
// and a summary line when it stops (SIGINT, SIGTERM, or --max-connections
// served).

#include "apps/echo/options.hh"

namespace affine_echo {

// Precondition: in a fiber of affine::run (which installs the network backend).
int run_server(const server_options& o);

}  // namespace affine_echo
