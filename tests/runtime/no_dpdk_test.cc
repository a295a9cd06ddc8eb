// affine built without DPDK (meson -Ddpdk=disabled): kernel sockets serve
// the socket API, and a configuration that asks for a dpdk port stops
// start-up with exit code 2 and one line naming the file, the line, the key
// and what to do instead (runtime/no_stack_ports.cc).

#include <gtest/gtest.h>

#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

#include "affine/affine.hh"
#include "affine/net.hh"

namespace affine {
namespace {

TEST(runtime_without_dpdk, ADpdkPortIsExitCodeTwoNamingItsFileAndLine) {
  char path[] = "/tmp/affine-no-dpdk-XXXXXX.toml";
  const int fd = ::mkstemps(path, 5);
  ASSERT_GE(fd, 0);
  ::close(fd);
  std::ofstream(path) << "[reactor]\ncores = 1\n\n[[port]]\ndriver = \"dpdk\"\nip = \"10.77.0.2/24\"\n";
  bool ran = false;
  std::vector<const char*> argv{"no_dpdk_test", "--config", path};
  testing::internal::CaptureStderr();
  const int code = run(int(argv.size()), argv.data(), [&](auto) {
    ran = true;
    return 0;
  });
  const std::string err = testing::internal::GetCapturedStderr();
  ::unlink(path);
  EXPECT_EQ(code, 2);
  EXPECT_FALSE(ran);
  EXPECT_NE(err.find(std::string(path) + ":5"), std::string::npos) << err;  // the driver line
  EXPECT_NE(err.find("driver"), std::string::npos) << err;
  EXPECT_NE(err.find("without DPDK"), std::string::npos) << err;
  EXPECT_NE(err.find("\"uring\""), std::string::npos) << err;
}

TEST(runtime_without_dpdk, AUringPortServesTheSocketApi) {
  std::vector<const char*> argv{"no_dpdk_test", "--set", "reactor.cores=1"};
  const int code = run(int(argv.size()), argv.data(), [](auto) {
    auto l = net::listen({.local = {net::loopback, 0}});
    if (!l) return 10;
    auto c = net::connect(l->local());
    if (!c) return 11;
    auto s = l->accept();
    if (!s) return 12;
    const std::byte b[1] = {std::byte{42}};
    if (!c->write(b)) return 13;
    std::byte r[1];
    auto n = s->read(r);
    return n && *n == 1 && r[0] == std::byte{42} ? 0 : 14;
  });
  EXPECT_EQ(code, 0);
}

}  // namespace
}  // namespace affine
