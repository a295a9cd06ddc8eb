// Idle reactors sleep (DESIGN.md section 2) and a remote wakeup gets a
// sleeping reactor going again.

#include <atomic>
#include <thread>

#include "affine/sync.hh"
#include "tests/reactor/runtime_fixture.hh"

namespace affine::test {
namespace {

using reactor_idle = runtime_test;

TEST_F(reactor_idle, IdleReactorsGoToSleep) {
  rt_->run([] {});
  EXPECT_GE(settled(0).sleeps, 1u);
  EXPECT_GE(settled(1).sleeps, 1u);
  // Two spinning reactors would burn 400 ms of CPU in 200 ms; sleeping ones
  // next to nothing. The bound is loose on purpose: this checks the
  // behaviour, bench/run reactor measures the figure.
  const double before = process_cpu_ms();
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  EXPECT_LT(process_cpu_ms() - before, 40.0);
}

TEST_F(reactor_idle, RemoteWakeupReachesASleepingReactor) {
  rt_->run([] {
    event go;
    auto h = spawn([&] { go.wait(); }, {.core = 1, .pinned = true}).value();
    this_fiber::sleep_for(std::chrono::milliseconds(20));  // core 1 is asleep by now
    go.set();
    h.join();
  });
  EXPECT_GE(settled(0).kicks_sent + settled(1).kicks_sent, 1u);
}

TEST_F(reactor_idle, TimerWakesASleepingReactor) {
  rt_->run([] {
    auto h = spawn([] {
      const std::uint64_t t0 = now_ns();
      this_fiber::sleep_for(std::chrono::milliseconds(30));
      EXPECT_GE(now_ns() - t0, 30'000'000u);
    }, {.core = 1, .pinned = true}).value();
    h.join();
  });
}

}  // namespace
}  // namespace affine::test
