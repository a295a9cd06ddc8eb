// The EAL once for the whole test binary, before any test runs.

#include "tests/drivers/dpdk/dpdk_fixture.hh"

namespace affine::drivers::dpdk::test {

namespace {

class eal_environment : public ::testing::Environment {
 public:
  void SetUp() override {
    auto r = init_eal_for_tests();
    ASSERT_TRUE(r.has_value()) << r.error();
  }
};

[[maybe_unused]] ::testing::Environment* const environment =
    ::testing::AddGlobalTestEnvironment(new eal_environment);

}  // namespace

}  // namespace affine::drivers::dpdk::test
