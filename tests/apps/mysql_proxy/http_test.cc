// The metrics endpoint's HTTP server: the answer to each kind of request
// head, then the server on loopback kernel sockets, asked by a client on
// affine's socket API and by curl, and held up by clients that send too
// much, too slowly, or too many at once.

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <thread>

#include <fmt/format.h>

#include "affine/fiber.hh"
#include "affine/net.hh"
#include "apps/common/serve.hh"
#include "apps/mysql-proxy/http.hh"
#include "tests/apps/mysql_proxy/harness.hh"

namespace affine_mysql {
namespace {

using namespace affine;
using namespace std::literals;
using affine_mysql_test::in_runtime;

constexpr std::uint64_t client_timeout_ns = 5'000'000'000;
const std::string body_text = "affine_test_total 1\n";
const std::function<std::string()> body = [] { return body_text; };

const std::string ok_answer =
    "HTTP/1.1 200 OK\r\n"
    "Content-Type: text/plain; version=0.0.4; charset=utf-8\r\n"
    "Content-Length: 20\r\n"
    "Connection: close\r\n"
    "\r\n"
    "affine_test_total 1\n";

std::string status_line(const std::string& answer) { return answer.substr(0, answer.find("\r\n")); }

TEST(mysql_http, GetMetricsAnswersTheBodyWithItsLength) {
  EXPECT_EQ(http_answer("GET /metrics HTTP/1.1\r\nHost: proxy:9104\r\nAccept: */*", body), ok_answer);
  EXPECT_EQ(status_line(http_answer("GET /metrics?name[]=x HTTP/1.1\r\nhost: p", body)), "HTTP/1.1 200 OK");
  // RFC 9112 2.2: a bare LF ends a line as well.
  EXPECT_EQ(http_answer("GET /metrics HTTP/1.1\nHost: p", body), ok_answer);
  // HTTP/1.0 needs no Host.
  EXPECT_EQ(http_answer("GET /metrics HTTP/1.0", body), ok_answer);
}

TEST(mysql_http, HeadAnswersTheHeadersOnly) {
  EXPECT_EQ(http_answer("HEAD /metrics HTTP/1.1\r\nHost: p", body), ok_answer.substr(0, ok_answer.find("\r\n\r\n") + 4));
}

TEST(mysql_http, OtherPathsAreNotFound) {
  EXPECT_EQ(http_answer("GET / HTTP/1.1\r\nHost: p", body),
            "HTTP/1.1 404 Not Found\r\n"
            "Content-Type: text/plain; charset=utf-8\r\n"
            "Content-Length: 14\r\n"
            "Connection: close\r\n"
            "\r\n"
            "404 Not Found\n");
  EXPECT_EQ(status_line(http_answer("GET /metricsx HTTP/1.1\r\nHost: p", body)), "HTTP/1.1 404 Not Found");
}

TEST(mysql_http, OtherMethodsAreNotAllowed) {
  EXPECT_EQ(http_answer("POST /metrics HTTP/1.1\r\nHost: p\r\nContent-Length: 3", body),
            "HTTP/1.1 405 Method Not Allowed\r\n"
            "Content-Type: text/plain; charset=utf-8\r\n"
            "Content-Length: 23\r\n"
            "Allow: GET, HEAD\r\n"
            "Connection: close\r\n"
            "\r\n"
            "405 Method Not Allowed\n");
}

TEST(mysql_http, MalformedHeadsAreBadRequests) {
  const std::string_view heads[] = {
      "",
      "garbage",
      "GET /metrics",
      "GET /metrics HTTP/2.0\r\nHost: p",
      "GET /metrics HTTP/1.1x\r\nHost: p",
      "GET  /metrics HTTP/1.1\r\nHost: p",
      "G(T /metrics HTTP/1.1\r\nHost: p",
      "GET /metrics HTTP/1.1",                       // 1.1 without Host
      "GET /metrics HTTP/1.1\r\nHost: p\r\nno colon",  // a field without a name
      "GET /metrics HTTP/1.1\r\nHost : p",           // RFC 9112 5.1: no space before the colon
      "GET /metrics HTTP/1.1\r\nHost: p\r\n folded",  // obsolete line folding
      "GET /metrics\0 HTTP/1.1\r\nHost: p"sv,
  };
  for (std::string_view head : heads)
    EXPECT_EQ(status_line(http_answer(head, body)), "HTTP/1.1 400 Bad Request") << head;
}

// serve_http on a loopback port until the end of the scope.
class endpoint_under_test {
 public:
  explicit endpoint_under_test(http_options o = {}) {
    auto l = net::listen({.local = {net::loopback, 0}});
    EXPECT_TRUE(l) << l.error().message();
    if (!l) return;
    listener_.emplace(std::move(*l));
    address_ = listener_->local();
    server_ = spawn(
                  [this, o] {
                    serve_http(*listener_, body, o);
                    done_.store(true);
                  },
                  {.stop = stop_.get_token()})
                  .value();
  }
  ~endpoint_under_test() {
    stop_.request_stop();
    if (server_.joinable()) server_.join();
  }

  net::endpoint address() const { return address_; }
  // Stops the server; returns how long serve_http took to return.
  std::uint64_t stop_ns() {
    const std::uint64_t start = now_ns();
    stop_.request_stop();
    server_.join();
    EXPECT_TRUE(done_.load());
    return now_ns() - start;
  }

 private:
  std::optional<net::tcp_listener> listener_;
  net::endpoint address_{};
  std::stop_source stop_;  // the server's token: a stop request ends it
  std::atomic<bool> done_{false};
  fiber_handle server_;
};

std::optional<net::tcp_stream> connect_to(net::endpoint to) {
  auto s = net::connect(to, now_ns() + client_timeout_ns);
  EXPECT_TRUE(s) << s.error().message();
  return s ? std::optional(std::move(*s)) : std::nullopt;
}

void send(net::tcp_stream& s, std::string_view text) {
  auto w = s.write(std::as_bytes(std::span(text)), now_ns() + client_timeout_ns);
  EXPECT_TRUE(w) << w.error().message();
}

// Everything the server sends until it closes; "" if it did not close in time.
std::string read_to_end(net::tcp_stream& s) {
  const std::uint64_t deadline = now_ns() + client_timeout_ns;
  std::string got;
  std::array<std::byte, 4096> chunk;
  for (;;) {
    auto n = s.read(chunk, deadline);
    if (!n) {
      ADD_FAILURE() << "read: " << n.error().message() << " after " << got.size() << " bytes";
      return "";
    }
    if (*n == 0) return got;
    got.append(reinterpret_cast<const char*>(chunk.data()), *n);
  }
}

std::string exchange(net::endpoint to, std::string_view request) {
  auto s = connect_to(to);
  if (!s) return "";
  send(*s, request);
  return read_to_end(*s);
}

TEST(mysql_http, ServesMetricsAndClosesTheConnection) {
  in_runtime([] {
    endpoint_under_test server;
    EXPECT_EQ(exchange(server.address(), "GET /metrics HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"), ok_answer);
    EXPECT_EQ(status_line(exchange(server.address(), "GET /nothing HTTP/1.1\r\nHost: p\r\n\r\n")),
              "HTTP/1.1 404 Not Found");
    EXPECT_EQ(status_line(exchange(server.address(), "DELETE /metrics HTTP/1.1\r\nHost: p\r\n\r\n")),
              "HTTP/1.1 405 Method Not Allowed");
    EXPECT_EQ(status_line(exchange(server.address(), "\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03\r\n\r\n"sv)),
              "HTTP/1.1 400 Bad Request");
  });
}

TEST(mysql_http, ABodyAndPipelinedRequestsAfterTheHeadAreDropped) {
  in_runtime([] {
    endpoint_under_test server;
    const std::string request = "POST /metrics HTTP/1.1\r\nHost: p\r\nContent-Length: 20000\r\n\r\n" +
                                std::string(20000, 'x') + "GET /metrics HTTP/1.1\r\nHost: p\r\n\r\n";
    EXPECT_EQ(status_line(exchange(server.address(), request)), "HTTP/1.1 405 Method Not Allowed");
  });
}

TEST(mysql_http, CurlGetsTheMetrics) {
  if (std::system("command -v curl >/dev/null 2>&1") != 0) GTEST_SKIP() << "no curl";
  in_runtime([] {
    endpoint_under_test server;
    // curl blocks: it runs on a thread of its own while this fiber waits.
    const std::string command =
        fmt::format("curl -sS --max-time 5 -D - http://{}/metrics 2>&1", server.address().to_string());
    std::string got;
    std::atomic<bool> finished{false};
    std::thread curl([&] {
      if (FILE* p = popen(command.c_str(), "r")) {
        char buf[4096];
        while (std::size_t n = std::fread(buf, 1, sizeof buf, p)) got.append(buf, n);
        pclose(p);
      }
      finished.store(true);
    });
    while (!finished.load()) this_fiber::sleep_for(std::chrono::milliseconds(5));
    curl.join();
    EXPECT_EQ(got, ok_answer);
  });
}

TEST(mysql_http, AnOversizeHeadIsRefused) {
  in_runtime([] {
    endpoint_under_test server(http_options{.max_head = 1024});
    const std::string head = "GET /metrics HTTP/1.1\r\nHost: p\r\nX-Long: " + std::string(4000, 'a') + "\r\n\r\n";
    EXPECT_EQ(status_line(exchange(server.address(), head)), "HTTP/1.1 431 Request Header Fields Too Large");
    // A head of exactly the limit, blank line included, is whole.
    const std::string fits = "GET /metrics HTTP/1.1\r\nHost: p\r\nX-Pad: ";
    EXPECT_EQ(exchange(server.address(), fits + std::string(1024 - fits.size() - 4, 'a') + "\r\n\r\n"), ok_answer);
  });
}

TEST(mysql_http, ASlowHeadTimesOutWhileOthersAreServed) {
  in_runtime([] {
    endpoint_under_test server(http_options{.head_timeout_ns = 500'000'000});
    auto slow = connect_to(server.address());
    ASSERT_TRUE(slow);
    const std::uint64_t start = now_ns();
    send(*slow, "GET /metrics HTTP/1.1\r\n");
    // A byte every 100 ms: each read is quick, the head never ends. The
    // timeout runs from accept, so the answer comes all the same.
    std::string got;
    std::array<std::byte, 256> chunk;
    for (int i = 0; got.empty() && now_ns() < start + client_timeout_ns; ++i) {
      send(*slow, "X");
      if (i < 3) {
        EXPECT_EQ(exchange(server.address(), "GET /metrics HTTP/1.1\r\nHost: p\r\n\r\n"), ok_answer);
      }
      auto n = slow->read(chunk, now_ns() + 100'000'000);
      if (n && *n > 0) got.assign(reinterpret_cast<const char*>(chunk.data()), *n);
    }
    const std::uint64_t took = now_ns() - start;
    got += read_to_end(*slow);
    EXPECT_EQ(status_line(got), "HTTP/1.1 408 Request Timeout");
    EXPECT_GE(took, 400'000'000u);  // the server's clock started at accept, a little before this one
  });
}

TEST(mysql_http, ConnectionsOverTheLimitAreResetUnanswered) {
  in_runtime([] {
    endpoint_under_test server(http_options{.head_timeout_ns = 60'000'000'000, .max_connections = 1});
    // Accepted in the order they connected: the first holds the only place.
    auto holder = connect_to(server.address());
    ASSERT_TRUE(holder);
    // The server resets the second unanswered. The reset may reach the
    // client before its connect has reported success (the handshake is
    // done in the kernel, the completion is read later), as it may for a
    // blocking connect(2): then connect itself says so.
    std::array<std::byte, 64> buf;
    if (auto refused = net::connect(server.address(), now_ns() + client_timeout_ns); refused) {
      auto n = refused->read(buf, now_ns() + client_timeout_ns);
      EXPECT_TRUE(!n ? n.error() == std::errc::connection_reset : *n == 0);
    } else {
      EXPECT_EQ(refused.error(), std::errc::connection_reset) << refused.error().message();
    }
    // Once the holder's fiber has seen it go, the place is free again.
    holder->close();
    std::string got;
    for (const std::uint64_t give_up = now_ns() + client_timeout_ns; got.empty() && now_ns() < give_up;) {
      auto s = net::connect(server.address(), give_up);
      if (!s && s.error() != std::errc::connection_reset) {
        ADD_FAILURE() << "connect: " << s.error().message();
        break;
      }
      const std::string_view get = "GET /metrics HTTP/1.1\r\nHost: p\r\n\r\n";
      if (!s || !s->write(std::as_bytes(std::span(get)), give_up)) {
        // Reset: the server has not seen the holder go yet. Try again.
        this_fiber::sleep_for(std::chrono::milliseconds(1));
        continue;
      }
      for (;;) {
        auto r = s->read(buf, give_up);
        if (!r || *r == 0) break;
        got.append(reinterpret_cast<const char*>(buf.data()), *r);
      }
    }
    EXPECT_EQ(got, ok_answer);
  });
}

TEST(mysql_http, StopEndsTheServerWithAnIdleConnectionOpen) {
  in_runtime([] {
    endpoint_under_test server(http_options{.head_timeout_ns = 60'000'000'000});
    auto idle = connect_to(server.address());
    ASSERT_TRUE(idle);
    this_fiber::sleep_for(std::chrono::milliseconds(50));
    // At once (the idle read is cancelled), not at the head's timeout: a
    // bound loose enough for a loaded machine.
    EXPECT_LT(server.stop_ns(), 5'000'000'000u);
    EXPECT_EQ(read_to_end(*idle), "");  // closed unanswered
    EXPECT_FALSE(net::connect(server.address(), now_ns() + client_timeout_ns));
  });
}

}  // namespace
}  // namespace affine_mysql
