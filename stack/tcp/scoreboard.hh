#pragma once
// The SACK sender's scoreboard (RFC 2018 3, RFC 6675 3): which bytes past
// SND.UNA the receiver has reported holding. Ranges are kept as offsets from
// SND.UNA in an assembler, so they are sorted, merged and bounded like the
// receiver's out-of-order ranges; a block that would need one range more
// than the bound is not kept (the data counts as not SACKed: at worst it is
// sent again). Nothing here grows with the number or size of the blocks a
// peer sends: the CVE-2019-11477/11478 class (tiny SACKed pieces that
// fragment a retransmission queue) has nothing to fragment, since the send
// buffer is one ring and only these ranges describe it.
//
// Queries: the holes NextSeg walks, and what is SACKed where. Which holes
// are lost is RACK's to say (sent_log.hh, rack.cc).

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>

#include "stack/tcp/assembler.hh"
#include "stack/wire/seq32.hh"
#include "stack/wire/tcp_segment.hh"

namespace affine::stack::tcp {

class scoreboard {
 public:
  explicit scoreboard(std::size_t max_ranges = 32) : sacked_(max_ranges) {}

  struct range {
    seq32 begin, end;
  };
  struct update {
    std::uint32_t newly_sacked = 0;  // bytes SACKed for the first time
    bool dsack = false;              // RFC 2883: the first block reports a duplicate ...
    range dsack_range{};             // ... of these bytes
    unsigned rejected = 0;           // blocks empty, inverted, or beyond SND.MAX
    bool full = false;               // a block not kept: the range bound
    // Where the newly SACKed bytes lie, in the order found; when there were
    // more runs than fit, fresh_overflow and the caller looks at the blocks.
    std::array<range, 8> fresh{};
    std::uint8_t fresh_count = 0;
    bool fresh_overflow = false;
  };
  // One ACK's blocks in the order sent. `una` is SND.UNA after this ACK's
  // cumulative acknowledgment, `snd_max` the highest sequence number sent.
  update take(std::span<const tcp_sack_block> blocks, seq32 una, seq32 snd_max);
  // Empties the board with SND.UNA at `una` (a connection's start).
  void reset(seq32 una) {
    clear();
    una_ = una;
  }
  // SND.UNA moved to `una`: what it covers is forgotten.
  void advance(seq32 una);
  // RFC 2018 8: the receiver may discard what it SACKed (reneging), so a
  // retransmission timeout forgets every block.
  void clear();

  bool empty() const { return sacked_.empty(); }
  std::size_t range_count() const { return sacked_.range_count(); }
  std::uint32_t sacked_bytes() const { return bytes_; }
  seq32 una() const { return una_; }
  // The end of the highest SACKed range (SND.UNA when none): RFC 6675's
  // highest SACKed sequence number, plus one.
  seq32 high_sacked() const;
  // The end of the SACKed range holding `s`, if one does.
  std::optional<seq32> sacked_run_end(seq32 s) const;
  // The first un-SACKed run at or after `from` and before high_sacked():
  // [begin, end). Empty when there is none.
  std::optional<std::pair<seq32, seq32>> hole_from(seq32 from) const;
  // SACKed bytes within [from, to).
  std::uint32_t sacked_within(seq32 from, seq32 to) const;

 private:
  void note_fresh_runs(update& u, seq32 from, seq32 to) const;

  assembler sacked_;  // (offset from una_, length)
  seq32 una_;
  std::uint32_t bytes_ = 0;
};

}  // namespace affine::stack::tcp
