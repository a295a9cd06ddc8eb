// The fixed-capacity address map under the IP tables: lookups stay right
// through collisions and backward-shift deletion, and a full map refuses.

#include <gtest/gtest.h>

#include <map>

#include "base/xoshiro.hh"
#include "stack/ip/addr_map.hh"

namespace affine::stack {
namespace {

TEST(addr_map, FindsWhatWasInsertedAndForgetsWhatWasErased) {
  addr_map<int> m(4);
  *m.insert(0x0a000001) = 1;
  *m.insert(0) = 2;  // address 0 is a key like any other
  ASSERT_NE(m.find(0x0a000001), nullptr);
  EXPECT_EQ(*m.find(0x0a000001), 1);
  EXPECT_EQ(*m.find(0), 2);
  m.erase(0x0a000001);
  EXPECT_EQ(m.find(0x0a000001), nullptr);
  EXPECT_EQ(m.size(), 1u);
}

TEST(addr_map, FullMapRefusesAnInsert) {
  addr_map<int> m(2);
  EXPECT_NE(m.insert(1), nullptr);
  EXPECT_NE(m.insert(2), nullptr);
  EXPECT_TRUE(m.full());
  EXPECT_EQ(m.insert(3), nullptr);
  m.erase(1);
  EXPECT_NE(m.insert(3), nullptr);
}

TEST(addr_map, InsertedValueStartsFresh) {
  addr_map<int> m(1);
  *m.insert(7) = 42;
  m.erase(7);
  EXPECT_EQ(*m.insert(8), 0);
}

TEST(addr_map, EraseIfVisitsEveryEntryOnce) {
  addr_map<int> m(8);
  for (std::uint32_t k = 1; k <= 8; ++k) *m.insert(k) = int(k);
  int visits = 0;
  m.erase_if([&](std::uint32_t, const int& v) {
    ++visits;
    return v % 2 == 0;
  });
  EXPECT_EQ(visits, 8);
  EXPECT_EQ(m.size(), 4u);
  EXPECT_EQ(m.find(2), nullptr);
  EXPECT_NE(m.find(3), nullptr);
}

// Random inserts and erases of a few addresses in a small map (long probe
// runs, many shifts), checked against std::map after every step.
TEST(addr_map, AgreesWithAReferenceMapThroughChurn) {
  addr_map<std::uint32_t> m(16);
  std::map<std::uint32_t, std::uint32_t> ref;
  xoshiro256ss rng({1, 2, 3, 4});
  for (int step = 0; step < 20000; ++step) {
    const auto key = std::uint32_t(0x0a000000 + rng.below(40));
    if (ref.contains(key)) {
      m.erase(key);
      ref.erase(key);
    } else if (!m.full()) {
      *m.insert(key) = std::uint32_t(step);
      ref[key] = std::uint32_t(step);
    }
    ASSERT_EQ(m.size(), ref.size());
    for (std::uint32_t k = 0x0a000000; k < 0x0a000000 + 40; ++k) {
      const std::uint32_t* v = m.find(k);
      const auto it = ref.find(k);
      ASSERT_EQ(v != nullptr, it != ref.end()) << "step " << step << " key " << k;
      if (v != nullptr) {
        ASSERT_EQ(*v, it->second);
      }
    }
  }
}

}  // namespace
}  // namespace affine::stack
