// net::wait_any on the userspace stack (issue 5 item 8), and the
// cancellation of every socket call (tests/net/cancel_cases.hh) and zero-copy
// I/O (tests/net/zero_copy_cases.hh) and the user timeout
// (tests/net/timeout_cases.hh): the suites of
// tests/net/wait_any_cases.hh between two stacks on the in-process wire,
// the waiter's sockets on a (RX on core 0), their peers on b (RX on the
// last core). Teardown checks that no connection, ring buffer or UDP socket
// is left.

// GCC 12 (-Og with ASan) takes std::stop_source's constructor, which hands
// *this to a member that does not read it, for a read of uninitialized
// memory: a false -Wmaybe-uninitialized in <stop_token>.
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"

#include <gtest/gtest.h>

#include "stack/udp_socket.hh"
#include "tests/net/cancel_cases.hh"
#include "tests/net/timeout_cases.hh"
#include "tests/net/zero_copy_cases.hh"
#include "tests/net/wait_any_cases.hh"
#include "tests/stack/two_stacks.hh"

namespace affine::stack {
namespace {

using test::wait_any_cases::two_ends;

class two_stacks_ends : public testing::two_stacks {
 public:
  void on_ends(const std::function<void(const two_ends&)>& body) {
    drivers::wire::link_config lc;
    lc.clock = drivers::wire::clock_kind::monotonic;
    run(lc, [&](stack& a, stack& b) { body(two_ends{a.backend(), b.backend(), {testing::a_ip}, {testing::b_ip}}); });
  }

 protected:
  void SetUp() override { start(); }
  void TearDown() override {
    two_stacks::TearDown();
    EXPECT_EQ(udp_socket::live_count(), 0u) << "UDP sockets leaked";
  }
};

}  // namespace
}  // namespace affine::stack

namespace affine::test::wait_any_cases {
INSTANTIATE_TYPED_TEST_SUITE_P(stack, wait_any_on, ::testing::Types<stack::two_stacks_ends>);
}  // namespace affine::test::wait_any_cases

namespace affine::test::cancel_cases {
INSTANTIATE_TYPED_TEST_SUITE_P(stack, cancel_on, ::testing::Types<stack::two_stacks_ends>);
}  // namespace affine::test::cancel_cases

namespace affine::test::zero_copy_cases {
INSTANTIATE_TYPED_TEST_SUITE_P(stack, zero_copy_on, ::testing::Types<stack::two_stacks_ends>);
}  // namespace affine::test::zero_copy_cases

namespace affine::test::timeout_cases {
INSTANTIATE_TYPED_TEST_SUITE_P(stack, timeout_on, ::testing::Types<stack::two_stacks_ends>);
}  // namespace affine::test::timeout_cases
