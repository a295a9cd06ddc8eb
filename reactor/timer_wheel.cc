#include "reactor/timer_wheel.hh"

#include <algorithm>
#include <bit>
#include <cassert>

namespace affine {
namespace {

using detail::timer_link;

void init_head(timer_link& head) noexcept { head.prev = head.next = &head; }

bool is_empty(const timer_link& head) noexcept { return head.next == &head; }

void push_back(timer_link& head, timer_link& node) noexcept {
  node.prev = head.prev;
  node.next = &head;
  head.prev->next = &node;
  head.prev = &node;
}

// Leaves the node's hook null: that is what "not armed" means.
void unlink(timer_link& node) noexcept {
  node.prev->next = node.next;
  node.next->prev = node.prev;
  node.prev = node.next = nullptr;
}

}  // namespace

timer::~timer() { assert(next == nullptr && "timer destroyed while armed"); }

timer_wheel::timer_wheel(time_ns now, unsigned tick_shift) : shift_(tick_shift) {
  assert(tick_shift < 64);
  elapsed_ = now >> shift_;
  for (auto& level : slots_) {
    for (auto& head : level) init_head(head);
  }
  init_head(deferred_);
}

timer_wheel::~timer_wheel() { assert(size_ == 0 && "timer_wheel destroyed with armed timers"); }

std::uint64_t timer_wheel::tick_of(time_ns expiry) const noexcept {
  // Round up: firing on a tick whose start is before the expiry would be early.
  return (expiry >> shift_) + ((expiry & (resolution() - 1)) != 0);
}

time_ns timer_wheel::time_of(std::uint64_t tick) const noexcept {
  // Only the tick just past the end of time overflows; no advance() reaches it.
  constexpr time_ns end = std::numeric_limits<time_ns>::max();
  return tick > (end >> shift_) ? end : tick << shift_;
}

void timer_wheel::arm(timer& t, time_ns expiry) noexcept {
  assert(!armed(t));
  t.expiry_ = expiry;
  // An overdue timer goes to the current tick: every slot is at or after it.
  t.tick_ = std::max(tick_of(expiry), elapsed_);
  ++size_;
  if (earliest_known_) earliest_ = std::min(earliest_, t.tick_);
  if (firing_ && t.tick_ == elapsed_) {
    // The current tick is being fired; placing it there would fire it again
    // in this advance(), forever for a timer that re-arms itself overdue.
    t.level_ = deferred_level;
    push_back(deferred_, t);
    return;
  }
  place(t);
}

bool timer_wheel::cancel(timer& t) noexcept {
  if (!armed(t)) return false;
  unplace(t);
  --size_;
  if (t.tick_ == earliest_) earliest_known_ = false;
  return true;
}

void timer_wheel::rearm(timer& t, time_ns expiry) noexcept {
  cancel(t);
  arm(t, expiry);
}

void timer_wheel::place(timer& t) noexcept {
  // The highest base-64 digit in which the tick differs from elapsed_ picks
  // the level; OR-ing in the low digit makes "no difference" land on level 0.
  const std::uint64_t differing = (t.tick_ ^ elapsed_) | (slots - 1);
  const unsigned level = (63 - std::countl_zero(differing)) / slot_bits;
  const unsigned slot = (t.tick_ >> (level * slot_bits)) & (slots - 1);
  t.level_ = static_cast<std::uint8_t>(level);
  t.slot_ = static_cast<std::uint8_t>(slot);
  push_back(slots_[level][slot], t);
  occupied_[level] |= std::uint64_t{1} << slot;
}

void timer_wheel::unplace(timer& t) noexcept {
  unlink(t);
  if (t.level_ == deferred_level) return;
  if (is_empty(slots_[t.level_][t.slot_])) occupied_[t.level_] &= ~(std::uint64_t{1} << t.slot_);
}

std::optional<timer_wheel::slot_ref> timer_wheel::earliest_slot() const noexcept {
  // Levels are ordered in time (see the header), so the lowest non-empty
  // level holds the earliest timer, in its lowest occupied slot.
  for (unsigned level = 0; level < levels; ++level) {
    if (occupied_[level] == 0) continue;
    const unsigned slot = std::countr_zero(occupied_[level]);
    const unsigned shift = level * slot_bits;
    // Digits above this level come from elapsed_. For the top level the span
    // wraps to 0 and the mask keeps nothing, which is what is wanted.
    const std::uint64_t span_mask = (std::uint64_t{slots} << shift) - 1;
    return slot_ref{level, slot, (elapsed_ & ~span_mask) | (std::uint64_t{slot} << shift)};
  }
  return std::nullopt;
}

std::uint64_t timer_wheel::earliest_tick() const noexcept {
  const auto s = earliest_slot();
  assert(s.has_value());
  // A level-0 slot is a single tick. A higher slot spans 64^level ticks in no
  // order, so it is scanned; the cache makes this rare.
  if (s->level == 0) return s->first_tick;
  const timer_link& head = slots_[s->level][s->slot];
  std::uint64_t earliest = std::numeric_limits<std::uint64_t>::max();
  for (const timer_link* n = head.next; n != &head; n = n->next) {
    earliest = std::min(earliest, static_cast<const timer*>(n)->tick_);
  }
  return earliest;
}

std::optional<time_ns> timer_wheel::next_deadline() const noexcept {
  assert(!firing_);
  if (size_ == 0) return std::nullopt;
  if (!earliest_known_) {
    earliest_ = earliest_tick();
    earliest_known_ = true;
  }
  return time_of(earliest_);
}

void timer_wheel::cascade(timer_link& head) noexcept {
  // elapsed_ is now this slot's first tick, so every timer here shares one
  // more digit with it and place() puts it on a lower level, never back here.
  while (!is_empty(head)) {
    auto& t = static_cast<timer&>(*head.next);
    unplace(t);
    place(t);
  }
}

void timer_wheel::place_deferred() noexcept {
  // Their ticks move up to elapsed_ without touching the cache: it is already
  // unknown, as the first timer this advance() fired held the earliest tick.
  while (!is_empty(deferred_)) {
    auto& t = static_cast<timer&>(*deferred_.next);
    unlink(t);
    t.tick_ = elapsed_;  // still overdue: it fires at the next advance()
    place(t);
  }
}

std::size_t timer_wheel::advance(time_ns now, std::size_t budget) {
  assert(!firing_ && "timer_wheel::advance is not re-entrant");
  const std::uint64_t target = now >> shift_;
  firing_ = true;
  std::size_t fired = 0;
  while (fired < budget) {
    const auto s = earliest_slot();
    if (!s || s->first_tick > target) {
      // Nothing left before target: jump. Levels stay valid because no slot
      // starts at or before target (a clock going backwards moves nothing).
      elapsed_ = std::max(elapsed_, target);
      break;
    }
    elapsed_ = s->first_tick;
    timer_link& head = slots_[s->level][s->slot];
    if (s->level > 0) {
      cascade(head);
      continue;
    }
    // One at a time, re-finding the slot each time: the callback may cancel
    // the next timer here or arm one into an earlier slot than the next.
    auto& t = static_cast<timer&>(*head.next);
    cancel(t);
    ++fired;
    t.fn_(t, t.context_);
  }
  firing_ = false;
  place_deferred();
  return fired;
}

}  // namespace affine
