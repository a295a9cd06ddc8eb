#include "apps/mysql-proxy/http.hh"

#include <algorithm>
#include <array>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <optional>
#include <span>

#include <fmt/format.h>

#include "affine/fiber.hh"
#include "apps/common/serve.hh"
#include "apps/mysql-proxy/metrics.hh"

namespace affine_mysql {

namespace {

// After the answer, what the client still sends is read and dropped for at
// most this long (and this much), so that closing with unread bytes does
// not reset the connection before the client has read the answer.
constexpr std::uint64_t drain_timeout_ns = 1'000'000'000;
constexpr std::size_t drain_max_bytes = 64 * 1024;

std::string answer(std::string_view status, std::string_view content_type, std::string_view body,
                   bool with_body = true, std::string_view extra_headers = "") {
  return fmt::format("HTTP/1.1 {}\r\nContent-Type: {}\r\nContent-Length: {}\r\n{}Connection: close\r\n\r\n{}",
                     status, content_type, body.size(), extra_headers, with_body ? body : "");
}

std::string error_answer(std::string_view status) {
  return answer(status, "text/plain; charset=utf-8", fmt::format("{}\n", status));
}

// RFC 9110 5.6.2: token = 1*tchar.
bool is_token(std::string_view s) {
  constexpr std::string_view specials = "!#$%&'*+-.^_`|~";
  return !s.empty() && std::ranges::all_of(s, [&](char c) {
    return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
           specials.find(c) != std::string_view::npos;
  });
}

struct request_line {
  std::string_view method, target, version;
};

// RFC 9112 3: request-line = method SP request-target SP HTTP-version.
std::optional<request_line> parse_request_line(std::string_view line) {
  const auto sp1 = line.find(' ');
  if (sp1 == std::string_view::npos) return std::nullopt;
  const auto sp2 = line.find(' ', sp1 + 1);
  if (sp2 == std::string_view::npos) return std::nullopt;
  request_line r{line.substr(0, sp1), line.substr(sp1 + 1, sp2 - sp1 - 1), line.substr(sp2 + 1)};
  const bool target_ok = !r.target.empty() && std::ranges::none_of(r.target, [](char c) {
    return c <= ' ' || c == '\x7f';
  });
  // RFC 9112 2.3: HTTP-version = "HTTP/" DIGIT "." DIGIT; this server speaks 1.x.
  const bool version_ok = r.version.size() == 8 && r.version.starts_with("HTTP/1.") && r.version[7] >= '0' &&
                          r.version[7] <= '9';
  if (!is_token(r.method) || !target_ok || !version_ok) return std::nullopt;
  return r;
}

// The head's lines after the request line are header fields, each
// "name: value" (RFC 9112 5.1: no space before the colon). Returns whether
// they are, and whether one is Host.
std::optional<bool> check_fields(std::string_view fields) {
  bool host = false;
  while (!fields.empty()) {
    const auto end = fields.find('\n');
    std::string_view line = fields.substr(0, end);
    fields = end == std::string_view::npos ? std::string_view{} : fields.substr(end + 1);
    if (line.ends_with('\r')) line.remove_suffix(1);
    const auto colon = line.find(':');
    if (colon == std::string_view::npos || !is_token(line.substr(0, colon))) return std::nullopt;
    // RFC 9110 5.1: field names are case-insensitive.
    host = host || std::ranges::equal(line.substr(0, colon), std::string_view("host"),
                                      [](char a, char b) { return (a | 0x20) == b; });
  }
  return host;
}

}  // namespace

std::string http_answer(std::string_view head, const std::function<std::string()>& metrics_body) {
  const auto line_end = head.find('\n');
  std::string_view line = head.substr(0, line_end);
  if (line.ends_with('\r')) line.remove_suffix(1);
  const auto request = parse_request_line(line);
  const auto host = check_fields(line_end == std::string_view::npos ? std::string_view{} : head.substr(line_end + 1));
  if (!request || !host) return error_answer("400 Bad Request");
  // RFC 9112 3.2: a 1.1 request without Host is answered 400.
  if (request->version == "HTTP/1.1" && !*host) return error_answer("400 Bad Request");
  const bool head_only = request->method == "HEAD";
  if (request->method != "GET" && !head_only)
    return answer("405 Method Not Allowed", "text/plain; charset=utf-8", "405 Method Not Allowed\n", true,
                  "Allow: GET, HEAD\r\n");
  const std::string_view path = request->target.substr(0, request->target.find('?'));
  if (path != "/metrics") return error_answer("404 Not Found");
  return answer("200 OK", prometheus_content_type, metrics_body(), !head_only);
}

namespace {

enum class head_result : std::uint8_t { complete, too_large, timed_out, gone };

// Reads until the blank line that ends the head, leaving the head (without
// that line) in `head`.
head_result read_head(affine::net::tcp_stream& s, std::string& head, const http_options& o) {
  const std::uint64_t deadline = affine::now_ns() + o.head_timeout_ns;
  std::array<std::byte, 4096> chunk;
  for (;;) {
    const auto end = std::min(head.find("\r\n\r\n"), head.find("\n\n"));
    if (end != std::string::npos) {
      head.resize(end);
      return head_result::complete;
    }
    if (head.size() >= o.max_head) return head_result::too_large;
    const std::size_t room = std::min(chunk.size(), o.max_head - head.size());
    auto n = s.read(std::span(chunk).first(room), deadline);
    if (!n && n.error() == std::errc::timed_out) return head_result::timed_out;
    if (!n && n.error() == std::errc::operation_canceled) return head_result::gone;  // the proxy stops
    if (!n || *n == 0) return head.empty() ? head_result::gone : head_result::complete;
    head.append(reinterpret_cast<const char*>(chunk.data()), *n);
  }
}

void serve_connection(affine::net::tcp_stream s, const std::function<std::string()>& metrics_body,
                      const http_options& o) {
  std::string head;
  std::string reply;
  switch (read_head(s, head, o)) {
    case head_result::complete: reply = http_answer(head, metrics_body); break;
    case head_result::too_large: reply = error_answer("431 Request Header Fields Too Large"); break;
    case head_result::timed_out: reply = error_answer("408 Request Timeout"); break;
    case head_result::gone: return;
  }
  const auto as_bytes = std::as_bytes(std::span(reply));
  if (!s.write(as_bytes, affine::now_ns() + o.write_timeout_ns) || !s.shutdown_write()) return;
  const std::uint64_t drain_deadline = affine::now_ns() + drain_timeout_ns;
  std::array<std::byte, 4096> sink;
  for (std::size_t drained = 0; drained < drain_max_bytes;) {
    auto n = s.read(sink, drain_deadline);
    if (!n || *n == 0) break;
    drained += *n;
  }
}

}  // namespace

void serve_http(affine::net::tcp_listener& l, std::function<std::string()> metrics_body, const http_options& o) {
  affine_apps::serve_until_stopped(
      l, "affine-mysql-proxy: metrics",
      [&](affine::net::tcp_stream s) { serve_connection(std::move(s), metrics_body, o); },
      {.max_connections = 0, .max_live = o.max_connections});
}

}  // namespace affine_mysql
