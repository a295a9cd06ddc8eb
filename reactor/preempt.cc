// Time-slice preemption and stall reports: the tick handler, its timer, the
// rules that say where a fiber may be left, and the stall reporter.
//
// The handler runs on the reactor thread, on the interrupted fiber's stack.
// It touches only what that thread owns and what a signal handler may: the
// core's counters and tick state, the fiber's control block, the run queue
// and timers only once it knows the fiber is not inside the runtime (so
// nothing of the core is half-changed), timer_settime, write, and glibc's
// backtrace() (its unwinder loaded beforehand, so it does not allocate).

#include "reactor/preempt.hh"

#include <cxxabi.h>
#include <dlfcn.h>
#include <execinfo.h>
#include <link.h>
#include <sys/eventfd.h>
#include <ucontext.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <mutex>

#include <fmt/format.h>

#include "affine/log.hh"
#include "reactor/cycles.hh"
#include "reactor/runtime_state.hh"

namespace affine::detail {

namespace {

// ---- the code a fiber may be preempted in ---------------------------------
//
// The program's own executable segments and affine's (the same object when
// affine is linked statically). Everything else is outside code that may hold
// locks of its own: the C library's allocator and stdio, libstdc++, the
// unwinder, the dynamic linker, the sanitizers' runtimes, DPDK's libraries,
// the vDSO, and anything loaded later with dlopen.
struct code_range {
  std::uintptr_t lo, hi;
};
constexpr int max_ranges = 16;
code_range own_code[max_ranges];
int own_code_n = 0;
struct sigaction previous_action{};

bool in_own_code(std::uintptr_t pc) {
  for (int i = 0; i < own_code_n; ++i)
    if (pc >= own_code[i].lo && pc < own_code[i].hi) return true;
  return false;
}

int collect_ranges(dl_phdr_info* info, std::size_t, void* data) {
  auto* affine_base = static_cast<std::uintptr_t*>(data);
  // The first object dl_iterate_phdr reports is the program itself.
  static bool first = true;
  bool take = std::exchange(first, false);
  for (int i = 0; i < info->dlpi_phnum && !take; ++i) {
    const ElfW(Phdr)& ph = info->dlpi_phdr[i];
    const std::uintptr_t lo = info->dlpi_addr + ph.p_vaddr;
    if (ph.p_type == PT_LOAD && *affine_base >= lo && *affine_base < lo + ph.p_memsz) take = true;
  }
  if (!take) return 0;
  for (int i = 0; i < info->dlpi_phnum && own_code_n < max_ranges; ++i) {
    const ElfW(Phdr)& ph = info->dlpi_phdr[i];
    if (ph.p_type != PT_LOAD || (ph.p_flags & PF_X) == 0) continue;
    const std::uintptr_t lo = info->dlpi_addr + ph.p_vaddr;
    own_code[own_code_n++] = {lo, lo + ph.p_memsz};
  }
  return 0;
}

// ---- the tick handler -----------------------------------------------------

// errno through a call the compiler cannot see into: after a switch the
// fiber may be on another thread, whose errno is elsewhere.
[[gnu::noinline, gnu::noipa]] void set_errno(int v) { errno = v; }

std::uint64_t ns_of(std::uint64_t cyc) { return cyc * 1000 / cycles_per_us(); }

// Arms the tick `cyc` cycles after `now` (at least 10 us on).
void arm_in(core_ctx& c, std::uint64_t cyc, std::uint64_t now) {
  const std::uint64_t ns = std::max<std::uint64_t>(ns_of(cyc), 10'000);
  c.tick.due = now + ns * cycles_per_us() / 1000;
  itimerspec its{};
  its.it_value.tv_sec = time_t(ns / 1'000'000'000);
  its.it_value.tv_nsec = long(ns % 1'000'000'000);
  // Armed before the call: a tick that comes at once clears it after.
  c.tick.armed.store(true, std::memory_order_relaxed);
  std::atomic_signal_fence(std::memory_order_seq_cst);
  if (::timer_settime(c.tick.id, 0, &its, nullptr) != 0) c.tick.armed.store(false, std::memory_order_relaxed);
}

// Whether fiber `f` running on `c` is left for a poll turn every
// reactor.rx_interrupt_us: RX queues or backlog rings wait on the core.
bool rx_interrupts(const core_ctx& c, const fiber& f) {
  return c.rt->rx_cycles != 0 && f.preemptible && !c.pollers.empty();
}

// In how many cycles fiber `f`, `age` cycles into its slice, needs the
// tick: when its quantum ends (or one quantum on, if it is over), its next
// RX interrupt, or when it would be a stall, whichever is first; ~0: never.
std::uint64_t next_tick(const core_ctx& c, const fiber& f, std::uint64_t age) {
  const runtime_state& rt = *c.rt;
  std::uint64_t next = ~0ULL;
  if (rt.opts.preempt && f.preemptible) next = age < rt.quantum_cycles ? rt.quantum_cycles - age : rt.quantum_cycles;
  if (rx_interrupts(c, f)) next = std::min(next, age < rt.rx_cycles ? rt.rx_cycles - age : rt.rx_cycles);
  if (rt.stall_cycles != 0)
    next = std::min(next, age < rt.stall_cycles ? rt.stall_cycles - age : rt.stall_cycles / 2);
  return next;
}

void rearm_for(core_ctx& c, const fiber& f, std::uint64_t age) {
  if (const std::uint64_t next = next_tick(c, f, age); next != ~0ULL) arm_in(c, next, cycles());
}

// Work that waits for the core: runnable fibers, messages, due timers, or
// pollers (an RX queue or a backlog ring is only seen by polling it).
// `in_runtime`: the interrupted fiber is in runtime code, which may be
// arming or cancelling a timer on this core's wheel (a park's deadline):
// the wheel is then half changed, and next_deadline() writes its cache, so
// the handler leaves it alone. Such a fiber is not preempted anyway; only
// whether the refusal is counted can differ.
bool work_waits(core_ctx& c, bool in_runtime) {
  return !c.rq.empty() || !c.inbox.empty() || !c.pollers.empty() ||
         (!in_runtime && c.timers.size() > 0 && *c.timers.next_deadline() <= now_ns());
}

void capture_stall(core_ctx& c, fiber& f, std::uint64_t age, std::uintptr_t pc) {
  f.stall_slice = f.slice_start;
  ++c.c.stalls;
  stall_capture& s = c.stall;
  int free_slot = 0;
  if (c.rt->stall_fd < 0 || !s.state.compare_exchange_strong(free_slot, 1, std::memory_order_acquire))
    return;  // the reporter has not taken the last one yet: counted, not reported
  s.fiber_id = f.id;
  s.spawn_file = f.spawn_file;
  s.spawn_line = f.spawn_line;
  s.ran_us = ns_of(age) / 1000;
  void* raw[48];
  const int n = ::backtrace(raw, 48);
  // Drop the handler's own frames: the interrupted pc starts the trace.
  int from = -1;
  for (int i = 0; i < n && from < 0; ++i)
    if (reinterpret_cast<std::uintptr_t>(raw[i]) == pc) from = i;
  int k = 0;
  if (from < 0) s.frame[k++] = reinterpret_cast<void*>(pc), from = n;
  for (int i = from; i < n && k < int(std::size(s.frame)); ++i) s.frame[k++] = raw[i];
  s.frames = k;
  s.state.store(2, std::memory_order_release);
  const std::uint64_t one = 1;
  [[maybe_unused]] ssize_t w = ::write(c.rt->stall_fd, &one, sizeof one);
}

// Leave the fiber for the reactor as a yield would, from inside the handler.
// It resumes here, on whichever core takes it, and the handler's return
// restores everything the signal frame saved.
// `for_rx`: an RX interrupt, after which f resumes first, its slice going
// on; else a preemption, after which it is requeued as a yield would be.
void preempt(core_ctx& c, fiber& f, ucontext_t* uc, bool for_rx) {
  f.no_preempt.store(1, std::memory_order_relaxed);
  std::atomic_signal_fence(std::memory_order_seq_cst);
  if (for_rx) {
    ++c.c.rx_interrupts;
    c.rx_interrupted = true;
  } else {
    ++c.c.preemptions;
    c.yielded = true;
    c.quantum_preempted = true;
  }
  const core_ctx* from = &c;
  // The handler runs with ticks blocked; the reactor must get them again.
  // (The fiber's own mask comes back with the handler's return.)
  sigset_t tick;
  sigemptyset(&tick);
  sigaddset(&tick, tick_signal);
  ::pthread_sigmask(SIG_UNBLOCK, &tick, nullptr);
  switch_to_reactor(&f);
  // On another thread the frame's saved alternate signal stack is the old
  // thread's: the return would install it here. Put this thread's own.
  if (this_core() != from) ::sigaltstack(nullptr, &uc->uc_stack);
  std::atomic_signal_fence(std::memory_order_seq_cst);
  f.no_preempt.store(0, std::memory_order_relaxed);
}

void on_tick(int sig, siginfo_t* si, void* ucv) {
  core_ctx* c = this_core();
  if (si == nullptr || si->si_code != SI_TIMER || c == nullptr || si->si_value.sival_ptr != c) {
    // Not a reactor's tick: the handler that was installed before ours.
    if ((previous_action.sa_flags & SA_SIGINFO) != 0 && previous_action.sa_sigaction != nullptr)
      previous_action.sa_sigaction(sig, si, ucv);
    else if (previous_action.sa_handler != SIG_DFL && previous_action.sa_handler != SIG_IGN)
      previous_action.sa_handler(sig);
    return;
  }
  const int saved_errno = errno;
  c->tick.armed.store(false, std::memory_order_relaxed);
  fiber* f = c->current;
  if (f == nullptr) return;  // the reactor's own code: its loop re-arms when it runs fibers
  auto* uc = static_cast<ucontext_t*>(ucv);
  const auto pc = std::uintptr_t(uc->uc_mcontext.gregs[REG_RIP]);
  const auto sp = std::uintptr_t(uc->uc_mcontext.gregs[REG_RSP]);
  const bool on_stack = sp >= std::uintptr_t(f->stack.base) && sp < std::uintptr_t(f->stack.top());
  const bool own = in_own_code(pc);
  const runtime_state& rt = *c->rt;
  const std::uint64_t age = cycles() - f->slice_start;

  if (rt.stall_cycles != 0 && age >= rt.stall_cycles && f->stall_slice != f->slice_start && on_stack && own)
    capture_stall(*c, *f, age, pc);

  // Past its quantum with other work waiting, or due an RX interrupt.
  const bool in_runtime = f->no_preempt.load(std::memory_order_relaxed) != 0;
  const bool quantum = rt.opts.preempt && f->preemptible && age >= rt.quantum_cycles && work_waits(*c, in_runtime);
  if (quantum || (rx_interrupts(*c, *f) && age >= rt.rx_cycles)) {
    refusal why = refusal::count_;
    if (in_runtime) why = refusal::runtime;
    else if (!on_stack) why = refusal::switching;
    else if (!own) why = refusal::outside;
    if (why != refusal::count_) {
      ++c->c.preempt_refused[std::size_t(why)];
    } else {
      preempt(*c, *f, uc, /*for_rx=*/!quantum);
      set_errno(saved_errno);
      return;
    }
  }
  rearm_for(*c, *f, age);
  set_errno(saved_errno);
}

// ---- the stall reporter -----------------------------------------------------

std::string frame_line(int i, void* addr) {
  Dl_info info{};
  if (::dladdr(addr, &info) == 0 || info.dli_fname == nullptr)
    return fmt::format("\n  #{} {}", i, addr);
  const auto a = std::uintptr_t(addr);
  const auto base = std::uintptr_t(info.dli_fbase);
  std::string name = "?";
  std::uintptr_t off = 0;
  if (info.dli_sname != nullptr) {
    int status = -1;
    char* d = abi::__cxa_demangle(info.dli_sname, nullptr, nullptr, &status);
    name = status == 0 && d != nullptr ? d : info.dli_sname;
    std::free(d);
    off = a - std::uintptr_t(info.dli_saddr);
  }
  // object+offset is what addr2line -e object takes, symbol or not.
  return fmt::format("\n  #{} {} {}+{:#x} ({}+{:#x})", i, addr, name, off, info.dli_fname, a - base);
}

void reporter_main(runtime_state* rt) {
  for (;;) {
    std::uint64_t v = 0;
    if (::read(rt->stall_fd, &v, sizeof v) < 0 && errno == EINTR) continue;
    for (auto& cp : rt->cores) {
      stall_capture& s = cp->stall;
      if (s.state.load(std::memory_order_acquire) != 2) continue;
      std::string trace;
      for (int i = 0; i < s.frames; ++i) trace += frame_line(i, s.frame[i]);
      AFFINE_LOG_RATELIMITED(warn, "stall: core {} fiber {:#x} (spawned at {}:{}) has run {} ms without yielding:{}",
                             cp->index, s.fiber_id, s.spawn_file, s.spawn_line, s.ran_us / 1000, trace);
      s.state.store(0, std::memory_order_release);
    }
    if (rt->stall_reporter_stop.load(std::memory_order_acquire)) return;
  }
}

}  // namespace

std::expected<void, std::string> tick_process_setup() {
  static std::once_flag once;
  static std::string error;
  std::call_once(once, [] {
    Dl_info self{};
    if (::dladdr(reinterpret_cast<void*>(&tick_process_setup), &self) == 0) {
      error = "dladdr cannot find affine's own object";
      return;
    }
    auto base = std::uintptr_t(&tick_process_setup);
    ::dl_iterate_phdr(collect_ranges, &base);
    void* warm[4];
    ::backtrace(warm, 4);  // loads the unwinder now, not in a handler
    struct sigaction sa{};
    sa.sa_sigaction = on_tick;
    // The tick is blocked while its handler runs (no nesting); preempt()
    // unblocks it before it leaves for the reactor.
    sa.sa_flags = SA_SIGINFO | SA_RESTART;
    sigemptyset(&sa.sa_mask);
    if (::sigaction(tick_signal, &sa, &previous_action) != 0)
      error = fmt::format("sigaction(SIGURG): {}", std::strerror(errno));
  });
  if (!error.empty()) return std::unexpected(error);
  if (own_code_n == 0) return std::unexpected(std::string("no executable segment of the program found"));
  return {};
}

std::expected<void, std::string> tick_start(core_ctx& c) {
  sigevent ev{};
  ev.sigev_notify = SIGEV_THREAD_ID;
  ev.sigev_signo = tick_signal;
  ev.sigev_value.sival_ptr = &c;
  ev._sigev_un._tid = ::gettid();  // sigev_notify_thread_id, which glibc 2.36 does not name
  if (::timer_create(CLOCK_MONOTONIC, &ev, &c.tick.id) != 0)
    return std::unexpected(fmt::format("reactor {}: timer_create: {}", c.index, std::strerror(errno)));
  c.tick.made = true;
  ::pthread_sigmask(SIG_BLOCK, nullptr, &c.tick.sleep_mask);
  sigdelset(&c.tick.sleep_mask, tick_signal);
  ::pthread_sigmask(SIG_SETMASK, &c.tick.sleep_mask, nullptr);  // ticks reach this thread
  sigaddset(&c.tick.sleep_mask, tick_signal);                  // but not its sleep
  return {};
}

void tick_stop(core_ctx& c) {
  if (!c.tick.made) return;
  ::timer_delete(c.tick.id);
  c.tick.made = false;
  c.tick.armed.store(false, std::memory_order_relaxed);
}

void tick_arm(core_ctx& c) {
  const fiber& f = *c.current;
  const std::uint64_t now = c.last_cycles;
  const std::uint64_t next = next_tick(c, f, now - f.slice_start);
  if (next == ~0ULL) return;
  // A tick already due as soon serves (most switches end here, no call).
  if (c.tick.armed.load(std::memory_order_relaxed) && c.tick.due <= now + next) return;
  arm_in(c, next, now);
}

std::expected<void, std::string> stall_reporter_start(runtime_state& rt) {
  rt.stall_fd = ::eventfd(0, EFD_CLOEXEC);
  if (rt.stall_fd < 0) return std::unexpected(fmt::format("stall reporter: eventfd: {}", std::strerror(errno)));
  rt.stall_reporter = std::thread(reporter_main, &rt);
  return {};
}

void stall_reporter_stop(runtime_state& rt) {
  if (rt.stall_fd < 0) return;
  rt.stall_reporter_stop.store(true, std::memory_order_release);
  const std::uint64_t one = 1;
  [[maybe_unused]] ssize_t w = ::write(rt.stall_fd, &one, sizeof one);
  rt.stall_reporter.join();
  ::close(rt.stall_fd);
  rt.stall_fd = -1;
}

void report_stall_end(core_ctx& c, const fiber& f, std::uint64_t ran_cycles) {
  AFFINE_LOG_RATELIMITED(warn, "stall: core {} fiber {:#x} (spawned at {}:{}) gave its core back after {} ms",
                         c.index, f.id, f.spawn_file, f.spawn_line, ns_of(ran_cycles) / 1'000'000);
}

// ---- the no-preempt count -----------------------------------------------------

namespace {
void raise_count(fiber* f) {
  f->no_preempt.store(f->no_preempt.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
  std::atomic_signal_fence(std::memory_order_seq_cst);
}
void lower_count(fiber* f) {
  std::atomic_signal_fence(std::memory_order_seq_cst);
  const std::uint32_t n = f->no_preempt.load(std::memory_order_relaxed);
  if (n != 0) f->no_preempt.store(n - 1, std::memory_order_relaxed);
}
fiber* running_fiber() {
  core_ctx* c = this_core();
  return c != nullptr ? c->current : nullptr;
}
}  // namespace

no_preempt::no_preempt() noexcept : f_(nullptr) {
  if (preempt_hold.load(std::memory_order_relaxed) == nullptr) return;
  f_ = running_fiber();
  if (f_ != nullptr) raise_count(f_);
}

no_preempt::~no_preempt() {
  if (f_ != nullptr) lower_count(f_);
}

void hold_running_fiber(bool hold) noexcept {
  if (fiber* f = running_fiber()) hold ? raise_count(f) : lower_count(f);
}

}  // namespace affine::detail
