#pragma once
// The affine-rr server: one fiber per connection, serving what the client's
// hello asks for (apps/rr/protocol.hh): a response per request, or a bulk
// sink that answers with the byte count. Prints
// {"app":"rr","role":"server","port":P} once listening, and a summary line
// when SIGINT or SIGTERM stops it (within apps/common/serve.hh's
// stop_check_ns; exit 0).

#include "apps/rr/options.hh"

namespace affine_rr {

// Precondition: in a fiber of affine::run (which installs the network backend).
int run_server(const server_options& o);

}  // namespace affine_rr
