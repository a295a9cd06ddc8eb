#pragma once
// Where a woken fiber runs: the userspace select_task_rq_fair() with
// wake_affine() and select_idle_sibling(), carrying the fixes of seed 000
// (RX wakeups are not sync) and seed 004 (the nr_running == 1 shortcut is for
// fiber wakers only).

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>

#include "affine/topology.hh"
#include "reactor/policy/config.hh"
#include "reactor/policy/view.hh"

namespace affine::policy {

// Who issued the wakeup. Only a fiber waker is "current" on its core in the
// kernel's sense: it will sleep and hand the core over. The others run in the
// reactor between fibers, like interrupts (DESIGN.md section 4).
enum class waker_kind : std::uint8_t { fiber, rx_path, timer, completion };
std::string_view to_string(waker_kind k);

struct wakeup {
  core_id wakee_prev_core;   // where the woken fiber last ran
  core_id waker_core;        // the core issuing the wakeup ("this")
  waker_kind kind = waker_kind::fiber;
  bool sync = false;         // the waker says it is about to sleep
  std::optional<core_id> pinned = std::nullopt;  // the fiber may run only here
  // Decayed loads (x load_scale) used by the load comparison: the wakee's own,
  // still counted on prev; the waker's, which leaves "this" on a sync wakeup.
  // For an RX wakeup made sync by rx_wakeup_sync, the kernel subtracts the
  // interrupted task's load: pass the load of the fiber the RX path ran after.
  std::uint32_t wakee_load = 0;
  std::uint32_t waker_load = load_scale;
};

// The rung of the ladder that decided. Counted per core by the reactor.
enum class wake_reason : std::uint8_t {
  pinned,             // the fiber is pinned
  no_affine,          // wake_affine = off
  waker_on_prev,      // waker's core is prev: nothing to choose
  affine_idle_waker,  // waker's core idle and shares the LLC with prev
  affine_sync_waker,  // sync, waker alone on its core (seed 004's shortcut)
  prev_idle,          // prev is idle
  affine_load_this,   // load comparison chose the waker's core
  affine_load_prev,   // load comparison chose prev
};
// Sizes the reactor's per-core counter arrays, indexed by the enum.
inline constexpr std::size_t wake_reason_count = static_cast<std::size_t>(wake_reason::affine_load_prev) + 1;
std::string_view to_string(wake_reason r);

struct placement {
  core_id core;
  wake_reason reason;
  // The idle-sibling search moved the fiber off the core wake-affine chose.
  bool idle_sibling = false;
  friend bool operator==(const placement&, const placement&) = default;
};

// Decide. Preconditions: the view is well formed; wakee_prev_core and
// waker_core are reactor cores. Pure: no allocation, no state, no clock.
placement place_wakeup(const sched_view& view, const wakeup& w, const policy_config& cfg) noexcept;

// Whether the wakeup counts as sync: a fiber's hint is honoured; the RX path's
// only with rx_wakeup_sync (seed 000); a timer's or a completion's never.
bool honoured_sync(const wakeup& w, const policy_config& cfg) noexcept;

}  // namespace affine::policy
