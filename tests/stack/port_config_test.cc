// A [[port]] with driver = "dpdk" that cannot be opened ends start-up with
// exit code 2 and one line naming the file, line and key (issue 4, "bad
// input"). The EAL is once per process, so each case runs affine::run in a
// child process of its own (a gtest death test).

#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "affine/affine.hh"

namespace affine {
namespace {

constexpr const char* eal_base = R"("--no-huge", "--no-pci", "--no-shconf", "--no-telemetry", "-m", "128", "-l", "0")";

std::string write_config(const std::string& name, const std::string& port_table) {
  const std::string path = ::testing::TempDir() + name + ".toml";
  FILE* f = std::fopen(path.c_str(), "w");
  std::fputs(("[reactor]\ncores = 1\n\n[[port]]\n" + port_table).c_str(), f);
  std::fclose(f);
  return path;
}

[[noreturn]] void run_and_exit(const std::string& path) {
  std::vector<const char*> argv{"port_config_test", "--config", path.c_str()};
  std::exit(run(int(argv.size()), argv.data(), [](auto) { return 0; }));
}

class dpdk_port_config : public ::testing::Test {
 protected:
  void SetUp() override { GTEST_FLAG_SET(death_test_style, "threadsafe"); }
};

TEST_F(dpdk_port_config, APortWithoutADeviceIsRefusedAtItsTable) {
  const std::string path = write_config("no_device", "driver = \"dpdk\"\n");
  EXPECT_EXIT(run_and_exit(path), ::testing::ExitedWithCode(2),
              "no_device.toml:5: port\\[0\\].driver: a dpdk port needs a device");
}

TEST_F(dpdk_port_config, APmdThatIsNotInstalledIsAClearErrorAndExitTwo) {
  const std::string path =
      write_config("no_pmd", std::string("driver = \"dpdk\"\neal = [") + eal_base + ", \"--vdev=net_bogus0\"]\n");
  EXPECT_EXIT(run_and_exit(path), ::testing::ExitedWithCode(2), "no_pmd.toml:6: port\\[0\\].eal: .*net_bogus0");
}

TEST_F(dpdk_port_config, AnInvalidVdevStringIsAClearErrorAndExitTwo) {
  const std::string path = write_config(
      "bad_vdev", std::string("driver = \"dpdk\"\neal = [") + eal_base + ", \"--vdev=net_ring0,nodeaction=x\"]\n");
  EXPECT_EXIT(run_and_exit(path), ::testing::ExitedWithCode(2), "bad_vdev.toml:6: port\\[0\\].eal: .*net_ring0");
}

TEST_F(dpdk_port_config, MoreQueuesThanThePmdHasNamesTheQueuesKey) {
  const std::string path = write_config(
      "queues", std::string("driver = \"dpdk\"\neal = [") + eal_base + ", \"--vdev=net_ring0\"]\nqueues = 64\n");
  EXPECT_EXIT(run_and_exit(path), ::testing::ExitedWithCode(2),
              "queues.toml:7: port\\[0\\].queues: 64 RX queues asked for; net_ring0 \\(net_ring\\) has at most 16");
}

}  // namespace
}  // namespace affine
