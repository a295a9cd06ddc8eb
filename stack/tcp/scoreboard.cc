#include "stack/tcp/scoreboard.hh"

#include <algorithm>

namespace affine::stack::tcp {

namespace {

seq32 later(seq32 a, seq32 b) { return a < b ? b : a; }

}  // namespace

scoreboard::update scoreboard::take(std::span<const tcp_sack_block> blocks, seq32 una, seq32 snd_max) {
  advance(una);
  update u;
  for (std::size_t i = 0; i < blocks.size(); ++i) {
    const seq32 left = blocks[i].left;
    const seq32 right = blocks[i].right;
    // A block is a half-open range no longer than the sequence space allows
    // to compare, and never past what was sent.
    if (!(left < right) || right > snd_max) {
      ++u.rejected;
      continue;
    }
    if (i == 0) {
      // RFC 2883 4: the first block reports a duplicate when it lies below
      // the cumulative ACK, or inside the second block.
      const bool below = right <= una;
      const bool inside = blocks.size() > 1 && blocks[1].left <= left && right <= blocks[1].right &&
                          blocks[1].left < blocks[1].right;
      if (below || inside) {
        u.dsack = true;
        u.dsack_range = {left, right};
        continue;
      }
    }
    if (right <= una) continue;  // old news (a later block below SND.UNA)
    const seq32 from = later(left, una);
    const std::uint32_t before = bytes_;
    const std::uint32_t fresh = std::uint32_t(right - from) - sacked_within(from, right);
    if (fresh == 0) continue;
    const std::uint8_t runs_before = u.fresh_count;
    const bool overflow_before = u.fresh_overflow;
    note_fresh_runs(u, from, right);
    if (sacked_.add(std::uint32_t(from - una), std::uint32_t(right - from)) == assembler::add_result::too_many_ranges) {
      u.full = true;
      u.fresh_count = runs_before;
      u.fresh_overflow = overflow_before;
      continue;
    }
    bytes_ = before + fresh;
    u.newly_sacked += fresh;
  }
  return u;
}

// The un-SACKed runs of [from, to), which a block is about to cover.
void scoreboard::note_fresh_runs(update& u, seq32 from, seq32 to) const {
  while (from < to) {
    if (const std::optional<seq32> past = sacked_run_end(from)) {
      from = *past;
      continue;
    }
    const auto hole = hole_from(from);
    const seq32 end = hole && hole->second < to ? hole->second : to;
    if (u.fresh_count == u.fresh.size()) {
      u.fresh_overflow = true;
      return;
    }
    u.fresh[u.fresh_count++] = {from, end};
    from = end;
  }
}

void scoreboard::advance(seq32 una) {
  if (!(una_ < una)) return;
  const std::uint32_t n = std::uint32_t(una - una_);
  bytes_ -= sacked_within(una_, una);
  sacked_.advance(n);
  una_ = una;
}

void scoreboard::clear() {
  sacked_.clear();
  bytes_ = 0;
}

seq32 scoreboard::high_sacked() const {
  const auto r = sacked_.ranges();
  return r.empty() ? una_ : una_ + std::uint32_t(r.back().first + r.back().second);
}

std::optional<seq32> scoreboard::sacked_run_end(seq32 s) const {
  if (s < una_) return std::nullopt;
  const std::size_t off = std::uint32_t(s - una_);
  for (const auto& [begin, len] : sacked_.ranges())
    if (begin <= off && off < begin + len) return una_ + std::uint32_t(begin + len);
  return std::nullopt;
}

std::optional<std::pair<seq32, seq32>> scoreboard::hole_from(seq32 from) const {
  from = later(from, una_);
  const std::size_t off = std::uint32_t(from - una_);
  for (const auto& [begin, len] : sacked_.ranges()) {
    if (off < begin) return std::pair{from, una_ + std::uint32_t(begin)};
    if (off < begin + len) from = una_ + std::uint32_t(begin + len);
  }
  return std::nullopt;  // nothing SACKed above: no hole below high_sacked()
}

std::uint32_t scoreboard::sacked_within(seq32 from, seq32 to) const {
  from = later(from, una_);
  if (!(from < to)) return 0;
  const std::size_t lo = std::uint32_t(from - una_);
  const std::size_t hi = std::uint32_t(to - una_);
  std::uint64_t n = 0;
  for (const auto& [begin, len] : sacked_.ranges()) {
    const std::size_t b = std::max(begin, lo);
    const std::size_t e = std::min(begin + len, hi);
    if (b < e) n += e - b;
  }
  return std::uint32_t(n);
}

}  // namespace affine::stack::tcp
