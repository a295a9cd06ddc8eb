// What holds for every policy: the same input gives the same output (on a
// 128-core machine, over many random states), every reason has its own name
// for the counters, the defaults are the documented ones, and bad knobs and
// malformed views are recognised.

#include <gtest/gtest.h>

#include <random>
#include <set>
#include <string>

#include "reactor/policy/balance.hh"
#include "reactor/policy/busy_poll.hh"
#include "reactor/policy/place.hh"
#include "reactor/policy/rps.hh"
#include "tests/policy/machine.hh"

namespace affine::policy {
namespace {

using testing::cpu;
using testing::grid;
using testing::machine;

void randomise(machine& m, std::mt19937& rng) {
  std::uniform_int_distribution<std::uint32_t> nr(0, 4), share(0, load_scale);
  for (const core_id c : m.topo.all_cores()) {
    m.run(c, nr(rng));
    m.cores[c.value].load += share(rng) / 2;
    m.cores[c.value].rx_share = share(rng);
  }
}

TEST(determinism, SameInputSameOutputOn128Cores) {
  machine m{grid(4, 8, 4)};
  std::mt19937 rng(20240611);
  std::uniform_int_distribution<std::uint32_t> any_core(0, 127), kind(0, 3), mode(0, 2), rps(0, 3);
  std::uniform_int_distribution<std::uint32_t> any_hash;
  for (int round = 0; round < 500; ++round) {
    randomise(m, rng);
    const machine copy = m;
    policy_config cfg;
    cfg.rx_wakeup_sync = (round & 1) != 0;
    cfg.wake_affine = static_cast<wake_affine_mode>(mode(rng));
    const wakeup w{.wakee_prev_core = cpu(any_core(rng)), .waker_core = cpu(any_core(rng)),
                   .kind = static_cast<waker_kind>(kind(rng)), .sync = (round & 2) != 0};
    const placement p = place_wakeup(m.view(), w, cfg);
    EXPECT_EQ(p, place_wakeup(m.view(), w, cfg));
    EXPECT_EQ(p, place_wakeup(copy.view(), w, cfg));

    const core_id rx = cpu(any_core(rng));
    const core_id consumer = cpu(any_core(rng));
    const std::uint32_t hash = any_hash(rng);
    const auto mode_of_queue = static_cast<rps_mode>(rps(rng));
    const rps_choice r = rps_target(m.view(), rx, consumer, hash, mode_of_queue, cfg);
    EXPECT_EQ(r, rps_target(copy.view(), rx, consumer, hash, mode_of_queue, cfg));

    const core_id thief = cpu(any_core(rng));
    EXPECT_EQ(steal_from(m.view(), thief, cfg), steal_from(copy.view(), thief, cfg));
  }
}

template <typename Enum>
void expect_distinct_names(std::size_t count) {
  std::set<std::string_view> names;
  for (std::size_t i = 0; i < count; ++i) {
    const std::string_view name = to_string(static_cast<Enum>(i));
    EXPECT_NE(name, "unknown") << i;
    EXPECT_TRUE(names.insert(name).second) << name;
  }
  // A value added after the last one must also be added to the count.
  EXPECT_EQ(to_string(static_cast<Enum>(count)), "unknown");
}

TEST(names, EveryReasonHasItsOwnName) {
  expect_distinct_names<wake_reason>(wake_reason_count);
  expect_distinct_names<rps_reason>(rps_reason_count);
  expect_distinct_names<poll_exit>(poll_exit_count);
  expect_distinct_names<waker_kind>(4);
  expect_distinct_names<rps_mode>(4);
  expect_distinct_names<wake_affine_mode>(3);
}

TEST(names, ModesAreSpelledAsInTheConfigFile) {
  EXPECT_EQ(to_string(wake_affine_mode::task_only), "task-only");
  EXPECT_EQ(to_string(rps_mode::idle), "idle");
  EXPECT_EQ(to_string(wake_reason::affine_sync_waker), "affine_sync_waker");
}

TEST(config, DefaultsAreTheDesigns) {
  const policy_config cfg;
  EXPECT_FALSE(cfg.rx_wakeup_sync);
  EXPECT_EQ(cfg.wake_affine, wake_affine_mode::task_only);
  EXPECT_TRUE(cfg.steal);
  EXPECT_EQ(cfg.steal_threshold(domain_level::llc), 2u);
  EXPECT_EQ(cfg.steal_threshold(domain_level::node), 3u);
  EXPECT_EQ(cfg.steal_threshold(domain_level::machine), 4u);
  EXPECT_TRUE(validate(cfg).has_value());
}

std::string validation_error(const policy_config& cfg) {
  const auto r = validate(cfg);
  return r ? std::string("ok") : r.error();
}

TEST(config, ValidateNamesTheFieldAndAllowedValues) {
  policy_config cfg;
  cfg.steal_min_imbalance = {1, 3, 4};
  EXPECT_EQ(validation_error(cfg), "steal threshold for llc is 1: allowed 2 or more");
  cfg.steal_min_imbalance = {2, 5, 4};
  EXPECT_EQ(validation_error(cfg), "steal threshold for machine is 4: allowed 5 or more (not below the inner level's)");
  cfg.steal_min_imbalance = {2, 2, 2};
  EXPECT_EQ(validation_error(cfg), "ok");
  cfg.wake_affine_allowance_pct = 101;
  EXPECT_EQ(validation_error(cfg), "wake_affine_allowance_pct is 101: allowed 0 to 100");
  cfg.wake_affine_allowance_pct = 0;
  cfg.rps_idle_max_rx_share = load_scale + 1;
  EXPECT_EQ(validation_error(cfg), "rps_idle_max_rx_share is 1025: allowed 0 to 1024");
}

TEST(view, WellFormedChecksSizesAndReactorOrder) {
  machine m{grid(1, 1, 4)};
  EXPECT_TRUE(well_formed(m.view()));
  m.reactors = {cpu(2), cpu(1)};
  EXPECT_FALSE(well_formed(m.view()));
  m.reactors = {cpu(1), cpu(4)};
  EXPECT_FALSE(well_formed(m.view()));
  m.reactors.clear();
  EXPECT_FALSE(well_formed(m.view()));
  m.reactors = {cpu(0)};
  m.cores.pop_back();
  EXPECT_FALSE(well_formed(m.view()));
}

}  // namespace
}  // namespace affine::policy
