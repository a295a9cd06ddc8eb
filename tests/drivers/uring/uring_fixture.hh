#pragma once
// A two-reactor runtime with the uring backend installed, and the leak
// checks of STYLE.md in teardown: the runtime's (no fiber, stack or timer
// left) and the kernel's (every fd opened during the test closed again).

#include <gtest/gtest.h>

#include <filesystem>

#include "drivers/uring/install.hh"
#include "tests/reactor/runtime_fixture.hh"

namespace affine::test {

inline std::size_t open_fds() {
  std::size_t n = 0;
  for ([[maybe_unused]] const auto& e : std::filesystem::directory_iterator("/proc/self/fd")) ++n;
  return n;
}

class uring_test : public runtime_test {
 protected:
  void SetUp() override {
    fds_before_ = open_fds();
    runtime_test::SetUp();
    auto inst = drivers::uring::install(*rt_);
    ASSERT_TRUE(inst.has_value()) << inst.error();
    inst_ = std::move(*inst);
  }

  void TearDown() override {
    inst_.reset();
    runtime_test::TearDown();
    EXPECT_EQ(open_fds(), fds_before_) << "file descriptors leaked";
  }

  drivers::uring::installation inst_;
  std::size_t fds_before_ = 0;
};

}  // namespace affine::test
