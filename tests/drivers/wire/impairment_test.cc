// Each impairment's effect, measured over many frames: loss (independent and
// in bursts), duplication, reordering and corruption.

#include <algorithm>
#include <bit>
#include <map>
#include <set>

#include "tests/drivers/wire/wire_fixture.hh"

namespace affine::drivers::wire::testing {
namespace {

constexpr std::uint32_t many = 20000;

using impairment = wire_test;

TEST_F(impairment, ten_percent_loss_drops_ten_percent_counted_as_loss) {
  impairments imp;
  imp.loss = 0.10;
  make(imp, 3);
  const auto got = run(many);
  const direction_stats s = link_->stats(side::a);
  const double rate = double(s.drops(drop_reason::loss)) / many;
  EXPECT_NEAR(rate, 0.10, 0.01);
  EXPECT_EQ(s.sent, many);
  EXPECT_EQ(got.size() + s.drops(drop_reason::loss), many);
  EXPECT_EQ(s.total_drops(), s.drops(drop_reason::loss));
  EXPECT_EQ(s.delivered, got.size());
  EXPECT_TRUE(std::is_sorted(got.begin(), got.end(), [](auto& x, auto& y) { return x.id < y.id; }));
}

TEST_F(impairment, burst_loss_comes_in_runs_of_the_chains_mean_length) {
  impairments imp;
  // Stationary share of the bad state: 0.01 / (0.01 + 0.2) = 4.8%; a burst
  // lasts 1 / 0.2 = 5 frames on average.
  imp.burst = gilbert_elliott{.good_to_bad = 0.01, .bad_to_good = 0.2};
  make(imp, 5);
  const auto got = run(50000);
  std::vector<bool> delivered(50000, false);
  for (const auto& a : got) delivered[a.id] = true;
  std::uint64_t runs = 0, lost = 0;
  for (std::size_t i = 0; i < delivered.size(); ++i) {
    if (delivered[i]) continue;
    ++lost;
    if (i == 0 || delivered[i - 1]) ++runs;
  }
  const direction_stats s = link_->stats(side::a);
  EXPECT_EQ(s.drops(drop_reason::burst_loss), lost);
  EXPECT_EQ(s.drops(drop_reason::loss), 0u);
  EXPECT_NEAR(double(lost) / 50000, 0.048, 0.01);
  ASSERT_GT(runs, 0u);
  EXPECT_NEAR(double(lost) / double(runs), 5.0, 1.0);
}

TEST_F(impairment, duplication_delivers_byte_identical_copies_back_to_back) {
  impairments imp;
  imp.duplicate = 0.05;
  make(imp, 11);
  const auto got = run(many);
  const direction_stats s = link_->stats(side::a);
  EXPECT_NEAR(double(s.duplicated) / many, 0.05, 0.01);
  EXPECT_EQ(got.size(), many + s.duplicated);
  std::uint64_t pairs = 0;
  for (std::size_t i = 1; i < got.size(); ++i) {
    if (got[i].id != got[i - 1].id) continue;
    ++pairs;
    EXPECT_EQ(got[i].bytes, got[i - 1].bytes);
  }
  EXPECT_EQ(pairs, s.duplicated);
}

TEST_F(impairment, a_held_frame_is_overtaken_by_exactly_gap_frames) {
  impairments imp;
  imp.reorder = 1.0;
  imp.reorder_gap = 3;
  make(imp);
  send(0);
  imp.reorder = 0.0;
  ASSERT_TRUE(link_->set_impairments(side::a, imp));
  for (std::uint32_t id = 1; id <= 5; ++id) send(id);
  std::vector<std::uint32_t> order;
  for (const auto& a : drain()) order.push_back(a.id);
  EXPECT_EQ(order, (std::vector<std::uint32_t>{1, 2, 3, 0, 4, 5}));
  EXPECT_EQ(link_->stats(side::a).reordered, 1u);
}

TEST_F(impairment, random_reordering_reorders_and_loses_nothing) {
  impairments imp;
  imp.reorder = 0.05;
  imp.reorder_gap = 2;
  imp.reorder_delay_ns = 10'000;  // only the run's last frames wait this long
  make(imp, 13);
  const auto got = run(many);
  ASSERT_EQ(got.size(), many);
  std::uint64_t late = 0;  // frames that arrive after a higher-numbered one
  std::uint32_t highest = 0;
  for (const auto& a : got) {
    if (a.id < highest) ++late;
    highest = std::max(highest, a.id);
  }
  const direction_stats s = link_->stats(side::a);
  EXPECT_NEAR(double(s.reordered) / many, 0.05, 0.01);
  // Every held frame is overtaken, except the last two sent (nothing follows
  // them; they go at their time bound).
  EXPECT_LE(s.reordered - late, 2u);
  EXPECT_GT(late, 0u);
  std::set<std::uint32_t> ids;
  for (const auto& a : got) ids.insert(a.id);
  EXPECT_EQ(ids.size(), many);
}

TEST_F(impairment, a_held_frame_goes_at_its_time_bound_when_no_frames_follow) {
  impairments imp;
  imp.reorder = 1.0;
  imp.reorder_gap = 5;
  imp.reorder_delay_ns = 1'000'000;
  make(imp);
  send(0);
  EXPECT_EQ(link_->next_arrival_ns(), 1'000'000u);
  expect_arrival_at(1'000'000, 0);
}

TEST_F(impairment, reordering_by_delay_alone_makes_the_frame_late) {
  impairments imp;
  imp.reorder = 1.0;
  imp.reorder_delay_ns = 30'000;
  make(imp);
  send(0);
  imp.reorder = 0.0;
  ASSERT_TRUE(link_->set_impairments(side::a, imp));
  link_->advance_by(10'000);
  send(1);
  const auto got = drain();
  ASSERT_EQ(got.size(), 2u);
  EXPECT_EQ(got[0].id, 1u);
  EXPECT_EQ(got[0].at_ns, 10'000u);
  EXPECT_EQ(got[1].id, 0u);
  EXPECT_EQ(got[1].at_ns, 30'000u);
}

TEST_F(impairment, corruption_flips_exactly_one_bit_anywhere_in_the_frame) {
  impairments imp;
  imp.corrupt = 1.0;
  make(imp, 17);
  std::map<std::uint32_t, std::uint32_t> len_of;
  std::set<std::size_t> bytes_hit;
  std::set<int> bits_hit;
  for (std::uint32_t id = 0; id < 2000; ++id) {
    const std::uint32_t len = 60 + id % 1400;
    send(id, len);
    for (const auto& a : receive()) {
      const auto sent = pattern(id, len);
      ASSERT_EQ(a.bytes.size(), sent.size());
      int flipped = 0;
      for (std::size_t i = 0; i < sent.size(); ++i) {
        const int diff = std::popcount(unsigned(sent[i] ^ a.bytes[i]));
        flipped += diff;
        if (diff != 0) {
          bytes_hit.insert(i);
          bits_hit.insert(std::countr_zero(unsigned(sent[i] ^ a.bytes[i])));
        }
      }
      EXPECT_EQ(flipped, 1) << "frame " << id;
    }
  }
  EXPECT_EQ(link_->stats(side::a).corrupted, 2000u);
  EXPECT_GT(bytes_hit.size(), 500u) << "the damaged byte should be anywhere in the frame";
  EXPECT_EQ(bits_hit.size(), 8u) << "every bit position of a byte should get hit";
}

TEST_F(impairment, corruption_probability_is_per_frame) {
  impairments imp;
  imp.corrupt = 0.02;
  make(imp, 19);
  const auto got = run(many);
  ASSERT_EQ(got.size(), many);
  // By position: a damaged id field would misname the frame.
  std::uint64_t damaged = 0;
  for (std::uint32_t i = 0; i < many; ++i) damaged += got[i].bytes != pattern(i, frame_len);
  EXPECT_EQ(damaged, link_->stats(side::a).corrupted);
  EXPECT_NEAR(double(damaged) / many, 0.02, 0.005);
}

}  // namespace
}  // namespace affine::drivers::wire::testing
