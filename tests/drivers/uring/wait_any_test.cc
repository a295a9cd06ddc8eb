// net::wait_any on the uring backend (issue 5 item 8), and the cancellation
// of every socket call (tests/net/cancel_cases.hh) and zero-copy I/O
// (tests/net/zero_copy_cases.hh) and the user timeout
// (tests/net/timeout_cases.hh): the suites of
// tests/net/wait_any_cases.hh on kernel sockets over loopback, both ends
// through the backend. Teardown checks that no fiber, timer or file
// descriptor is left (uring_fixture.hh).

// GCC 12 (-Og with ASan) takes std::stop_source's constructor, which hands
// *this to a member that does not read it, for a read of uninitialized
// memory: a false -Wmaybe-uninitialized in <stop_token>.
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"

#include <gtest/gtest.h>

#include "drivers/net_backend.hh"
#include "tests/drivers/uring/uring_fixture.hh"
#include "tests/net/cancel_cases.hh"
#include "tests/net/timeout_cases.hh"
#include "tests/net/zero_copy_cases.hh"
#include "tests/net/wait_any_cases.hh"

namespace affine::test {
namespace {

using wait_any_cases::two_ends;

class loopback_ends : public uring_test {
 public:
  void on_ends(const std::function<void(const two_ends&)>& body) {
    rt_->run([&] {
      net::detail::backend& b = *net::detail::current_backend();
      body(two_ends{b, b, net::loopback, net::loopback});
    });
  }
};

}  // namespace

namespace wait_any_cases {
INSTANTIATE_TYPED_TEST_SUITE_P(uring, wait_any_on, ::testing::Types<loopback_ends>);
}  // namespace wait_any_cases
namespace cancel_cases {
INSTANTIATE_TYPED_TEST_SUITE_P(uring, cancel_on, ::testing::Types<loopback_ends>);
}  // namespace cancel_cases

namespace zero_copy_cases {
INSTANTIATE_TYPED_TEST_SUITE_P(uring, zero_copy_on, ::testing::Types<loopback_ends>);
}  // namespace zero_copy_cases

namespace timeout_cases {
INSTANTIATE_TYPED_TEST_SUITE_P(uring, timeout_on, ::testing::Types<loopback_ends>);
}  // namespace timeout_cases
}  // namespace affine::test
