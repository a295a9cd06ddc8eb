#pragma once
// net::wait_any, the same cases on every backend (issue 5 item 8, "waiting
// on several sockets at once"), as a typed gtest suite: tests/stack/
// wait_any_test.cc runs it on two userspace stacks, tests/drivers/uring/
// wait_any_test.cc on kernel sockets over loopback. Each case runs in a
// fiber; the waiter's sockets come from `near`, their peers from `far`. The
// events a wait must see happen in another fiber some milliseconds later,
// once it has parked.

#include <gtest/gtest.h>

#include <array>
#include <chrono>
#include <expected>
#include <functional>
#include <ostream>
#include <span>
#include <string_view>
#include <vector>

#include "affine/fiber.hh"
#include "affine/net.hh"
#include "drivers/net_backend.hh"

namespace affine::net {
inline void PrintTo(readiness r, std::ostream* os) {
  *os << (r == readiness::none ? "none" : "");
  if (has(r, readiness::readable)) *os << "readable ";
  if (has(r, readiness::writable)) *os << "writable ";
  if (has(r, readiness::closed)) *os << "closed ";
}
}  // namespace affine::net

namespace affine::test::wait_any_cases {

using namespace std::chrono_literals;
using net::readiness;
using net::wait_entry;

struct two_ends {
  net::detail::backend& near;
  net::detail::backend& far;
  net::ipv4_address near_addr;  // as `far` reaches it
  net::ipv4_address far_addr;   // as `near` reaches it
};

inline constexpr std::uint64_t ms = 1'000'000;
inline std::uint64_t in_ms(std::uint64_t n) { return now_ns() + n * ms; }
inline std::uint64_t in_5s() { return in_ms(5000); }
inline std::span<const std::byte> bytes_of(std::string_view s) { return std::as_bytes(std::span(s)); }

// A wait for something another fiber is about to do: it must end well
// before its 5 s deadline (the wait that reports at its deadline what
// happened long before it has lost a wakeup).
inline std::expected<std::size_t, std::error_code> wait_for_event(std::span<wait_entry> entries) {
  const std::uint64_t t0 = now_ns();
  auto n = net::wait_any(entries, t0 + 5000 * ms);
  EXPECT_LT(now_ns() - t0, 2000 * ms) << "woken by the deadline, not by the event";
  return n;
}

inline net::tcp_listener listen_on(net::detail::backend& b, const net::stream_options& accepted = {}) {
  auto l = b.listen({.local = {net::any_address, 0}, .backlog = 16, .accepted = accepted});
  EXPECT_TRUE(l.has_value()) << l.error().message();
  return l ? net::tcp_listener(std::move(*l)) : net::tcp_listener();
}

inline net::udp_socket bind_on(net::detail::backend& b) {
  auto u = b.bind_udp({.local = {net::any_address, 0}, .receive_queue = 4});
  EXPECT_TRUE(u.has_value()) << u.error().message();
  return u ? net::udp_socket(std::move(*u)) : net::udp_socket();
}

// A connection from `near` to `far_listener`, both ends.
struct stream_pair {
  net::tcp_stream near;
  net::tcp_stream far;
};

inline stream_pair connect_pair(const two_ends& e, net::tcp_listener& far_listener,
                                const net::stream_options& near_opts = {}) {
  stream_pair p;
  auto c = e.near.connect({e.far_addr, far_listener.local().port}, in_5s(), near_opts);
  EXPECT_TRUE(c.has_value()) << c.error().message();
  if (!c) return p;
  p.near = net::tcp_stream(std::move(*c));
  auto a = far_listener.accept(in_5s());
  EXPECT_TRUE(a.has_value()) << a.error().message();
  if (a) p.far = std::move(*a);
  return p;
}

// Runs `f` in another fiber after `delay`; joined by the destructor.
class later {
 public:
  template <class F>
  later(std::chrono::milliseconds delay, F f)
      : h_(spawn([delay, f = std::move(f)]() mutable {
          this_fiber::sleep_for(delay);
          f();
        }).value()) {}
  ~later() { join(); }
  void join() {
    if (h_.joinable()) h_.join();
  }

 private:
  fiber_handle h_;
};

// The suite, on the backend that `Ends` provides: a gtest fixture with
// `void on_ends(const std::function<void(const two_ends&)>& body)`, which
// runs `body` in a fiber with the backend up and checks for leaks after.
template <class Ends>
class wait_any_on : public Ends {};
TYPED_TEST_SUITE_P(wait_any_on);

TYPED_TEST_P(wait_any_on, DataOnOneOfSeveralStreamsReadiesThatOneOnly) {
  this->on_ends([](const two_ends& e) {
    auto l = listen_on(e.far);
    std::array<stream_pair, 3> p{connect_pair(e, l), connect_pair(e, l), connect_pair(e, l)};
    std::array entries{wait_entry(p[0].near, readiness::readable), wait_entry(p[1].near, readiness::readable),
                       wait_entry(p[2].near, readiness::readable)};
    later ping(20ms, [&] { EXPECT_TRUE(p[1].far.write(bytes_of("ping"), in_5s())); });
    auto n = wait_for_event(entries);
    ASSERT_TRUE(n.has_value()) << n.error().message();
    EXPECT_EQ(*n, 1u);
    EXPECT_EQ(entries[0].ready, readiness::none);
    EXPECT_EQ(entries[1].ready, readiness::readable);
    EXPECT_EQ(entries[2].ready, readiness::none);
    std::array<std::byte, 8> buf;
    auto r = p[1].near.read(buf, in_5s());
    ASSERT_TRUE(r.has_value());
    EXPECT_EQ(*r, 4u);
  });
}

TYPED_TEST_P(wait_any_on, NoneReadyTimesOutAtTheDeadline) {
  this->on_ends([](const two_ends& e) {
    auto l = listen_on(e.far);
    auto p = connect_pair(e, l);
    auto u = bind_on(e.near);
    std::array entries{wait_entry(p.near, readiness::readable), wait_entry(u)};
    const std::uint64_t t0 = now_ns();
    auto n = net::wait_any(entries, t0 + 50 * ms);
    ASSERT_FALSE(n.has_value());
    EXPECT_EQ(n.error(), std::errc::timed_out);
    EXPECT_GE(now_ns() - t0, 50 * ms);
    EXPECT_EQ(entries[0].ready, readiness::none);
    EXPECT_EQ(entries[1].ready, readiness::none);
    // A deadline already passed only looks.
    EXPECT_EQ(net::wait_any(entries, 0).error(), std::errc::timed_out);
  });
}

TYPED_TEST_P(wait_any_on, APastDeadlineLooksAndAnswersWhatIsReady) {
  this->on_ends([](const two_ends& e) {
    auto l = listen_on(e.far);
    auto p = connect_pair(e, l);
    ASSERT_TRUE(p.far.write(bytes_of("x"), in_5s()));
    std::array entries{wait_entry(p.near, readiness::readable)};
    ASSERT_TRUE(wait_for_event(entries).has_value());  // the byte is there
    const std::uint64_t t0 = now_ns();
    auto n = net::wait_any(entries, 0);
    ASSERT_TRUE(n.has_value()) << n.error().message();
    EXPECT_EQ(*n, 1u);
    EXPECT_EQ(entries[0].ready, readiness::readable);
    EXPECT_LT(now_ns() - t0, 1000 * ms);
  });
}

TYPED_TEST_P(wait_any_on, AListenerIsReadableWhenAConnectionComes) {
  this->on_ends([](const two_ends& e) {
    auto near_l = listen_on(e.near);
    auto far_l = listen_on(e.far);
    auto p = connect_pair(e, far_l);
    std::array entries{wait_entry(near_l), wait_entry(p.near, readiness::readable)};
    net::tcp_stream dialed;
    later dial(20ms, [&] {
      auto c = e.far.connect({e.near_addr, near_l.local().port}, in_5s(), {});
      EXPECT_TRUE(c.has_value()) << c.error().message();
      if (c) dialed = net::tcp_stream(std::move(*c));
    });
    auto n = wait_for_event(entries);
    ASSERT_TRUE(n.has_value()) << n.error().message();
    EXPECT_EQ(*n, 1u);
    EXPECT_EQ(entries[0].ready, readiness::readable);
    EXPECT_EQ(entries[1].ready, readiness::none);
    auto s = near_l.accept(in_5s());
    EXPECT_TRUE(s.has_value()) << s.error().message();
    dial.join();
  });
}

// The end of the stream and a reset are readable: read() returns at once.
TYPED_TEST_P(wait_any_on, APeersFinOrResetIsReadable) {
  this->on_ends([](const two_ends& e) {
    auto l = listen_on(e.far);
    auto fin = connect_pair(e, l);
    auto rst = connect_pair(e, l);
    for (stream_pair* p : {&fin, &rst}) {
      std::array entries{wait_entry(p->near, readiness::readable)};
      later end(20ms, [&] {
        if (p == &fin) {
          EXPECT_TRUE(p->far.shutdown_write());
        } else {
          p->far.abort();
        }
      });
      auto n = wait_for_event(entries);
      ASSERT_TRUE(n.has_value()) << n.error().message();
      EXPECT_EQ(entries[0].ready, readiness::readable);
      std::array<std::byte, 8> buf;
      auto r = p->near.read(buf, in_5s());
      if (p == &fin) {
        ASSERT_TRUE(r.has_value());
        EXPECT_EQ(*r, 0u) << "end of stream";
      } else {
        ASSERT_FALSE(r.has_value());
        EXPECT_EQ(r.error(), std::errc::connection_reset);
      }
    }
  });
}

// Small buffers both ends: writes stop once the peer's receive buffer and
// ours are full; the stream is writable again when the peer reads.
TYPED_TEST_P(wait_any_on, AFullStreamIsWritableAgainOnceThePeerDrainsIt) {
  this->on_ends([](const two_ends& e) {
    auto l = listen_on(e.far, {.receive_buffer = 16384});
    auto p = connect_pair(e, l, {.send_buffer = 16384});
    std::vector<std::byte> chunk(4096, std::byte{0x5a});
    std::array entries{wait_entry(p.near, readiness::writable)};
    ASSERT_TRUE(net::wait_any(entries, 0).has_value()) << "a new stream is writable";
    EXPECT_EQ(entries[0].ready, readiness::writable);
    bool full = false;
    for (int i = 0; i < 4096 && !full; ++i) {
      auto w = p.near.write(chunk, in_ms(100));
      full = !w.has_value();
      if (full) {
        ASSERT_EQ(w.error(), std::errc::timed_out);
      }
    }
    ASSERT_TRUE(full) << "16 MiB went into 32 KiB of buffers";
    auto n = net::wait_any(entries, in_ms(50));
    ASSERT_FALSE(n.has_value()) << "still writable when full";
    EXPECT_EQ(n.error(), std::errc::timed_out);
    later drain(20ms, [&] {
      std::array<std::byte, 4096> buf;
      while (p.far.read(buf, in_ms(200))) {
      }
    });
    n = wait_for_event(entries);
    ASSERT_TRUE(n.has_value()) << n.error().message();
    EXPECT_EQ(entries[0].ready, readiness::writable);
  });
}

TYPED_TEST_P(wait_any_on, ReadableAndWritableOnOneStreamAnswerWhatHolds) {
  this->on_ends([](const two_ends& e) {
    auto l = listen_on(e.far);
    auto p = connect_pair(e, l);
    std::array entries{wait_entry(p.near, readiness::readable | readiness::writable)};
    auto n = wait_for_event(entries);
    ASSERT_TRUE(n.has_value());
    EXPECT_EQ(entries[0].ready, readiness::writable);
    ASSERT_TRUE(p.far.write(bytes_of("x"), in_5s()));
    // Writable already; wait for the byte as well.
    std::array readable{wait_entry(p.near, readiness::readable)};
    ASSERT_TRUE(wait_for_event(readable).has_value());
    n = net::wait_any(entries, 0);
    ASSERT_TRUE(n.has_value());
    EXPECT_EQ(*n, 1u);
    EXPECT_EQ(entries[0].ready, readiness::readable | readiness::writable);
  });
}

// More entries than are kept on the fiber's stack; one datagram.
TYPED_TEST_P(wait_any_on, OneDatagramAmongManySocketsReadiesItsSocketOnly) {
  this->on_ends([](const two_ends& e) {
    constexpr std::size_t count = 100;
    constexpr std::size_t target = 73;
    std::vector<net::udp_socket> socks;
    for (std::size_t i = 0; i < count; ++i) socks.push_back(bind_on(e.near));
    std::vector<wait_entry> entries;
    for (net::udp_socket& s : socks) entries.emplace_back(s);
    auto far = bind_on(e.far);
    later send(20ms, [&] { EXPECT_TRUE(far.send_to({e.near_addr, socks[target].local().port}, bytes_of("dgram"))); });
    auto n = wait_for_event(entries);
    ASSERT_TRUE(n.has_value()) << n.error().message();
    EXPECT_EQ(*n, 1u);
    for (std::size_t i = 0; i < count; ++i)
      EXPECT_EQ(entries[i].ready, i == target ? readiness::readable : readiness::none) << "socket " << i;
    std::array<std::byte, 16> buf;
    auto got = socks[target].recv_from(buf, in_5s());
    ASSERT_TRUE(got.has_value());
    EXPECT_EQ(got->size, 5u);
  });
}

// A datagram wakes one waiter of its socket. A recv_from that waits beside
// a wait_any must still get it, whichever of the two the stack woke.
TYPED_TEST_P(wait_any_on, ARecvFromBesideAWaitStillGetsTheDatagram) {
  this->on_ends([](const two_ends& e) {
    auto u = bind_on(e.near);
    auto far = bind_on(e.far);
    std::array entries{wait_entry(u)};
    later waiter(0ms, [&] {
      // Readable, or already taken by the reader: level-triggered.
      auto n = net::wait_any(entries, in_ms(500));
      if (!n) {
        EXPECT_EQ(n.error(), std::errc::timed_out);
      }
    });
    std::array<std::byte, 16> buf;
    later reader(10ms, [&] {
      auto got = u.recv_from(buf, in_5s());
      ASSERT_TRUE(got.has_value()) << got.error().message();
      EXPECT_EQ(got->size, 2u);
    });
    this_fiber::sleep_for(30ms);
    const std::uint64_t t0 = now_ns();
    EXPECT_TRUE(far.send_to({e.near_addr, u.local().port}, bytes_of("hi")));
    reader.join();
    EXPECT_LT(now_ns() - t0, 1000 * ms) << "the reader heard of the datagram only at its deadline";
  });
}

// A handle closed by another fiber during the wait: that entry is closed,
// the others are left as they are.
enum class which { stream, listener, udp };
inline void a_close_from_another_fiber_ends_the_wait(const two_ends& e, which closing) {
  auto far_l = listen_on(e.far);
  auto p = connect_pair(e, far_l);
  auto near_l = listen_on(e.near);
  auto u = bind_on(e.near);
  std::array entries{wait_entry(p.near, readiness::readable), wait_entry(near_l), wait_entry(u)};
  const auto closed_one = std::size_t(closing);
  later close(20ms, [&] {
    if (closing == which::stream) p.near.close();
    if (closing == which::listener) near_l.close();
    if (closing == which::udp) u.close();
  });
  auto n = wait_for_event(entries);
  ASSERT_TRUE(n.has_value()) << n.error().message();
  EXPECT_EQ(*n, 1u);
  for (std::size_t i = 0; i < entries.size(); ++i)
    EXPECT_EQ(entries[i].ready, i == closed_one ? readiness::closed : readiness::none) << "entry " << i;
}

TYPED_TEST_P(wait_any_on, AStreamClosedByAnotherFiberEndsTheWait) {
  this->on_ends([](const two_ends& e) { a_close_from_another_fiber_ends_the_wait(e, which::stream); });
}
TYPED_TEST_P(wait_any_on, AListenerClosedByAnotherFiberEndsTheWait) {
  this->on_ends([](const two_ends& e) { a_close_from_another_fiber_ends_the_wait(e, which::listener); });
}
TYPED_TEST_P(wait_any_on, AUdpSocketClosedByAnotherFiberEndsTheWait) {
  this->on_ends([](const two_ends& e) { a_close_from_another_fiber_ends_the_wait(e, which::udp); });
}

TYPED_TEST_P(wait_any_on, AHandleClosedBeforeTheCallIsAnsweredAtOnce) {
  this->on_ends([](const two_ends& e) {
    net::tcp_stream never_opened;
    auto u = bind_on(e.near);
    std::array entries{wait_entry(never_opened, readiness::readable), wait_entry(u)};
    auto n = wait_for_event(entries);
    ASSERT_TRUE(n.has_value()) << n.error().message();
    EXPECT_EQ(*n, 1u);
    EXPECT_EQ(entries[0].ready, readiness::closed);
    EXPECT_EQ(entries[1].ready, readiness::none);
  });
}

TYPED_TEST_P(wait_any_on, BadEntriesAreInvalidArguments) {
  this->on_ends([](const two_ends& e) {
    auto l = listen_on(e.near);
    auto u = bind_on(e.near);
    auto invalid = [](std::span<wait_entry> entries) {
      auto n = net::wait_any(entries, 0);
      return !n.has_value() && n.error() == std::errc::invalid_argument;
    };
    EXPECT_TRUE(invalid({})) << "no entries";
    std::array listener_writable{wait_entry(l)};
    listener_writable[0].interest = readiness::writable;
    EXPECT_TRUE(invalid(listener_writable));
    std::array udp_both{wait_entry(u)};
    udp_both[0].interest = readiness::readable | readiness::writable;
    EXPECT_TRUE(invalid(udp_both));
    std::array nothing_asked{wait_entry(u)};
    nothing_asked[0].interest = readiness::none;
    EXPECT_TRUE(invalid(nothing_asked));
    std::vector<wait_entry> too_many(net::max_wait_entries + 1, wait_entry(u));
    EXPECT_TRUE(invalid(too_many));
  });
}

REGISTER_TYPED_TEST_SUITE_P(wait_any_on, DataOnOneOfSeveralStreamsReadiesThatOneOnly, NoneReadyTimesOutAtTheDeadline,
                            APastDeadlineLooksAndAnswersWhatIsReady, AListenerIsReadableWhenAConnectionComes,
                            APeersFinOrResetIsReadable, AFullStreamIsWritableAgainOnceThePeerDrainsIt,
                            ReadableAndWritableOnOneStreamAnswerWhatHolds,
                            OneDatagramAmongManySocketsReadiesItsSocketOnly, ARecvFromBesideAWaitStillGetsTheDatagram,
                            AStreamClosedByAnotherFiberEndsTheWait, AListenerClosedByAnotherFiberEndsTheWait,
                            AUdpSocketClosedByAnotherFiberEndsTheWait, AHandleClosedBeforeTheCallIsAnsweredAtOnce,
                            BadEntriesAreInvalidArguments);

}  // namespace affine::test::wait_any_cases
