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

inline constexpr std::uint32_t loopback_ip = 0x7f000001;
inline constexpr std::size_t ethernet_length = 14;
inline constexpr std::size_t ipv4_length = 20;  // none of the captures has IP options

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
