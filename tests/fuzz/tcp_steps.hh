#pragma once
// What tcp_host.cc and stack.cc share: the input read a byte at a time, and
// a TCP segment step decoded from it, built near where its peer is (what
// the peer has sent, what it was sent), and the peer's view kept up to date
// from what the host sends it. A peer's byte at sequence number s is s mod
// 256, so a reader can check the order of what it reads.
//
// A segment step is 7 bytes: port (the caller's), control, seq, ack,
// length, options, window; then 2 more when the options byte asks for a
// changed byte (bit 6). The caller reads the port byte and anything after.

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <utility>
#include <vector>

#include "stack/wire/seq32.hh"
#include "stack/wire/tcp_segment.hh"

namespace affine_fuzz {

using affine::stack::seq32;
using affine::stack::tcp_control;
using affine::stack::tcp_segment;
using affine::stack::tcp_timestamps;

inline std::byte stream_byte(seq32 s) { return std::byte(s.raw() & 0xff); }

// Bytes of the input, read one at a time; zeros once it runs out.
struct reader {
  std::span<const std::uint8_t> left;
  bool empty() const { return left.empty(); }
  std::uint8_t next() {
    if (left.empty()) return 0;
    const std::uint8_t b = left.front();
    left = left.subspan(1);
    return b;
  }
};

// What a peer knows: what it sent, what it was sent.
struct peer_sequence {
  seq32 snd_nxt{};          // the next sequence number it sends
  bool synced = false;      // it sent a SYN (snd_nxt means something)
  seq32 host_nxt{};         // past the last sequence number the host sent it
  std::optional<seq32> host_ack{};
  std::uint32_t ts_recent = 0;

  // The host sent it `out`.
  void sent(const tcp_segment& out) {
    const seq32 end = out.seq + out.seq_len();
    if (out.control == tcp_control::syn || end > host_nxt || host_nxt == seq32{}) host_nxt = end;
    if (out.ack) host_ack = out.ack;
    if (out.options.timestamps) ts_recent = out.options.timestamps->value;
  }
};

struct segment_step {
  tcp_segment seg;
  std::optional<std::pair<std::size_t, std::uint8_t>> change{};  // a byte of the frame XORed
  std::uint8_t opts = 0;  // the options byte (bit 7 is the caller's)
};

struct segment_context {
  bool new_connection = false;  // a SYN here starts a connection: its ISN from the input
  bool timestamps = false;      // the host offers timestamps: sent unless option bit 4
  std::uint32_t ts_value = 0;   // the peer's timestamp clock
  bool syn_acks = false;        // the peer answers a SYN the host sent: its SYN carries an ACK
};

// Decodes the six bytes after the port into a segment from `p` (ports the
// caller's), with its payload in `payload`; moves p.snd_nxt past it when it
// is the next in order.
inline segment_step read_segment(reader& in, peer_sequence& p, const segment_context& ctx,
                                 std::vector<std::byte>& payload) {
  const std::uint8_t control = in.next();
  const std::uint8_t seq_sel = in.next();
  const std::uint8_t ack_sel = in.next();
  const std::size_t len = std::size_t(in.next()) * 8;
  const std::uint8_t opts = in.next();
  const std::uint8_t win = in.next();

  segment_step step;
  step.opts = opts;
  tcp_segment& s = step.seg;
  s.control = std::array{tcp_control::none, tcp_control::syn, tcp_control::fin, tcp_control::rst}[control & 3];
  s.psh = control & 4;
  s.urg = control & 8;
  if (s.control == tcp_control::syn && ctx.new_connection) {
    p.snd_nxt = seq32(std::uint32_t(control) << 24 | std::uint32_t(seq_sel) << 8 | 1);
    p.synced = true;
  }
  // Near where the peer is, mostly exactly there.
  const std::uint32_t seq_delta = std::uint32_t(seq_sel >> 3) << (seq_sel & 7 ? (seq_sel & 7) * 2 : 0);
  switch (seq_sel & 7) {
    case 0: case 1: case 2: case 3: s.seq = p.snd_nxt; break;
    case 4: s.seq = p.snd_nxt - seq_delta; break;
    case 5: s.seq = p.snd_nxt + seq_delta; break;
    case 6: s.seq = p.host_ack.value_or(p.snd_nxt) + seq_delta; break;
    default: s.seq = seq32(std::uint32_t(seq_sel) * 0x01010101u); break;
  }
  if (s.control == tcp_control::syn) s.seq = p.snd_nxt - 1;
  const std::uint32_t ack_delta = std::uint32_t(ack_sel >> 3) << ((ack_sel >> 1) & 3) * 4;
  switch (ack_sel & 7) {
    case 0: case 1: case 2: s.ack = p.host_nxt; break;
    case 3: s.ack = p.host_nxt - ack_delta; break;
    case 4: s.ack = p.host_nxt + ack_delta; break;
    case 5: s.ack = seq32(std::uint32_t(ack_sel) * 0x01030507u); break;
    default: s.ack = std::nullopt; break;
  }
  // Mostly a plain SYN; a SYN,ACK where the peer answers the host's SYN.
  if (s.control == tcp_control::syn && (ack_sel & 7) < 3)
    s.ack = ctx.syn_acks ? std::optional(p.host_nxt) : std::nullopt;
  switch (win >> 6) {
    case 0: s.window = 65535; break;
    case 1: s.window = 0; break;
    case 2: s.window = std::uint16_t(win << 8); break;
    default: s.window = std::uint16_t(win & 63); break;
  }
  if (opts & 1) s.options.mss = std::uint16_t(opts & 2 ? 1460 : win);
  if (opts & 4) s.options.window_scale = std::uint8_t(win % 15);  // emit_tcp writes at most 14; a changed byte sends more
  if (opts & 8) s.options.sack_permitted = true;
  // Timestamps where the host offers them (a segment without is dropped,
  // RFC 7323 3.2), unless bit 4 says otherwise.
  if (ctx.timestamps ? !(opts & 16) : (opts & 16)) s.options.timestamps = tcp_timestamps{ctx.ts_value, p.ts_recent};
  if (opts & 32) {  // SACK blocks of what the host sent
    s.options.sack_count = 1 + (win & 1);
    for (unsigned k = 0; k < s.options.sack_count; ++k) {
      const seq32 right = p.host_nxt - std::uint32_t(win) * 4 * k;
      s.options.sack[k] = {right - std::uint32_t(len + 1), right};
    }
  }
  if (opts & 64) {
    const std::uint8_t at = in.next();
    const std::uint8_t x = in.next();
    step.change = {{at, x ? x : 1}};
  }
  const seq32 data_seq = s.seq + (s.control == tcp_control::syn ? 1u : 0u);
  payload.resize(len);
  for (std::size_t i = 0; i < len; ++i) payload[i] = stream_byte(data_seq + std::uint32_t(i));
  s.payload = payload;
  if (s.control != tcp_control::rst && s.seq == p.snd_nxt - (s.control == tcp_control::syn ? 1u : 0u))
    p.snd_nxt = s.seq + s.seq_len();
  return step;
}

}  // namespace affine_fuzz
