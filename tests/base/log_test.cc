// Logging: levels, the core prefix, the sink, and per-site rate limiting.

#include "affine/log.hh"

#include <atomic>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

namespace affine::log {
namespace {

std::atomic<std::uint64_t> fake_now_ns{0};
std::uint64_t fake_clock() noexcept { return fake_now_ns.load(); }

constexpr std::uint64_t second = 1'000'000'000;

class log_test : public ::testing::Test {
 protected:
  void SetUp() override {
    set_sink([this](level, std::string_view line) { lines.emplace_back(line); });
    set_clock(&fake_clock);
    // Every rate-limit window of an earlier test is over.
    fake_now_ns += 100 * second;
  }
  void TearDown() override {
    set_sink(nullptr);
    set_clock(nullptr);
    set_level(level::info);
    set_ratelimit_per_s(10);
    set_thread_core(-1);
  }

  std::vector<std::string> lines;
};

TEST_F(log_test, line_has_reactor_tag_level_and_message) {
  set_thread_core(3);
  AFFINE_LOG_INFO("port {} up, {} queues", 0, 4);
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_EQ(lines[0], "[c3] info: port 0 up, 4 queues");
}

TEST_F(log_test, thread_off_the_reactors_is_tagged_dashes) {
  AFFINE_LOG_ERROR("no reactor here");
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_EQ(lines[0], "[--] error: no reactor here");
}

TEST_F(log_test, core_tag_belongs_to_the_calling_thread) {
  set_thread_core(1);
  std::thread other([] {
    set_thread_core(5);
    AFFINE_LOG_WARN("from the other reactor");
  });
  other.join();
  AFFINE_LOG_WARN("from this reactor");
  ASSERT_EQ(lines.size(), 2u);
  EXPECT_EQ(lines[0], "[c5] warn: from the other reactor");
  EXPECT_EQ(lines[1], "[c1] warn: from this reactor");
  EXPECT_EQ(thread_core(), 1);
}

TEST_F(log_test, levels_below_the_set_level_are_dropped) {
  set_level(level::warn);
  AFFINE_LOG_TRACE("t");
  AFFINE_LOG_DEBUG("d");
  AFFINE_LOG_INFO("i");
  AFFINE_LOG_WARN("w");
  AFFINE_LOG_ERROR("e");
  EXPECT_EQ(lines, (std::vector<std::string>{"[--] warn: w", "[--] error: e"}));

  set_level(level::trace);
  AFFINE_LOG_TRACE("t");
  EXPECT_EQ(lines.back(), "[--] trace: t");
}

TEST_F(log_test, disabled_level_does_not_evaluate_its_arguments) {
  int evaluated = 0;
  auto count = [&] { return ++evaluated; };
  AFFINE_LOG_DEBUG("{}", count());
  EXPECT_EQ(evaluated, 0);
  AFFINE_LOG_INFO("{}", count());
  EXPECT_EQ(evaluated, 1);
}

TEST_F(log_test, level_names_round_trip) {
  for (const level l : {level::trace, level::debug, level::info, level::warn, level::error}) {
    EXPECT_EQ(parse_level(level_name(l)), l);
  }
  EXPECT_EQ(level_name(level::warn), "warn");
  EXPECT_EQ(parse_level("warning"), std::nullopt);
  set_level(level::debug);
  EXPECT_EQ(current_level(), level::debug);
}

TEST_F(log_test, ratelimited_site_prints_ten_a_second_then_reports_the_rest) {
  int formatted = 0;
  auto count = [&] { return ++formatted; };
  auto emit = [&] { AFFINE_LOG_RATELIMITED(warn, "bad checksum {}", count()); };  // one call site
  for (int i = 0; i < 15; ++i) emit();
  ASSERT_EQ(lines.size(), 10u);
  EXPECT_EQ(lines[9], "[--] warn: bad checksum 10");
  EXPECT_EQ(formatted, 10) << "held-back lines are not formatted";

  fake_now_ns += second;
  for (int i = 0; i < 2; ++i) emit();
  ASSERT_EQ(lines.size(), 12u);
  EXPECT_EQ(lines[10], "[--] warn: bad checksum 11 (5 similar suppressed)");
  EXPECT_EQ(lines[11], "[--] warn: bad checksum 12");
}

TEST_F(log_test, ratelimit_loses_no_count_across_threads) {
  constexpr int threads = 4;
  constexpr int calls = 1000;
  auto emit = [] { AFFINE_LOG_RATELIMITED(warn, "drop"); };  // one call site for every thread
  emit();  // opens the window; a window change races (see admit), and this test is not about that
  std::vector<std::thread> workers;
  for (int t = 0; t < threads; ++t) {
    workers.emplace_back([&] {
      for (int i = 0; i < calls; ++i) emit();
    });
  }
  for (std::thread& w : workers) w.join();
  EXPECT_EQ(lines.size(), 10u) << "the clock stood still: one window";
  fake_now_ns += second;
  emit();

  // Every held-back line is reported by a later printed one, exactly once.
  long reported = 0;
  for (const std::string& line : lines) {
    if (const auto open = line.find(" ("); open != std::string::npos) reported += std::stol(line.substr(open + 2));
  }
  EXPECT_EQ(reported, 1 + threads * calls - 10);
}

TEST_F(log_test, ratelimit_window_is_one_second) {
  set_ratelimit_per_s(1);
  auto emit = [] { AFFINE_LOG_RATELIMITED(warn, "drop"); };
  emit();
  fake_now_ns += second - 1;
  emit();
  EXPECT_EQ(lines.size(), 1u);
  fake_now_ns += 1;
  emit();
  ASSERT_EQ(lines.size(), 2u);
  EXPECT_EQ(lines[1], "[--] warn: drop (1 similar suppressed)");
}

TEST_F(log_test, ratelimit_is_configurable_and_per_call_site) {
  set_ratelimit_per_s(2);
  for (int i = 0; i < 5; ++i) {
    AFFINE_LOG_RATELIMITED(warn, "site a");
    AFFINE_LOG_RATELIMITED(error, "site b");
  }
  EXPECT_EQ(lines, (std::vector<std::string>{"[--] warn: site a", "[--] error: site b", "[--] warn: site a",
                                             "[--] error: site b"}));
}

TEST_F(log_test, ratelimited_line_below_the_level_is_neither_printed_nor_counted) {
  set_level(level::error);
  auto emit = [] { AFFINE_LOG_RATELIMITED(warn, "quiet"); };
  for (int i = 0; i < 20; ++i) emit();
  EXPECT_TRUE(lines.empty());
  set_level(level::info);
  emit();
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_EQ(lines[0], "[--] warn: quiet");
}

TEST_F(log_test, sink_setter_returns_the_previous_sink_and_empty_restores_stderr) {
  sink previous = set_sink(nullptr);
  ASSERT_TRUE(previous);
  ::testing::internal::CaptureStderr();
  AFFINE_LOG_WARN("to stderr {}", 1);
  EXPECT_EQ(::testing::internal::GetCapturedStderr(), "[--] warn: to stderr 1\n");
  EXPECT_TRUE(lines.empty());
  set_sink(std::move(previous));
  AFFINE_LOG_WARN("captured");
  EXPECT_EQ(lines.size(), 1u);
}

}  // namespace
}  // namespace affine::log
