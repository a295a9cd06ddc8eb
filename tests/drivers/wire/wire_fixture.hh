#pragma once
// Shared by the wire and pcap tests: the EAL, one private pool per end (so a
// test sees whose pool a frame came from, and that each drains back to
// zero), frames that carry their number, and helpers to send and drain.

#include <gtest/gtest.h>
#include <rte_mbuf.h>
#include <rte_mempool.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "drivers/dpdk/eal.hh"
#include "drivers/wire/wire.hh"

namespace affine::drivers::wire::testing {

// What came out of an end: the frame's number, its bytes, and when.
struct arrival {
  std::uint32_t id;
  std::vector<std::uint8_t> bytes;
  std::uint64_t at_ns;
  bool operator==(const arrival&) const = default;
};

inline std::vector<std::uint8_t> frame_bytes(const rte_mbuf* m) {
  std::vector<std::uint8_t> out(m->pkt_len);
  std::uint32_t at = 0;
  for (const rte_mbuf* seg = m; seg != nullptr; seg = seg->next) {
    if (seg->data_len == 0) continue;  // memcpy's pointers must be valid even for 0 bytes
    std::memcpy(out.data() + at, rte_pktmbuf_mtod(seg, const void*), seg->data_len);
    at += seg->data_len;
  }
  return out;
}

// The bytes of frame `id` of length `len`: an Ethernet header (a to b,
// ethertype 0x88b5, the IEEE local experimental one), the id, then a pattern.
// Frames shorter than the header are the malformed ones and carry no id.
inline std::vector<std::uint8_t> pattern(std::uint32_t id, std::uint32_t len) {
  std::vector<std::uint8_t> b(len);
  for (std::uint32_t i = 0; i < len; ++i) b[i] = std::uint8_t(i * 7 + id);
  const std::uint8_t header[14] = {2, 0, 0, 0, 0, 2, 2, 0, 0, 0, 0, 1, 0x88, 0xb5};
  std::copy_n(header, std::min<std::uint32_t>(len, 14), b.begin());
  if (len >= 18) std::memcpy(b.data() + 14, &id, 4);
  return b;
}

inline std::uint32_t id_of(const std::vector<std::uint8_t>& bytes) {
  std::uint32_t id = UINT32_MAX;
  if (bytes.size() >= 18) std::memcpy(&id, bytes.data() + 14, 4);
  return id;
}

class wire_test : public ::testing::Test {
 protected:
  static constexpr std::uint32_t frame_len = 100;

  static void SetUpTestSuite() {
    auto eal = dpdk::init_eal_for_tests();
    ASSERT_TRUE(eal.has_value()) << eal.error();
  }

  void SetUp() override {
    pool_a_ = make_pool(4095);
    pool_b_ = make_pool(4095);
    ASSERT_NE(pool_a_, nullptr);
    ASSERT_NE(pool_b_, nullptr);
  }

  // Every test ends with nothing in flight and every mbuf back in its pool.
  void TearDown() override {
    link_.reset();
    for (rte_mempool* p : {pool_a_, pool_b_, extra_pool_}) {
      if (p == nullptr) continue;
      EXPECT_EQ(rte_mempool_in_use_count(p), 0u) << "mbufs leaked from " << p->name;
      rte_mempool_free(p);
    }
  }

  static rte_mempool* make_pool(unsigned mbufs) {
    static unsigned serial = 0;
    const std::string name = "wire_test_" + std::to_string(serial++);
    return rte_pktmbuf_pool_create(name.c_str(), mbufs, 0, 0, RTE_MBUF_DEFAULT_BUF_SIZE, SOCKET_ID_ANY);
  }

  link_config config(const impairments& a_to_b, std::uint64_t seed = 1) {
    link_config cfg;
    cfg.seed = seed;
    cfg.a.pool = pool_a_;
    cfg.b.pool = pool_b_;
    cfg.a_to_b = a_to_b;
    return cfg;
  }

  link& make(const link_config& cfg) {
    auto made = link::create(cfg);
    EXPECT_TRUE(made.has_value()) << (made ? "" : made.error());
    link_ = std::move(*made);
    return *link_;
  }
  link& make(const impairments& a_to_b, std::uint64_t seed = 1) { return make(config(a_to_b, seed)); }

  static rte_mbuf* build(rte_mempool* pool, const std::vector<std::uint8_t>& bytes) {
    rte_mbuf* m = rte_pktmbuf_alloc(pool);
    EXPECT_NE(m, nullptr);
    if (m == nullptr) return nullptr;
    char* data = rte_pktmbuf_append(m, std::uint16_t(bytes.size()));
    std::copy(bytes.begin(), bytes.end(), data);
    return m;
  }

  // Send frame `id` (of `len` bytes) from end a.
  void send(std::uint32_t id, std::uint32_t len = frame_len) {
    rte_mbuf* m = build(pool_a_, pattern(id, len));
    ASSERT_EQ(link_->a().tx_burst(0, &m, 1), 1);
  }

  // Whatever end `s` can receive at the link's current time.
  std::vector<arrival> receive(side s = side::b) {
    std::vector<arrival> out;
    port& p = link_->end(s);
    rte_mbuf* pkts[32];
    while (std::uint16_t n = p.rx_burst(0, pkts, 32)) {
      for (std::uint16_t i = 0; i < n; ++i) {
        auto bytes = frame_bytes(pkts[i]);
        EXPECT_EQ(pkts[i]->pool, s == side::b ? pool_b_ : pool_a_) << "a frame from the wrong pool";
        out.push_back({id_of(bytes), std::move(bytes), link_->now_ns()});
        rte_pktmbuf_free(pkts[i]);
      }
    }
    return out;
  }

  // Frame `id` arrives at b at exactly `t`: nothing at t - 1, then it alone.
  void expect_arrival_at(std::uint64_t t, std::uint32_t id) {
    link_->advance_to(t - 1);
    EXPECT_TRUE(receive().empty()) << "a frame before " << t;
    link_->advance_to(t);
    const auto got = receive();
    ASSERT_EQ(got.size(), 1u) << "at " << t;
    EXPECT_EQ(got[0].id, id);
  }

  // Move the clock from arrival to arrival until nothing is in flight either
  // way: arrivals at b are returned, those at a kept in at_a_.
  std::vector<arrival> drain() {
    std::vector<arrival> out = receive(side::b);
    for (auto& a : receive(side::a)) at_a_.push_back(std::move(a));
    while (auto next = link_->next_arrival_ns()) {
      link_->advance_to(*next);
      for (auto& a : receive(side::b)) out.push_back(std::move(a));
      for (auto& a : receive(side::a)) at_a_.push_back(std::move(a));
    }
    return out;
  }

  // Send frames 0..n-1, one every `gap_ns`, receiving as they come, then
  // drain: the whole story of a run, arrival by arrival.
  std::vector<arrival> run(std::uint32_t n, std::uint64_t gap_ns = 1000, std::uint32_t len = frame_len) {
    std::vector<arrival> out;
    for (std::uint32_t id = 0; id < n; ++id) {
      send(id, len);
      link_->advance_by(gap_ns);
      for (auto& a : receive()) out.push_back(std::move(a));
    }
    for (auto& a : drain()) out.push_back(std::move(a));
    return out;
  }

  rte_mempool* pool_a_ = nullptr;
  rte_mempool* pool_b_ = nullptr;
  rte_mempool* extra_pool_ = nullptr;  // a test's own, checked and freed like the others
  std::vector<arrival> at_a_;
  std::unique_ptr<link> link_;
};

}  // namespace affine::drivers::wire::testing
