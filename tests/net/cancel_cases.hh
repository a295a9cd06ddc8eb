#pragma once
// Cancellation of the socket API (issue 18: "a fiber blocked in each
// blocking call is released by a stop request with operation_canceled"),
// the same cases on every backend, with the fixtures of wait_any_cases.hh:
// accept, connect, read, write, recv_from and wait_any, each parked with a
// 30 s deadline in a fiber that follows a token of the test's, released by
// a stop request from another fiber some milliseconds later. What the
// socket holds stays there: a read after a cancelled read gets the bytes.

#include <gtest/gtest.h>

#include <atomic>
#include <cstdio>
#include <functional>
#include <stop_token>
#include <string>

#include "tests/net/wait_any_cases.hh"

namespace affine::test::cancel_cases {

using namespace std::chrono_literals;
using wait_any_cases::bind_on;
using wait_any_cases::bytes_of;
using wait_any_cases::connect_pair;
using wait_any_cases::in_5s;
using wait_any_cases::in_ms;
using wait_any_cases::listen_on;
using wait_any_cases::stream_pair;
using wait_any_cases::two_ends;

inline const std::error_code canceled = std::make_error_code(std::errc::operation_canceled);

template <class E>
std::error_code code_of(const std::expected<E, std::error_code>& r) {
  return r ? std::error_code{} : r.error();
}

// Runs `call` in a fiber following a token of its own, requests the stop
// 20 ms later, and returns what the call returned; prints the release
// latency and checks it against a bound far from the 30 s deadline.
inline std::error_code released_by_stop(const char* what, const std::function<std::error_code()>& call) {
  std::stop_source src;
  std::atomic<std::uint64_t> back_ns{0};
  std::error_code got;
  auto f = spawn(
               [&] {
                 got = call();
                 back_ns = now_ns();
               },
               {.stop = src.get_token()})
               .value();
  this_fiber::sleep_for(20ms);
  EXPECT_EQ(back_ns.load(), 0u) << what << " returned before the stop: " << got.message();
  const std::uint64_t asked = now_ns();
  src.request_stop();
  f.join();
  const std::uint64_t took = back_ns - asked;
  std::printf("released %-10s in %6.1f us\n", what, double(took) / 1e3);
  EXPECT_LT(took, 1'000'000'000u) << what << ": released near its deadline, not by the stop";
  return got;
}

template <class Ends>
class cancel_on : public Ends {};
TYPED_TEST_SUITE_P(cancel_on);

TYPED_TEST_P(cancel_on, AReadIsReleasedAndTheBytesThatComeStay) {
  this->on_ends([](const two_ends& e) {
    auto l = listen_on(e.far);
    auto p = connect_pair(e, l);
    std::array<std::byte, 16> buf;
    EXPECT_EQ(released_by_stop("read", [&] { return code_of(p.near.read(buf, 30s)); }), canceled);
    ASSERT_TRUE(p.far.write(bytes_of("after"), in_5s()));
    auto n = p.near.read(buf, in_5s());
    ASSERT_TRUE(n.has_value()) << n.error().message();
    EXPECT_EQ(std::string(reinterpret_cast<const char*>(buf.data()), *n), "after");
  });
}

TYPED_TEST_P(cancel_on, AWriteIsReleased) {
  this->on_ends([](const two_ends& e) {
    auto l = listen_on(e.far, {.receive_buffer = 16384});
    auto p = connect_pair(e, l, {.send_buffer = 16384});
    std::vector<std::byte> chunk(4096, std::byte{0x5a});
    bool full = false;
    for (int i = 0; i < 4096 && !full; ++i) full = !p.near.write(chunk, in_ms(100));
    ASSERT_TRUE(full) << "16 MiB went into 32 KiB of buffers";
    EXPECT_EQ(released_by_stop("write", [&] { return code_of(p.near.write(chunk, 30s)); }), canceled);
  });
}

TYPED_TEST_P(cancel_on, AnAcceptIsReleased) {
  this->on_ends([](const two_ends& e) {
    auto l = listen_on(e.near);
    EXPECT_EQ(released_by_stop("accept", [&] { return code_of(l.accept(30s)); }), canceled);
    // The listener still works.
    auto c = e.far.connect({e.near_addr, l.local().port}, in_5s(), {});
    ASSERT_TRUE(c.has_value()) << c.error().message();
    EXPECT_TRUE(l.accept(in_5s()).has_value());
  });
}

// A listener whose backlog is full drops SYNs (both backends), so the
// next connect waits.
TYPED_TEST_P(cancel_on, AConnectIsReleased) {
  this->on_ends([](const two_ends& e) {
    auto l = e.far.listen({.local = {net::any_address, 0}, .backlog = 1});
    ASSERT_TRUE(l.has_value()) << l.error().message();
    net::tcp_listener full(std::move(*l));
    std::vector<net::tcp_stream> waiting;
    bool waits = false;
    for (int i = 0; i < 16 && !waits; ++i) {
      auto c = e.near.connect({e.far_addr, full.local().port}, in_ms(200), {});
      if (c) waiting.emplace_back(std::move(*c));
      waits = !c && c.error() == std::errc::timed_out;
    }
    ASSERT_TRUE(waits) << "a listener with a full backlog answered every SYN";
    EXPECT_EQ(released_by_stop("connect",
                               [&] { return code_of(e.near.connect({e.far_addr, full.local().port}, now_ns() + 30'000'000'000, {})); }),
              canceled);
  });
}

TYPED_TEST_P(cancel_on, ARecvFromIsReleased) {
  this->on_ends([](const two_ends& e) {
    auto u = bind_on(e.near);
    std::array<std::byte, 16> buf;
    EXPECT_EQ(released_by_stop("recv_from", [&] { return code_of(u.recv_from(buf, 30s)); }), canceled);
    auto far = bind_on(e.far);
    ASSERT_TRUE(far.send_to({e.near_addr, u.local().port}, bytes_of("dg")));
    EXPECT_TRUE(u.recv_from(buf, in_5s()).has_value());
  });
}

TYPED_TEST_P(cancel_on, AWaitAnyIsReleased) {
  this->on_ends([](const two_ends& e) {
    auto l = listen_on(e.far);
    auto p = connect_pair(e, l);
    auto u = bind_on(e.near);
    std::array entries{net::wait_entry(p.near, net::readiness::readable), net::wait_entry(u)};
    EXPECT_EQ(released_by_stop("wait_any", [&] { return code_of(net::wait_any(entries, 30s)); }), canceled);
    EXPECT_EQ(entries[0].ready, net::readiness::none);
    // Nothing left behind on the sockets' queues: the next wait sees data.
    ASSERT_TRUE(p.far.write(bytes_of("x"), in_5s()));
    auto n = net::wait_any(entries, in_5s());
    ASSERT_TRUE(n.has_value()) << n.error().message();
    EXPECT_EQ(entries[0].ready, net::readiness::readable);
  });
}

// Asked before the call: a call that would wait returns at once.
TYPED_TEST_P(cancel_on, AStopBeforeTheCallEndsItAtOnce) {
  this->on_ends([](const two_ends& e) {
    auto l = listen_on(e.far);
    auto p = connect_pair(e, l);
    std::stop_source src;
    src.request_stop();
    spawn(
        [&] {
          const std::uint64_t t0 = now_ns();
          std::array<std::byte, 16> buf;
          EXPECT_EQ(code_of(p.near.read(buf, 30s)), canceled);
          EXPECT_EQ(code_of(l.accept(30s)), canceled);
          EXPECT_LT(now_ns() - t0, 1'000'000'000u);
        },
        {.stop = src.get_token()})
        .value()
        .join(stop_mode::ignore);
  });
}

REGISTER_TYPED_TEST_SUITE_P(cancel_on, AReadIsReleasedAndTheBytesThatComeStay, AWriteIsReleased, AnAcceptIsReleased,
                            AConnectIsReleased, ARecvFromIsReleased, AWaitAnyIsReleased,
                            AStopBeforeTheCallEndsItAtOnce);

}  // namespace affine::test::cancel_cases
