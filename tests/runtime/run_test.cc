// affine::run, the one-call entry point: configuration in, exit code out.

#include <gtest/gtest.h>

#include <array>
#include <atomic>
#include <cstdio>
#include <vector>

#include "affine/affine.hh"
#include "affine/net.hh"

namespace affine {
namespace {

int run_with(std::vector<const char*> argv, main_fn fn) {
  argv.insert(argv.begin(), "run_test");
  return run(int(argv.size()), argv.data(), std::move(fn));
}

TEST(affine_run, RunsTheMainFiberOnTheConfiguredCoresAndReturnsItsCode) {
  std::atomic<unsigned> cores_seen{0};
  const int code = run_with({"--set", "reactor.cores=2", "--set", "stats.interval_ms=5", "extra"},
                            [&](std::span<const std::string> args) {
                              EXPECT_EQ(args.size(), 1u);
                              EXPECT_EQ(args[0], "extra");
                              for (unsigned c = 0; c < 2; ++c)
                                cores_seen |= 1u << submit_to(c, [] { return this_fiber::core(); });
                              this_fiber::sleep_for(std::chrono::milliseconds(12));  // two stats lines
                              return 7;
                            });
  EXPECT_EQ(code, 7);
  EXPECT_EQ(cores_seen.load(), 3u);
}

TEST(affine_run, BadConfigurationIsExitCodeTwoAndTheFiberNeverRuns) {
  bool ran = false;
  testing::internal::CaptureStderr();
  const int code = run_with({"--set", "sched.wake_afine=always"}, [&](auto) {
    ran = true;
    return 0;
  });
  const std::string err = testing::internal::GetCapturedStderr();
  EXPECT_EQ(code, 2);
  EXPECT_FALSE(ran);
  EXPECT_NE(err.find("did you mean \"sched.wake_affine\"?"), std::string::npos) << err;
}

TEST(affine_run, CoresBeyondTheMachineAreRefused) {
  testing::internal::CaptureStderr();
  const int code = run_with({"--set", "reactor.cores=0-4095"}, [](auto) { return 0; });
  const std::string err = testing::internal::GetCapturedStderr();
  EXPECT_EQ(code, 2);
  EXPECT_NE(err.find("reactor.cores"), std::string::npos) << err;
}

TEST(affine_run, AThrowingMainFiberIsExitCodeOne) {
  testing::internal::CaptureStderr();
  const int code = run_with({"--set", "reactor.cores=1"}, [](auto) -> int { throw std::runtime_error("boom"); });
  const std::string err = testing::internal::GetCapturedStderr();
  EXPECT_EQ(code, 1);
  EXPECT_NE(err.find("boom"), std::string::npos) << err;
}

// With no [[port]] the socket API runs on kernel sockets (uring): a
// listener and a client in the same program talk over loopback.
TEST(affine_run, SocketApiWorksOnKernelSocketsByDefault) {
  const int code = run_with({"--set", "reactor.cores=2"}, [](auto) {
    auto l = net::listen({.local = {net::loopback, 0}});
    if (!l) return 10;
    const net::endpoint at = l->local();
    auto server = spawn([&] {
      auto c = l->accept(now_ns() + 5'000'000'000ULL);
      if (!c) return;
      std::array<std::byte, 5> buf{};
      if (c->read_exactly(buf)) (void)c->write(buf);
    }).value();
    auto c = net::connect(at, now_ns() + 5'000'000'000ULL);
    if (!c) return 11;
    const std::array<std::byte, 5> hello{std::byte{'h'}, std::byte{'e'}, std::byte{'l'}, std::byte{'l'},
                                         std::byte{'o'}};
    if (!c->write(hello)) return 12;
    std::array<std::byte, 5> back{};
    if (!c->read_exactly(back, now_ns() + 5'000'000'000ULL)) return 13;
    server.join();
    return back == hello ? 0 : 14;
  });
  EXPECT_EQ(code, 0);
}

// The socket calls take std::chrono deadlines (include/affine/time.hh): a
// read with nothing to read and an accept with nobody connecting give up
// with timed_out after the duration, not before; a time point works too.
TEST(affine_run, SocketCallsTakeChronoDeadlines) {
  using namespace std::chrono_literals;
  const int code = run_with({"--set", "reactor.cores=1"}, [](auto) {
    auto l = net::listen({.local = {net::loopback, 0}});
    if (!l) return 10;
    std::uint64_t t0 = now_ns();
    auto none = l->accept(20ms);
    if (none || none.error() != std::errc::timed_out || now_ns() - t0 < 20'000'000) return 11;
    auto c = net::connect(l->local(), 5s);
    if (!c) return 12;
    auto s = l->accept(clock::now() + 5s);
    if (!s) return 13;
    std::array<std::byte, 8> buf{};
    t0 = now_ns();
    auto n = s->read(buf, 20ms);
    if (n || n.error() != std::errc::timed_out || now_ns() - t0 < 20'000'000) return 14;
    if (!c->write(std::span(buf).first(3), 5s)) return 15;
    n = s->read(buf, clock::now() + 5s);
    return n && *n == 3 ? 0 : 16;
  });
  EXPECT_EQ(code, 0);
}

}  // namespace
}  // namespace affine
