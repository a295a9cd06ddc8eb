#include "stack/ip/link_local.hh"

#include <cstring>
#include <vector>

#include "stack/tcp/isn.hh"

namespace affine::stack {

bool reserved_interface_id(std::uint64_t iid) {
  if (iid == 0) return true;                                                      // Subnet-Router anycast
  if (iid >= 0x02005efffe000000ull && iid <= 0x02005efffeffffffull) return true;  // IANA's Ethernet block
  if (iid >= 0xfdffffffffffff80ull && iid <= 0xfdffffffffffffffull) return true;  // RFC 2526 subnet anycast
  return false;
}

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

std::uint64_t first_unreserved(std::uint8_t dad_counter, tcp::function_ref<std::uint64_t(std::uint8_t)> f) {
  for (unsigned counter = dad_counter;; ++counter) {
    const std::uint64_t iid = f(std::uint8_t(counter));
    // RFC 7217 5: a reserved identifier (RFC 5453) counts DAD_Counter up.
    if (!reserved_interface_id(iid) || counter == 0xff) return iid;
  }
}

ipv6_bytes stable_address(const ipv6_bytes& prefix, std::string_view net_iface,
                          const std::array<std::uint8_t, 16>& secret, std::uint8_t dad_counter) {
  // Prefix (64 bits) | Net_Iface | Network_ID (none) | DAD_Counter.
  std::vector<std::byte> input(8 + net_iface.size() + 1);
  std::memcpy(input.data(), prefix.data(), 8);
  std::memcpy(input.data() + 8, net_iface.data(), net_iface.size());
  const std::uint64_t iid = first_unreserved(dad_counter, [&](std::uint8_t counter) {
    input.back() = std::byte(counter);
    return tcp::siphash_2_4(secret, input);  // RFC 7217 5: the RID's low 64 bits
  });
  ipv6_bytes a = prefix;
  for (int i = 0; i < 8; ++i) a[std::size_t(8 + i)] = std::uint8_t(iid >> (56 - 8 * i));
  return a;
}

}  // namespace affine::stack
