// Health checks: one check reads the greeting and closes; the checker marks
// a backend down after `fall` failures and up again after `rise` successes.

#include <gtest/gtest.h>

#include <array>
#include <atomic>
#include <chrono>
#include <memory>
#include <optional>

#include <fmt/format.h>

#include "apps/mysql-proxy/health.hh"
#include "tests/apps/mysql_proxy/bytes.hh"
#include "tests/apps/mysql_proxy/harness.hh"

namespace affine_mysql_test {
namespace {

using namespace affine;
using namespace affine_mysql;

constexpr std::uint64_t check_timeout_ns = 1'000'000'000;

TEST(mysql_health, CheckReadsTheGreetingAndCloses) {
  in_runtime([] {
    fake_backend backend;
    auto server_side = spawn([&] {
      peer server = backend.accept();
      server.send(0, from_hex(mariadb_session[0].hex));
      EXPECT_TRUE(server.closed_within(check_timeout_ns));
    }).value();
    EXPECT_TRUE(check_backend(backend.address(), check_timeout_ns));
    server_side.join();
  });
}

TEST(mysql_health, CheckSaysWhyABackendIsNotServing) {
  in_runtime([] {
    EXPECT_EQ(check_backend(refusing_address(), check_timeout_ns).error(), "connect: Connection refused");
    fake_backend backend;
    auto server_side = spawn([&] {
      peer blocked = backend.accept();
      blocked.send(0, from_hex("ff6904486f737420626c6f636b6564"));
      peer silent = backend.accept();
      peer garbage = backend.accept();
      garbage.send(0, from_hex("0a352e35"));
      EXPECT_TRUE(silent.closed_within(check_timeout_ns));
    }).value();
    EXPECT_EQ(check_backend(backend.address(), check_timeout_ns).error(), "greeting: ERR 1129 Host blocked");
    EXPECT_EQ(check_backend(backend.address(), 50'000'000).error(), "greeting: timed out");
    EXPECT_EQ(check_backend(backend.address(), check_timeout_ns).error(), "greeting: truncated handshake packet");
    server_side.join();
  });
}

// Greets every connection to `at` until stopped.
class greeter {
 public:
  explicit greeter(net::endpoint at) {
    auto l = net::listen({.local = at});
    EXPECT_TRUE(l) << l.error().message();
    if (l) listener_.emplace(std::move(*l));
    fiber_ = spawn([this] {
      while (!stop_.load()) {
        auto s = listener_->accept(now_ns() + 10'000'000);
        if (s) peer(std::move(*s)).send(0, from_hex(mariadb_session[0].hex));
      }
    }).value();
  }
  ~greeter() {
    stop_.store(true);
    fiber_.join();
    listener_->close();
  }
  net::endpoint address() const { return listener_->local(); }

 private:
  std::optional<net::tcp_listener> listener_;
  std::atomic<bool> stop_{false};
  fiber_handle fiber_;
};

bool becomes(const backend& b, bool healthy) {
  const std::uint64_t deadline = now_ns() + 2'000'000'000;
  while (b.healthy() != healthy && now_ns() < deadline) this_fiber::sleep_for(std::chrono::milliseconds(5));
  return b.healthy() == healthy;
}

TEST(mysql_health, BackendGoesDownAfterFallFailuresAndComesBack) {
  in_runtime([] {
    auto up = std::make_unique<greeter>(net::endpoint{net::loopback, 0});
    const net::endpoint address = up->address();
    const std::array configs{backend_config{.address = address}};
    backend_set set(configs);
    set.mark(0, false);
    std::stop_source stop;
    const health_options o{.interval_ns = 20'000'000, .timeout_ns = 200'000'000, .fall = 2, .rise = 1};
    auto checker = spawn([&] { run_health_checks(set, o); }, {.stop = stop.get_token()}).value();
    EXPECT_TRUE(becomes(set.at(0), true));
    up.reset();  // connections are refused from now on
    EXPECT_TRUE(becomes(set.at(0), false));
    EXPECT_EQ(set.at(0).down_epoch(), 2u);  // marked down at the start, and now
    up = std::make_unique<greeter>(address);
    EXPECT_TRUE(becomes(set.at(0), true));
    stop.request_stop();
    checker.join();
  });
}

}  // namespace
}  // namespace affine_mysql_test
