#pragma once
// A two-reactor runtime for tests, with the leak checks of STYLE.md in
// teardown: no fiber alive, every stack back in the pool, no timer armed.

#include <gtest/gtest.h>
#include <time.h>

#include <memory>
#include <thread>

#include "affine/fiber.hh"
#include "affine/runtime.hh"
#include "affine/topology.hh"
#include "reactor/policy/config.hh"

namespace affine::test {

// CPU time of the whole process (every thread), in ms: how idle tests see
// whether reactors sleep or spin.
inline double process_cpu_ms() {
  timespec t{};
  ::clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
  return double(t.tv_sec) * 1e3 + double(t.tv_nsec) / 1e6;
}

// This machine's topology when it has two cores or more (reactors pinned);
// otherwise a synthetic two-core one with unpinned reactors, so cross-core
// behaviour is still exercised.
inline const topology& two_core_topology(bool* pinnable) {
  static const auto sys = topology::from_system();
  static const auto syn = topology::from_synthetic("pack:1 numa:1 l3:1 core:2 pu:1");
  const bool real = sys && sys->core_count() >= 2;
  *pinnable = real;
  return real ? *sys : *syn;
}

class runtime_test : public ::testing::Test {
 protected:
  void SetUp() override { start({}); }

  void start(runtime_options opts, const policy::policy_config* policy = nullptr) {
    bool pinnable = false;
    const topology& topo = two_core_topology(&pinnable);
    if (opts.cores.empty()) opts.cores = {core_id{0}, core_id{1}};
    opts.pin_threads = opts.pin_threads && pinnable;
    auto rt = runtime::start(topo, std::move(opts), policy);
    ASSERT_TRUE(rt.has_value()) << rt.error();
    rt_ = std::move(*rt);
  }

  void TearDown() override {
    if (!rt_) return;
    // Fibers that were detached may still be finishing: give them a moment.
    for (int i = 0; i < 2000 && (rt_->live_fibers() != 0 || rt_->timers_armed() != 0); ++i)
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    EXPECT_EQ(rt_->live_fibers(), 0u) << "fibers leaked";
    EXPECT_EQ(rt_->stacks_in_use(), 0u) << "stacks leaked";
    EXPECT_EQ(rt_->timers_armed(), 0u) << "timers left armed";
    rt_.reset();
  }

  // Counters are published every millisecond while a reactor is busy and
  // whenever it goes to sleep: let both reactors come to rest first.
  core_counters settled(unsigned core) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    return rt_->counters(core);
  }

  std::unique_ptr<runtime> rt_;
};

}  // namespace affine::test
