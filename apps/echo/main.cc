// affine-echo: an echo server and a load-generating client on affine's
// socket API; the first app, and the uring backend's end-to-end check.
//
// Exit status: 0 success, 2 bad command line or configuration (one line on
// stderr), 1 anything else.

#include <fmt/format.h>

#include "affine/affine.hh"
#include "apps/echo/client.hh"
#include "apps/echo/options.hh"
#include "apps/echo/server.hh"

int main(int argc, char** argv) {
  return affine::run(argc, argv, [](std::span<const std::string> args) {
    auto o = affine_echo::parse_args(args);
    if (!o) {
      fmt::print(stderr, "affine-echo: {}\n{}", o.error(), affine_echo::usage());
      return 2;
    }
    return o->what == affine_echo::options::role::server ? affine_echo::run_server(o->server)
                                                         : affine_echo::run_client(o->client);
  });
}
