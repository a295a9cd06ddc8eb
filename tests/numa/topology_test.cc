// Loading topologies (synthetic, XML, this machine) and the relations the
// scheduler reads from them: counts, distances, domains, NIC locality.

#include <algorithm>
#include <cstdlib>
#include <string>

#include <gtest/gtest.h>

#include "affine/topology.hh"

namespace affine {
namespace {

topology synthetic(std::string_view desc) {
  auto t = topology::from_synthetic(desc);
  EXPECT_TRUE(t.has_value()) << t.error();
  return std::move(t).value();
}

std::vector<std::uint32_t> ids(std::span<const core_id> cores) {
  std::vector<std::uint32_t> out;
  for (core_id c : cores) out.push_back(c.value);
  return out;
}

std::vector<std::uint32_t> iota_ids(std::uint32_t first, std::uint32_t count) {
  std::vector<std::uint32_t> out(count);
  for (std::uint32_t i = 0; i < count; ++i) out[i] = first + i;
  return out;
}

TEST(topology_synthetic, four_packages_of_thirty_two_cores) {
  const topology t = synthetic("pack:4 numa:1 l3:8 core:4 pu:1");
  EXPECT_EQ(t.core_count(), 128u);
  EXPECT_EQ(t.node_count(), 4u);
  EXPECT_EQ(t.llc_count(), 32u);
  EXPECT_EQ(t.package_count(), 4u);
  EXPECT_EQ(t.summary(), "128 cores, 4 nodes, 32 LLC domains, 4 packages");
  // Core 37: package 1, node 1, the second L3 of that package (cores 36-39).
  const core_info& c = t.core(core_id{37});
  EXPECT_EQ(c.id, core_id{37});
  EXPECT_EQ(c.os_cpu, 37u);
  EXPECT_EQ(c.llc, 9u);
  EXPECT_EQ(c.node, 1u);
  EXPECT_EQ(c.package, 1u);
  EXPECT_EQ(ids(t.cores_in_llc(9)), iota_ids(36, 4));
  EXPECT_EQ(ids(t.cores_in_node(3)), iota_ids(96, 32));
  EXPECT_EQ(ids(t.all_cores()), iota_ids(0, 128));
}

TEST(topology_synthetic, every_llc_lies_inside_one_node) {
  const topology t = synthetic("pack:4 numa:1 l3:8 core:4 pu:1");
  for (unsigned llc = 0; llc < t.llc_count(); ++llc) {
    const auto cores = t.cores_in_llc(llc);
    ASSERT_EQ(cores.size(), 4u);
    for (core_id c : cores) EXPECT_EQ(t.core(c).node, llc / 8) << "llc " << llc;
  }
}

TEST(topology_synthetic, two_packages_of_thirty_two_cores) {
  const topology t = synthetic("pack:2 numa:1 l3:8 core:4 pu:1");
  EXPECT_EQ(t.summary(), "64 cores, 2 nodes, 16 LLC domains, 2 packages");
  EXPECT_EQ(t.core(core_id{63}).node, 1u);
  EXPECT_EQ(t.core(core_id{63}).llc, 15u);
}

TEST(topology_synthetic, one_node_two_cores) {
  const topology t = synthetic("pack:1 numa:1 l3:1 core:2 pu:1");
  EXPECT_EQ(t.summary(), "2 cores, 1 node, 1 LLC domain, 1 package");
  EXPECT_EQ(t.dist(core_id{0}, core_id{1}), distance::same_llc);
}

TEST(topology_synthetic, smt_siblings_count_as_one_core) {
  const topology t = synthetic("pack:2 numa:1 l3:2 core:4 pu:2");
  EXPECT_EQ(t.core_count(), 16u);
  EXPECT_EQ(t.llc_count(), 4u);
  // Each core is pinned by its first PU: OS cpus 0, 2, 4, ...
  EXPECT_EQ(t.core(core_id{0}).os_cpu, 0u);
  EXPECT_EQ(t.core(core_id{5}).os_cpu, 10u);
  EXPECT_EQ(t.core_of_os_cpu(10), core_id{5});
  EXPECT_EQ(t.core_of_os_cpu(11), std::nullopt) << "the second PU is not a core";
  EXPECT_EQ(t.core_of_os_cpu(32), std::nullopt);
}

TEST(topology_synthetic, without_l3_the_l2_is_the_llc) {
  const topology t = synthetic("pack:2 numa:1 l2:2 core:2 pu:1");
  EXPECT_EQ(t.core_count(), 8u);
  EXPECT_EQ(t.llc_count(), 4u);
  EXPECT_TRUE(t.share_llc(core_id{0}, core_id{1}));
  EXPECT_FALSE(t.share_llc(core_id{1}, core_id{2}));
}

TEST(topology_synthetic, without_caches_the_package_is_the_llc) {
  const topology t = synthetic("pack:2 numa:2 core:2 pu:1");
  EXPECT_EQ(t.core_count(), 8u);
  EXPECT_EQ(t.node_count(), 4u);
  EXPECT_EQ(t.llc_count(), 2u);
  // One package-wide LLC spans two nodes: the cache is the nearer thing.
  EXPECT_EQ(t.dist(core_id{0}, core_id{3}), distance::same_llc);
  EXPECT_FALSE(t.same_node(core_id{0}, core_id{3}));
  EXPECT_EQ(t.dist(core_id{0}, core_id{4}), distance::remote_node);
}

TEST(topology_synthetic, distance_classes) {
  const topology t = synthetic("pack:4 numa:1 l3:8 core:4 pu:1");
  EXPECT_EQ(t.dist(core_id{5}, core_id{5}), distance::same_core);
  EXPECT_EQ(t.dist(core_id{4}, core_id{7}), distance::same_llc);
  EXPECT_EQ(t.dist(core_id{3}, core_id{4}), distance::same_node);
  EXPECT_EQ(t.dist(core_id{0}, core_id{31}), distance::same_node);
  EXPECT_EQ(t.dist(core_id{31}, core_id{32}), distance::remote_node);
  EXPECT_EQ(t.dist(core_id{127}, core_id{0}), distance::remote_node);
  EXPECT_LT(distance::same_core, distance::same_llc);
  EXPECT_LT(distance::same_llc, distance::same_node);
  EXPECT_LT(distance::same_node, distance::remote_node);
  EXPECT_EQ(to_string(distance::remote_node), "remote_node");
}

TEST(topology_synthetic, domains_of_a_core_innermost_first) {
  const topology t = synthetic("pack:4 numa:1 l3:8 core:4 pu:1");
  const auto d = t.domains(core_id{70});
  ASSERT_EQ(d.size(), 3u);
  EXPECT_EQ(d[0].level, domain_level::llc);
  EXPECT_EQ(ids(d[0].span), iota_ids(68, 4));
  EXPECT_EQ(d[1].level, domain_level::node);
  EXPECT_EQ(ids(d[1].span), iota_ids(64, 32));
  EXPECT_EQ(d[2].level, domain_level::machine);
  EXPECT_EQ(ids(d[2].span), iota_ids(0, 128));
  EXPECT_EQ(to_string(d[1].level), "node");
}

TEST(topology_synthetic, one_node_machine_lists_node_equal_to_machine) {
  const topology t = synthetic("pack:1 numa:1 l3:1 core:2 pu:1");
  const auto d = t.domains(core_id{1});
  ASSERT_EQ(d.size(), 3u);
  EXPECT_EQ(ids(d[0].span), iota_ids(0, 2));
  EXPECT_EQ(ids(d[1].span), iota_ids(0, 2));
  EXPECT_EQ(ids(d[2].span), iota_ids(0, 2));
}

TEST(topology_synthetic, bad_descriptions_are_errors) {
  for (std::string_view desc : {"pack:x", "", "banana", "pack:2 core:0", "core:2 pack:2"}) {
    const auto t = topology::from_synthetic(desc);
    ASSERT_FALSE(t.has_value()) << '"' << desc << '"';
    const std::string prefix = "bad synthetic topology \"" + std::string(desc) + "\": ";
    EXPECT_EQ(t.error().substr(0, prefix.size()), prefix);
  }
}

TEST(topology_synthetic, bad_description_message_is_one_line) {
  const auto t = topology::from_synthetic("pack:x");
  ASSERT_FALSE(t.has_value());
  EXPECT_EQ(t.error(),
            "bad synthetic topology \"pack:x\": hwloc cannot parse it "
            "(expected e.g. \"pack:4 numa:1 l3:8 core:4 pu:1\")");
}

TEST(topology_synthetic, oversized_descriptions_are_refused_before_loading) {
  // hwloc would take minutes over these; the refusal must be immediate.
  for (std::string_view desc : {"pack:100 core:1000 pu:1", "pack:99999999999999999999999 pu:1"}) {
    const auto t = topology::from_synthetic(desc);
    ASSERT_FALSE(t.has_value()) << desc;
    EXPECT_EQ(t.error(), "synthetic topology \"" + std::string(desc) + "\" is too large: more than 4096 PUs");
  }
}

TEST(topology_synthetic, attributes_and_memory_attachments_do_not_count_as_pus) {
  const topology t = synthetic("pack:2(memory=1GB) [numa(memory=1GB)] core:2 pu:2");
  EXPECT_EQ(t.core_count(), 4u);
  EXPECT_EQ(t.node_count(), 2u);
}

TEST(topology_from_cores, indexes_are_built_from_the_core_list) {
  const topology t = topology::from_cores(
      {{.id = {}, .os_cpu = 8, .llc = 0, .node = 0, .package = 0},
       {.id = {}, .os_cpu = 9, .llc = 1, .node = 1, .package = 1}},
      0,
      {{"03:00.0", 1}});
  EXPECT_EQ(t.summary(), "2 cores, 2 nodes, 2 LLC domains, 2 packages");
  EXPECT_EQ(t.core(core_id{1}).id, core_id{1});
  EXPECT_EQ(t.core_of_os_cpu(9), core_id{1});
  EXPECT_EQ(t.pci_node("0000:03:00.0"), 1u);
  EXPECT_EQ(t.pci_node("0000:03:00.1"), std::nullopt);
}

std::string fixture(std::string_view name) {
  const char* dir = std::getenv("AFFINE_NUMA_DATA");
  return std::string(dir ? dir : "tests/numa/data") + "/" + std::string(name);
}

TEST(topology_xml, loads_cores_and_nic_locality) {
  const auto t = topology::from_xml(fixture("two-node-nic.xml"));
  ASSERT_TRUE(t.has_value()) << t.error();
  EXPECT_EQ(t->summary(), "4 cores, 2 nodes, 2 LLC domains, 2 packages");
  EXPECT_EQ(t->pci_node("0000:81:00.0"), 1u);
  EXPECT_EQ(t->pci_node("81:00.0"), 1u) << "the domain may be left out";
  // Attached to the machine, not to a node: locality unknown.
  EXPECT_EQ(t->pci_node("0000:00:03.0"), std::nullopt);
  EXPECT_EQ(t->pci_node("0000:42:00.0"), std::nullopt);
}

TEST(topology_xml, missing_file_is_an_error) {
  const auto t = topology::from_xml("/nonexistent/topo.xml");
  ASSERT_FALSE(t.has_value());
  EXPECT_EQ(t.error(), "cannot load hwloc XML \"/nonexistent/topo.xml\": No such file or directory");
}

TEST(topology_system, this_machine_loads) {
  const auto t = topology::from_system();
  ASSERT_TRUE(t.has_value()) << t.error();
  EXPECT_GE(t->core_count(), 1u);
  EXPECT_GE(t->node_count(), 1u);
  EXPECT_GE(t->llc_count(), 1u);
  for (const core_info& c : t->cores()) {
    EXPECT_EQ(t->core_of_os_cpu(c.os_cpu), c.id);
    EXPECT_LT(c.node, t->node_count());
    EXPECT_LT(c.llc, t->llc_count());
  }
}

}  // namespace
}  // namespace affine
