// Loading affine's configuration from a file: defaults, a complete file, and
// every kind of error with its exact one-line message.

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "affine/config.hh"
#include "tests/base/config_test_util.hh"

namespace affine::config {
namespace {

using test::load;
using test::load_error;

constexpr std::string_view full_file = R"([reactor]
cores = "0-3"
idle = "spin"
spin_us = 100
stack_kib = 128
task_quota_us = 250
rxq_placement = "spread"

[sched]
rx_wakeup_sync = true
wake_affine = "always"
balance_interval_us = 0
steal = false

[busy_poll]
budget_us = 0
yield_when_runnable = false

[log]
level = "debug"
ratelimit_per_s = 100

[stats]
interval_ms = 1000
prometheus_port = 9100

[[port]]
driver = "dpdk"
eal = ["--no-huge", "--vdev=net_tap0,iface=affine0"]
queues = 4
rss = "default"
ip = "10.77.0.2/24"
gateway = "10.77.0.1"
mtu = 9000
pci = "0000:03:00.0"
numa_node = 1
mbufs = 16383

[[port.rxq]]
queue = 0
rps = "idle"

[[port.rxq]]
queue = 3
rps = "flow"
busy_poll_budget_us = 20

[[port]]
driver = "uring"
)";

TEST(config_load, defaults_are_the_declared_values) {
  const settings s = defaults(config_schema());
  EXPECT_EQ(s.get_cores("reactor.cores"), core_list{});
  EXPECT_EQ(s.get_string("reactor.idle"), "adaptive");
  EXPECT_EQ(s.get_string("busy_poll.mode"), "adaptive");
  EXPECT_EQ(s.get_int("reactor.spin_us"), 50);
  EXPECT_EQ(s.get_int("reactor.stack_kib"), 64);
  EXPECT_EQ(s.get_int("reactor.task_quota_us"), 500);
  EXPECT_EQ(s.get_string("reactor.rxq_placement"), "local");
  EXPECT_FALSE(s.get_bool("sched.rx_wakeup_sync"));
  EXPECT_EQ(s.get_string("sched.wake_affine"), "task-only");
  EXPECT_EQ(s.get_int("sched.balance_interval_us"), 1000);
  EXPECT_TRUE(s.get_bool("sched.steal"));
  EXPECT_EQ(s.get_int("busy_poll.budget_us"), 50);
  EXPECT_TRUE(s.get_bool("busy_poll.yield_when_runnable"));
  EXPECT_EQ(s.get_string("log.level"), "info");
  EXPECT_EQ(s.get_int("log.ratelimit_per_s"), 10);
  EXPECT_EQ(s.get_int("stats.interval_ms"), 0);
  EXPECT_EQ(s.get_int("stats.prometheus_port"), 0);
  EXPECT_TRUE(s.tables("port").empty());
  EXPECT_EQ(s.where("sched.steal"), "(default)");
}

TEST(config_load, empty_file_gives_the_defaults) {
  const auto s = load("");
  ASSERT_TRUE(s) << s.error();
  EXPECT_EQ(print_config(*s), print_config(defaults(config_schema())));
}

TEST(config_load, full_file_gives_every_value) {
  const auto loaded = load(full_file);
  ASSERT_TRUE(loaded) << loaded.error();
  const settings& s = *loaded;
  EXPECT_EQ(s.get_cores("reactor.cores"), (core_list{.what = core_list::kind::list, .list = "0-3"}));
  EXPECT_EQ(s.get_string("reactor.idle"), "spin");
  EXPECT_EQ(s.get_int("reactor.spin_us"), 100);
  EXPECT_EQ(s.get_int("reactor.stack_kib"), 128);
  EXPECT_EQ(s.get_int("reactor.task_quota_us"), 250);
  EXPECT_EQ(s.get_string("reactor.rxq_placement"), "spread");
  EXPECT_TRUE(s.get_bool("sched.rx_wakeup_sync"));
  EXPECT_EQ(s.get_string("sched.wake_affine"), "always");
  EXPECT_EQ(s.get_int("sched.balance_interval_us"), 0);
  EXPECT_FALSE(s.get_bool("sched.steal"));
  EXPECT_EQ(s.get_int("busy_poll.budget_us"), 0);
  EXPECT_FALSE(s.get_bool("busy_poll.yield_when_runnable"));
  EXPECT_EQ(s.get_string("log.level"), "debug");
  EXPECT_EQ(s.get_int("log.ratelimit_per_s"), 100);
  EXPECT_EQ(s.get_int("stats.interval_ms"), 1000);
  EXPECT_EQ(s.get_int("stats.prometheus_port"), 9100);

  const auto ports = s.tables("port");
  ASSERT_EQ(ports.size(), 2u);
  const table_view& p = ports[0];
  EXPECT_EQ(p.path(), "port[0]");
  EXPECT_EQ(p.get_string("driver"), "dpdk");
  EXPECT_EQ(p.get_strings("eal"), (std::vector<std::string>{"--no-huge", "--vdev=net_tap0,iface=affine0"}));
  EXPECT_EQ(p.get_count("queues"), 4);
  EXPECT_EQ(p.get_string("rss"), "default");
  EXPECT_EQ(p.get_strings("ip"), std::vector<std::string>{"10.77.0.2/24"});
  EXPECT_EQ(p.get_strings("gateway"), std::vector<std::string>{"10.77.0.1"});
  EXPECT_EQ(p.get_int("mtu"), 9000);
  EXPECT_EQ(p.get_string("pci"), "0000:03:00.0");
  EXPECT_EQ(p.get_int("numa_node"), 1);
  EXPECT_EQ(p.get_int("mbufs"), 16383);

  const auto rxqs = p.tables("rxq");
  ASSERT_EQ(rxqs.size(), 2u);
  EXPECT_EQ(rxqs[1].path(), "port[0].rxq[1]");
  EXPECT_EQ(rxqs[0].get_int("queue"), 0);
  EXPECT_EQ(rxqs[0].get_string("rps"), "idle");
  EXPECT_EQ(rxqs[0].get_int("busy_poll_budget_us"), -1);
  EXPECT_EQ(rxqs[1].get_int("queue"), 3);
  EXPECT_EQ(rxqs[1].get_string("rps"), "flow");
  EXPECT_EQ(rxqs[1].get_int("busy_poll_budget_us"), 20);

  EXPECT_EQ(ports[1].get_string("driver"), "uring");
  EXPECT_EQ(ports[1].get_count("queues"), std::nullopt) << "the default: \"auto\"";
  EXPECT_TRUE(ports[1].tables("rxq").empty());
}

TEST(config_load, every_value_knows_its_file_and_line) {
  const auto s = load(full_file);
  ASSERT_TRUE(s) << s.error();
  EXPECT_EQ(s->where("reactor.cores"), "affine.toml:2");
  EXPECT_EQ(s->where("sched.steal"), "affine.toml:13");
  const auto ports = s->tables("port");
  EXPECT_EQ(ports[0].where("queues"), "affine.toml:30");
  EXPECT_EQ(ports[0].tables("rxq")[1].where("rps"), "affine.toml:45");
  EXPECT_EQ(ports[1].where("queues"), "(default)");
}

TEST(config_load, later_checks_report_in_the_same_shape) {
  const auto s = load(full_file);
  ASSERT_TRUE(s) << s.error();
  EXPECT_EQ(s->error("reactor.cores", "core 3 does not exist"), "affine.toml:2: reactor.cores: core 3 does not exist");
  EXPECT_EQ(s->tables("port")[0].tables("rxq")[1].error("queue", "port[0] has 4 queues"),
            "affine.toml:44: port[0].rxq[1].queue: port[0] has 4 queues");
  EXPECT_EQ(s->error("stats.interval_ms", "x"), "affine.toml:24: stats.interval_ms: x");
  EXPECT_EQ(defaults(config_schema()).error("reactor.cores", "x"), "(default): reactor.cores: x");
}

TEST(config_load, core_list_takes_auto_a_list_or_a_count) {
  auto cores_of = [](std::string_view value) {
    const auto s = load(std::string("[reactor]\ncores = ") + std::string(value));
    EXPECT_TRUE(s) << s.error();
    return s ? s->get_cores("reactor.cores") : core_list{};
  };
  EXPECT_EQ(cores_of("\"auto\""), core_list{});
  EXPECT_EQ(cores_of("\"0,2,4-6\""), (core_list{.what = core_list::kind::list, .list = "0,2,4-6"}));
  EXPECT_EQ(cores_of("\"5\""), (core_list{.what = core_list::kind::list, .list = "5"}));
  EXPECT_EQ(cores_of("4"), (core_list{.what = core_list::kind::count, .count = 4}));
}

TEST(config_load, bad_core_list_is_rejected_with_the_forms_allowed) {
  const std::string allowed = "(allowed: \"auto\", \"all\", a list like \"0-7\" or \"0,2,4-6\", or a count 1..8192)";
  EXPECT_EQ(load_error("[reactor]\ncores = \"7-3\""),
            "affine.toml:2: reactor.cores: \"7-3\" is not a core list " + allowed);
  EXPECT_EQ(load_error("[reactor]\ncores = \"0,,2\""),
            "affine.toml:2: reactor.cores: \"0,,2\" is not a core list " + allowed);
  EXPECT_EQ(load_error("[reactor]\ncores = \"every\""),
            "affine.toml:2: reactor.cores: \"every\" is not a core list " + allowed);
  EXPECT_EQ(load_error("[reactor]\ncores = \"8192\""),
            "affine.toml:2: reactor.cores: \"8192\" is not a core list " + allowed);
  EXPECT_EQ(load_error("[reactor]\ncores = 0"), "affine.toml:2: reactor.cores: 0 is out of range " + allowed);
  EXPECT_EQ(load_error("[reactor]\ncores = true"),
            "affine.toml:2: reactor.cores: expected a string or an integer, got a boolean " + allowed);
}

TEST(config_load, a_count_takes_auto_or_a_number_in_its_range) {
  auto queues_of = [](std::string_view value) {
    const auto s = load(std::string("[[port]]\nqueues = ") + std::string(value));
    EXPECT_TRUE(s) << s.error();
    return s ? s->tables("port")[0].get_count("queues") : std::optional<std::int64_t>(-1);
  };
  EXPECT_EQ(queues_of("\"auto\""), std::nullopt);
  EXPECT_EQ(queues_of("1"), 1);
  EXPECT_EQ(queues_of("1024"), 1024);
  const std::string allowed = "(allowed: \"auto\", 1..1024)";
  EXPECT_EQ(load_error("[[port]]\nqueues = 0"), "affine.toml:2: port[0].queues: 0 is out of range " + allowed);
  EXPECT_EQ(load_error("[[port]]\nqueues = 1025"), "affine.toml:2: port[0].queues: 1025 is out of range " + allowed);
  EXPECT_EQ(load_error("[[port]]\nqueues = \"all\""),
            "affine.toml:2: port[0].queues: \"all\" is not allowed " + allowed);
  EXPECT_EQ(load_error("[[port]]\nqueues = \"4\""), "affine.toml:2: port[0].queues: \"4\" is not allowed " + allowed);
  EXPECT_EQ(load_error("[[port]]\nqueues = 2.5"),
            "affine.toml:2: port[0].queues: expected a string or an integer, got a floating-point number " + allowed);
}

TEST(config_load, unknown_key_suggests_the_near_miss) {
  EXPECT_EQ(load_error("[sched]\nsteal = true\n\n\nrx_wakup_sync = true\n"),
            "affine.toml:5: sched.rx_wakup_sync: unknown key (did you mean \"sched.rx_wakeup_sync\"?)");
  EXPECT_EQ(load_error("[sched]\nwake_affnie = \"off\"\n"),
            "affine.toml:2: sched.wake_affnie: unknown key (did you mean \"sched.wake_affine\"?)");
}

TEST(config_load, key_in_the_wrong_section_suggests_where_it_belongs) {
  EXPECT_EQ(load_error("[sched]\nspin_us = 5\n"),
            "affine.toml:2: sched.spin_us: unknown key (did you mean \"reactor.spin_us\"?)");
  EXPECT_EQ(load_error("[reactor]\nqueues = 4\n"),
            "affine.toml:2: reactor.queues: unknown key (did you mean \"port[].queues\"?)");
}

TEST(config_load, unknown_key_without_a_near_miss_lists_the_section_keys) {
  EXPECT_EQ(load_error("[sched]\nfairness = 3\n"),
            "affine.toml:2: sched.fairness: unknown key (allowed: \"rx_wakeup_sync\", \"wake_affine\", "
            "\"balance_interval_us\", \"steal\")");
}

TEST(config_load, unknown_key_inside_an_array_of_tables_is_named_by_index) {
  EXPECT_EQ(load_error("[[port]]\n[[port]]\nqeueus = 2\n"),
            "affine.toml:3: port[1].qeueus: unknown key (did you mean \"port[1].queues\"?)");
  EXPECT_EQ(load_error("[[port]]\n[[port.rxq]]\nqueue = 0\nrsp = \"idle\"\n"),
            "affine.toml:4: port[0].rxq[0].rsp: unknown key (did you mean \"port[0].rxq[0].rps\"?)");
}

TEST(config_load, unknown_section_suggests_the_near_miss_or_lists_the_sections) {
  EXPECT_EQ(load_error("[shed]\nsteal = true\n"), "affine.toml:1: shed: unknown section (did you mean \"sched\"?)");
  EXPECT_EQ(load_error("\n[network]\nmtu = 1500\n"),
            "affine.toml:2: network: unknown section (allowed: \"reactor\", \"sched\", \"busy_poll\", \"log\", "
            "\"stats\", \"tcp\", \"port\")");
  EXPECT_EQ(load_error("[[ports]]\n"), "affine.toml:1: ports: unknown section (did you mean \"port\"?)");
}

TEST(config_load, wrong_type_names_both_types) {
  EXPECT_EQ(load_error("[sched]\nbalance_interval_us = \"1000\"\n"),
            "affine.toml:2: sched.balance_interval_us: expected an integer, got a string");
  EXPECT_EQ(load_error("[sched]\nsteal = 1\n"), "affine.toml:2: sched.steal: expected a boolean, got an integer");
  EXPECT_EQ(load_error("[reactor]\nspin_us = 5.0\n"),
            "affine.toml:2: reactor.spin_us: expected an integer, got a floating-point number");
  EXPECT_EQ(load_error("[[port]]\neal = [\"--no-huge\", 1]\n"),
            "affine.toml:2: port[0].eal: expected an array of strings, got an integer at index 1");
  EXPECT_EQ(load_error("[[port]]\neal = \"--no-huge\"\n"),
            "affine.toml:2: port[0].eal: expected an array of strings, got a string");
}

TEST(config_load, enumeration_of_the_wrong_type_lists_its_values) {
  EXPECT_EQ(load_error("[sched]\nwake_affine = 1\n"),
            "affine.toml:2: sched.wake_affine: expected a string, got an integer (allowed: \"off\", \"task-only\", "
            "\"always\")");
}

TEST(config_load, section_of_the_wrong_shape_is_an_error) {
  EXPECT_EQ(load_error("sched = 5\n"), "affine.toml:1: sched: expected a table, got an integer");
  EXPECT_EQ(load_error("[port]\nqueues = 2\n"), "affine.toml:1: port: expected an array of tables, got a table");
  EXPECT_TRUE(load("port = []\n")) << "an empty array is no ports";
}

TEST(config_load, out_of_range_gives_the_range) {
  EXPECT_EQ(load_error("[reactor]\ncores = \"auto\"\nidle = \"spin\"\n\n\n\nspin_us = 2000000\n"),
            "affine.toml:7: reactor.spin_us: 2000000 is out of range (allowed: 0..1000000)");
  EXPECT_EQ(load_error("[[port]]\nnuma_node = -2\n"),
            "affine.toml:2: port[0].numa_node: -2 is out of range (allowed: -1..1023)");
  EXPECT_TRUE(load("[[port]]\nnuma_node = -1\nmbufs = 1048575\n")) << "the bounds themselves are allowed";
}

TEST(config_load, value_not_among_the_choices_lists_them) {
  EXPECT_EQ(load_error("[sched]\nsteal = true\nwake_affine = \"sometimes\"\n"),
            "affine.toml:3: sched.wake_affine: \"sometimes\" is not allowed (allowed: \"off\", \"task-only\", "
            "\"always\")");
  EXPECT_EQ(load_error("[[port]]\n[[port.rxq]]\nqueue = 0\nrps = \"Idle\"\n"),
            "affine.toml:4: port[0].rxq[0].rps: \"Idle\" is not allowed (allowed: \"off\", \"hash\", \"flow\", "
            "\"idle\")");
}

TEST(config_load, malformed_toml_is_a_syntax_error_with_its_line) {
  EXPECT_EQ(load_error("[sched]\nsteal = true\n\nwake_affine = \n"),
            "affine.toml:4: syntax error: Error while parsing key-value pair: expected value, saw '\\n'");
  EXPECT_EQ(
      load_error("[sched]\nsteal = true\nsteal = false\n"),
      "affine.toml:3: syntax error: Error while parsing key-value pair: cannot redefine existing boolean 'steal'");
}

// Found by tests/fuzz/config_load.cc: toml++ quotes what it saw as it is in
// some messages, here the newline after "f", and a quoted key may hold any
// character; either made the error two lines.
TEST(config_load, errors_stay_one_line_where_the_file_holds_control_characters) {
  EXPECT_EQ(load_error("[reactor]\ncores =f\n"),
            "affine.toml:2: syntax error: Error while parsing boolean: expected 'false', saw 'f\\n'");
  EXPECT_EQ(load_error("[reactor]\ncores =t\r\n"),
            "affine.toml:2: syntax error: Error while parsing boolean: expected 'true', saw 't\\r'");
  EXPECT_EQ(load_error("[sched]\n\"wake\\naffine\" = 1\n"),
            "affine.toml:2: sched.wake\\naffine: unknown key (did you mean \"sched.wake_affine\"?)");
}

TEST(config_load, required_key_missing_names_the_table_header_line) {
  EXPECT_EQ(load_error("[[port]]\nqueues = 2\n\n[[port.rxq]]\nqueue = 0\n\n[[port.rxq]]\nrps = \"idle\"\n"),
            "affine.toml:7: port[0].rxq[1].queue: required key is missing");
}

TEST(config_load, first_error_in_line_order_is_reported) {
  // toml++ keeps keys sorted by name; the report must follow the file.
  EXPECT_EQ(load_error("[stats]\ninterval_ms = -1\n[busy_poll]\nbudget_us = -1\n"),
            "affine.toml:2: stats.interval_ms: -1 is out of range (allowed: 0..3600000)");
  EXPECT_EQ(load_error("[[port]]\n[[port.rxq]]\n[reactor]\nspin_us = -1\n"),
            "affine.toml:2: port[0].rxq[0].queue: required key is missing");
}

TEST(config_load, ip_takes_addresses_of_either_family_with_prefix_lengths) {
  const std::string allowed = "(allowed: like \"10.77.0.2/24\" or \"fd77::2/64\", or \"\")";
  for (const char* bad : {"10.77.0.2", "10.77.0.300/24", "10.77.0/24", "10.77.0.2/33", "10.77.0.02/24", "10.77.0.2/",
                          "a.b.c.d/8", "10.77.0.2/24 ", "fd77::2", "fd77::2/129", "fd77::2/064", "fd77:::2/64",
                          "fe80::1%2/64"}) {
    EXPECT_EQ(load_error(fmt::format("[[port]]\nip = \"{}\"\n", bad)),
              fmt::format("affine.toml:2: port[0].ip: \"{}\" is not an IPv4 or IPv6 address with prefix length {}", bad,
                          allowed));
  }
  for (const char* good : {"10.77.0.2/24", "0.0.0.0/0", "255.255.255.255/32", "", "fd77::2/64", "::ffff:0:0/96"}) {
    EXPECT_TRUE(load(fmt::format("[[port]]\nip = \"{}\"\n", good))) << good;
  }
  // A list: each element checked, the wrong one named by its index at its own line.
  const auto both = load("[[port]]\nip = [\"10.77.0.2/24\", \"fd77::2/64\"]\n");
  ASSERT_TRUE(both) << both.error();
  EXPECT_EQ(both->tables("port")[0].get_strings("ip"), (std::vector<std::string>{"10.77.0.2/24", "fd77::2/64"}));
  EXPECT_EQ(load_error("[[port]]\nip = [\"10.77.0.2/24\", \"fd77::2\"]\n"),
            "affine.toml:2: port[0].ip[1]: \"fd77::2\" is not an IPv4 or IPv6 address with prefix length " + allowed);
  EXPECT_EQ(load_error("[[port]]\nip = [\n  \"10.77.0.2/24\",\n  \"fd77::2/64\",\n  \"fd77::3/200\",\n]\n"),
            "affine.toml:5: port[0].ip[2]: \"fd77::3/200\" is not an IPv4 or IPv6 address with prefix length " +
                allowed);
  EXPECT_EQ(load_error("[[port]]\nip = [\"10.77.0.2/24\", 7]\n"),
            "affine.toml:2: port[0].ip[1]: expected a string, got an integer");
  EXPECT_EQ(load_error("[[port]]\nip = 7\n"),
            "affine.toml:2: port[0].ip: expected a string or an array of strings, got an integer");
}

TEST(config_load, gateway_takes_an_address_of_either_family) {
  EXPECT_EQ(load_error("[[port]]\ngateway = \"10.77.0.1/24\"\n"),
            "affine.toml:2: port[0].gateway: \"10.77.0.1/24\" is not an IPv4 or IPv6 address (allowed: like "
            "\"10.77.0.1\" or \"fe80::1\", or \"\")");
  EXPECT_TRUE(load("[[port]]\ngateway = \"10.77.0.1\"\n"));
  EXPECT_TRUE(load("[[port]]\ngateway = [\"10.77.0.1\", \"fe80::1\"]\n"));
  EXPECT_EQ(load_error("[[port]]\ngateway = [\"10.77.0.1\", \"fe80::1%2\"]\n"),  // a zone is the port's own
            "affine.toml:2: port[0].gateway[1]: \"fe80::1%2\" is not an IPv4 or IPv6 address (allowed: like "
            "\"10.77.0.1\" or \"fe80::1\", or \"\")");
  EXPECT_FALSE(load("[[port]]\ngateway = \"fd77::1/64\"\n"));
}

class config_file : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string pattern = (std::filesystem::temp_directory_path() / "affine-config-XXXXXX").string();
    ASSERT_NE(::mkdtemp(pattern.data()), nullptr);
    dir = pattern;
  }
  void TearDown() override { std::filesystem::remove_all(dir); }

  std::string write(std::string_view name, std::string_view text) {
    const std::string path = (dir / name).string();
    std::ofstream(path) << text;
    return path;
  }

  std::filesystem::path dir;
};

TEST_F(config_file, loads_a_file_and_names_it_in_errors) {
  const std::string good = write("good.toml", full_file);
  const auto s = load_file(config_schema(), good);
  ASSERT_TRUE(s) << s.error();
  EXPECT_EQ(s->where("reactor.idle"), good + ":3");

  const std::string bad = write("bad.toml", "[reactor]\nspin_us = -1\n");
  EXPECT_EQ(load_file(config_schema(), bad).error(),
            bad + ":2: reactor.spin_us: -1 is out of range (allowed: 0..1000000)");
}

TEST_F(config_file, missing_file_cannot_be_opened) {
  const std::string path = (dir / "affine.toml").string();
  EXPECT_EQ(load_file(config_schema(), path).error(), path + ": cannot open: No such file or directory");
}

TEST_F(config_file, command_line_loads_the_file_then_applies_the_sets) {
  const std::string path = write("affine.toml", "[reactor]\nspin_us = 100\nstack_kib = 32\n");
  const std::vector<std::string> args{"--config", path, "--set", "reactor.spin_us=0"};
  const auto cli = load_command_line(config_schema(), args);
  ASSERT_TRUE(cli) << cli.error();
  EXPECT_EQ(cli->config.get_int("reactor.spin_us"), 0);
  EXPECT_EQ(cli->config.get_int("reactor.stack_kib"), 32);
  EXPECT_EQ(cli->config.where("reactor.stack_kib"), path + ":3");
  EXPECT_TRUE(cli->args.empty());

  const std::vector<std::string> missing{"--config=" + path + ".not"};
  EXPECT_EQ(load_command_line(config_schema(), missing).error(), path + ".not: cannot open: No such file or directory");
}

}  // namespace
}  // namespace affine::config
