#pragma once
// What the DPDK driver tests share: the EAL, initialised once per process by
// a global environment (tests that link eal_env.cc), a fixture that checks
// every mbuf is back in the pool at teardown, and frame helpers.

#include <gtest/gtest.h>
#include <rte_mbuf.h>
#include <rte_mempool.h>

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>
#include <vector>

#include "drivers/dpdk/eal.hh"

namespace affine::drivers::dpdk::test {

class dpdk_test : public ::testing::Test {
 protected:
  void SetUp() override {
    auto p = packet_pool(0);
    ASSERT_TRUE(p.has_value()) << p.error();
    pool_ = *p;
  }
  // STYLE.md: every test leaves the packet pool as it found it. Ports are
  // closed by the test body (their rings hold mbufs until then).
  void TearDown() override {
    if (pool_ != nullptr) {
      EXPECT_EQ(rte_mempool_in_use_count(pool_), 0u) << "mbufs leaked";
    }
  }

  rte_mbuf* frame(std::span<const std::uint8_t> bytes) {
    rte_mbuf* m = rte_pktmbuf_alloc(pool_);
    if (m == nullptr) return nullptr;
    char* data = rte_pktmbuf_append(m, std::uint16_t(bytes.size()));
    if (!bytes.empty()) std::memcpy(data, bytes.data(), bytes.size());
    return m;
  }
  static std::vector<std::uint8_t> bytes_of(const rte_mbuf* m) {
    const auto* p = rte_pktmbuf_mtod(m, const std::uint8_t*);
    return {p, p + m->data_len};
  }

  rte_mempool* pool_ = nullptr;
};

// An Ethernet + IPv4 + TCP/UDP frame (checksums left zero: nothing here
// checks them). Addresses and ports in host order.
std::vector<std::uint8_t> ipv4_frame(std::uint32_t src, std::uint32_t dst, std::uint8_t proto,
                                     std::uint16_t sport, std::uint16_t dport, std::size_t payload = 18);

}  // namespace affine::drivers::dpdk::test
