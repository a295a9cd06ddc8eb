#pragma once
// The value type TCP protocol code handles (STYLE.md: wire views apart from
// protocol logic). stack/wire/tcp.hh parses bytes into it and emits it back;
// the connection state machine (stack/tcp/) reads and produces only this.
// Host byte order throughout; the payload is a view into the packet (input)
// or the send buffer (output) and lives no longer than the call it is
// passed to.

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>

#include "stack/wire/seq32.hh"

namespace affine::stack {

// At most one of SYN, FIN, RST: the combinations a parser refuses
// (SYN+FIN, SYN+RST, RST+FIN) cannot be written.
enum class tcp_control : std::uint8_t { none, syn, fin, rst };

// The two ECN bits of the IPv4 TOS or IPv6 Traffic Class byte (RFC 3168 5).
enum class ip_ecn : std::uint8_t { not_ect = 0, ect1 = 1, ect0 = 2, ce = 3 };

struct tcp_timestamps {
  std::uint32_t value = 0;  // TSval
  std::uint32_t echo = 0;   // TSecr
  friend constexpr bool operator==(const tcp_timestamps&, const tcp_timestamps&) = default;
};

// Up to four SACK blocks fit in the option space (RFC 2018 3); three when
// timestamps are present. Kept here so SACK can follow without a new type.
struct tcp_sack_block {
  seq32 left, right;
  friend constexpr bool operator==(const tcp_sack_block&, const tcp_sack_block&) = default;
};

struct tcp_options {
  std::optional<std::uint16_t> mss{};          // RFC 9293 3.7.1, SYN only
  std::optional<std::uint8_t> window_scale{};  // RFC 7323 2.2, SYN only; shift count (<= 14 after clamping)
  bool sack_permitted = false;               // RFC 2018 2, SYN only
  std::optional<tcp_timestamps> timestamps{};  // RFC 7323 3.2
  std::uint8_t sack_count = 0;
  tcp_sack_block sack[4]{};
  friend constexpr bool operator==(const tcp_options&, const tcp_options&) = default;
};

struct tcp_segment {
  std::uint16_t src_port = 0;
  std::uint16_t dst_port = 0;
  tcp_control control = tcp_control::none;
  bool psh = false;
  seq32 seq{};
  std::optional<seq32> ack{};  // present iff the ACK flag is set
  std::uint16_t window = 0;  // as on the wire (not scaled)
  bool urg = false;          // URG flag; the urgent pointer is ignored (RFC 6093)
  bool ece = false;          // ECN-Echo (RFC 3168 6.1)
  bool cwr = false;          // Congestion Window Reduced (RFC 3168 6.1)
  // The IP header's ECN field (RFC 3168 5): as received, or to send.
  ip_ecn ecn = ip_ecn::not_ect;
  std::uint16_t urgent_pointer = 0;
  tcp_options options{};
  std::span<const std::byte> payload{};

  // Sequence space the segment occupies: payload plus one for SYN and FIN
  // (RFC 9293 3.4, SEG.LEN).
  std::uint32_t seq_len() const {
    return std::uint32_t(payload.size()) + (control == tcp_control::syn || control == tcp_control::fin ? 1u : 0u);
  }
};

}  // namespace affine::stack
