#pragma once
// stream_options::user_timeout (RFC 9293 3.10.8; Linux's TCP_USER_TIMEOUT),
// the same case on every backend, with the fixtures of wait_any_cases.hh:
// a writer whose peer takes nothing (its window shut, its probes answered)
// ends with ETIMEDOUT soon after the timeout, where without one it would
// wait for the peer for ever.

#include <gtest/gtest.h>

#include <array>
#include <cstdio>
#include <string>
#include <vector>

#include "tests/net/wait_any_cases.hh"

namespace affine::test::timeout_cases {

using namespace std::chrono_literals;
using wait_any_cases::connect_pair;
using wait_any_cases::listen_on;
using wait_any_cases::ms;
using wait_any_cases::two_ends;

template <class Ends>
class timeout_on : public Ends {};
TYPED_TEST_SUITE_P(timeout_on);

TYPED_TEST_P(timeout_on, AWriteBeforeAShutWindowEndsAtTheUserTimeout) {
  this->on_ends([](const two_ends& e) {
    auto l = listen_on(e.far, {.receive_buffer = 4096});
    auto p = connect_pair(e, l, {.user_timeout = 300ms, .send_buffer = 4096});
    ASSERT_TRUE(p.far.is_open());
    // The far end reads nothing: its window shuts, the writer's buffer
    // fills, and the write waits before the shut window, probing.
    const std::vector<std::byte> block(64 * 1024);
    const std::uint64_t t0 = now_ns();
    std::error_code got;
    for (int i = 0; i < 256 && !got; ++i)
      if (auto w = p.near.write(block, t0 + 30'000 * ms); !w) got = w.error();
    const std::uint64_t took = now_ns() - t0;
    std::printf("the write ended after %.0f ms: %s\n", double(took) / 1e6, got.message().c_str());
    EXPECT_EQ(got, std::make_error_code(std::errc::timed_out));
    // Not the write's own deadline: the connection ended, seconds before it.
    EXPECT_LT(took, 15'000 * ms);
    // And it is over: a read ends at once (the kernel says end of stream
    // once it has reported the error; the userspace stack the error again).
    std::array<std::byte, 8> buf;
    const std::uint64_t t1 = now_ns();
    auto r = p.near.read(buf, t1 + 5000 * ms);
    EXPECT_TRUE(!r || *r == 0);
    EXPECT_LT(now_ns() - t1, 1000 * ms);
  });
}

REGISTER_TYPED_TEST_SUITE_P(timeout_on, AWriteBeforeAShutWindowEndsAtTheUserTimeout);

}  // namespace affine::test::timeout_cases
