#pragma once
// RACK's state (RFC 8985 6.1): what the most recently sent segment the
// peer delivered says about everything sent before it, and the reordering
// window that sets how long "before" must be. The per-segment transmit
// times it compares live in the sent log (sent_log.hh); the rules are in
// rack.cc.

#include <cstdint>
#include <optional>

#include "stack/wire/seq32.hh"

namespace affine::stack::tcp {

struct rack_state {
  bool have = false;            // a segment has been delivered
  std::uint64_t xmit_ns = 0;    // RACK.xmit_ts
  seq32 end_seq{};              // RACK.end_seq
  std::uint64_t rtt_ns = 0;     // RACK.rtt: that segment's round trip
  std::uint64_t min_rtt_ns = 0; // RACK.min_RTT, over min_rtt_window_ns (0: none yet)
  std::uint64_t min_rtt_at_ns = 0;
  bool have_fack = false;
  seq32 fack{};                 // RACK.fack: the highest end_seq delivered
  bool reord = false;           // RACK.reord: reordering seen
  unsigned reo_wnd_mult = 1;    // RACK.reo_wnd_mult
  unsigned reo_wnd_persist = 0; // RACK.reo_wnd_persist
  std::optional<seq32> dsack_round;  // RACK.dsack_round
};

// RFC 8985 6.2 RACK_sent_after(t1, seq1, t2, seq2): whether the
// transmission (t1, seq1) came after (t2, seq2).
constexpr bool rack_sent_after(std::uint64_t t1, seq32 seq1, std::uint64_t t2, seq32 seq2) {
  return t1 > t2 || (t1 == t2 && seq2 < seq1);
}

}  // namespace affine::stack::tcp
