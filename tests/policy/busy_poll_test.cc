// busy_poll_continue() reproducing seed 001: two netperf sessions on one CPU,
// where a poller that spins while the other is runnable halves both.

#include <gtest/gtest.h>

#include "reactor/policy/busy_poll.hh"

namespace affine::policy {
namespace {

constexpr std::uint64_t budget = 50'000;

policy_config config(std::uint64_t budget_ns, bool yield) {
  policy_config cfg;
  cfg.busy_poll_budget_ns = budget_ns;
  cfg.yield_when_runnable = yield;
  return cfg;
}

void expect_exit(const poll_decision& d, poll_exit reason) {
  EXPECT_FALSE(d.keep_polling);
  EXPECT_EQ(d.reason, reason) << to_string(d.reason);
}

TEST(busy_poll, Seed001_AlonePollerKeepsPollingUntilBudget) {
  const policy_config cfg = config(budget, true);
  const poll_decision d = busy_poll_continue({.elapsed_ns = budget - 1}, cfg);
  EXPECT_TRUE(d.keep_polling);
  EXPECT_EQ(d.reason, poll_exit::polling);
  expect_exit(busy_poll_continue({.elapsed_ns = budget}, cfg), poll_exit::budget);
}

TEST(busy_poll, Seed001_ExitsAtOnceWhenAnotherFiberIsRunnable) {
  expect_exit(busy_poll_continue({.elapsed_ns = 0, .others_runnable = 1}, config(budget, true)), poll_exit::runnable);
}

TEST(busy_poll, Seed001_WithoutYieldKeepsPollingPastRunnableUntilBudget) {
  const policy_config cfg = config(budget, false);
  EXPECT_TRUE(busy_poll_continue({.elapsed_ns = budget - 1, .others_runnable = 3}, cfg).keep_polling);
  expect_exit(busy_poll_continue({.elapsed_ns = budget, .others_runnable = 3}, cfg), poll_exit::budget);
}

TEST(busy_poll, Seed001_ZeroBudgetMeansOff) {
  expect_exit(busy_poll_continue({.data_ready = true}, config(0, true)), poll_exit::off);
}

TEST(busy_poll, Seed001_DataEndsThePollBeforeAnythingElse) {
  expect_exit(busy_poll_continue({.elapsed_ns = budget, .others_runnable = 1, .data_ready = true, .need_resched = true},
                                 config(budget, true)),
              poll_exit::data);
}

TEST(busy_poll, Seed001_ReschedEndsThePoll) {
  expect_exit(busy_poll_continue({.elapsed_ns = 1, .need_resched = true}, config(budget, true)), poll_exit::resched);
}

TEST(busy_poll, Seed001_DefaultsAreTheDesignsBudgetWithYield) {
  const policy_config cfg;
  EXPECT_EQ(cfg.busy_poll_budget_ns, 50'000u);
  EXPECT_TRUE(cfg.yield_when_runnable);
}

}  // namespace
}  // namespace affine::policy
