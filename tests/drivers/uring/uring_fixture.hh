#pragma once
// A two-reactor runtime with the uring backend installed, and the leak
// checks of STYLE.md in teardown: the runtime's (no fiber, stack or timer
// left) and the kernel's (every fd opened during the test closed again).
// AFFINE_URING_DEFERRED=0 in the environment installs rings without
// deferred task work, as kernels before 6.1 make them: meson runs the
// suites both ways.

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <string_view>

#include "drivers/uring/install.hh"
#include "tests/reactor/runtime_fixture.hh"

namespace affine::test {

inline std::size_t open_fds() {
  std::size_t n = 0;
  for ([[maybe_unused]] const auto& e : std::filesystem::directory_iterator("/proc/self/fd")) ++n;
  return n;
}

// Whether this run asks for deferred task work (AFFINE_URING_DEFERRED).
inline bool uring_deferred_asked() {
  const char* v = std::getenv("AFFINE_URING_DEFERRED");
  return v == nullptr || std::string_view(v) != "0";
}

class uring_test : public runtime_test {
 protected:
  void SetUp() override {
    fds_before_ = open_fds();
    runtime_test::SetUp();
    auto inst = drivers::uring::install(*rt_, {.deferred_task_work = uring_deferred_asked()});
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
