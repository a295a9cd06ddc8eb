#pragma once
// The per-core timer wheel: a hierarchical wheel (Varghese & Lauck, scheme 6)
// over intrusive timers. It is a pure data structure: time is passed in
// (`arm`, `advance`), it reads no clock and takes no locks; it runs on the
// owning core only.
//
// Time is cut into ticks of 2^tick_shift ns (default 1024 ns). A timer's tick
// is its expiry rounded *up* to a tick, and it fires in the first
// advance(now) with floor(now / tick) >= its tick, i.e. with
// now >= round_up(expiry, tick). So a timer never fires early, and the
// granularity makes it late by less than one tick: an advance(now) with
// expiry <= now < round_up(expiry, tick) does not fire it yet.
//
// Layout: `levels` levels of 64 slots. Level L slots are 64^L ticks wide. A
// timer lives at the level of the highest base-64 digit in which its tick
// differs from `elapsed` (the last tick processed), in the slot named by its
// own digit there. Its digits above that level equal elapsed's, so a level's
// occupied slots all lie ahead of elapsed without wrapping around: the
// earliest slot of a level is the lowest set bit of its occupancy word, and
// every timer of level L is earlier than every timer of level L+1. When
// elapsed reaches the start of a level-L slot, that slot's timers "cascade":
// each is placed again, now landing on a lower level, until it reaches
// level 0, whose slots are one tick each and fire. Eleven levels cover the
// whole 64-bit tick range (11 KiB of slot heads per core), so there is no
// overflow list and no clamping into the top level: a timer hours or years
// away simply starts on a higher level and cascades a few more times, each
// an O(1) relink.

#include <array>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <optional>

namespace affine {

// Monotonic nanoseconds since an arbitrary epoch; the reactor owns the clock.
using time_ns = std::uint64_t;

class timer_wheel;

namespace detail {
// Circular doubly-linked hook shared by timers and the wheel's slot heads, so
// that a timer unlinks in O(1) without knowing which list holds it.
struct timer_link {
  timer_link* prev = nullptr;
  timer_link* next = nullptr;
};
}  // namespace detail

// Embedded in the object that owns the timeout (a connection, a sleeping
// fiber). Not copyable or movable: the wheel points at it while armed. Must be
// cancelled (or have fired) before it is destroyed; the destructor asserts it.
class timer : private detail::timer_link {
 public:
  // Called from timer_wheel::advance with the timer already disarmed, so it
  // may re-arm itself or arm and cancel any other timer of the same wheel.
  using callback = void (*)(timer& self, void* context);

  timer(callback fn, void* context) noexcept : fn_(fn), context_(context) {}
  timer(const timer&) = delete;
  timer& operator=(const timer&) = delete;
  ~timer();

  // The expiry it was last armed with.
  time_ns expiry() const noexcept { return expiry_; }

 private:
  friend class timer_wheel;

  callback fn_;
  void* context_;
  time_ns expiry_ = 0;
  std::uint64_t tick_ = 0;   // tick it fires on: round_up(expiry), or later if armed overdue
  std::uint8_t level_ = 0;   // where it is linked: level and slot, or the deferred list
  std::uint8_t slot_ = 0;
};

class timer_wheel {
 public:
  static constexpr unsigned default_tick_shift = 10;  // 1024 ns ticks

  // `now` is the current time; `tick_shift` sets the level-0 resolution to
  // 2^tick_shift ns (0..63).
  explicit timer_wheel(time_ns now = 0, unsigned tick_shift = default_tick_shift);
  timer_wheel(const timer_wheel&) = delete;
  timer_wheel& operator=(const timer_wheel&) = delete;
  // Asserts that no timer is armed: an armed timer at this point is a leak in
  // its owner, and detaching it silently would hide that.
  ~timer_wheel();

  // Precondition: !armed(t). An expiry already past fires at the next
  // advance() (see advance() for arming from inside a callback).
  void arm(timer& t, time_ns expiry) noexcept;
  // O(1). Returns whether it was armed.
  bool cancel(timer& t) noexcept;
  void rearm(timer& t, time_ns expiry) noexcept;
  bool armed(const timer& t) const noexcept { return t.next != nullptr; }

  // Fires due timers, earliest tick first (timers sharing a tick fire in the
  // order they reached its slot), at most `budget` of them; returns how many
  // fired. Timers left due by the budget fire first in the next call. A
  // callback that arms a timer for a tick after the one being fired sees it
  // fire in this same call if it is due (so a periodic timer many periods
  // behind catches up here; the budget bounds that). One armed for the tick
  // being fired or earlier fires in the next call: a timer re-arming itself
  // into the past cannot loop forever. Not re-entrant.
  std::size_t advance(time_ns now, std::size_t budget = std::numeric_limits<std::size_t>::max());

  // The earliest `now` at which advance(now) fires a timer (nullopt if none
  // is armed): round_up(earliest expiry, tick), so it lies in
  // [earliest expiry, earliest expiry + resolution()). It may be <= the last
  // `now` passed in when an overdue timer is waiting. Sleeping until exactly
  // this time wakes the reactor when there is work; a lower bound would wake
  // it into a tick that cannot fire yet. O(1) when the cached answer still
  // holds; otherwise O(levels) plus, when nothing is on level 0, a scan of
  // the one slot that holds the earliest timer. Not callable from a callback.
  std::optional<time_ns> next_deadline() const noexcept;

  std::size_t size() const noexcept { return size_; }
  time_ns resolution() const noexcept { return time_ns{1} << shift_; }

 private:
  static constexpr unsigned slot_bits = 6;
  static constexpr unsigned slots = 1U << slot_bits;
  static constexpr unsigned levels = (64 + slot_bits - 1) / slot_bits;
  static constexpr std::uint8_t deferred_level = levels;

  struct slot_ref {
    unsigned level;
    unsigned slot;
    std::uint64_t first_tick;  // the slot's first tick
  };

  std::uint64_t tick_of(time_ns expiry) const noexcept;
  time_ns time_of(std::uint64_t tick) const noexcept;
  std::optional<slot_ref> earliest_slot() const noexcept;
  std::uint64_t earliest_tick() const noexcept;
  void place(timer& t) noexcept;
  void unplace(timer& t) noexcept;
  void cascade(detail::timer_link& head) noexcept;
  void place_deferred() noexcept;

  std::array<std::array<detail::timer_link, slots>, levels> slots_;
  std::array<std::uint64_t, levels> occupied_{};  // bit s of level L: slots_[L][s] non-empty
  detail::timer_link deferred_;                   // armed in a callback for an already-fired tick
  std::uint64_t elapsed_;                         // tick last reached: no armed timer is before it
  unsigned shift_;
  std::size_t size_ = 0;
  bool firing_ = false;
  // Cache of the smallest tick_ of the armed timers; lowered by arm, dropped
  // only when the timer holding it leaves, so next_deadline is usually O(1).
  mutable std::uint64_t earliest_ = std::numeric_limits<std::uint64_t>::max();
  mutable bool earliest_known_ = true;
};

}  // namespace affine
