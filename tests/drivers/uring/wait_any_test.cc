// net::wait_any on the uring backend (issue 5 item 8): the suite of
// tests/net/wait_any_cases.hh on kernel sockets over loopback, both ends
// through the backend. Teardown checks that no fiber, timer or file
// descriptor is left (uring_fixture.hh).

#include <gtest/gtest.h>

#include "drivers/net_backend.hh"
#include "tests/drivers/uring/uring_fixture.hh"
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
}  // namespace affine::test
