// --set overrides and the command line: values, order, arrays of tables,
// and the exact errors.

#include <gtest/gtest.h>

#include "affine/config.hh"
#include "tests/base/config_test_util.hh"

namespace affine::config {
namespace {

using test::load;
using test::set_error;

settings with_sets(settings s, std::initializer_list<std::string> assignments) {
  const std::vector<std::string> list(assignments);
  const auto applied = apply_sets(s, list);
  EXPECT_TRUE(applied) << applied.error();
  return s;
}

TEST(config_set, bare_word_is_a_string_and_toml_values_keep_their_type) {
  const settings s =
      with_sets(defaults(config_schema()), {"sched.wake_affine=always", "reactor.spin_us=0", "sched.steal=false",
                                            "log.level=\"warn\"", "reactor.cores=0-7"});
  EXPECT_EQ(s.get_string("sched.wake_affine"), "always");
  EXPECT_EQ(s.get_int("reactor.spin_us"), 0);
  EXPECT_FALSE(s.get_bool("sched.steal"));
  EXPECT_EQ(s.get_string("log.level"), "warn");
  EXPECT_EQ(s.get_cores("reactor.cores"), (core_list{.what = core_list::kind::list, .list = "0-7"}));
  EXPECT_EQ(s.where("sched.wake_affine"), "--set sched.wake_affine=always");
}

TEST(config_set, core_count_and_string_array_parse_as_toml) {
  const settings s =
      with_sets(defaults(config_schema()), {"reactor.cores=4", "port[0].eal=[\"--no-huge\", \"--no-pci\"]"});
  EXPECT_EQ(s.get_cores("reactor.cores"), (core_list{.what = core_list::kind::count, .count = 4}));
  EXPECT_EQ(s.tables("port")[0].get_strings("eal"), (std::vector<std::string>{"--no-huge", "--no-pci"}));
}

TEST(config_set, overrides_a_file_value_and_later_sets_win) {
  const auto file = load("[reactor]\nspin_us = 100\nstack_kib = 32\n");
  ASSERT_TRUE(file) << file.error();
  const settings s = with_sets(*file, {"reactor.spin_us=1", "reactor.spin_us=2"});
  EXPECT_EQ(s.get_int("reactor.spin_us"), 2);
  EXPECT_EQ(s.where("reactor.spin_us"), "--set reactor.spin_us=2");
  EXPECT_EQ(s.get_int("reactor.stack_kib"), 32);
  EXPECT_EQ(s.where("reactor.stack_kib"), "affine.toml:3");
  EXPECT_EQ(file->get_int("reactor.spin_us"), 100) << "the original settings are unchanged";
}

TEST(config_set, reaches_into_arrays_of_tables) {
  const auto file = load("[[port]]\nqueues = 2\n[[port.rxq]]\nqueue = 1\n[[port]]\n");
  ASSERT_TRUE(file) << file.error();
  const settings s = with_sets(*file, {"port[0].queues=4", "port[0].rxq[0].rps=idle", "port[1].driver=uring"});
  const auto ports = s.tables("port");
  ASSERT_EQ(ports.size(), 2u);
  EXPECT_EQ(ports[0].get_count("queues"), 4);
  EXPECT_EQ(ports[0].tables("rxq")[0].get_string("rps"), "idle");
  EXPECT_EQ(ports[0].tables("rxq")[0].get_int("queue"), 1);
  EXPECT_EQ(ports[1].get_string("driver"), "uring");
}

TEST(config_set, a_count_goes_back_to_auto_and_prints_as_it_loads) {
  const auto file = load("[[port]]\nqueues = 2\n");
  ASSERT_TRUE(file) << file.error();
  const settings s = with_sets(*file, {"port[0].queues=auto"});
  EXPECT_EQ(s.tables("port")[0].get_count("queues"), std::nullopt);
  const std::string printed = print_config(with_sets(*file, {"port[0].queues=3"}));
  const auto again = load(printed);
  ASSERT_TRUE(again) << again.error();
  EXPECT_EQ(again->tables("port")[0].get_count("queues"), 3);
  EXPECT_EQ(load(print_config(s)).value().tables("port")[0].get_count("queues"), std::nullopt);
}

TEST(config_set, index_one_past_the_end_adds_a_table) {
  const settings s = with_sets(defaults(config_schema()),
                               {"port[0].driver=uring", "port[0].rxq[0].queue=2", "port[0].rxq[0].rps=flow"});
  const auto ports = s.tables("port");
  ASSERT_EQ(ports.size(), 1u);
  EXPECT_EQ(ports[0].get_string("driver"), "uring");
  EXPECT_EQ(ports[0].get_int("mtu"), 1500);
  const auto rxqs = ports[0].tables("rxq");
  ASSERT_EQ(rxqs.size(), 1u);
  EXPECT_EQ(rxqs[0].get_int("queue"), 2);
  EXPECT_EQ(rxqs[0].get_string("rps"), "flow");
}

TEST(config_set, unknown_key_suggests_the_near_miss) {
  EXPECT_EQ(set_error({"sched.wake_afine=always"}),
            "--set sched.wake_afine=always: unknown key (did you mean \"sched.wake_affine\"?)");
  EXPECT_EQ(set_error({"shed.steal=true"}), "--set shed.steal=true: shed: unknown section (did you mean \"sched\"?)");
  EXPECT_EQ(set_error({"port[0].qeueus=2"}), "--set port[0].qeueus=2: unknown key (did you mean \"port[0].queues\"?)");
}

TEST(config_set, range_type_and_choice_errors_name_the_assignment) {
  EXPECT_EQ(set_error({"reactor.spin_us=2000000"}),
            "--set reactor.spin_us=2000000: 2000000 is out of range (allowed: 0..1000000)");
  EXPECT_EQ(set_error({"sched.balance_interval_us=soon"}),
            "--set sched.balance_interval_us=soon: expected an integer, got a string");
  EXPECT_EQ(set_error({"sched.steal=yes"}), "--set sched.steal=yes: expected a boolean, got a string");
  EXPECT_EQ(set_error({"sched.wake_affine=sometimes"}),
            "--set sched.wake_affine=sometimes: \"sometimes\" is not allowed (allowed: \"off\", \"task-only\", "
            "\"always\")");
  EXPECT_EQ(set_error({"port[0].ip=10.77.0.2"}),
            "--set port[0].ip=10.77.0.2: \"10.77.0.2\" is not an IPv4 or IPv6 address with prefix length (allowed: "
            "like \"10.77.0.2/24\" or \"fd77::2/64\", or \"\")");
  // A list is TOML's array, each element checked and named.
  EXPECT_EQ(set_error({"port[0].ip=[\"10.77.0.2/24\", \"fd77::2\"]"}),
            "--set port[0].ip=[\"10.77.0.2/24\", \"fd77::2\"]: port[0].ip[1]: \"fd77::2\" is not an IPv4 or IPv6 "
            "address with prefix length (allowed: like \"10.77.0.2/24\" or \"fd77::2/64\", or \"\")");
}

TEST(config_set, string_list_takes_one_bare_string_or_a_toml_array) {
  const settings s = with_sets(defaults(config_schema()),
                               {"port[0].ip=10.77.0.2/24", "port[1].ip=[\"10.77.0.3/24\", \"fd77::3/64\"]",
                                "port[1].gateway=fe80::1"});
  const auto ports = s.tables("port");
  EXPECT_EQ(ports[0].get_strings("ip"), std::vector<std::string>{"10.77.0.2/24"});
  EXPECT_EQ(ports[1].get_strings("ip"), (std::vector<std::string>{"10.77.0.3/24", "fd77::3/64"}));
  EXPECT_EQ(ports[1].get_strings("gateway"), std::vector<std::string>{"fe80::1"});
  // A comma is no separator: the bare string is one (bad) address.
  EXPECT_EQ(set_error({"port[0].ip=10.77.0.2/24,fd77::2/64"}),
            "--set port[0].ip=10.77.0.2/24,fd77::2/64: \"10.77.0.2/24,fd77::2/64\" is not an IPv4 or IPv6 address "
            "with prefix length (allowed: like \"10.77.0.2/24\" or \"fd77::2/64\", or \"\")");
  EXPECT_EQ(set_error({"port[0].ip[1]=fd77::2/64"}), "--set port[0].ip[1]=fd77::2/64: port[0].ip: a key takes no index");
  // What --print-config shows loads back to the same lists.
  const auto printed = load(print_config(s));
  ASSERT_TRUE(printed) << printed.error();
  EXPECT_EQ(printed->tables("port")[0].get_strings("ip"), std::vector<std::string>{"10.77.0.2/24"});
  EXPECT_EQ(printed->tables("port")[1].get_strings("ip"), (std::vector<std::string>{"10.77.0.3/24", "fd77::3/64"}));
}

TEST(config_set, malformed_paths_and_assignments_are_errors) {
  EXPECT_EQ(set_error({"sched.steal"}), "--set sched.steal: expected PATH=VALUE, like sched.steal=false");
  EXPECT_EQ(
      set_error({"sched..steal=true"}),
      "--set sched..steal=true: \"sched..steal\" is not a key path (allowed: like sched.steal or port[0].queues)");
  EXPECT_EQ(set_error({"port[x].queues=1"}),
            "--set port[x].queues=1: \"port[x].queues\" is not a key path (allowed: like sched.steal or "
            "port[0].queues)");
  EXPECT_EQ(set_error({"port.queues=2"}), "--set port.queues=2: port: an array of tables: name one, like port[0]");
  EXPECT_EQ(set_error({"sched[0].steal=true"}),
            "--set sched[0].steal=true: sched: not an array of tables: it takes no index");
  EXPECT_EQ(set_error({"sched.steal[0]=true"}), "--set sched.steal[0]=true: sched.steal: a key takes no index");
}

// Found by tests/fuzz/config_load.cc: an assignment is quoted in errors and
// in print_config's comments, each of which is one line.
TEST(config_set, assignment_with_a_newline_stays_on_one_line) {
  EXPECT_EQ(set_error({"sched.wa\nke=1"}),
            "--set sched.wa\\nke=1: \"sched.wa\\nke\" is not a key path (allowed: like sched.steal or "
            "port[0].queues)");
  const settings s = with_sets(load("").value(), {"port[0].driver=uring", "port[0].pci=a\nb"});
  const auto printed = load(print_config(s));
  ASSERT_TRUE(printed) << printed.error();
  EXPECT_EQ(printed->tables("port").at(0).get_string("pci"), "a\nb");
}

// Found by tests/fuzz/config_load.cc: a bare string is taken as it is, and
// one that is not UTF-8 printed to a file that did not load.
TEST(config_set, assignment_that_is_not_utf8_is_an_error) {
  const std::string not_utf8 = ": not UTF-8, which a TOML file must be";
  EXPECT_EQ(set_error({"port[0].pci=a\xe5" "b"}), "--set port[0].pci=a\xe5" "b" + not_utf8);
  EXPECT_EQ(set_error({"port[0].pci=\xc0\xaf"}), "--set port[0].pci=\xc0\xaf" + not_utf8) << "an overlong '/'";
  EXPECT_EQ(set_error({"port[0].pci=\xed\xa0\x80"}), "--set port[0].pci=\xed\xa0\x80" + not_utf8) << "a surrogate";
  EXPECT_EQ(set_error({"port[0].pci=\xf4\x90\x80\x80"}), "--set port[0].pci=\xf4\x90\x80\x80" + not_utf8)
      << "past U+10FFFF";
  const std::string text = "\u00e9\u20ac\U0001F600";  // two, three and four bytes
  const settings s = with_sets(load("").value(), {"port[0].driver=uring", "port[0].pci=" + text});
  const auto printed = load(print_config(s));
  ASSERT_TRUE(printed) << printed.error();
  EXPECT_EQ(printed->tables("port").at(0).get_string("pci"), text);
}

TEST(config_set, index_beyond_the_end_is_an_error) {
  EXPECT_EQ(set_error({"port[1].queues=2"}),
            "--set port[1].queues=2: port[1]: no such table (there are 0; port[0] adds one)");
}

TEST(config_set, added_table_without_its_required_key_names_the_assignment) {
  EXPECT_EQ(set_error({"port[0].rxq[0].rps=idle"}),
            "--set port[0].rxq[0].rps=idle: port[0].rxq[0].queue: required key is missing");
}

TEST(config_set, failed_sets_leave_the_settings_unchanged) {
  settings s = defaults(config_schema());
  const std::vector<std::string> list{"reactor.spin_us=7", "port[0].queues=2", "reactor.spin_us=-1"};
  EXPECT_FALSE(apply_sets(s, list));
  EXPECT_EQ(s.get_int("reactor.spin_us"), 50);
  EXPECT_TRUE(s.tables("port").empty());
}

TEST(config_set, set_member_applies_one_assignment) {
  settings s = defaults(config_schema());
  ASSERT_TRUE(s.set("busy_poll.budget_us=0"));
  EXPECT_EQ(s.get_int("busy_poll.budget_us"), 0);
  EXPECT_EQ(s.set("busy_poll.budget_us=-1").error(),
            "--set busy_poll.budget_us=-1: -1 is out of range (allowed: 0..100000)");
}

TEST(config_command_line, takes_its_options_and_leaves_the_rest_in_order) {
  const std::vector<std::string> args{
      "-v", "--set", "sched.steal=false", "--print-config", "x", "--set=reactor.spin_us=3", "--", "--set", "y"};
  const auto cli = load_command_line(config_schema(), args);
  ASSERT_TRUE(cli) << cli.error();
  EXPECT_TRUE(cli->print_config);
  EXPECT_FALSE(cli->config.get_bool("sched.steal"));
  EXPECT_EQ(cli->config.get_int("reactor.spin_us"), 3);
  EXPECT_EQ(cli->args, (std::vector<std::string>{"-v", "x", "--", "--set", "y"}));
}

TEST(config_command_line, without_options_gives_the_defaults) {
  const char* argv[] = {"affine-echo", "--port", "7"};
  const auto cli = load_command_line(config_schema(), 3, argv);
  ASSERT_TRUE(cli) << cli.error();
  EXPECT_FALSE(cli->print_config);
  EXPECT_EQ(print_config(cli->config), print_config(defaults(config_schema())));
  EXPECT_EQ(cli->args, (std::vector<std::string>{"--port", "7"}));
}

TEST(config_command_line, option_errors) {
  EXPECT_EQ(load_command_line(config_schema(), std::vector<std::string>{"--set"}).error(), "--set: missing its value");
  EXPECT_EQ(
      load_command_line(config_schema(), std::vector<std::string>{"--config=a.toml", "--config", "b.toml"}).error(),
      "--config b.toml: a second --config (the first: a.toml)");
  EXPECT_EQ(load_command_line(config_schema(), std::vector<std::string>{"--set", "sched.wake_afine=always"}).error(),
            "--set sched.wake_afine=always: unknown key (did you mean \"sched.wake_affine\"?)");
}

}  // namespace
}  // namespace affine::config
