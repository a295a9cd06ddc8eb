// Starting and stopping the reactors.

#include <pthread.h>
#include <sched.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <memory>
#include <semaphore>
#include <system_error>

#include <fmt/format.h>

#include "affine/log.hh"
#include "affine/sync.hh"
#include "reactor/cycles.hh"
#include "reactor/runtime_state.hh"
#include "reactor/sanitizer_hooks.hh"

namespace affine {

namespace detail {

namespace {
thread_local core_ctx* tls_core = nullptr;
std::atomic<runtime_state*> latest_runtime{nullptr};
thread_local runtime_state* tls_runtime = nullptr;
}  // namespace

core_ctx* this_core() noexcept { return tls_core; }
void set_this_core(core_ctx* c) noexcept { tls_core = c; }

runtime_state* current_runtime() noexcept {
  return tls_runtime != nullptr ? tls_runtime : latest_runtime.load(std::memory_order_acquire);
}
void set_current_runtime(runtime_state* rt) noexcept { tls_runtime = rt; }

}  // namespace detail

struct runtime::impl {
  std::unique_ptr<detail::runtime_state> state;
};

runtime::runtime(std::unique_ptr<impl> p) : impl_(std::move(p)) {}

std::expected<std::unique_ptr<runtime>, std::string> runtime::start(
    const topology& topo, runtime_options opts, const policy::policy_config* policy) {
  if (opts.cores.empty()) opts.cores.assign(topo.all_cores().begin(), topo.all_cores().end());
  std::vector<int> reactor_of(topo.core_count(), -1);
  for (std::size_t i = 0; i < opts.cores.size(); ++i) {
    const core_id c = opts.cores[i];
    if (c.value >= topo.core_count())
      return std::unexpected(fmt::format("reactor core {} does not exist: the topology has cores 0-{}",
                                         c.value, topo.core_count() - 1));
    if (reactor_of[c.value] != -1)
      return std::unexpected(fmt::format("reactor core {} is listed twice", c.value));
    reactor_of[c.value] = int(i);
  }
  // policy::sched_view wants reactor_cores ascending.
  for (std::size_t i = 1; i < opts.cores.size(); ++i)
    if (opts.cores[i] < opts.cores[i - 1])
      return std::unexpected(std::string("reactor cores must be listed in ascending order"));
  const policy::policy_config pc = policy != nullptr ? *policy : policy::policy_config{};
  if (auto ok = policy::validate(pc); !ok) return std::unexpected(ok.error());

  auto st = std::make_unique<detail::runtime_state>(topo, std::move(opts), pc);
  st->reactor_of_topo = std::move(reactor_of);
  st->quota_cycles = std::uint64_t(st->opts.task_quota_us) * detail::cycles_per_us();
  st->quantum_cycles = std::uint64_t(st->opts.quantum_us) * detail::cycles_per_us();
  if (detail::san::tsan) {
    // TSan runs a signal handler at its own safe points, not where the
    // signal came: a tick there cannot see what the fiber was doing.
    if (st->opts.preempt) AFFINE_LOG_WARN("reactor.preempt is off under ThreadSanitizer");
    st->opts.preempt = false;
    st->opts.stall_report_ms = 0;
  }
  st->stall_cycles = std::uint64_t(st->opts.stall_report_ms) * 1000 * detail::cycles_per_us();
  st->rx_cycles = st->opts.preempt ? std::uint64_t(st->opts.rx_interrupt_us) * detail::cycles_per_us() : 0;
  st->ticks = st->opts.preempt || st->stall_cycles != 0;
  if (st->ticks)
    if (auto ok = detail::tick_process_setup(); !ok) return std::unexpected("reactor ticks: " + ok.error());
  if (st->opts.preempt) {
    detail::preempt_hold.store(detail::hold_running_fiber, std::memory_order_relaxed);
    log::detail::set_critical_hook(detail::hold_running_fiber);
  }
  const unsigned n = unsigned(st->opts.cores.size());
  for (unsigned i = 0; i < n; ++i) {
    auto c = std::make_unique<detail::core_ctx>(now_ns());
    c->rt = st.get();
    c->index = i;
    c->topo_core = st->opts.cores[i];
    c->view_scratch.resize(topo.core_count());
    c->event_fd = ::eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
    c->epoll_fd = ::epoll_create1(EPOLL_CLOEXEC);
    if (c->event_fd < 0 || c->epoll_fd < 0)
      return std::unexpected(fmt::format("reactor {}: eventfd/epoll: {}", i, std::strerror(errno)));
    epoll_event ev{};
    ev.events = EPOLLIN;
    ev.data.fd = c->event_fd;
    ::epoll_ctl(c->epoll_fd, EPOLL_CTL_ADD, c->event_fd, &ev);
    st->cores.push_back(std::move(c));
  }
  if (st->stall_cycles != 0)
    if (auto ok = detail::stall_reporter_start(*st); !ok) return std::unexpected(ok.error());
  detail::latest_runtime.store(st.get(), std::memory_order_release);
  for (auto& cp : st->cores) {
    detail::core_ctx* c = cp.get();
    c->thread = std::thread([c] { detail::reactor_main(*c); });
    if (st->opts.pin_threads) {
      cpu_set_t set;
      CPU_ZERO(&set);
      CPU_SET(topo.core(c->topo_core).os_cpu, &set);
      // A failure to pin (a cpuset that excludes the core) is not fatal:
      // the reactor still runs, only its placement is the OS's.
      ::pthread_setaffinity_np(c->thread.native_handle(), sizeof set, &set);
    }
  }
  auto p = std::make_unique<impl>();
  p->state = std::move(st);
  return std::unique_ptr<runtime>(new runtime(std::move(p)));
}

runtime::~runtime() {
  detail::runtime_state& st = *impl_->state;
  st.stopping.store(true, std::memory_order_seq_cst);  // pairs with the sleeper: see kick()
  for (auto& c : st.cores) detail::kick(*c);
  for (auto& c : st.cores) c->thread.join();
  detail::stall_reporter_stop(st);
  for (auto& c : st.cores) {
    // Timers of fibers still parked at shutdown: leaks the tests report
    // through timers_armed(); cancel them so the wheel's destructor is clean.
    for (auto* b : c->timer_blocks) {
      for (std::size_t i = 0; i < 64; ++i) c->timers.cancel(b[i].tm);
      delete[] b;
    }
    c->timer_blocks.clear();
    ::close(c->event_fd);
    ::close(c->epoll_fd);
  }
  detail::runtime_state* expected = &st;
  detail::latest_runtime.compare_exchange_strong(expected, nullptr);
}

void runtime::run_blocking(std::move_only_function<void()> fn) {
  std::binary_semaphore done(0);
  std::exception_ptr error;
  detail::set_current_runtime(impl_->state.get());
  auto f = spawn([&] {
    try {
      fn();
    } catch (...) {
      error = std::current_exception();
    }
    done.release();
  });
  if (f) {
    f->detach();
    done.acquire();
  }
  detail::set_current_runtime(nullptr);
  if (!f) throw std::system_error(f.error(), "affine::runtime::run: the fiber could not be spawned");
  if (error) std::rethrow_exception(error);
}

// A poller's interrupt fd joins its reactor's epoll set, so a sleeping
// reactor wakes when the poller has work (DESIGN.md section 2).
void runtime::add_poller(unsigned core, poller* p) {
  const detail::no_preempt guard;
  detail::post(*impl_->state, core, [c = &impl_->state->core(core), p] {
    c->pollers.push_back(p);
    if (const int fd = p->interrupt_fd(); fd >= 0) {
      epoll_event ev{};
      ev.events = EPOLLIN;
      ev.data.fd = fd;
      if (::epoll_ctl(c->epoll_fd, EPOLL_CTL_ADD, fd, &ev) != 0)
        AFFINE_LOG_WARN("reactor {}: cannot watch a poller's interrupt fd {}: {}", c->index, fd,
                        std::strerror(errno));
    }
  });
}

// Returns once the poller is off its reactor: from a fiber by waiting as a
// fiber, from any other thread by blocking. Always through the core's inbox,
// after any add_poller posted before it (running it inline on the caller's
// own core could overtake a pending add, which would then add a poller its
// owner has destroyed).
void runtime::remove_poller(unsigned core, poller* p) {
  const detail::no_preempt guard;
  auto remove = [c = &impl_->state->core(core), p] {
    if (std::erase(c->pollers, p) != 0)
      if (const int fd = p->interrupt_fd(); fd >= 0) ::epoll_ctl(c->epoll_fd, EPOLL_CTL_DEL, fd, nullptr);
  };
  if (this_fiber::in_fiber()) {
    // Shared: set() may still be unlocking the event when the waiter has
    // already woken and returned.
    auto done = std::make_shared<event>();
    detail::post(*impl_->state, core, [remove, done] {
      remove();
      done->set();
    });
    // Not cancellable: the caller frees the poller once this returns.
    done->wait({}, stop_mode::ignore);
    return;
  }
  std::binary_semaphore done(0);
  detail::post(*impl_->state, core, [&] {
    remove();
    done.release();
  });
  done.acquire();
}

unsigned runtime::cores() const { return unsigned(impl_->state->cores.size()); }
core_id runtime::topology_core(unsigned i) const { return impl_->state->opts.cores[i]; }
const topology& runtime::topo() const { return impl_->state->topo; }

core_counters runtime::counters(unsigned core) const {
  core_counters out;
  auto* dst = reinterpret_cast<std::uint64_t*>(&out);
  const auto& src = impl_->state->core(core).published.v;
  for (std::size_t i = 0; i < std::size(src); ++i) dst[i] = src[i].load(std::memory_order_relaxed);
  return out;
}

std::size_t runtime::live_fibers() const { return impl_->state->live_fibers.load(); }
std::size_t runtime::stacks_in_use() const { return impl_->state->stacks.in_use(); }
std::size_t runtime::timers_armed() const {
  std::size_t n = 0;
  for (auto& c : impl_->state->cores) n += c->pub_timers.load(std::memory_order_relaxed);
  return n;
}

}  // namespace affine
