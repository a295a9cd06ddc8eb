#pragma once
// Frames captured with tshark on a Linux 6.18 loopback (zero MACs), kept as
// hex so a reader can paste them into a decoder. Linux leaves TCP and UDP
// checksums on loopback to "offload" (CHECKSUM_PARTIAL): the field holds the
// pseudo-header sum, exactly what an emitter writes in checksum_mode::offload.
// The full checksums were taken from tshark's own validation.

#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <span>
#include <string_view>
#include <vector>

namespace affine::stack::test {

// connect() to 127.0.0.1:9 (closed): MSS 65495, SACK-permitted, timestamps
// (TSval 0x3d3c6975), NOP, window scale 10.
inline constexpr std::string_view tcp_syn_hex =
    "00000000000000000000000008004500003c02f54000400639c57f0000017f000001"
    "b0c000099fe8a94000000000a002ffd7fe3000000204ffd70402080a3d3c697500000000"
    "0103030a";
inline constexpr std::uint16_t tcp_syn_partial_checksum = 0xfe30;
inline constexpr std::uint16_t tcp_syn_checksum = 0xaf5a;

// The kernel's RST+ACK to that SYN: a full checksum (0xb7da).
inline constexpr std::string_view tcp_rst_ack_hex =
    "0000000000000000000000000800450000280000400040063cce7f0000017f000001"
    "0009b0c0000000009fe8a94150140000b7da0000";

// An echo request (id 0x1234, seq 1) and the kernel's reply, 16 bytes of data.
inline constexpr std::string_view icmp_echo_request_hex =
    "00000000000000000000000008004500002cccaf40004001701f7f0000017f000001"
    "0800e5ab12340001616666696e652d776972652d6563686f";
inline constexpr std::string_view icmp_echo_reply_hex =
    "00000000000000000000000008004500002cccb000004001b01e7f0000017f000001"
    "0000edab12340001616666696e652d776972652d6563686f";
inline constexpr std::uint16_t icmp_echo_reply_checksum = 0xedab;

// sendto(127.0.0.1:9, "affine-udp") and the kernel's port unreachable, which
// quotes the whole datagram.
inline constexpr std::string_view udp_hex =
    "000000000000000000000000080045000026829b40004011ba297f0000017f000001"
    "e3de00090012fe25616666696e652d756470";
inline constexpr std::uint16_t udp_partial_checksum = 0xfe25;
inline constexpr std::uint16_t udp_checksum = 0x55c5;
inline constexpr std::string_view icmp_port_unreachable_hex =
    "000000000000000000000000080045c00042d8c700004001a3317f0000017f000001"
    "030352c20000000045000026829b40004011ba297f0000017f000001e3de00090012"
    "fe25616666696e652d756470";

// IPv6 on a veth pair between two network namespaces (Linux 6.18): "a" is
// 02:00:00:00:00:01, fe80::ff:fe00:1 and 2001:db8:77::1, "b" the same
// ending in 2. Each link brought up (Duplicate Address Detection, MLD, a
// router solicitation), then a ping from a to b, a UDP datagram each way to
// a closed port, and later the neighbor reachability probes.

// a's Version 2 Multicast Listener Report joining its solicited-node group
// ff02::1:ff00:1 (one CHANGE_TO_EXCLUDE record, no sources), Hop-by-Hop
// Router Alert, hop limit 1.
inline constexpr std::string_view mld_report_hex =
    "33330000001602000000000186dd6000000000240001fe80000000000000000000fffe000001ff02000000000000000000000000"
    "00163a000502000001008f0072070000000104000000ff0200000000000000000001ff000001";
// b's Duplicate Address Detection for 2001:db8:77::2: from ::, to its
// solicited-node group, with a Nonce option (type 14, RFC 7527).
inline constexpr std::string_view ns_dad_hex =
    "3333ff00000202000000000286dd6000000000203aff00000000000000000000000000000000ff0200000000000000000001ff00"
    "00028700f5040000000020010db80077000000000000000000020e01538e080dedca";
// a's router solicitation, with its source link-layer address.
inline constexpr std::string_view rs_hex =
    "33330000000202000000000186dd6000000000103afffe80000000000000000000fffe000001ff02000000000000000000000000"
    "000285007b2c000000000101020000000001";
// a resolving 2001:db8:77::2: to the solicited-node group, with a's address.
inline constexpr std::string_view ns_hex =
    "3333ff00000202000000000186dd6000000000203aff20010db8007700000000000000000001ff0200000000000000000001ff00"
    "000287001b390000000020010db80077000000000000000000020101020000000001";
// b's answer: Solicited and Override, with b's address.
inline constexpr std::string_view na_hex =
    "02000000000102000000000286dd6000000000203aff20010db800770000000000000000000220010db8007700000000000000000001"
    "8800890c6000000020010db80077000000000000000000020201020000000002";
// a's answer to b's unicast reachability probe: Solicited, no option.
inline constexpr std::string_view na_probe_reply_hex =
    "02000000000202000000000186dd6000000000183aff20010db8007700000000000000000001fe80000000000000000000fffe00"
    "00028800ddc74000000020010db8007700000000000000000001";
// The ping: id 0x7adb, seq 1, 16 bytes of data.
inline constexpr std::string_view icmpv6_echo_request_hex =
    "02000000000202000000000186dd6008b22600183a4020010db800770000000000000000000120010db80077000000000000000000"
    "02800012397adb00017f09146b0000000000c0020000000000";
inline constexpr std::string_view icmpv6_echo_reply_hex =
    "02000000000102000000000286dd6001268c00183a4020010db800770000000000000000000220010db80077000000000000000000"
    "01810011397adb00017f09146b0000000000c0020000000000";
// b's "affine-udp6" to a's port 9, its checksum left to offload, and a's
// port unreachable quoting all of it.
inline constexpr std::string_view udp6_hex =
    "02000000000102000000000286dd600f6c420013114020010db800770000000000000000000220010db800770000000000000000"
    "0001942c000900135c87616666696e652d75647036";
inline constexpr std::uint16_t udp6_partial_checksum = 0x5c87;
inline constexpr std::uint16_t udp6_checksum = 0x1115;  // tshark's
inline constexpr std::string_view icmpv6_port_unreachable_hex =
    "02000000000202000000000186dd600677ea00433a4020010db800770000000000000000000120010db80077000000000000000000"
    "020104792800000000600f6c420013114020010db800770000000000000000000220010db8007700000000000000000001942c0009"
    "00135c87616666696e652d75647036";

inline constexpr std::uint32_t loopback_ip = 0x7f000001;
inline constexpr std::size_t ethernet_length = 14;
inline constexpr std::size_t ipv4_length = 20;  // none of the captures has IP options
inline constexpr std::size_t ipv6_length = 40;

inline std::vector<std::byte> from_hex(std::string_view hex) {
  auto nibble = [](char c) { return c <= '9' ? c - '0' : (c | 0x20) - 'a' + 10; };
  std::vector<std::byte> out;
  for (std::size_t i = 0; i + 1 < hex.size(); i += 2) out.push_back(std::byte(nibble(hex[i]) << 4 | nibble(hex[i + 1])));
  return out;
}

// The bytes of a frame after the Ethernet and IPv4 headers.
inline std::span<const std::byte> transport_of(std::span<const std::byte> frame) {
  return frame.subspan(ethernet_length + ipv4_length);
}

// A copy of a captured frame's transport bytes, sized exactly.
inline std::vector<std::byte> transport_bytes(std::string_view hex) {
  const auto frame = from_hex(hex);
  const auto t = transport_of(frame);
  return {t.begin(), t.end()};
}

inline std::vector<std::byte> bytes_of(std::initializer_list<int> values) {
  std::vector<std::byte> out;
  for (int v : values) out.push_back(std::byte(v));
  return out;
}

}  // namespace affine::stack::test
