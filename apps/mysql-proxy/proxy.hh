#pragma once
// The proxy as a whole: listen, serve each client in a session fiber,
// check the backends' health, print a stats line every interval, and on
// SIGINT or SIGTERM end every session (ERR 1053 to its client), print the
// last stats line and return 0.

#include "apps/mysql-proxy/options.hh"

namespace affine_mysql {

// Precondition: in affine::run's main fiber. Returns the exit status: 0
// after a stop, 1 when the port cannot be listened on.
int run_proxy(const options& o);

}  // namespace affine_mysql
