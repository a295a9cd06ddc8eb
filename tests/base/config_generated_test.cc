// What is generated from the schema: --print-config, the commented default
// file and the key reference. The committed config/affine.toml and
// docs/configuration.md must be exactly what the schema generates.

#include <fstream>
#include <optional>
#include <sstream>

#include <gtest/gtest.h>

#include "affine/config.hh"
#include "tests/base/config_test_util.hh"

namespace affine::config {
namespace {

using test::load;

std::string read_source_file(std::string_view relative) {
  const std::string path = std::string(AFFINE_SOURCE_DIR) + "/" + std::string(relative);
  std::ifstream in(path);
  EXPECT_TRUE(in) << "cannot read " << path;
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

// Each line through `f`; a line it returns nullopt for is dropped.
template <typename F>
std::string map_lines(const std::string& text, F f) {
  std::istringstream in(text);
  std::string out;
  for (std::string line; std::getline(in, line);) {
    if (const std::optional<std::string> mapped = f(line)) out += *mapped + "\n";
  }
  return out;
}

// print_config output without its comments ("where from" and the heading).
std::string without_comments(const std::string& toml) {
  return map_lines(toml, [](const std::string& line) -> std::optional<std::string> {
    if (line.starts_with("#")) return std::nullopt;
    return line.substr(0, line.find("  # "));
  });
}

TEST(config_generated, printed_config_loads_back_to_the_same_values) {
  const auto file = load(R"([reactor]
cores = "0,2,4-6"
[sched]
wake_affine = "off"
[[port]]
eal = ["--vdev=net_tap0,iface=affine0", "quote \" and \\ and tab \t"]
ip = "10.77.0.2/24"
[[port.rxq]]
queue = 3
rps = "idle"
)");
  ASSERT_TRUE(file) << file.error();
  settings s = *file;
  ASSERT_TRUE(s.set("reactor.spin_us=0"));
  ASSERT_TRUE(s.set("port[1].driver=uring"));

  const std::string printed = print_config(s);
  const auto reloaded = load(printed);
  ASSERT_TRUE(reloaded) << reloaded.error() << "\n" << printed;
  EXPECT_EQ(without_comments(print_config(*reloaded)), without_comments(printed));
  EXPECT_EQ(reloaded->get_int("reactor.spin_us"), 0);
  EXPECT_EQ(reloaded->tables("port")[0].get_strings("eal")[1], "quote \" and \\ and tab \t");
  EXPECT_EQ(reloaded->tables("port")[1].get_string("driver"), "uring");
}

TEST(config_generated, printed_config_says_where_overridden_values_came_from) {
  auto s = load("[reactor]\nspin_us = 100\n");
  ASSERT_TRUE(s) << s.error();
  ASSERT_TRUE(s->set("sched.steal=false"));
  const std::string printed = print_config(*s);
  EXPECT_NE(printed.find("\nspin_us = 100  # affine.toml:2\n"), std::string::npos) << printed;
  EXPECT_NE(printed.find("\nsteal = false  # --set sched.steal=false\n"), std::string::npos) << printed;
  EXPECT_NE(printed.find("\nstack_kib = 64\n"), std::string::npos) << printed;
}

TEST(config_generated, committed_default_file_is_what_the_schema_generates) {
  EXPECT_EQ(read_source_file("config/affine.toml"), emit_default(config_schema()))
      << "regenerate: ninja -C BUILD affine-config-update (or affine-config --emit-default > config/affine.toml)";
}

TEST(config_generated, committed_key_reference_is_what_the_schema_generates) {
  const std::string doc = read_source_file("docs/configuration.md");
  const auto spliced = splice_key_reference(config_schema(), doc);
  ASSERT_TRUE(spliced) << spliced.error();
  EXPECT_EQ(*spliced, doc) << "regenerate: ninja -C BUILD affine-config-update";
}

TEST(config_generated, default_file_loads_to_the_defaults) {
  const auto s = load(emit_default(config_schema()));
  ASSERT_TRUE(s) << s.error();
  EXPECT_EQ(without_comments(print_config(*s)), without_comments(print_config(defaults(config_schema()))));
}

TEST(config_generated, default_file_example_port_is_valid_once_uncommented) {
  // Commented-out code is "#" directly followed by text; prose is "# ".
  const std::string uncommented = map_lines(emit_default(config_schema()), [](const std::string& line) {
    return std::optional<std::string>(line.size() > 1 && line[0] == '#' && line[1] != ' ' ? line.substr(1) : line);
  });
  const auto s = load(uncommented);
  ASSERT_TRUE(s) << s.error();
  const auto ports = s->tables("port");
  ASSERT_EQ(ports.size(), 1u);
  ASSERT_EQ(ports[0].tables("rxq").size(), 1u);
  EXPECT_EQ(ports[0].tables("rxq")[0].get_int("queue"), 0);
}

TEST(config_generated, key_reference_has_a_row_for_every_key) {
  const std::string ref = key_reference(config_schema());
  EXPECT_NE(ref.find("### `[sched]`"), std::string::npos);
  EXPECT_NE(ref.find("### `[[port.rxq]]`"), std::string::npos);
  EXPECT_NE(ref.find("| `wake_affine` | enum | `\"task-only\"` | \"off\", \"task-only\", \"always\" |"),
            std::string::npos);
  EXPECT_NE(ref.find("| `queue` | integer | required | 0..1023 |"), std::string::npos);
  EXPECT_NE(ref.find("| `steal` | bool | `true` |  |"), std::string::npos);
}

TEST(config_generated, splice_needs_both_markers) {
  EXPECT_FALSE(splice_key_reference(config_schema(), "# no markers\n"));
  const std::string doc =
      std::string("intro\n") + std::string(reference_begin) + "\n@old-reference@\n" + std::string(reference_end) +
      "\nafter\n";
  const auto spliced = splice_key_reference(config_schema(), doc);
  ASSERT_TRUE(spliced) << spliced.error();
  // (A marker no key's text holds: "old" is in "hold" and "threshold".)
  EXPECT_EQ(spliced->find("@old-reference@"), std::string::npos);
  EXPECT_NE(spliced->find(key_reference(config_schema())), std::string::npos);
  EXPECT_TRUE(spliced->ends_with(std::string(reference_end) + "\nafter\n"));
}

}  // namespace
}  // namespace affine::config
