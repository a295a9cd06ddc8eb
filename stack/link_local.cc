#include "stack/link_local.hh"

#include <cstring>
#include <fstream>
#include <string>
#include <vector>

#include "affine/log.hh"
#include "stack/tcp/isn.hh"

namespace affine::stack {

namespace {

// RFC 5453 6: interface identifiers a stable address must not take.
bool reserved(std::uint64_t iid) {
  if (iid == 0) return true;                                                     // subnet-router anycast
  if (iid >= 0xfdffffffffffff80ull) return true;                                 // subnet anycast (RFC 2526)
  if ((iid >> 32) == 0x02005efe || (iid >> 32) == 0x02005eff) return true;       // proto-specific (ISATAP)
  return false;
}

}  // namespace

ipv6_bytes eui64_link_local(const mac_address& mac) {
  ipv6_bytes a = link_local_prefix;
  a[8] = std::uint8_t(mac[0] ^ 0x02);  // Appendix A: the universal/local bit inverted
  a[9] = mac[1];
  a[10] = mac[2];
  a[11] = 0xff;
  a[12] = 0xfe;
  a[13] = mac[3];
  a[14] = mac[4];
  a[15] = mac[5];
  return a;
}

ipv6_bytes stable_address(const ipv6_bytes& prefix, std::string_view net_iface,
                          const std::array<std::uint8_t, 16>& secret, std::uint8_t dad_counter) {
  for (unsigned counter = dad_counter;; ++counter) {
    // Prefix (64 bits) | Net_Iface | Network_ID (none) | DAD_Counter.
    std::vector<std::byte> input(8 + net_iface.size() + 1);
    std::memcpy(input.data(), prefix.data(), 8);
    std::memcpy(input.data() + 8, net_iface.data(), net_iface.size());
    input.back() = std::byte(counter);
    const std::uint64_t iid = tcp::siphash_2_4(secret, input);
    if (reserved(iid) && counter < 255) continue;
    ipv6_bytes a = prefix;
    for (int i = 0; i < 8; ++i) a[std::size_t(8 + i)] = std::uint8_t(iid >> (56 - 8 * i));
    return a;
  }
}

std::array<std::uint8_t, 16> machine_secret() {
  std::ifstream in("/etc/machine-id");
  std::string id;
  if (!(in >> id) || id.empty()) {
    AFFINE_LOG_WARN("stack: no /etc/machine-id: the stable link-local address is random (set port.stable_secret)");
    return tcp::random_siphash_key();
  }
  // Two SipHash outputs under fixed keys make 128 bits of the id; it is
  // not itself secret, which RFC 7217 7 accepts for hosts without one.
  const auto bytes = std::as_bytes(std::span(id.data(), id.size()));
  std::array<std::uint8_t, 16> out{};
  for (int half = 0; half < 2; ++half) {
    tcp::siphash_key k{};
    k[0] = std::uint8_t(0xa5 + half);
    const std::uint64_t h = tcp::siphash_2_4(k, bytes);
    for (int i = 0; i < 8; ++i) out[std::size_t(half * 8 + i)] = std::uint8_t(h >> (8 * i));
  }
  return out;
}

}  // namespace affine::stack
