// reactor.idle = "adaptive" (reactor/idle.hh, policy/spin.hh): a reactor
// whose waits are short keeps spinning on a CPU of its own, and stops as
// soon as another process waits for that CPU (seed 001's nr_running counts
// processes). The decisions are read from the counters, by reason.

#include <fstream>
#include <sstream>
#include <string>
#include <thread>

#include "affine/poller.hh"
#include "affine/time.hh"
#include "reactor/policy/spin.hh"
#include "tests/reactor/cpu_hog.hh"
#include "tests/reactor/runtime_fixture.hh"

namespace affine::test {
namespace {

// Work every `gap` ns: the waits it leaves its reactor are far shorter than
// any sleep, so a spin catches them. No interrupt: a sleeping reactor naps.
class ticking_poller : public poller {
 public:
  explicit ticking_poller(std::uint64_t gap) : gap_(gap) {}
  unsigned poll() override {
    const std::uint64_t now = now_ns();
    if (now < next_) return 0;
    next_ = now + gap_;
    return 1;
  }

 private:
  std::uint64_t gap_;
  std::uint64_t next_ = 0;
};

// How busy `cpu` is over `ms`, in percent, from /proc/stat: what other
// processes leave of it (the test's own reactor is asleep meanwhile).
double busy_pct(unsigned cpu, int ms) {
  const auto read = [cpu](std::uint64_t& busy, std::uint64_t& total) {
    std::ifstream in("/proc/stat");
    const std::string want = "cpu" + std::to_string(cpu);
    for (std::string line; std::getline(in, line);) {
      std::istringstream f(line);
      std::string name;
      f >> name;
      if (name != want) continue;
      std::uint64_t v[8]{};
      for (auto& x : v) f >> x;  // user nice system idle iowait irq softirq steal
      total = 0;
      for (auto x : v) total += x;
      busy = total - v[3] - v[4];
      return true;
    }
    return false;
  };
  std::uint64_t b0 = 0, t0 = 0, b1 = 0, t1 = 0;
  if (!read(b0, t0)) return 0;
  std::this_thread::sleep_for(std::chrono::milliseconds(ms));
  if (!read(b1, t1) || t1 == t0) return 0;
  return 100.0 * double(b1 - b0) / double(t1 - t0);
}

class adaptive_idle : public runtime_test {
 protected:
  void SetUp() override {}

  // One reactor on the topology's core 1, pinned, the defaults otherwise.
  bool start_one(bool* pinned) {
    bool pinnable = false;
    two_core_topology(&pinnable);
    *pinned = pinnable;
    if (!pinnable) return false;
    runtime_options o;
    o.cores = {core_id{1}};
    start(std::move(o));
    return rt_ != nullptr;
  }

  unsigned os_cpu() const { return rt_->topo().core(rt_->topology_core(0)).os_cpu; }

  // The spin plans of 300 ms of short waits.
  std::array<std::uint64_t, policy::spin_reason_count> plans_over_a_while() {
    const core_counters before = settled(0);
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    const core_counters after = settled(0);
    std::array<std::uint64_t, policy::spin_reason_count> d{};
    for (std::size_t r = 0; r < d.size(); ++r) d[r] = after.spin_plans[r] - before.spin_plans[r];
    return d;
  }

  static std::uint64_t of(const std::array<std::uint64_t, policy::spin_reason_count>& d, policy::spin_reason r) {
    return d[std::size_t(r)];
  }
};

TEST_F(adaptive_idle, AReactorWithACpuOfItsOwnKeepsSpinningWhereSpinsPay) {
  bool pinned = false;
  if (!start_one(&pinned)) GTEST_SKIP() << "needs two CPUs to pin a reactor on one";
#if defined(__SANITIZE_THREAD__)
  // TSan's runtime runs a background thread of its own beside the reactor,
  // and slows the reactor's turns several times: in a fresh-clone CI run the
  // CPU looked shared for half the test. The normal and ASan builds run it.
  GTEST_SKIP() << "ThreadSanitizer's own thread shares the CPU: not a CPU of its own";
#endif
  // The machine must leave the CPU alone for this one (CI runs it alone:
  // is_parallel = false); a build beside it would share the CPU for real.
  if (const double busy = busy_pct(os_cpu(), 200); busy > 10)
    GTEST_SKIP() << "CPU " << os_cpu() << " is " << busy << " % busy with other processes: not a CPU of its own";
  ticking_poller p(2'000);
  rt_->add_poller(0, &p);
  const auto d = plans_over_a_while();
  rt_->remove_poller(0, &p);
  settled(0);
  using enum policy::spin_reason;
  EXPECT_GT(of(d, paying), 1'000u);
  EXPECT_LT(of(d, shared) * 10, of(d, paying)) << "a CPU of its own looked shared";
  EXPECT_LT(of(d, not_paying) * 10, of(d, paying)) << "spins that catch every wait did not pay";
}

TEST_F(adaptive_idle, AReactorSharingItsCpuWithABusyProcessStopsSpinning_Seed001) {
  bool pinned = false;
  if (!start_one(&pinned)) GTEST_SKIP() << "needs two CPUs to pin a reactor on one";
  ticking_poller p(2'000);
  rt_->add_poller(0, &p);
  const core_counters before = settled(0);
  std::array<std::uint64_t, policy::spin_reason_count> d;
  {
    const cpu_hog hog(os_cpu());
    ASSERT_TRUE(hog.started());
    d = plans_over_a_while();
  }
  rt_->remove_poller(0, &p);
  const core_counters after = settled(0);
  using enum policy::spin_reason;
  EXPECT_GT(after.cpu_shared_samples, before.cpu_shared_samples);
  EXPECT_GT(after.cpu_wait_ns, before.cpu_wait_ns);
  EXPECT_GT(of(d, shared), 100u);
  EXPECT_GT(of(d, shared), 4 * of(d, paying)) << "the reactor went on spinning beside a busy process";
}

TEST_F(adaptive_idle, TheSleepAndWakeCostIsMeasured) {
  bool pinned = false;
  if (!start_one(&pinned)) GTEST_SKIP() << "needs two CPUs to pin a reactor on one";
  rt_->run([] { this_fiber::sleep_for(std::chrono::milliseconds(5)); });
  const core_counters c = settled(0);
  EXPECT_GT(c.wake_ns, 0u);
  EXPECT_LT(c.wake_ns, 1'000'000u);
}

}  // namespace
}  // namespace affine::test
