// affine::run, the one-call entry point: configuration in, exit code out.

#include <gtest/gtest.h>

#include <atomic>
#include <vector>

#include "affine/affine.hh"

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

}  // namespace
}  // namespace affine
