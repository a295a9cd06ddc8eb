// The RX-queue -> core plan and first_cores: exact, deterministic placements.

#include <gtest/gtest.h>

#include "affine/topology.hh"

namespace affine {
namespace {

topology two_nodes_of_four() {
  // Node 0 = cores 0-3, node 1 = cores 4-7.
  return topology::from_synthetic("pack:2 numa:1 l3:1 core:4 pu:1").value();
}

// "queue:core" pairs, easy to compare and to read in a failure.
std::vector<std::string> pairs(const std::vector<rxq_assignment>& plan) {
  std::vector<std::string> out;
  for (const auto& a : plan) out.push_back(std::to_string(a.queue) + ":" + std::to_string(a.core.value));
  return out;
}

std::vector<std::string> plan_of(const topology& t, unsigned node, unsigned queues, rxq_placement mode) {
  auto plan = plan_rx_queues(t, node, queues, t.all_cores(), mode);
  EXPECT_TRUE(plan.has_value()) << plan.error();
  return plan ? pairs(*plan) : std::vector<std::string>{};
}

using v = std::vector<std::string>;

TEST(rx_plan, local_fills_the_nic_node_first) {
  EXPECT_EQ(plan_of(two_nodes_of_four(), 1, 4, rxq_placement::local), (v{"0:4", "1:5", "2:6", "3:7"}));
}

TEST(rx_plan, spread_alternates_nodes_starting_at_the_nic_node) {
  EXPECT_EQ(plan_of(two_nodes_of_four(), 1, 4, rxq_placement::spread), (v{"0:4", "1:0", "2:5", "3:1"}));
}

TEST(rx_plan, local_spills_to_the_next_node_when_the_nic_node_is_full) {
  EXPECT_EQ(plan_of(two_nodes_of_four(), 0, 6, rxq_placement::local),
            (v{"0:0", "1:1", "2:2", "3:3", "4:4", "5:5"}));
}

TEST(rx_plan, more_queues_than_cores_reuse_cores_in_the_same_order) {
  EXPECT_EQ(plan_of(two_nodes_of_four(), 1, 10, rxq_placement::local),
            (v{"0:4", "1:5", "2:6", "3:7", "4:0", "5:1", "6:2", "7:3", "8:4", "9:5"}));
  EXPECT_EQ(plan_of(two_nodes_of_four(), 1, 10, rxq_placement::spread),
            (v{"0:4", "1:0", "2:5", "3:1", "4:6", "5:2", "6:7", "7:3", "8:4", "9:0"}));
}

TEST(rx_plan, nodes_of_the_nic_package_come_before_other_packages) {
  // 2 packages x 2 nodes x 2 cores: node 1 shares package 0 with node 0.
  const topology t = topology::from_synthetic("pack:2 numa:2 core:2 pu:1").value();
  EXPECT_EQ(plan_of(t, 1, 8, rxq_placement::local),
            (v{"0:2", "1:3", "2:0", "3:1", "4:4", "5:5", "6:6", "7:7"}));
  EXPECT_EQ(plan_of(t, 1, 4, rxq_placement::spread), (v{"0:2", "1:0", "2:4", "3:6"}));
}

TEST(rx_plan, uses_only_the_given_cores_in_id_order) {
  const topology t = two_nodes_of_four();
  const std::vector<core_id> cores{core_id{6}, core_id{1}, core_id{5}};
  const auto plan = plan_rx_queues(t, 1, 4, cores, rxq_placement::local);
  ASSERT_TRUE(plan.has_value()) << plan.error();
  EXPECT_EQ(pairs(*plan), (v{"0:5", "1:6", "2:1", "3:5"}));
}

TEST(rx_plan, nic_node_without_reactor_cores_starts_at_the_next_node) {
  const topology t = two_nodes_of_four();
  const std::vector<core_id> cores{core_id{0}, core_id{2}};
  const auto plan = plan_rx_queues(t, 1, 2, cores, rxq_placement::spread);
  ASSERT_TRUE(plan.has_value()) << plan.error();
  EXPECT_EQ(pairs(*plan), (v{"0:0", "1:2"}));
}

TEST(rx_plan, errors_are_one_line) {
  const topology t = two_nodes_of_four();
  const auto err = [&](unsigned node, unsigned queues, std::vector<core_id> cores) {
    auto plan = plan_rx_queues(t, node, queues, cores, rxq_placement::local);
    return plan ? std::string("no error") : plan.error();
  };
  const std::vector<core_id> all(t.all_cores().begin(), t.all_cores().end());
  EXPECT_EQ(err(2, 4, all), "NUMA node 2 does not exist: this machine has nodes 0-1");
  EXPECT_EQ(err(0, 0, all), "a port needs at least 1 RX queue");
  EXPECT_EQ(err(0, 4, {}), "no reactor cores to place RX queues on");
  EXPECT_EQ(err(0, 4, {core_id{8}}), "core 8 does not exist: this machine has cores 0-7");
  EXPECT_EQ(err(0, 4, {core_id{3}, core_id{1}, core_id{3}}), "core 3 is listed twice");
}

TEST(rx_plan, placement_names) {
  EXPECT_EQ(to_string(rxq_placement::local), "local");
  EXPECT_EQ(to_string(rxq_placement::spread), "spread");
}

std::vector<std::uint32_t> first(const topology& t, unsigned count) {
  auto cores = first_cores(t, count);
  EXPECT_TRUE(cores.has_value()) << cores.error();
  std::vector<std::uint32_t> out;
  if (cores) {
    for (core_id c : *cores) out.push_back(c.value);
  }
  return out;
}

TEST(first_cores, spreads_over_nodes) {
  const topology t = two_nodes_of_four();
  EXPECT_EQ(first(t, 1), (std::vector<std::uint32_t>{0}));
  EXPECT_EQ(first(t, 4), (std::vector<std::uint32_t>{0, 1, 4, 5}));
  EXPECT_EQ(first(t, 5), (std::vector<std::uint32_t>{0, 1, 2, 4, 5}));
  EXPECT_EQ(first(t, 8).size(), 8u);
  const topology big = topology::from_synthetic("pack:4 numa:1 l3:8 core:4 pu:1").value();
  EXPECT_EQ(first(big, 4), (std::vector<std::uint32_t>{0, 32, 64, 96}));
}

TEST(first_cores, count_must_fit) {
  const topology t = two_nodes_of_four();
  EXPECT_EQ(first_cores(t, 0).error(), "a core count must be at least 1");
  EXPECT_EQ(first_cores(t, 9).error(), "9 cores requested: this machine has only 8");
}

}  // namespace
}  // namespace affine
