// Preemption (reactor.preempt = "on") and stall reports: a fiber that never
// yields does not own its core; it is never left where that is unsafe (a
// spinlock, the allocator); it resumes with every register, its FP/SIMD
// state and errno, on its core or another; a stall is reported with a
// backtrace. docs/reactor.md, "Preemption".

#include <immintrin.h>

#include <atomic>
#include <cerrno>
#include <cstddef>
#include <cstdlib>
#include <cstring>
#include <malloc.h>
#include <cstdio>
#include <string_view>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "affine/log.hh"
#include "affine/poller.hh"
#include "affine/runtime.hh"
#include "affine/sync.hh"
#include "tests/reactor/runtime_fixture.hh"

namespace affine::test {

// Outside the anonymous namespace: the stall report names it only if the
// dynamic symbol table has it (export_dynamic).
// Most of its time goes to its own loop, not to the clock: where the clock
// is clock_gettime (a kvm-clock VM's), a tick would otherwise mostly land in
// the vDSO, outside the program's code, where no stall is captured.
[[gnu::noinline]] void stall_here_for_the_test(std::uint64_t ms) {
  const std::uint64_t until = now_ns() + ms * 1'000'000;
  while (now_ns() < until)
    for (unsigned i = 0; i < 10'000; ++i) asm volatile("" ::: "memory");
}

namespace {

#if defined(__SANITIZE_THREAD__)
#define SKIP_UNDER_TSAN() \
  GTEST_SKIP() << "reactor.preempt is forced off under ThreadSanitizer (reactor/runtime.cc, runtime::start): " \
                    "TSan runs a signal handler at its own safe points, not where the signal came"
#else
#define SKIP_UNDER_TSAN() (void)0
#endif

// A compute loop the compiler cannot turn into anything else: no call, no
// yield, only a relaxed load of the flag that ends it.
[[gnu::noinline]] std::uint64_t compute_until(const std::atomic<bool>& stop) {
  std::uint64_t x = 1;
  while (!stop.load(std::memory_order_relaxed)) x = x * 6364136223846793005ULL + 1442695040888963407ULL;
  return x;
}

// Ends a test that would otherwise hang (a fiber that was never preempted
// owns its core): after `limit` it sets `stop` and says the test failed.
class watchdog {
 public:
  watchdog(std::atomic<bool>& stop, std::chrono::seconds limit)
      : t_([this, &stop, limit] {
          std::unique_lock l(m_);
          if (!cv_.wait_for(l, limit, [this] { return done_; })) {
            fired_ = true;
            stop.store(true);
          }
        }) {}
  ~watchdog() { finish(); }
  bool finish() {
    {
      std::lock_guard l(m_);
      done_ = true;
    }
    cv_.notify_one();
    if (t_.joinable()) t_.join();
    return fired_;
  }

 private:
  std::mutex m_;
  std::condition_variable cv_;
  bool done_ = false;
  bool fired_ = false;
  std::thread t_;
};

class preempt_test : public runtime_test {
 protected:
  void SetUp() override {}
  void start_preempting(std::uint32_t quantum_us, bool steal = false, std::uint32_t rx_interrupt_us = 0) {
    runtime_options o;
    o.preempt = true;
    o.quantum_us = quantum_us;
    o.rx_interrupt_us = rx_interrupt_us;
    o.stall_report_ms = 0;
    policy_.steal = steal;
    start(std::move(o), &policy_);
  }
  std::uint64_t refused(unsigned core, std::size_t why) { return rt_->counters(core).preempt_refused[why]; }
  policy::policy_config policy_{};
};

TEST_F(preempt_test, AFiberThatNeverYieldsDoesNotStopTheOthersOnItsCore) {
  SKIP_UNDER_TSAN();
  start_preempting(200);
  std::atomic<bool> stop{false};
  watchdog dog(stop, std::chrono::seconds(20));
  int slept = 0;
  rt_->run([&] {
    auto hog = spawn([&] { compute_until(stop); }, {.core = 0, .pinned = true}).value();
    auto sleeper = spawn([&] {
      for (; slept < 20; ++slept) this_fiber::sleep_for(std::chrono::milliseconds(1));
      stop.store(true);
    }, {.core = 0, .pinned = true}).value();
    sleeper.join();
    hog.join();
  });
  EXPECT_FALSE(dog.finish()) << "the sleeper never ran past the hog: not preempted";
  EXPECT_EQ(slept, 20);
  EXPECT_GE(settled(0).preemptions, 1u);
}

// An RX queue (any poller) on a core whose fiber never yields is still
// polled: the poll rung runs at every preemption.
class counting_poller final : public poller {
 public:
  unsigned poll() override {
    polls.fetch_add(1, std::memory_order_relaxed);
    return 0;
  }
  std::atomic<std::uint64_t> polls{0};
};

TEST_F(preempt_test, AnRxQueueOnABusyCoreIsStillPolled) {
  SKIP_UNDER_TSAN();
  start_preempting(200);
  counting_poller rxq;
  rt_->add_poller(0, &rxq);
  std::atomic<bool> stop{false};
  watchdog dog(stop, std::chrono::seconds(20));
  std::uint64_t during = 0;
  rt_->run([&] {
    auto hog = spawn([&] { compute_until(stop); }, {.core = 0, .pinned = true}).value();
    // From the other core: watch the polls while the hog holds core 0.
    spawn([&] {
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
      const std::uint64_t before = rxq.polls.load();
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
      during = rxq.polls.load() - before;
      stop.store(true);
    }, {.core = 1, .pinned = true}).value().join();
    hog.join();
  });
  rt_->remove_poller(0, &rxq);
  EXPECT_FALSE(dog.finish());
  // 50 ms at a 200 us quantum: about 125 preemptions, each followed by a poll.
  EXPECT_GE(during, 20u) << "the RX queue was not polled while the hog ran";
}

// With reactor.rx_interrupt_us, the RX path interrupts a fiber that keeps
// its core as a NIC interrupt does a task: the core's RX queues are polled
// every interrupt, far inside the quantum, and the interrupted fiber then
// resumes before the fiber the poll woke (which waits for the quantum).
class waking_poller final : public poller {
 public:
  explicit waking_poller(const std::atomic<std::uint64_t>& progress) : progress_(progress) {}
  unsigned poll() override {
    polls.fetch_add(1, std::memory_order_relaxed);
    if (arm.load(std::memory_order_acquire) && !packet.is_set()) {
      progress_at_wake = progress_.load(std::memory_order_relaxed);
      packet.set();  // "the packet" wakes its reader, queued on this core
    }
    return 0;
  }
  std::atomic<bool> arm{false};
  event packet;
  std::atomic<std::uint64_t> polls{0};
  std::uint64_t progress_at_wake = 0;

 private:
  const std::atomic<std::uint64_t>& progress_;
};

// A hog on core 0 that never yields, a reader there waiting for "a packet"
// that `rxq` delivers at its first poll once armed, and the polls counted
// over the 60 ms before that (after 30 ms of settling).
struct hog_and_reader {
  std::uint64_t progress_at_wake = 0;   // the hog's count when the poll woke the reader
  std::uint64_t progress_at_start = 0;  // ... when the reader first ran
  std::uint64_t polls = 0;              // polls in the 60 ms window
  bool hung = false;
};

hog_and_reader run_hog_and_reader(runtime& rt) {
  hog_and_reader out;
  std::atomic<std::uint64_t> progress{0};
  waking_poller rxq(progress);
  rt.add_poller(0, &rxq);
  std::atomic<bool> stop{false};
  watchdog dog(stop, std::chrono::seconds(20));
  rt.run([&] {
    auto hog = spawn([&] {
      while (!stop.load(std::memory_order_relaxed)) progress.fetch_add(1, std::memory_order_relaxed);
    }, {.core = 0, .pinned = true}).value();
    auto reader = spawn([&] {
      ASSERT_TRUE(rxq.packet.wait(deadline(std::chrono::seconds(10))));
      out.progress_at_start = progress.load(std::memory_order_relaxed);
    }, {.core = 0, .pinned = true}).value();
    spawn([&] {
      std::this_thread::sleep_for(std::chrono::milliseconds(30));  // the reader waits, the hog runs
      const std::uint64_t before = rxq.polls.load();
      std::this_thread::sleep_for(std::chrono::milliseconds(60));
      out.polls = rxq.polls.load() - before;
      rxq.arm.store(true, std::memory_order_release);
    }, {.core = 1, .pinned = true}).value().join();
    reader.join();
    stop.store(true);
    hog.join();
  });
  rt.remove_poller(0, &rxq);
  out.hung = dog.finish();
  out.progress_at_wake = rxq.progress_at_wake;
  return out;
}

TEST_F(preempt_test, AnRxInterruptPollsWithinMicrosecondsAndResumesTheInterruptedFiberFirst) {
  SKIP_UNDER_TSAN();
  // A 200 ms quantum: in the test's 90 ms window only RX interrupts poll.
  start_preempting(/*quantum_us=*/200'000, false, /*rx_interrupt_us=*/100);
  const hog_and_reader r = run_hog_and_reader(*rt_);
  EXPECT_FALSE(r.hung);
  // About 600 in 60 ms at one per 100 us; without RX interrupts none.
  EXPECT_GE(r.polls, 30u) << "the RX queue of a busy core was not polled";
  const core_counters c = settled(0);
  EXPECT_GE(c.rx_interrupts, 30u);
  EXPECT_GT(r.progress_at_start, r.progress_at_wake) << "the woken reader ran before the interrupted fiber resumed";
  // Its slice goes on through the interrupts: the hog's one slice of 200 ms
  // is one quota overrun, not one per interrupt.
  EXPECT_LE(c.quota_overruns, 3u) << format_counters(0, c);
}

// A fiber preempted at its quantum's end goes behind what the poll rung
// then wakes, as a task whose slice is over goes behind the wakee of an
// interrupt: a reader woken by "a packet" runs before the hog again.
TEST_F(preempt_test, TheFiberAPollWakesRunsBeforeTheOnePreemptedAtItsQuantum) {
  SKIP_UNDER_TSAN();
  start_preempting(/*quantum_us=*/2'000);
  const hog_and_reader r = run_hog_and_reader(*rt_);
  EXPECT_FALSE(r.hung);
  EXPECT_EQ(r.progress_at_start, r.progress_at_wake) << "the preempted hog ran again before the reader it woke";
}

// A fiber holding a spinlock is never preempted. If it were, `inside` would
// be seen set by the observer on the same core, and the waiter (which
// spins with its count raised) would then own the core for good: the
// watchdog ends that.
TEST_F(preempt_test, AFiberHoldingASpinlockIsNotPreempted) {
  SKIP_UNDER_TSAN();
  start_preempting(100);
  spinlock lock;
  std::atomic<bool> inside{false}, stop{false}, violated{false};
  watchdog dog(stop, std::chrono::seconds(20));
  rt_->run([&] {
    auto holder = spawn([&] {
      for (int round = 0; round < 5 && !stop.load(); ++round) {
        lock.lock();
        inside.store(true, std::memory_order_relaxed);
        const std::uint64_t until = now_ns() + 10'000'000;  // 10 ms, a hundred quanta
        while (now_ns() < until && !stop.load(std::memory_order_relaxed)) {
        }
        inside.store(false, std::memory_order_relaxed);
        lock.unlock();
        this_fiber::sleep_for(std::chrono::milliseconds(1));
      }
      stop.store(true);
    }, {.core = 0, .pinned = true}).value();
    auto waiter = spawn([&] {
      while (!stop.load()) {
        lock.lock();
        lock.unlock();
        this_fiber::yield();
      }
    }, {.core = 0, .pinned = true}).value();
    auto observer = spawn([&] {
      while (!stop.load(std::memory_order_relaxed))
        if (inside.load(std::memory_order_relaxed)) violated.store(true);
    }, {.core = 0, .pinned = true}).value();
    holder.join();
    waiter.join();
    observer.join();
  });
  EXPECT_FALSE(dog.finish()) << "deadlock: a fiber was preempted holding the spinlock";
  EXPECT_FALSE(violated.load()) << "another fiber ran while the spinlock was held";
  const core_counters c = settled(0);
  EXPECT_GE(c.preempt_refused[0], 1u) << "no tick came while the lock was held";
  EXPECT_GE(c.preemptions, 1u);
}

// Three fibers of one core in the allocator. Two churn malloc and free of
// small blocks, which glibc serves from its per-thread cache (tcache: lists
// changed with no lock at all, since only one thread uses them) and of
// larger ones (under the arena lock), each block stamped with its owner and
// checked before it is freed; the third trims the heap (malloc_trim walks
// the arena under that lock). A fiber preempted in the middle of a tcache
// update leaves the thread's lists half-changed to the next fiber: a block
// handed out twice (a stamp overwritten) or glibc's own abort ("malloc():
// unaligned tcache chunk", "double free"). Preempted holding the arena lock,
// the next fiber's call would block the thread in the kernel until the next
// tick preempted it there.
TEST_F(preempt_test, AFiberInsideTheAllocatorIsNotPreempted) {
  SKIP_UNDER_TSAN();
  start_preempting(20);
  std::atomic<bool> stop{false};
  watchdog dog(stop, std::chrono::seconds(60));
  // At least 1.5 s, and on until the tick has both preempted fibers a
  // hundred times and been refused in the allocator: most ticks land in
  // malloc, so on a slow machine 1.5 s may hold too few preemptions.
  const std::uint64_t start = now_ns();
  const auto running = [&] {
    if (stop.load(std::memory_order_relaxed)) return false;
    const std::uint64_t t = now_ns();
    if (t < start + 1'500'000'000) return true;
    if (t >= start + 20'000'000'000) return false;
    return rt_->counters(0).preemptions < 100 || refused(0, 1) < 1;
  };
  std::atomic<std::uint64_t> overwritten{0};
  const auto churn = [&](std::uint64_t owner) {
    struct block {
      std::uint64_t* p = nullptr;
      std::size_t words = 0;
    };
    std::vector<block> held(256);
    std::uint64_t x = owner;
    const auto release = [&](block& b) {
      for (std::size_t i = 0; i < b.words; ++i)
        if (b.p[i] != owner) overwritten.fetch_add(1, std::memory_order_relaxed);
      std::free(b.p);
    };
    while (running()) {
      x = x * 6364136223846793005ULL + 1442695040888963407ULL;
      block& b = held[(x >> 33) % held.size()];
      release(b);
      // Three in four from the per-thread cache (16 B to 1 KiB), the rest past it.
      const std::size_t bytes = (x >> 62) != 0 ? 16 + (x >> 40) % 1008 : 2048 + (x >> 40) % (64 * 1024);
      b.words = std::min<std::size_t>(bytes / 8, 16);
      b.p = static_cast<std::uint64_t*>(std::malloc(bytes));
      for (std::size_t i = 0; i < b.words; ++i) b.p[i] = owner;
    }
    for (block& b : held) release(b);
  };
  rt_->run([&] {
    auto a = spawn([&] { churn(0xA11CE); }, {.core = 0, .pinned = true}).value();
    auto b = spawn([&] { churn(0xB0B); }, {.core = 0, .pinned = true}).value();
    auto trim = spawn([&] {
      while (running()) ::malloc_trim(0);
    }, {.core = 0, .pinned = true}).value();
    a.join();
    b.join();
    trim.join();
  });
  EXPECT_FALSE(dog.finish()) << "deadlock: a fiber was preempted inside the allocator";
  EXPECT_EQ(overwritten.load(), 0u) << "blocks handed out twice: a fiber was preempted inside the allocator";
  const core_counters c = settled(0);
  EXPECT_GE(c.preemptions, 100u) << format_counters(0, c);
  EXPECT_GE(c.preempt_refused[1], 1u) << "no tick landed in the allocator: the test proved nothing" << format_counters(0, c);
}

// Two fibers of one core write whole lines to one stdio stream. glibc holds
// the stream's lock through a write, but the lock is recursive per thread:
// a fiber preempted inside fputs would let the other fiber's line into the
// middle of its own.
TEST_F(preempt_test, AFiberInsideStdioIsNotPreempted) {
  SKIP_UNDER_TSAN();
  start_preempting(20);
  constexpr std::size_t line_bytes = 64 * 1024, lines_each = 200;
  std::vector<char> buf(2 * lines_each * (line_bytes + 1) + 1);
  FILE* out = ::fmemopen(buf.data(), buf.size(), "w");
  ASSERT_NE(out, nullptr);
  ::setvbuf(out, nullptr, _IONBF, 0);  // every fputs copies its whole line under the lock
  rt_->run([&] {
    auto writer = [&](char letter) {
      const std::string line = std::string(line_bytes, letter) + "\n";
      for (std::size_t i = 0; i < lines_each; ++i) std::fputs(line.c_str(), out);
    };
    auto a = spawn([&] { writer('a'); }, {.core = 0, .pinned = true}).value();
    auto b = spawn([&] { writer('b'); }, {.core = 0, .pinned = true}).value();
    a.join();
    b.join();
  });
  std::fclose(out);
  std::size_t whole = 0, torn = 0;
  for (std::size_t at = 0; at < buf.size() && buf[at] != '\0';) {
    const std::size_t nl = std::string_view(buf.data(), buf.size()).find('\n', at);
    ASSERT_NE(nl, std::string_view::npos);
    const std::string_view line(buf.data() + at, nl - at);
    const bool same = line.size() == line_bytes && line.find_first_not_of(line[0]) == std::string_view::npos;
    (same ? whole : torn) += 1;
    at = nl + 1;
  }
  EXPECT_EQ(torn, 0u) << "a line was torn by a fiber preempted inside fputs";
  EXPECT_EQ(whole, 2 * lines_each);
  const core_counters c = settled(0);
  EXPECT_GE(c.preempt_refused[1], 1u) << "no tick landed in stdio: the test proved nothing";
}

// ---- registers, FP/SIMD state and errno ------------------------------------------

constexpr int gprs = 11;  // rbx, rsi, rdi, r8-r15
constexpr int vecs = 16;  // xmm0-15 (ymm0-15 where the CPU has AVX)

struct register_image {
  std::uint64_t gpr[gprs];
  alignas(32) std::uint8_t vec[vecs][32];
};
static_assert(offsetof(register_image, vec) == 96);  // the asm below addresses it so

register_image pattern(std::uint64_t seed) {
  register_image r{};
  std::uint64_t x = seed;
  for (auto& g : r.gpr) g = x = x * 6364136223846793005ULL + 1442695040888963407ULL;
  for (auto& v : r.vec)
    for (auto& b : v) b = std::uint8_t((x = x * 6364136223846793005ULL + 1442695040888963407ULL) >> 56);
  return r;
}

// Loads the image into the registers, spins `spins` times touching none of
// them, and stores them back: whatever happened meanwhile (preemptions,
// migrations) must not show.
#define AFFINE_HOLD_GPRS_IN                                                            \
  "mov 0(%[in]), %%rbx\n mov 8(%[in]), %%rsi\n mov 16(%[in]), %%rdi\n"                 \
  "mov 24(%[in]), %%r8\n mov 32(%[in]), %%r9\n mov 40(%[in]), %%r10\n"                 \
  "mov 48(%[in]), %%r11\n mov 56(%[in]), %%r12\n mov 64(%[in]), %%r13\n"               \
  "mov 72(%[in]), %%r14\n mov 80(%[in]), %%r15\n"
#define AFFINE_HOLD_GPRS_OUT                                                           \
  "mov %%rbx, 0(%[out])\n mov %%rsi, 8(%[out])\n mov %%rdi, 16(%[out])\n"              \
  "mov %%r8, 24(%[out])\n mov %%r9, 32(%[out])\n mov %%r10, 40(%[out])\n"              \
  "mov %%r11, 48(%[out])\n mov %%r12, 56(%[out])\n mov %%r13, 64(%[out])\n"            \
  "mov %%r14, 72(%[out])\n mov %%r15, 80(%[out])\n"
#define AFFINE_VEC(op, reg, off) op " " off "(%[in]), %%" reg "\n"
#define AFFINE_VEC_OUT(op, reg, off) op " %%" reg ", " off "(%[out])\n"
// One body for both widths: `op` the move, `r` the register file ("xmm", "ymm").
#define AFFINE_HOLD_BODY(op, r)                                                       \
  AFFINE_HOLD_GPRS_IN AFFINE_VEC(op, r "0", "96") AFFINE_VEC(op, r "1", "128") AFFINE_VEC(op, r "2", "160") AFFINE_VEC(op, r "3", "192") AFFINE_VEC(op, r "4", "224") AFFINE_VEC(op, r "5", "256") AFFINE_VEC(op, r "6", "288") AFFINE_VEC(op, r "7", "320") AFFINE_VEC(op, r "8", "352") AFFINE_VEC(op, r "9", "384") AFFINE_VEC(op, r "10", "416") AFFINE_VEC(op, r "11", "448") AFFINE_VEC(op, r "12", "480") AFFINE_VEC(op, r "13", "512") AFFINE_VEC(op, r "14", "544") AFFINE_VEC(op, r "15", "576")                                                              \
  "1: dec %%rcx\n jnz 1b\n" AFFINE_HOLD_GPRS_OUT AFFINE_VEC_OUT(op, r "0", "96") AFFINE_VEC_OUT(op, r "1", "128") AFFINE_VEC_OUT(op, r "2", "160") AFFINE_VEC_OUT(op, r "3", "192") AFFINE_VEC_OUT(op, r "4", "224") AFFINE_VEC_OUT(op, r "5", "256") AFFINE_VEC_OUT(op, r "6", "288") AFFINE_VEC_OUT(op, r "7", "320") AFFINE_VEC_OUT(op, r "8", "352") AFFINE_VEC_OUT(op, r "9", "384") AFFINE_VEC_OUT(op, r "10", "416") AFFINE_VEC_OUT(op, r "11", "448") AFFINE_VEC_OUT(op, r "12", "480") AFFINE_VEC_OUT(op, r "13", "512") AFFINE_VEC_OUT(op, r "14", "544") AFFINE_VEC_OUT(op, r "15", "576")
#define AFFINE_HOLD_CLOBBERS                                                            \
  "rbx", "rsi", "rdi", "r8", "r9", "r10", "r11", "r12", "r13", "r14", "r15", "memory", "cc"

[[gnu::noinline]] void hold_sse(const register_image& in, register_image& out, std::uint64_t spins) {
  asm volatile(
      AFFINE_HOLD_BODY("movdqu", "xmm")
      : "+c"(spins)
      : [in] "a"(&in), [out] "d"(&out)
      : AFFINE_HOLD_CLOBBERS, "xmm0", "xmm1", "xmm2", "xmm3", "xmm4", "xmm5", "xmm6", "xmm7", "xmm8", "xmm9",
        "xmm10", "xmm11", "xmm12", "xmm13", "xmm14", "xmm15");
}

[[gnu::noinline, gnu::target("avx")]] void hold_avx(const register_image& in, register_image& out,
                                                     std::uint64_t spins) {
  asm volatile(
      AFFINE_HOLD_BODY("vmovdqu", "ymm")
      "vzeroupper\n"
      : "+c"(spins)
      : [in] "a"(&in), [out] "d"(&out)
      : AFFINE_HOLD_CLOBBERS, "xmm0", "xmm1", "xmm2", "xmm3", "xmm4", "xmm5", "xmm6", "xmm7", "xmm8", "xmm9",
        "xmm10", "xmm11", "xmm12", "xmm13", "xmm14", "xmm15");
}

// What one fiber saw over its rounds.
struct hold_result {
  int bad_rounds = 0;
  int bad_errno = 0;
  int bad_mxcsr = 0;
  std::set<unsigned> cores;
};

// errno through calls the compiler cannot see into: a preempted fiber may
// resume on another thread, so &errno must be computed afresh (the TLS rule
// of DESIGN.md section 4, which a preemption point obeys like any other).
[[gnu::noinline, gnu::noipa]] void put_errno(int v) { errno = v; }
[[gnu::noinline, gnu::noipa]] int get_errno() { return errno; }

// Rounds of hold_* with errno and MXCSR set to values of this fiber's own,
// checked after every round.
hold_result hold_rounds(std::uint64_t seed, const std::atomic<bool>& stop, std::uint64_t spins = 2'000'000) {
  hold_result r;
  const bool avx = __builtin_cpu_supports("avx");
  const int my_errno = 1000 + int(seed);
  // Round toward zero, exceptions masked: not the default, so a lost MXCSR shows.
  const unsigned my_mxcsr = 0x1f80 | 0x6000;
  _mm_setcsr(my_mxcsr);
  for (std::uint64_t round = 0; !stop.load(std::memory_order_relaxed); ++round) {
    const register_image in = pattern(seed * 1000 + round);
    register_image out{};
    put_errno(my_errno);
    if (avx)
      hold_avx(in, out, spins);
    else
      hold_sse(in, out, spins);
    const int e = get_errno();
    const unsigned m = _mm_getcsr();
    const std::size_t vec_bytes = avx ? 32 : 16;
    bool same = std::memcmp(in.gpr, out.gpr, sizeof in.gpr) == 0;
    for (int v = 0; v < vecs; ++v) same = same && std::memcmp(in.vec[v], out.vec[v], vec_bytes) == 0;
    r.bad_rounds += same ? 0 : 1;
    r.bad_errno += e == my_errno ? 0 : 1;
    r.bad_mxcsr += m == my_mxcsr ? 0 : 1;
    r.cores.insert(this_fiber::core());
  }
  _mm_setcsr(0x1f80);
  return r;
}

TEST_F(preempt_test, RegistersVectorStateAndErrnoSurviveThousandsOfPreemptions) {
  SKIP_UNDER_TSAN();
  start_preempting(20);
  std::atomic<bool> stop{false};
  watchdog dog(stop, std::chrono::seconds(60));
  hold_result a, b;
  rt_->run([&] {
    auto fa = spawn([&] { a = hold_rounds(1, stop); }, {.core = 0, .pinned = true}).value();
    auto fb = spawn([&] { b = hold_rounds(2, stop); }, {.core = 0, .pinned = true}).value();
    // Until core 0 has preempted them 2,000 times (or 30 s).
    spawn([&] {
      for (int i = 0; i < 3000 && rt_->counters(0).preemptions < 2000; ++i)
        this_fiber::sleep_for(std::chrono::milliseconds(10));
      stop.store(true);
    }, {.core = 1, .pinned = true}).value().join();
    fa.join();
    fb.join();
  });
  EXPECT_FALSE(dog.finish());
  EXPECT_GE(settled(0).preemptions, 2000u) << format_counters(0, settled(0));
  for (const hold_result* r : {&a, &b}) {
    EXPECT_EQ(r->bad_rounds, 0) << "a register did not survive";
    EXPECT_EQ(r->bad_errno, 0) << "errno did not survive";
    EXPECT_EQ(r->bad_mxcsr, 0) << "MXCSR did not survive";
  }
}

TEST_F(preempt_test, APreemptedFiberThatMovesToAnotherCoreFinishesCorrectly) {
  SKIP_UNDER_TSAN();
  // A 2 ms quantum: X waits in the queue long enough for a sleeping core to
  // wake and take it (the kick is sent at most once per balance interval).
  // One fiber waiting is enough at every level: the two cores may not share
  // an LLC (a VM's vCPUs on two AMD CCXs), where the default asks for two.
  policy_.steal_min_imbalance = {2, 2, 2};
  start_preempting(2000, /*steal=*/true);
  std::atomic<bool> stop{false};
  watchdog dog(stop, std::chrono::seconds(60));
  std::vector<hold_result> results(2);
  std::size_t moved = 0;
  rt_->run([&] {
    // X, unpinned, and a hog pinned beside it on core 0, both never
    // yielding; rounds of about 10 us, so X has run some on core 0 before
    // it is first preempted there. Preempted into core 0's run queue while
    // the hog runs, X is stolen by idle core 1: its rounds ran on both cores.
    // (A thief may take X before it first runs: it starts by going back.)
    auto x = spawn([&] {
      this_fiber::migrate(0);
      results[0] = hold_rounds(10, stop, 20'000);
    }, {.core = 0}).value();
    auto hog = spawn([&] { results[1] = hold_rounds(11, stop, 20'000); }, {.core = 0, .pinned = true}).value();
    this_fiber::sleep_for(std::chrono::milliseconds(300));
    stop.store(true);
    x.join();
    hog.join();
  });
  EXPECT_FALSE(dog.finish());
  for (const auto& r : results) {
    moved += r.cores.size() > 1 ? 1 : 0;
    EXPECT_EQ(r.bad_rounds, 0);
    EXPECT_EQ(r.bad_errno, 0);
    EXPECT_EQ(r.bad_mxcsr, 0);
  }
  EXPECT_GE(moved, 1u) << "no fiber moved to another core while preempted " << format_counters(0, settled(0)) << " / " << format_counters(1, settled(1)) << " x cores " << results[0].cores.size() << " rounds bad " << results[0].bad_rounds;
  EXPECT_GE(settled(0).preemptions, 1u);
}

// A preempting runtime's idle reactors stay asleep: no tick wakes them.
TEST_F(preempt_test, IdleReactorsTakeNoTicks) {
  SKIP_UNDER_TSAN();
  start_preempting(50);
  rt_->run([] {
    std::atomic<bool> stop{false};
    auto f = spawn([&] { compute_until(stop); }, {.core = 0, .pinned = true}).value();
    this_fiber::sleep_for(std::chrono::milliseconds(5));
    stop.store(true);
    f.join();
  });
  const core_counters before = settled(0);
  const double cpu0 = process_cpu_ms();
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  const core_counters after = rt_->counters(0);
  EXPECT_LE(after.sleeps - before.sleeps, 3u) << "an idle reactor was woken";
  EXPECT_LT(process_cpu_ms() - cpu0, 30.0);
}

// ---- stall reports ----------------------------------------------------------------


TEST_F(preempt_test, AStallIsReportedOnceWithABacktrace) {
  SKIP_UNDER_TSAN();
  std::mutex m;
  std::vector<std::string> lines;
  log::set_sink([&](log::level, std::string_view line) {
    std::lock_guard g(m);
    lines.emplace_back(line);
  });
  runtime_options o;
  o.stall_report_ms = 20;  // preemption off
  start(std::move(o));
  rt_->run([] { spawn([] { stall_here_for_the_test(120); }, {.core = 1, .pinned = true}).value().join(); });
  const core_counters c = settled(1);
  rt_.reset();  // the reporter has written everything once it has stopped
  log::set_sink(nullptr);
  EXPECT_EQ(c.stalls, 1u);
  EXPECT_EQ(c.preemptions, 0u);
  std::string report, end;
  for (const auto& l : lines) {
    if (l.find("without yielding") != std::string::npos) report += l;
    if (l.find("gave its core back") != std::string::npos) end += l;
  }
  EXPECT_NE(report.find("stall: core 1 fiber"), std::string::npos) << report;
  EXPECT_NE(report.find("preempt_test.cc"), std::string::npos) << "no spawn site: " << report;
  EXPECT_NE(report.find("stall_here_for_the_test"), std::string::npos) << "no usable backtrace: " << report;
  EXPECT_NE(end.find("stall: core 1 fiber"), std::string::npos) << end;
}

}  // namespace
}  // namespace affine::test
