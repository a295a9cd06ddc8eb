// EAL start-up failures, each in a child process (the EAL starts once per
// process, and this binary's own process never starts it): a clear line on
// stderr and a non-zero exit, as an app that reads [[port]].eal gives.

#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>
#include <vector>

#include "drivers/dpdk/eal.hh"
#include "drivers/dpdk/port.hh"

namespace affine::drivers::dpdk::test {
namespace {

// What an app does with a failed EAL: print the line, exit 2.
[[noreturn]] void start_eal(std::vector<std::string> args) {
  auto r = init_eal(args);
  if (!r) std::fprintf(stderr, "%s\n", r.error().c_str());
  std::exit(r ? 0 : 2);
}

bool machine_has_hugepages() {
  std::ifstream in("/proc/meminfo");
  for (std::string line; std::getline(in, line);)
    if (line.starts_with("HugePages_Total:")) return std::stoul(line.substr(16)) != 0;
  return false;
}

TEST(eal_start, without_hugepages_and_without_no_huge) {
  if (machine_has_hugepages()) GTEST_SKIP() << "this machine has hugepages reserved";
  EXPECT_EXIT(start_eal({"--no-pci", "--no-shconf", "-m", "64"}), ::testing::ExitedWithCode(2),
              "DPDK EAL: no hugepages reserved and --no-huge not given: reserve hugepages \\(docs/dpdk.md\\) or "
              "add --no-huge -m 256 to \\[\\[port\\]\\].eal");
}

TEST(eal_start, an_unknown_option) {
  EXPECT_EXIT(start_eal({"--no-huge", "--no-such-option"}), ::testing::ExitedWithCode(2),
              "DPDK EAL: invalid EAL arguments \\(an unknown option\\? DPDK printed its usage above\\)");
}

TEST(eal_start, options_that_exclude_each_other) {
  EXPECT_EXIT(start_eal({"--no-huge", "--in-memory"}), ::testing::ExitedWithCode(2),
              "DPDK EAL: invalid EAL arguments: Option --legacy-mem is not compatible with --in-memory");
}

TEST(eal_start, a_vdev_whose_pmd_is_not_installed) {
  EXPECT_EXIT(start_eal({"--no-huge", "--no-pci", "--no-shconf", "-m", "64", "--vdev=net_bogus0"}),
              ::testing::ExitedWithCode(2),
              "DPDK EAL: a device in the EAL arguments cannot be used: failed to parse device \"net_bogus0\" "
              "\\(is its PMD installed\\?");
}

TEST(eal_start, the_test_arguments_work) {
  EXPECT_EXIT(
      {
        auto r = init_eal_for_tests();
        std::exit(r ? 0 : 2);
      },
      ::testing::ExitedWithCode(0), "");
}

// An app's path for a [[port]] whose eal list carries its vdev.
[[noreturn]] void open_port_named_in_eal() {
  const std::vector<std::string> args{"--no-huge", "--no-pci", "--no-shconf", "-m", "128", "--vdev=net_ring7"};
  if (!init_eal(args)) std::exit(2);
  auto device = device_from_config("", args);
  auto p = dpdk_port::open({.device = *device, .rx_descriptors = 64, .tx_descriptors = 64});
  if (!p) std::fprintf(stderr, "%s\n", p.error().c_str());
  std::exit(p && (*p)->name() == "net_ring7" ? 0 : 3);
}

TEST(eal_start, a_vdev_from_the_eal_arguments_is_found_by_name) {
  EXPECT_EXIT(open_port_named_in_eal(), ::testing::ExitedWithCode(0), "");
}

TEST(eal_start, a_port_before_the_eal) {
  auto p = dpdk_port::open({.device = "net_ring0"});
  ASSERT_FALSE(p.has_value());
  EXPECT_EQ(p.error(), "port net_ring0: the DPDK EAL is not initialised");
  auto pool = packet_pool(0);
  ASSERT_FALSE(pool.has_value());
  EXPECT_EQ(pool.error(), "DPDK EAL is not initialised");
}

}  // namespace
}  // namespace affine::drivers::dpdk::test
