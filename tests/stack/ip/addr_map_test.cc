// The fixed-capacity address map under the IP tables: lookups stay right
// through collisions and backward-shift deletion, and a full map refuses.

#include <gtest/gtest.h>

#include <array>
#include <map>
#include <set>

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

TEST(addr_map, FirstByNamesTheKeyOfTheLeastValue) {
  addr_map<int> m(4);
  const auto less = [](int x, int y) { return x < y; };
  EXPECT_FALSE(m.first_by(less));
  *m.insert(10) = 3;
  *m.insert(20) = 1;
  *m.insert(30) = 2;
  EXPECT_EQ(m.first_by(less), 20u);
  m.erase(20);
  EXPECT_EQ(m.first_by(less), 30u);
}

// Random inserts and erases of a few addresses in a small map (long probe
// runs, many shifts), checked against std::map after every step: IPv4
// addresses of one subnet, and IPv6 link-local ones.
template <class Key, class MakeKey>
void churn(MakeKey make_key) {
  addr_map<std::uint32_t, Key> m(16);
  std::map<Key, std::uint32_t> ref;
  xoshiro256ss rng({1, 2, 3, 4});
  for (int step = 0; step < 20000; ++step) {
    const Key key = make_key(std::uint32_t(rng.below(40)));
    if (ref.contains(key)) {
      m.erase(key);
      ref.erase(key);
    } else if (!m.full()) {
      *m.insert(key) = std::uint32_t(step);
      ref[key] = std::uint32_t(step);
    }
    ASSERT_EQ(m.size(), ref.size());
    for (std::uint32_t i = 0; i < 40; ++i) {
      const std::uint32_t* v = m.find(make_key(i));
      const auto it = ref.find(make_key(i));
      ASSERT_EQ(v != nullptr, it != ref.end()) << "step " << step << " key " << i;
      if (v != nullptr) {
        ASSERT_EQ(*v, it->second);
      }
    }
  }
}

using ipv6_key = std::array<std::uint8_t, 16>;

// fe80::2ff:fe00:nn, as SLAAC makes it from the MAC 00:00:00:00:00:nn.
ipv6_key link_local(std::uint32_t n) {
  return {0xfe, 0x80, 0, 0, 0, 0, 0, 0, 0x02, 0, 0, 0xff, 0xfe, 0, std::uint8_t(n >> 8), std::uint8_t(n)};
}

TEST(addr_map, AgreesWithAReferenceMapThroughChurn) {
  churn<std::uint32_t>([](std::uint32_t i) { return 0x0a000000 + i; });
}

TEST(addr_map, Ipv6KeysAgreeWithAReferenceMapThroughChurn) { churn<ipv6_key>(link_local); }

// The index takes a hash's top bits. 256 IPv6 addresses that differ in one
// byte only, whichever byte it is (link-local neighbors differ only in the
// low 64 bits), land in many cells of a 512-cell index, as many as random
// places would (about 200) or more.
TEST(addr_map, Ipv6KeysSpreadWhicheverByteDiffers) {
  const auto homes = [](auto key_of) {
    std::set<std::uint32_t> cells;
    for (std::uint32_t v = 0; v < 256; ++v) cells.insert(addr_hash(key_of(v)) >> (32 - 9));
    return cells.size();
  };
  for (std::size_t byte = 0; byte < 16; ++byte) {
    EXPECT_GE(homes([&](std::uint32_t v) {
      ipv6_key k = link_local(1);
      k[byte] = std::uint8_t(v);
      return k;
    }),
              160u)
        << "byte " << byte;
  }
  EXPECT_GE(homes(link_local), 160u);
}
}  // namespace
}  // namespace affine::stack
