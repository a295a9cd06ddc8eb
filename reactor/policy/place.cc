// place_wakeup(): the wake-affine ladder, then the idle-sibling search. Each
// rung mirrors a line of the kernel's select_task_rq_fair() path, and says so.

#include "reactor/policy/place.hh"

#include <algorithm>
#include <cstdint>

namespace affine::policy {

std::string_view to_string(waker_kind k) {
  switch (k) {
    case waker_kind::fiber: return "fiber";
    case waker_kind::rx_path: return "rx_path";
    case waker_kind::timer: return "timer";
    case waker_kind::completion: return "completion";
  }
  return "unknown";
}

std::string_view to_string(wake_reason r) {
  switch (r) {
    case wake_reason::pinned: return "pinned";
    case wake_reason::no_affine: return "no_affine";
    case wake_reason::waker_on_prev: return "waker_on_prev";
    case wake_reason::affine_idle_waker: return "affine_idle_waker";
    case wake_reason::affine_sync_waker: return "affine_sync_waker";
    case wake_reason::prev_idle: return "prev_idle";
    case wake_reason::affine_load_this: return "affine_load_this";
    case wake_reason::affine_load_prev: return "affine_load_prev";
  }
  return "unknown";
}

bool honoured_sync(const wakeup& w, const policy_config& cfg) noexcept {
  if (!w.sync) return false;
  switch (w.kind) {
    case waker_kind::fiber: return true;
    // seed 000: sock_def_readable() moves from wake_up_interruptible_sync_poll
    // to wake_up_interruptible_poll; RX wakeups are sync only on request.
    case waker_kind::rx_path: return cfg.rx_wakeup_sync;
    case waker_kind::timer:
    case waker_kind::completion: return false;
  }
  return false;
}

namespace {

struct affine_choice {
  core_id target;
  wake_reason reason;
};

// seed 004: the shortcut assumes the one runnable fiber on the waker's core is
// the waker, about to sleep. That holds only when the waker is a fiber
// (in_task()); for the RX path the one fiber is an unrelated antagonist.
bool sync_shortcut_allowed(waker_kind kind, wake_affine_mode mode) {
  return mode == wake_affine_mode::always || kind == waker_kind::fiber;
}

// Kernel wake_affine_weight(): compare the waker's core with the wakee moved
// onto it against prev with the wakee taken off.
affine_choice wake_affine_weight(const sched_view& view, const wakeup& w, bool sync,
                                 const policy_config& cfg) {
  const core_id self = w.waker_core;
  const core_id prev = w.wakee_prev_core;
  std::int64_t this_load = view.at(self).load;
  std::int64_t prev_load = view.at(prev).load;
  if (sync) {
    // The waker is most of its core's load and is leaving it.
    if (w.waker_load > this_load) return {self, wake_reason::affine_load_this};
    this_load -= w.waker_load;
  }
  this_load += w.wakee_load;
  prev_load -= w.wakee_load;
  // The allowance favours prev (see policy_config::wake_affine_allowance_pct).
  this_load *= 100 + cfg.wake_affine_allowance_pct;
  prev_load *= 100;
  // Kernel: on a sync wakeup equal loads let the wakee stack on the waker.
  if (sync) prev_load += 1;
  if (this_load < prev_load) return {self, wake_reason::affine_load_this};
  return {prev, wake_reason::affine_load_prev};
}

// Kernel select_task_rq_fair() -> wake_affine(): pick between the waker's core
// ("this") and the wakee's previous core.
affine_choice wake_affine(const sched_view& view, const wakeup& w, const policy_config& cfg) {
  const core_id self = w.waker_core;
  const core_id prev = w.wakee_prev_core;
  // seed 004 (wake_affine = off): no affine pull at all.
  if (cfg.wake_affine == wake_affine_mode::off) return {prev, wake_reason::no_affine};
  const bool sync = honoured_sync(w, cfg);
  // Kernel: wake_affine() is not consulted when cpu == prev_cpu. The sync
  // shortcut below still applies, so a fiber handing over to its partner on
  // the same core keeps it there (see select_idle_sibling).
  if (self == prev) {
    if (sync && view.nr_running(self) == 1 && sync_shortcut_allowed(w.kind, cfg.wake_affine))
      return {self, wake_reason::affine_sync_waker};
    return {prev, wake_reason::waker_on_prev};
  }
  // Kernel wake_affine_idle(), first rule: an idle waker core that shares the
  // cache with prev; prev if it is idle too (no migration), else the waker's.
  if (view.idle(self) && view.topo.share_llc(self, prev)) {
    return {view.idle(prev) ? prev : self, wake_reason::affine_idle_waker};
  }
  // Kernel wake_affine_idle(), second rule, with seed 004's `&& in_task()`.
  if (sync && view.nr_running(self) == 1 && sync_shortcut_allowed(w.kind, cfg.wake_affine)) {
    return {self, wake_reason::affine_sync_waker};
  }
  // Kernel wake_affine_idle(), third rule.
  if (view.idle(prev)) return {prev, wake_reason::prev_idle};
  return wake_affine_weight(view, w, sync, cfg);
}

// Kernel select_idle_sibling(), without the SMT and idle-core passes (one
// reactor per core): the target if idle, prev if idle and cache-affine, else
// the first idle core of the target's LLC after the target, wrapping, so the
// scan is deterministic and does not always favour the LLC's first core.
//
// Unlike the kernel, a target chosen by the sync shortcut is not traded for a
// third core: the shortcut's premise is that the waker, the core's only fiber,
// is about to sleep (seed 004), and a fiber hand-over on one core costs a
// context switch where a move to an idle sibling costs a cross-core wakeup
// (bench/run reactor measures both; docs/policies.md). An idle,
// cache-affine prev still wins: the wakee's cache is there.
placement select_idle_sibling(const sched_view& view, core_id prev, affine_choice choice) {
  const core_id target = choice.target;
  if (view.idle(target)) return {target, choice.reason, false};
  if (prev != target && view.topo.share_llc(prev, target) && view.idle(prev)) {
    return {prev, choice.reason, true};
  }
  if (choice.reason == wake_reason::affine_sync_waker) return {target, choice.reason, false};
  const std::span<const core_id> llc = view.topo.cores_in_llc(view.topo.core(target).llc);
  const std::size_t n = llc.size();
  const auto pos = static_cast<std::size_t>(std::lower_bound(llc.begin(), llc.end(), target) - llc.begin());
  for (std::size_t i = 1; i < n; ++i) {
    const core_id c = llc[(pos + i) % n];
    if (view.idle(c)) return {c, choice.reason, true};
  }
  return {target, choice.reason, false};
}

}  // namespace

placement place_wakeup(const sched_view& view, const wakeup& w, const policy_config& cfg) noexcept {
  if (w.pinned) return {*w.pinned, wake_reason::pinned, false};
  return select_idle_sibling(view, w.wakee_prev_core, wake_affine(view, w, cfg));
}

}  // namespace affine::policy
