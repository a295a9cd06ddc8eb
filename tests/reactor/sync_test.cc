// Synchronisation across cores: mutex, condition variable, semaphore,
// channel, event, wait_any, timeouts.

#include <atomic>
#include <vector>

#include "affine/channel.hh"
#include "affine/sync.hh"
#include <memory>

#include "tests/reactor/runtime_fixture.hh"

namespace affine::test {
namespace {

using sync_api = runtime_test;

std::uint64_t in_ms(int ms) { return now_ns() + std::uint64_t(ms) * 1'000'000; }

TEST_F(sync_api, MutexSerialisesFibersOnBothCores) {
  mutex m;
  long counter = 0;  // guarded by m, deliberately not atomic
  rt_->run([&] {
    std::vector<fiber_handle> hs;
    for (int i = 0; i < 40; ++i)
      hs.push_back(spawn([&] {
        for (int k = 0; k < 500; ++k) {
          m.lock();
          const long v = counter;
          if (k % 50 == 0) this_fiber::yield();  // hold it across a switch
          counter = v + 1;
          m.unlock();
        }
      }, {.core = unsigned(i % 2)}).value());
    for (auto& h : hs) h.join();
  });
  EXPECT_EQ(counter, 40 * 500);
}

// An event may be destroyed as soon as its wait returns, while the fiber
// that set it (on another core) is still inside set(): the echo server's
// accept loop keeps one on its stack for its connection fibers (found as a
// SIGSEGV in notify_all under load). Each round's event lives on the
// waiter's stack and dies the moment wait() returns; ASan sees a late touch.
TEST_F(sync_api, AnEventMayDieAsSoonAsItsWaitReturns) {
  rt_->run([] {
    for (int round = 0; round < 2000; ++round) {
      auto e = std::make_unique<event>();
      auto setter = spawn([ev = e.get()] { ev->set(); }, {.core = 1}).value();
      ASSERT_TRUE(e->wait(in_ms(5000)));
      e.reset();  // gone while set() may still be unlocking it
      setter.join();
    }
  });
}

TEST_F(sync_api, MutexLockUntilTimesOut) {
  rt_->run([] {
    mutex m;
    m.lock();
    auto h = spawn([&] { EXPECT_FALSE(m.lock_until(in_ms(2))); }, {.core = 1}).value();
    h.join();
    m.unlock();
    EXPECT_TRUE(m.try_lock());
    m.unlock();
  });
}

TEST_F(sync_api, ConditionVariableProducerConsumerAcrossCores) {
  rt_->run([] {
    mutex m;
    condition_variable cv;
    std::vector<int> queue;
    int received = 0;
    auto consumer = spawn([&] {
      m.lock();
      while (received < 1000) {
        cv.wait(m, [&] { return !queue.empty(); });
        received += int(queue.size());
        queue.clear();
      }
      m.unlock();
    }, {.core = 1, .pinned = true}).value();
    auto producer = spawn([&] {
      for (int i = 0; i < 1000; ++i) {
        m.lock();
        queue.push_back(i);
        m.unlock();
        cv.notify_one();
      }
    }, {.core = 0, .pinned = true}).value();
    producer.join();
    consumer.join();
    EXPECT_EQ(received, 1000);
  });
}

TEST_F(sync_api, ConditionVariableWaitTimesOutWithMutexHeld) {
  rt_->run([] {
    mutex m;
    condition_variable cv;
    m.lock();
    EXPECT_FALSE(cv.wait(m, in_ms(2)));
    EXPECT_FALSE(m.try_lock());  // still ours
    m.unlock();
  });
}

TEST_F(sync_api, SemaphoreHandsUnitsToWaitersInOrder) {
  rt_->run([] {
    semaphore s(0);
    std::atomic<int> got{0};
    std::vector<fiber_handle> hs;
    for (int i = 0; i < 10; ++i) hs.push_back(spawn([&] {
      s.acquire();
      ++got;
    }, {.core = unsigned(i % 2)}).value());
    this_fiber::sleep_for(std::chrono::milliseconds(2));
    EXPECT_EQ(got.load(), 0);
    s.release(10);
    for (auto& h : hs) h.join();
    EXPECT_EQ(got.load(), 10);
    EXPECT_EQ(s.available(), 0u);
    EXPECT_FALSE(s.acquire(in_ms(1)));
  });
}

TEST_F(sync_api, TimedOutWaiterDoesNotSwallowANotification) {
  rt_->run([] {
    semaphore s(0);
    auto timed = spawn([&] { EXPECT_FALSE(s.acquire(in_ms(1))); }).value();
    timed.join();
    auto patient = spawn([&] { EXPECT_TRUE(s.acquire()); }, {.core = 1}).value();
    this_fiber::sleep_for(std::chrono::milliseconds(1));
    s.release();
    patient.join();
  });
}

TEST_F(sync_api, ChannelCarriesEveryValueInOrderAcrossCores) {
  rt_->run([] {
    channel<int> ch(4);
    long sum = 0;
    int last = -1;
    bool ordered = true;
    auto rx = spawn([&] {
      while (auto v = ch.recv()) {
        ordered = ordered && *v == last + 1;
        last = *v;
        sum += *v;
      }
    }, {.core = 1, .pinned = true}).value();
    for (int i = 0; i < 10000; ++i) ASSERT_EQ(ch.send(i), send_result::ok);
    ch.close();
    rx.join();
    EXPECT_TRUE(ordered);
    EXPECT_EQ(sum, 10000L * 9999 / 2);
    EXPECT_EQ(ch.send(1), send_result::closed);
  });
}

TEST_F(sync_api, ChannelBoundsAndTimeouts) {
  rt_->run([] {
    channel<int> ch(2);
    EXPECT_EQ(ch.try_send(1), send_result::ok);
    EXPECT_EQ(ch.try_send(2), send_result::ok);
    EXPECT_EQ(ch.try_send(3), send_result::full);
    EXPECT_EQ(ch.send(3, in_ms(1)), send_result::timeout);
    EXPECT_EQ(ch.size(), 2u);
    EXPECT_EQ(*ch.try_recv(), 1);
    EXPECT_EQ(*ch.recv(), 2);
    EXPECT_FALSE(ch.recv(in_ms(1)).has_value());
    EXPECT_FALSE(ch.closed());
  });
}

TEST_F(sync_api, WaitAnyReturnsTheFirstEventSet) {
  rt_->run([] {
    event a, b, c;
    auto setter = spawn([&] {
      this_fiber::sleep_for(std::chrono::milliseconds(1));
      b.set();
    }, {.core = 1}).value();
    auto i = wait_any({&a, &b, &c});
    ASSERT_TRUE(i.has_value());
    EXPECT_EQ(*i, 1u);
    setter.join();
    EXPECT_EQ(wait_any({&a, &b}).value(), 1u);  // already set: no wait
  });
}

TEST_F(sync_api, WaitAnyTimesOut) {
  rt_->run([] {
    event a, b;
    const std::uint64_t t0 = now_ns();
    EXPECT_FALSE(wait_any({&a, &b}, in_ms(2)).has_value());
    EXPECT_GE(now_ns() - t0, 2'000'000u);
    a.set();  // a late set finds no stale waiter
    EXPECT_TRUE(a.wait(in_ms(1)));
  });
}

TEST_F(sync_api, EventWakesManyWaitersOnBothCores) {
  rt_->run([] {
    event go;
    std::atomic<int> woke{0};
    std::vector<fiber_handle> hs;
    for (int i = 0; i < 50; ++i) hs.push_back(spawn([&] {
      go.wait();
      ++woke;
    }, {.core = unsigned(i % 2)}).value());
    this_fiber::sleep_for(std::chrono::milliseconds(1));
    go.set();
    for (auto& h : hs) h.join();
    EXPECT_EQ(woke.load(), 50);
  });
}

}  // namespace
}  // namespace affine::test
