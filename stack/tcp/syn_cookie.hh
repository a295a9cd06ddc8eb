#pragma once
// SYN cookies (RFC 4987 3.6): while a listener's SYN-RECEIVED queue is
// full, a SYN is answered with a SYN-ACK whose ISS encodes what the
// connection needs and no state is kept; the ACK that returns it is
// checked and becomes the connection. The 32 bits of the cookie:
//
//   31..27  the time slot, mod 32 (a slot is 64 s; a cookie is good for
//           the slot it was made in and the next: 64 to 128 s)
//   26..24  the MSS, as an index into a table of common values (the
//           largest not above the peer's)
//   23..0   SipHash-2-4 over the 4-tuple, the peer's ISN, the slot and the
//           MSS index, keyed with a secret of the stack's
//
// Window scale, SACK-permitted and ECN fit only where the peer sent
// timestamps (as in Linux): they travel in the low 7 bits of our SYN-ACK's
// TSval, which the ACK echoes (bits 0..3 the peer's shift, 15 = none; bit
// 4 SACK-permitted; bit 5 set; bit 6 an ECN-setup SYN). Without timestamps
// the SYN-ACK offers none of them, so that nothing is negotiated that the
// cookie cannot carry.

#include <cstdint>
#include <optional>

#include "stack/flow.hh"
#include "stack/tcp/isn.hh"
#include "stack/wire/seq32.hh"

namespace affine::stack::tcp {

// tcp.syn_cookies: when the SYN-RECEIVED queue is full (auto), for every
// SYN (always), or never (a full queue drops the SYN).
enum class syn_cookie_mode : std::uint8_t { automatic, always, never };

// What a TSval's low bits say of the peer's SYN.
struct cookie_ts_options {
  std::optional<std::uint8_t> window_scale;
  bool sack_permitted = false;
  bool ecn = false;  // the SYN was ECN-setup (RFC 3168 6.1.1: ECE and CWR)
};

class syn_cookies {
 public:
  static constexpr std::uint64_t slot_ns = 64'000'000'000;

  explicit syn_cookies(siphash_key secret) : secret_(secret) {}
  static syn_cookies from_random_device();

  // The ISS of a SYN-ACK to a SYN from `t` with ISN `peer_isn`, whose
  // MSS is `mss` (what the peer's option said, or 536), at `now_ns`.
  seq32 make(const flow_tuple& t, seq32 peer_isn, std::uint16_t mss, std::uint64_t now_ns) const;
  // The MSS a returning cookie (SEG.ACK - 1 of the ACK, whose SEG.SEQ - 1
  // is `peer_isn`) was made with, or nothing: forged, or too old.
  std::optional<std::uint16_t> check(const flow_tuple& t, seq32 peer_isn, seq32 cookie, std::uint64_t now_ns) const;

  // Our TSval `now` with the options in its low bits, never later than
  // `now` (so that later TSvals are not older than it, RFC 7323 5.4).
  static std::uint32_t encode_ts(std::uint32_t now, const cookie_ts_options& o);
  // The options an echoed TSval carries; nothing when it carries none.
  static std::optional<cookie_ts_options> decode_ts(std::uint32_t echo);

 private:
  std::uint32_t hash24(const flow_tuple& t, seq32 peer_isn, std::uint32_t slot, unsigned mss_index) const;

  siphash_key secret_;
};

}  // namespace affine::stack::tcp
