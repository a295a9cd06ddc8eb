// A TCP echo server on affine: every connection is a fiber of its own, and
// the same program runs on kernel sockets or on affine's userspace stack,
// whichever the configuration names (README.md beside this file).
//
//   echo-server [PORT] [--config FILE] [--set section.key=value]...

#include <affine/affine.hh>
#include <affine/net.hh>

#include <array>
#include <charconv>
#include <cstdint>
#include <cstdio>
#include <span>
#include <string>

namespace {

// Reads what arrives and writes it back until the peer closes or fails.
void echo(affine::net::tcp_stream conn) {
  std::array<std::byte, 4096> buf;
  for (;;) {
    auto n = conn.read(buf);  // suspends this fiber only
    if (!n || *n == 0) return;
    if (!conn.write({buf.data(), *n})) return;
  }
}

}  // namespace

int main(int argc, char** argv) {
  return affine::run(argc, argv, [](std::span<const std::string> args) {
    std::uint16_t port = 7000;
    if (!args.empty()) {
      const std::string& a = args[0];
      if (std::from_chars(a.data(), a.data() + a.size(), port).ec != std::errc{} || port == 0) {
        std::fprintf(stderr, "echo-server: '%s' is not a port (1-65535)\n", a.c_str());
        return 2;
      }
    }
    auto listener = affine::net::listen({.local = {affine::net::any_address, port}});
    if (!listener) {
      std::fprintf(stderr, "echo-server: listen on port %u: %s\n", unsigned(port), listener.error().message().c_str());
      return 1;
    }
    std::printf("echo-server: listening on %s\n", listener->local().to_string().c_str());
    std::fflush(stdout);
    // Ctrl-C or SIGTERM: affine::run requests a stop on this fiber's token,
    // which every connection fiber inherits; accept, read and write return
    // std::errc::operation_canceled at once, and everything winds down.
    for (;;) {
      auto conn = listener->accept();
      if (!conn && conn.error() == std::errc::operation_canceled) return 0;
      if (!conn) {
        std::fprintf(stderr, "echo-server: accept: %s\n", conn.error().message().c_str());
        return 1;
      }
      // Placed and moved between cores by affine's scheduler.
      auto f = affine::spawn([c = std::move(*conn)]() mutable { echo(std::move(c)); });
      if (!f) {  // no stack for one more fiber: that connection is closed, the server goes on
        std::fprintf(stderr, "echo-server: %s\n", f.error().message().c_str());
        continue;
      }
      f->detach();
    }
  });
}
