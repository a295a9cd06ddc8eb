// parse_core_list and format_core_list: the core lists of config files and
// command lines, with exact error messages.

#include <gtest/gtest.h>

#include "affine/topology.hh"

namespace affine {
namespace {

const topology& eight_cores() {
  static const topology t = topology::from_synthetic("pack:2 numa:1 l3:1 core:4 pu:1").value();
  return t;
}

std::vector<std::uint32_t> parse(std::string_view text) {
  auto cores = parse_core_list(eight_cores(), text);
  EXPECT_TRUE(cores.has_value()) << cores.error();
  std::vector<std::uint32_t> out;
  if (cores) {
    for (core_id c : *cores) out.push_back(c.value);
  }
  return out;
}

std::string error_of(std::string_view text) {
  auto cores = parse_core_list(eight_cores(), text);
  return cores ? std::string("no error") : cores.error();
}

using ids = std::vector<std::uint32_t>;

TEST(parse_core_list, auto_means_every_core) { EXPECT_EQ(parse("auto"), (ids{0, 1, 2, 3, 4, 5, 6, 7})); }
TEST(parse_core_list, all_means_every_core) { EXPECT_EQ(parse("all"), (ids{0, 1, 2, 3, 4, 5, 6, 7})); }

TEST(parse_core_list, ranges_and_lists) {
  EXPECT_EQ(parse("0-7"), (ids{0, 1, 2, 3, 4, 5, 6, 7}));
  EXPECT_EQ(parse("5"), (ids{5}));
  EXPECT_EQ(parse("0,2,4-6"), (ids{0, 2, 4, 5, 6}));
  EXPECT_EQ(parse("3-3"), (ids{3}));
  EXPECT_EQ(parse(" 6 , 1-2 "), (ids{6, 1, 2})) << "written order, spaces around entries allowed";
}

TEST(parse_core_list, empty_list_or_entry) {
  EXPECT_EQ(error_of(""),
            "empty core list: write \"auto\", a range like \"0-7\" or a list like \"0,2,4-6\" "
            "(this machine has cores 0-7)");
  EXPECT_EQ(error_of("  "), error_of(""));
  EXPECT_EQ(error_of("0,,2"), "empty entry in core list \"0,,2\"");
  EXPECT_EQ(error_of("0,"), "empty entry in core list \"0,\"");
}

TEST(parse_core_list, garbage_names_the_entry) {
  const std::string tail = ": expected a core number or a range like \"0-7\" (this machine has cores 0-7)";
  EXPECT_EQ(error_of("0,x"), "bad core list entry \"x\" in \"0,x\"" + tail);
  EXPECT_EQ(error_of("-3"), "bad core list entry \"-3\" in \"-3\"" + tail);
  EXPECT_EQ(error_of("1-2-3"), "bad core list entry \"1-2-3\" in \"1-2-3\"" + tail);
  EXPECT_EQ(error_of("+1"), "bad core list entry \"+1\" in \"+1\"" + tail);
  EXPECT_EQ(error_of("every"), "bad core list entry \"every\" in \"every\"" + tail);
}

TEST(parse_core_list, cores_that_do_not_exist) {
  EXPECT_EQ(error_of("9"), "core 9 does not exist: this machine has cores 0-7");
  EXPECT_EQ(error_of("4-8"), "core 8 does not exist: this machine has cores 0-7");
  EXPECT_EQ(error_of("99999999999999999999"),
            "core 99999999999999999999 does not exist: this machine has cores 0-7");
  const topology one = topology::from_cores({core_info{}}, 1);
  EXPECT_EQ(parse_core_list(one, "1").error(), "core 1 does not exist: this machine has only core 0");
}

TEST(parse_core_list, reversed_range) {
  EXPECT_EQ(error_of("7-3"), "bad core range \"7-3\": write the lower core first (\"3-7\")");
}

TEST(parse_core_list, duplicates) {
  EXPECT_EQ(error_of("0-3,2"), "core 2 is listed twice in \"0-3,2\"");
  EXPECT_EQ(error_of("1,1"), "core 1 is listed twice in \"1,1\"");
}

TEST(format_core_list, shortens_runs) {
  const auto fmt = [](std::vector<std::uint32_t> v) {
    std::vector<core_id> cores;
    for (auto c : v) cores.push_back(core_id{c});
    return format_core_list(cores);
  };
  EXPECT_EQ(fmt({}), "");
  EXPECT_EQ(fmt({4}), "4");
  EXPECT_EQ(fmt({0, 1, 2, 3, 8, 10, 11}), "0-3,8,10-11");
  EXPECT_EQ(fmt({3, 2}), "3,2");
}

TEST(format_core_list, round_trips_through_parse) {
  auto cores = parse_core_list(eight_cores(), "0,2,4-6");
  ASSERT_TRUE(cores.has_value());
  EXPECT_EQ(format_core_list(*cores), "0,2,4-6");
}

}  // namespace
}  // namespace affine
