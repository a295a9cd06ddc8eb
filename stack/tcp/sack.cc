// SACK, the data receiver's side (RFC 2018 4): which blocks of the data
// held past RCV.NXT (the assembler's ranges) an ACK reports, in which order,
// and D-SACK (RFC 2883): the duplicates received, reported first.
//
// "The first SACK block ... MUST specify the contiguous block of data
// containing the segment which triggered this ACK"; then "as many distinct
// SACK blocks as possible", repeating "the most recently reported SACK
// blocks". The starts of the latest out-of-order segments, newest first,
// say which; the rest come from the highest range down.

#include <algorithm>

#include "stack/tcp/connection.hh"

namespace affine::stack::tcp {

namespace {

// RFC 2018 3: kind, length and 8 bytes per block; emit_tcp_options pads
// the option with two NOPs to 32 bits.
constexpr std::uint32_t sack_option_bytes(std::uint32_t blocks) { return 4 + 8 * blocks; }

}  // namespace

void connection::note_out_of_order(seq32 seq) {
  const auto first = sack_recent_.begin();
  auto at = std::find(first, first + sack_recent_count_, seq);
  if (at == first + sack_recent_count_) {  // new: into the last place (the oldest goes when full)
    if (sack_recent_count_ < sack_recent_.size()) ++sack_recent_count_;
    at = first + (sack_recent_count_ - 1);
  }
  std::rotate(first, at, at + 1);  // to the front
  sack_recent_[0] = seq;
}

// RFC 2883 4: "the first block of the SACK option should be a D-SACK
// block specifying the sequence numbers for the duplicate segment", one
// D-SACK block per duplicate, in the next ACK with room for it: at once for
// a segment all old or held already (the callers answer those at once, RFC
// 5681 4.2), with the ACK its new bytes earn for one partly old (as Linux).
void connection::note_duplicate(seq32 begin, seq32 end) {
  if (!sack_ok_ || !(begin < end)) return;
  dsack_ = tcp_sack_block{begin, end};
  count(&connection_stats::dsacks_sent);
}

void connection::add_sack_blocks(tcp_options& o, std::uint32_t room_bytes) const {
  // RFC 2018 3: four blocks fit in the option space, three beside timestamps.
  std::uint32_t most = o.timestamps ? 3 : 4;
  while (most > 0 && sack_option_bytes(most) > room_bytes) --most;
  const auto ranges = ooo_.ranges();
  std::fill(std::begin(o.sack), std::end(o.sack), tcp_sack_block{});  // unused blocks read as none
  std::uint8_t n = 0;
  // RFC 2883 4: a D-SACK block first. It may equal the SACK block of the
  // held data it duplicates, which still follows it (the "possibly larger
  // block" of 4.2 (1)), so the blocks after it are compared among themselves.
  const std::uint8_t first_sack = dsack_ && most > 0 ? 1 : 0;
  if (first_sack) o.sack[n++] = *dsack_;
  auto add = [&](const assembler::range& r) {
    const tcp_sack_block b{rcv_nxt_ + std::uint32_t(r.first), rcv_nxt_ + std::uint32_t(r.first + r.second)};
    for (std::uint8_t i = first_sack; i < n; ++i)
      if (o.sack[i] == b) return;
    o.sack[n++] = b;
  };
  for (std::uint8_t i = 0; i < sack_recent_count_ && n < most; ++i) {
    const seq32 s = sack_recent_[i];
    if (s < rcv_nxt_) continue;  // delivered since
    const std::size_t offset = std::uint32_t(s - rcv_nxt_);
    const auto r = std::find_if(ranges.begin(), ranges.end(),
                                [offset](const assembler::range& x) { return offset - x.first < x.second; });
    if (r != ranges.end()) add(*r);
  }
  for (auto r = ranges.rbegin(); r != ranges.rend() && n < most; ++r) add(*r);
  o.sack_count = n;
}

}  // namespace affine::stack::tcp
