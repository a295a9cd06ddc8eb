// Frame builders shared by the DPDK driver tests.

#include "tests/drivers/dpdk/dpdk_fixture.hh"

namespace affine::drivers::dpdk::test {

std::vector<std::uint8_t> ipv4_frame(std::uint32_t src, std::uint32_t dst, std::uint8_t proto,
                                     std::uint16_t sport, std::uint16_t dport, std::size_t payload) {
  std::vector<std::uint8_t> f(14 + 20 + 8 + payload, 0);
  auto be16 = [&](std::size_t at, std::uint16_t v) {
    f[at] = std::uint8_t(v >> 8);
    f[at + 1] = std::uint8_t(v);
  };
  auto be32 = [&](std::size_t at, std::uint32_t v) {
    be16(at, std::uint16_t(v >> 16));
    be16(at + 2, std::uint16_t(v));
  };
  for (std::size_t i = 0; i < 6; ++i) f[i] = 0x02, f[6 + i] = 0x04;
  be16(12, 0x0800);
  f[14] = 0x45;
  be16(16, std::uint16_t(f.size() - 14));
  f[22] = 64;
  f[23] = proto;
  be32(26, src);
  be32(30, dst);
  be16(34, sport);
  be16(36, dport);
  return f;
}

}  // namespace affine::drivers::dpdk::test
