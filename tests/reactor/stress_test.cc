// Stress: many fibers ping-ponging across both cores for a while (20,000
// fibers for 10 s by default; AFFINE_STRESS_FIBERS / AFFINE_STRESS_SECONDS
// shrink it for the sanitizer builds). Every message is accounted for, the
// per-core counters agree with each other, and nothing leaks.

#include <atomic>
#include <cstdlib>
#include <memory>
#include <vector>

#include "affine/sync.hh"
#include "tests/reactor/runtime_fixture.hh"

namespace affine::test {
namespace {

unsigned env_or(const char* name, unsigned fallback) {
  const char* v = std::getenv(name);
  return v != nullptr ? unsigned(std::strtoul(v, nullptr, 10)) : fallback;
}

struct pair_state {
  semaphore ping{0};
  semaphore pong{0};
  std::uint64_t round_trips = 0;  // written by the pinger only
  std::uint64_t answered = 0;     // written by the ponger only
  bool stop = false;              // set by the pinger before its last ping
};

using reactor_stress = runtime_test;

TEST_F(reactor_stress, TwentyThousandFibersPingPongAcrossBothCores) {
  const unsigned fibers = env_or("AFFINE_STRESS_FIBERS", 20000);
  const unsigned seconds = env_or("AFFINE_STRESS_SECONDS", 10);
  const unsigned pairs = fibers / 2;
  std::vector<std::unique_ptr<pair_state>> state;
  for (unsigned i = 0; i < pairs; ++i) state.push_back(std::make_unique<pair_state>());

  const auto before0 = rt_->counters(0), before1 = rt_->counters(1);
  rt_->run([&] {
    const std::uint64_t end = now_ns() + std::uint64_t(seconds) * 1'000'000'000ULL;
    std::vector<fiber_handle> hs;
    hs.reserve(fibers);
    for (unsigned i = 0; i < pairs; ++i) {
      pair_state* p = state[i].get();
      // Every fourth pair is pinned apart; the rest the scheduler may move.
      const bool pinned = i % 4 == 0;
      hs.push_back(spawn([p, end] {
        while (!p->stop) {
          p->stop = now_ns() >= end;
          p->ping.release();
          p->pong.acquire();
          ++p->round_trips;
        }
      }, {.core = 0, .pinned = pinned}).value());
      hs.push_back(spawn([p] {
        for (;;) {
          p->ping.acquire();
          ++p->answered;
          const bool last = p->stop;
          p->pong.release();
          if (last) return;
        }
      }, {.core = 1, .pinned = pinned}).value());
    }
    for (auto& h : hs) h.join();
  });

  std::uint64_t trips = 0;
  for (auto& p : state) {
    EXPECT_EQ(p->round_trips, p->answered);
    EXPECT_GE(p->round_trips, 1u);
    trips += p->round_trips;
  }
  const auto c0 = settled(0), c1 = settled(1);
  const auto spawned = (c0.fibers_spawned + c1.fibers_spawned) - (before0.fibers_spawned + before1.fibers_spawned);
  const auto finished = (c0.fibers_finished + c1.fibers_finished) - (before0.fibers_finished + before1.fibers_finished);
  EXPECT_EQ(spawned, fibers + 1u);  // plus the main fiber
  EXPECT_EQ(finished, spawned);
  // Every round trip is at least two wakeups; each run of a fiber is one switch back.
  EXPECT_GE(c0.wakeups_local + c0.wakeups_remote + c1.wakeups_local + c1.wakeups_remote, 2 * trips - 2 * pairs);
  EXPECT_EQ(c0.fibers_run, c0.switches);
  EXPECT_EQ(c1.fibers_run, c1.switches);
  RecordProperty("round_trips", std::to_string(trips));
}

}  // namespace
}  // namespace affine::test
