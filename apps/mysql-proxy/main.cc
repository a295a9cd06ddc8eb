// affine-mysql-proxy: a MySQL/MariaDB protocol-aware proxy on affine's
// socket API, the same binary on a dpdk port (affine's stack) or on kernel
// sockets (uring), as the configuration says.
//
// Exit status: 0 after SIGINT/SIGTERM, 2 bad command line or configuration
// (one line on stderr, then the usage), 1 anything else.

#include <fmt/format.h>

#include "affine/affine.hh"
#include "apps/mysql-proxy/options.hh"
#include "apps/mysql-proxy/proxy.hh"

int main(int argc, char** argv) {
  return affine::run(argc, argv, affine_mysql::proxy_schema(),
                     [](std::span<const std::string> args, const affine::config::settings& settings) {
    auto o = affine_mysql::parse_args(args, affine_mysql::options_from(settings));
    if (!o) {
      fmt::print(stderr, "affine-mysql-proxy: {}\n{}", o.error(), affine_mysql::usage());
      return 2;
    }
    return affine_mysql::run_proxy(*o);
  });
}
