// The machinery with a schema that is not affine's (as the simulator's
// scenarios will declare), and the programming errors it refuses.

#include <gtest/gtest.h>

#include "affine/config.hh"

namespace affine::config {
namespace {

const schema& scenario_schema() {
  static const schema s(
      "scenario",
      {
          string("name", required, "What the scenario shows."),
          integer("seed", {0, 1'000'000}, 1, "Seed of every random choice."),
      },
      {
          section("machine", "The simulated machine.",
                  {string("topology", "pack:1 core:4 pu:1", "hwloc synthetic description.")}),
          array_of_tables("flow", "A stream of requests.",
                          {
                              integer("rate_per_s", {1, 10'000'000}, required, "Requests per second."),
                              enumeration("kind", {"rr", "stream"}, "rr", "Request-response or bulk."),
                          }),
      });
  return s;
}

std::expected<settings, std::string> load_scenario(std::string_view text) {
  return load_string(scenario_schema(), text, "seed000.toml");
}

TEST(config_schema, second_schema_loads_through_the_same_machinery) {
  const auto s = load_scenario(
      "name = \"rx wakeups\"\nseed = 7\n[machine]\ntopology = \"pack:4 core:8\"\n"
      "[[flow]]\nrate_per_s = 1000\n[[flow]]\nrate_per_s = 5\nkind = \"stream\"\n");
  ASSERT_TRUE(s) << s.error();
  EXPECT_EQ(s->get_string("name"), "rx wakeups");
  EXPECT_EQ(s->get_int("seed"), 7);
  EXPECT_EQ(s->get_string("machine.topology"), "pack:4 core:8");
  const auto flows = s->tables("flow");
  ASSERT_EQ(flows.size(), 2u);
  EXPECT_EQ(flows[0].get_string("kind"), "rr");
  EXPECT_EQ(flows[1].get_int("rate_per_s"), 5);
  EXPECT_EQ(flows[1].where("kind"), "seed000.toml:9");
}

TEST(config_schema, second_schema_errors_use_its_own_names) {
  EXPECT_EQ(load_scenario("name = \"x\"\nsed = 3\n").error(),
            "seed000.toml:2: sed: unknown key (did you mean \"seed\"?)");
  EXPECT_EQ(load_scenario("name = \"x\"\n[[flow]]\nrate_per_s = 0\n").error(),
            "seed000.toml:3: flow[0].rate_per_s: 0 is out of range (allowed: 1..10000000)");
  EXPECT_EQ(load_scenario("name = \"x\"\n[[flows]]\n").error(),
            "seed000.toml:2: flows: unknown section (did you mean \"flow\"?)");
  EXPECT_EQ(load_scenario("name = \"x\"\n[machine]\ntopolgy = \"\"\n").error(),
            "seed000.toml:3: machine.topolgy: unknown key (did you mean \"machine.topology\"?)");
}

TEST(config_schema, required_top_level_key_missing_names_the_file) {
  EXPECT_EQ(load_scenario("seed = 3\n").error(), "seed000.toml: name: required key is missing");
  EXPECT_EQ(load_command_line(scenario_schema(), std::vector<std::string>{}).error(),
            "(no --config): name: required key is missing");
}

TEST(config_schema, second_schema_overrides_and_prints) {
  const std::vector<std::string> args{"--set", "name=burst",         "--set", "flow[0].rate_per_s=10",
                                      "--set", "flow[0].kind=stream"};
  const auto cli = load_command_line(scenario_schema(), args);
  ASSERT_TRUE(cli) << cli.error();
  const std::string printed = print_config(cli->config);
  const auto reloaded = load_scenario(printed);
  ASSERT_TRUE(reloaded) << reloaded.error() << "\n" << printed;
  EXPECT_EQ(reloaded->get_string("name"), "burst");
  EXPECT_EQ(reloaded->tables("flow")[0].get_string("kind"), "stream");
  EXPECT_EQ(printed.find("[reactor]"), std::string::npos) << "nothing of affine's schema leaks in";
}

TEST(config_schema, second_schema_generates_its_own_documents) {
  const std::string file = emit_default(scenario_schema());
  EXPECT_TRUE(file.starts_with("# scenario configuration:")) << file;
  EXPECT_NE(file.find("\nname = \"\"\n"), std::string::npos) << "a required key shows an example" << file;
  EXPECT_NE(file.find("#[[flow]]\n"), std::string::npos) << file;
  const std::string ref = key_reference(scenario_schema());
  EXPECT_TRUE(ref.starts_with("\n### Top level\n")) << ref;
  EXPECT_NE(ref.find("| `seed` | integer | `1` | 0..1000000 | Seed of every random choice. |"), std::string::npos)
      << ref;
}

TEST(config_schema, views_of_the_same_settings_share_them_safely) {
  std::vector<table_view> flows;
  {
    const auto s = load_scenario("name = \"x\"\n[[flow]]\nrate_per_s = 3\n");
    ASSERT_TRUE(s) << s.error();
    flows = s->tables("flow");
  }
  // The view keeps the tree alive after the settings are gone.
  EXPECT_EQ(flows[0].get_int("rate_per_s"), 3);
}

// A string list with a format of its own: one string or an array of them,
// each checked, a wrong one named by its index at its own line.
const string_format word{
    .valid = [](std::string_view s) { return !s.empty() && s.find_first_not_of("abcdefghijklmnopqrstuvwxyz") == s.npos; },
    .noun = "a word",
    .allowed = "lower-case letters",
};

const schema& list_schema() {
  static const schema s("lists", {string_list("tags", {"a"}, "Tags.", &word)},
                        {array_of_tables("host", "A host.", {string_list("names", {}, "Its names.", &word)})});
  return s;
}

std::expected<settings, std::string> load_lists(std::string_view text) {
  return load_string(list_schema(), text, "lists.toml");
}

TEST(config_string_list, one_string_is_a_list_of_one) {
  EXPECT_EQ(defaults(list_schema()).get_strings("tags"), std::vector<std::string>{"a"});
  const auto s = load_lists("tags = \"x\"\n[[host]]\nnames = [\"y\", \"z\"]\n[[host]]\nnames = []\n");
  ASSERT_TRUE(s) << s.error();
  EXPECT_EQ(s->get_strings("tags"), std::vector<std::string>{"x"});
  EXPECT_EQ(s->tables("host")[0].get_strings("names"), (std::vector<std::string>{"y", "z"}));
  EXPECT_TRUE(s->tables("host")[1].get_strings("names").empty());
}

TEST(config_string_list, a_bad_element_is_named_by_its_index_at_its_line) {
  EXPECT_EQ(load_lists("tags = \"X\"\n").error(),
            "lists.toml:1: tags: \"X\" is not a word (allowed: lower-case letters)");
  EXPECT_EQ(load_lists("tags = [\"x\", \"X\"]\n").error(),
            "lists.toml:1: tags[1]: \"X\" is not a word (allowed: lower-case letters)");
  EXPECT_EQ(load_lists("[[host]]\nnames = [\n  \"x\",\n  \"y\",\n  \"\",\n]\n").error(),
            "lists.toml:5: host[0].names[2]: \"\" is not a word (allowed: lower-case letters)");
  EXPECT_EQ(load_lists("tags = [\"x\",\n  7]\n").error(), "lists.toml:2: tags[1]: expected a string, got an integer");
  EXPECT_EQ(load_lists("tags = [[\"x\"]]\n").error(), "lists.toml:1: tags[0]: expected a string, got an array");
  EXPECT_EQ(load_lists("tags = 7\n").error(),
            "lists.toml:1: tags: expected a string or an array of strings, got an integer");
}

TEST(config_string_list, set_takes_a_bare_string_or_an_array) {
  settings s = defaults(list_schema());
  ASSERT_TRUE(s.set("tags=x"));
  EXPECT_EQ(s.get_strings("tags"), std::vector<std::string>{"x"});
  ASSERT_TRUE(s.set("host[0].names=[\"y\", \"z\"]"));
  EXPECT_EQ(s.tables("host")[0].get_strings("names"), (std::vector<std::string>{"y", "z"}));
  EXPECT_EQ(s.set("tags=x,y").error(), "--set tags=x,y: \"x,y\" is not a word (allowed: lower-case letters)");
  EXPECT_EQ(s.set("tags=[\"x\", \"Y\"]").error(),
            "--set tags=[\"x\", \"Y\"]: tags[1]: \"Y\" is not a word (allowed: lower-case letters)");
  EXPECT_EQ(s.set("tags[0]=x").error(), "--set tags[0]=x: tags: a key takes no index");
}

TEST(config_string_list, prints_and_documents_itself) {
  const auto s = load_lists("tags = \"x\"\n[[host]]\nnames = [\"y\", \"z\"]\n");
  ASSERT_TRUE(s) << s.error();
  const std::string printed = print_config(*s);
  EXPECT_NE(printed.find("\ntags = [\"x\"]  # lists.toml:1\n"), std::string::npos) << printed;
  const auto reloaded = load_lists(printed);
  ASSERT_TRUE(reloaded) << reloaded.error() << "\n" << printed;
  EXPECT_EQ(reloaded->get_strings("tags"), std::vector<std::string>{"x"});
  EXPECT_EQ(reloaded->tables("host")[0].get_strings("names"), (std::vector<std::string>{"y", "z"}));

  const std::string file = emit_default(list_schema());
  EXPECT_NE(file.find("# Tags.\n# allowed: lower-case letters\ntags = [\"a\"]\n"), std::string::npos) << file;
  EXPECT_NE(file.find("#names = []\n"), std::string::npos) << file;
  ASSERT_TRUE(load_lists(file)) << file;
  const std::string ref = key_reference(list_schema());
  EXPECT_NE(ref.find("| `tags` | string or string array | `[\"a\"]` | lower-case letters | Tags. |"),
            std::string::npos)
      << ref;
}

using config_schema_death = ::testing::Test;

TEST(config_schema_death, undeclared_key_is_a_programming_error) {
  const settings s = defaults(config_schema());
  EXPECT_DEATH(s.get_int("reactor.spin"), "reactor.spin is not a declared key");
  EXPECT_DEATH(s.get_int("sched.steal"), "sched.steal is a boolean, not an integer");
  EXPECT_DEATH(s.get_bool("nosuch.steal"), "nosuch is not a table");
  EXPECT_DEATH(s.tables("reactor"), "reactor is not an array of tables");
  EXPECT_DEATH(defaults(list_schema()).get_string("tags"), "tags is a string or an array of strings, not a string");
}

TEST(config_schema_death, bad_declarations_abort_with_the_reason) {
  EXPECT_DEATH(schema("bad", {integer("n", {0, 9}, 10, "A number.")}, {}),
               "schema: default of n: 10 is out of range \\(allowed: 0..9\\)");
  EXPECT_DEATH(schema("bad", {boolean("x", true, "X."), integer("x", {0, 9}, 1, "Also x.")}, {}),
               "\"x\" is declared twice");
  EXPECT_DEATH(schema("bad", {enumeration("e", {"a", "b"}, "c", "E.")}, {}),
               "schema: default of e: \"c\" is not allowed");
  EXPECT_DEATH(schema("bad", {boolean("no help", true, "")}, {}), "not a bare TOML key");
  EXPECT_DEATH(defaults(scenario_schema()), "required key");
  EXPECT_DEATH(schema("bad", {string_list("t", {"ok", "No"}, "T.", &word)}, {}),
               "schema: default of t\\[1\\]: \"No\" is not a word");
}

}  // namespace
}  // namespace affine::config
