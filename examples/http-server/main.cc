// A minimal HTTP/1.1 server on affine: keep-alive connections, one fixed
// response to every request, pipelined requests answered in order. It parses
// just enough of a request to find its end (the blank line after the headers)
// and whether the client asked to close; a request with a body, or a header
// section over 8 KiB, is answered 400 and the connection closed.
//
//   http-server [PORT] [--config FILE] [--set section.key=value]...

#include <affine/affine.hh>
#include <affine/net.hh>

#include <algorithm>
#include <array>
#include <charconv>
#include <cstdint>
#include <cstdio>
#include <optional>
#include <span>
#include <string>
#include <string_view>

namespace {

constexpr std::string_view body = "hello from affine\n";

std::string response(bool close) {
  std::string r = "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: ";
  r += std::to_string(body.size());
  r += close ? "\r\nConnection: close\r\n\r\n" : "\r\n\r\n";
  r += body;
  return r;
}

constexpr std::string_view bad_request =
    "HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\nConnection: close\r\n\r\n";

// The value of the first header line named `name` (lower case), lower-cased
// and without surrounding blanks; nullopt without such a line.
std::optional<std::string> header(std::string_view head, std::string_view name) {
  auto lower = [](char c) { return c >= 'A' && c <= 'Z' ? char(c - 'A' + 'a') : c; };
  for (std::size_t at = head.find("\r\n"); at != std::string_view::npos; at = head.find("\r\n", at + 2)) {
    const std::string_view line = head.substr(at + 2, head.find("\r\n", at + 2) - (at + 2));
    if (line.size() <= name.size() || line[name.size()] != ':') continue;
    bool match = true;
    for (std::size_t i = 0; i < name.size() && match; ++i) match = lower(line[i]) == name[i];
    if (!match) continue;
    std::string v;
    for (char c : line.substr(name.size() + 1)) v += lower(c);
    const auto first = v.find_first_not_of(" \t"), last = v.find_last_not_of(" \t");
    return first == std::string::npos ? std::string() : v.substr(first, last - first + 1);
  }
  return std::nullopt;
}

void serve(affine::net::tcp_stream conn) {
  const std::string keep = response(false), last = response(true);
  std::array<char, 8192> buf;
  std::size_t have = 0;
  for (;;) {
    // One request: everything up to the blank line that ends its headers.
    std::string_view head(buf.data(), have);
    std::size_t end = head.find("\r\n\r\n");
    while (end == std::string_view::npos) {
      if (have == buf.size()) {
        (void)conn.write(std::as_bytes(std::span(bad_request)));
        return;
      }
      auto n = conn.read(std::as_writable_bytes(std::span(buf).subspan(have)));
      if (!n || *n == 0) return;  // the client went away between requests
      have += *n;
      head = std::string_view(buf.data(), have);
      end = head.find("\r\n\r\n");
    }
    head = head.substr(0, end + 2);
    const auto length = header(head, "content-length");
    if ((length && *length != "0") || header(head, "transfer-encoding")) {
      (void)conn.write(std::as_bytes(std::span(bad_request)));
      return;
    }
    // HTTP/1.1 keeps the connection unless the client says close (RFC 9112 9.3).
    const auto connection = header(head, "connection");
    const bool close = (connection && connection->find("close") != std::string::npos) ||
                       head.substr(0, head.find("\r\n")).ends_with(" HTTP/1.0");
    const std::string& r = close ? last : keep;
    if (!conn.write(std::as_bytes(std::span(r)))) return;
    if (close) return;
    // Pipelined requests: keep what followed this one.
    const std::size_t used = end + 4;
    std::copy(buf.begin() + std::ptrdiff_t(used), buf.begin() + std::ptrdiff_t(have), buf.begin());
    have -= used;
  }
}

}  // namespace

int main(int argc, char** argv) {
  return affine::run(argc, argv, [](std::span<const std::string> args) {
    std::uint16_t port = 8080;
    if (!args.empty()) {
      const std::string& a = args[0];
      if (std::from_chars(a.data(), a.data() + a.size(), port).ec != std::errc{} || port == 0) {
        std::fprintf(stderr, "http-server: '%s' is not a port (1-65535)\n", a.c_str());
        return 2;
      }
    }
    auto listener = affine::net::listen({.local = {affine::net::any_address, port}, .accepted = {.no_delay = true}});
    if (!listener) {
      std::fprintf(stderr, "http-server: listen on port %u: %s\n", unsigned(port), listener.error().message().c_str());
      return 1;
    }
    std::printf("http-server: listening on %s\n", listener->local().to_string().c_str());
    std::fflush(stdout);
    // Ctrl-C or SIGTERM: affine::run requests a stop on this fiber's token,
    // which every connection fiber inherits; accept, read and write return
    // std::errc::operation_canceled at once, and everything winds down.
    for (;;) {
      auto conn = listener->accept();
      if (!conn && conn.error() == std::errc::operation_canceled) return 0;
      if (!conn) {
        std::fprintf(stderr, "http-server: accept: %s\n", conn.error().message().c_str());
        return 1;
      }
      auto f = affine::spawn([c = std::move(*conn)]() mutable { serve(std::move(c)); });
      if (!f) {  // no stack for one more fiber: that connection is closed, the server goes on
        std::fprintf(stderr, "http-server: %s\n", f.error().message().c_str());
        continue;
      }
      f->detach();
    }
  });
}
