// affine-mysql-proxy's command line: backends with their settings, and one
// line naming the flag for each mistake.

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "apps/mysql-proxy/options.hh"

namespace affine_mysql {
namespace {

std::expected<options, std::string> parse(std::vector<std::string> args) { return parse_args(args); }

TEST(mysql_options, FullCommandLine) {
  auto o = parse({"--listen", "127.0.0.1:6033", "--backend", "10.0.0.5:3306", "--backend",
                  "10.0.0.6:3307,role=replica,weight=3,max=100", "--stats-interval-s", "2.5", "--connect-timeout-ms",
                  "500", "--handshake-timeout-ms", "4000", "--health-interval-ms", "250", "--health-timeout-ms", "100",
                  "--max-packet-mib", "16"});
  ASSERT_TRUE(o) << o.error();
  EXPECT_EQ(o->listen->to_string(), "127.0.0.1:6033");
  ASSERT_EQ(o->backends.size(), 2u);
  EXPECT_EQ(o->backends[0].address.to_string(), "10.0.0.5:3306");
  EXPECT_EQ(o->backends[0].role, backend_role::primary);
  EXPECT_EQ(o->backends[0].weight, 1u);
  EXPECT_EQ(o->backends[0].max_connections, 0u);
  EXPECT_EQ(o->backends[1].role, backend_role::replica);
  EXPECT_EQ(o->backends[1].weight, 3u);
  EXPECT_EQ(o->backends[1].max_connections, 100u);
  EXPECT_EQ(o->stats_interval_s, 2.5);
  EXPECT_EQ(o->session.connect_timeout_ns, 500'000'000u);
  EXPECT_EQ(o->session.handshake_timeout_ns, 4'000'000'000u);
  EXPECT_TRUE(o->health_checks);
  EXPECT_EQ(o->health.interval_ns, 250'000'000u);
  EXPECT_EQ(o->health.timeout_ns, 100'000'000u);
  EXPECT_EQ(o->session.max_packet, 16u << 20);
}

TEST(mysql_options, ListenOnAPortMeansEveryAddress) {
  auto o = parse({"--listen", "6033", "--backend", "127.0.0.1:3306"});
  ASSERT_TRUE(o) << o.error();
  EXPECT_EQ(o->listen->addr, affine::net::any_address);
  EXPECT_EQ(o->listen->port, 6033);
  EXPECT_EQ(o->stats_interval_s, 10);
}

TEST(mysql_options, HealthIntervalZeroTurnsChecksOff) {
  auto o = parse({"--listen", "6033", "--backend", "127.0.0.1:3306", "--health-interval-ms", "0"});
  ASSERT_TRUE(o) << o.error();
  EXPECT_FALSE(o->health_checks);
}

TEST(mysql_options, MistakesNameTheFlag) {
  const std::vector<std::pair<std::vector<std::string>, std::string>> cases{
      {{"--backend", "127.0.0.1:3306"}, "--listen [IP:]PORT (or [proxy] listen) is required"},
      {{"--listen", "6033"}, "at least one --backend IP:PORT (or [[backend]] address) is required"},
      {{"--listen", "6033", "--backend"}, "--backend needs a value"},
      {{"--listen", "70000"}, "--listen: \"70000\" is not a number in 0..65535"},
      {{"--listen", "6033", "--backend", "db:3306"}, "--backend: \"db\" is not an IPv4 address (like \"10.77.0.2\")"},
      {{"--listen", "6033", "--backend", "127.0.0.1"},
       "--backend: \"127.0.0.1\" is not ADDRESS:PORT (like \"10.77.0.2:6033\" or \"[fd77::2]:6033\"): no port"},
      {{"--listen", "6033", "--backend", "127.0.0.1:3306,role=leader"},
       "--backend: role \"leader\" is neither \"primary\" nor \"replica\""},
      {{"--listen", "6033", "--backend", "127.0.0.1:3306,weight=0"},
       "--backend weight: \"0\" is not a number in 1..1000"},
      {{"--listen", "6033", "--backend", "127.0.0.1:3306,color=red"},
       "--backend: unknown setting \"color=red\" (allowed: role, weight, max)"},
      {{"--listen", "6033", "--backend", "127.0.0.1:3306", "--verbose", "1"}, "unknown option \"--verbose\""},
      {{"--listen", "6033", "--backend", "127.0.0.1:3306", "--max-packet-mib", "0"},
       "--max-packet-mib: \"0\" is not a number in 1..1024"},
  };
  for (const auto& [args, message] : cases) {
    auto o = parse(args);
    ASSERT_FALSE(o) << message;
    EXPECT_EQ(o.error(), message);
  }
}

// ---- the configuration file's [proxy] and [[backend]] -------------------------

std::expected<options, std::string> from_file(std::string_view toml, std::vector<std::string> args = {}) {
  auto cfg = affine::config::load_string(proxy_schema(), toml, "proxy.toml");
  if (!cfg) return std::unexpected(cfg.error());
  return parse_args(args, options_from(*cfg));
}

TEST(mysql_options, TheFileAloneIsEnough) {
  auto o = from_file(R"([proxy]
listen = "10.88.0.2:3307"
metrics = "9104"
stats_interval_s = 3
health_interval_ms = 0

[[backend]]
address = "10.88.0.1:3306"

[[backend]]
address = "10.88.0.5:3306"
role = "replica"
weight = 2
max_connections = 50
)");
  ASSERT_TRUE(o) << o.error();
  EXPECT_EQ(o->listen->to_string(), "10.88.0.2:3307");
  ASSERT_TRUE(o->metrics);
  EXPECT_EQ(o->metrics->port, 9104);
  EXPECT_EQ(o->stats_interval_s, 3);
  EXPECT_FALSE(o->health_checks);
  ASSERT_EQ(o->backends.size(), 2u);
  EXPECT_EQ(o->backends[0].address.to_string(), "10.88.0.1:3306");
  EXPECT_EQ(o->backends[0].role, backend_role::primary);
  EXPECT_EQ(o->backends[1].role, backend_role::replica);
  EXPECT_EQ(o->backends[1].weight, 2u);
  EXPECT_EQ(o->backends[1].max_connections, 50u);
}

TEST(mysql_options, TheFilesDefaultsAreTheCommandLines) {
  auto file = from_file("", {"--listen", "6033", "--backend", "127.0.0.1:3306"});
  auto flags = parse({"--listen", "6033", "--backend", "127.0.0.1:3306"});
  ASSERT_TRUE(file) << file.error();
  ASSERT_TRUE(flags) << flags.error();
  EXPECT_EQ(file->stats_interval_s, flags->stats_interval_s);
  EXPECT_EQ(file->health_checks, flags->health_checks);
  EXPECT_EQ(file->health.interval_ns, flags->health.interval_ns);
  EXPECT_EQ(file->health.timeout_ns, flags->health.timeout_ns);
  EXPECT_EQ(file->session.connect_timeout_ns, flags->session.connect_timeout_ns);
  EXPECT_EQ(file->session.handshake_timeout_ns, flags->session.handshake_timeout_ns);
  EXPECT_EQ(file->session.max_packet, flags->session.max_packet);
  EXPECT_FALSE(file->metrics);
}

TEST(mysql_options, FlagsOverrideTheFileAndBackendFlagsReplaceItsBackends) {
  auto o = from_file(R"([proxy]
listen = "10.88.0.2:3307"
[[backend]]
address = "10.88.0.1:3306"
)",
                     {"--listen", "127.0.0.1:6033", "--backend", "127.0.0.1:3306", "--backend", "127.0.0.1:3307"});
  ASSERT_TRUE(o) << o.error();
  EXPECT_EQ(o->listen->to_string(), "127.0.0.1:6033");
  ASSERT_EQ(o->backends.size(), 2u);
  EXPECT_EQ(o->backends[0].address.to_string(), "127.0.0.1:3306");
  EXPECT_EQ(o->backends[1].address.to_string(), "127.0.0.1:3307");
}

TEST(mysql_options, FileMistakesNameFileLineAndKey) {
  const std::vector<std::pair<std::string, std::string>> cases{
      {"[proxy]\nlisten = \"db:3307\"\n",
       "proxy.toml:2: proxy.listen: \"db:3307\" is not an address and port, or a port (allowed: like "
       "\"10.88.0.2:3307\", \"[::]:3307\" or \"3307\", or \"\" to give --listen)"},
      {"[[backend]]\nrole = \"primary\"\n", "proxy.toml:1: backend[0].address: required key is missing"},
      {"[[backend]]\naddress = \"10.88.0.1\"\n",
       "proxy.toml:2: backend[0].address: \"10.88.0.1\" is not an address and port (allowed: like "
       "\"10.88.0.1:3306\" or \"[fd88::1]:3306\")"},
      {"[[backend]]\naddress = \"10.88.0.1:3306\"\nrole = \"leader\"\n",
       "proxy.toml:3: backend[0].role: \"leader\" is not allowed (allowed: \"primary\", \"replica\")"},
      {"[[backend]]\naddress = \"10.88.0.1:3306\"\nweight = 0\n",
       "proxy.toml:3: backend[0].weight: 0 is out of range (allowed: 1..1000)"},
      {"[proxy]\nlisten_on = 3307\n",
       "proxy.toml:2: proxy.listen_on: unknown key (allowed: \"listen\", \"metrics\", \"stats_interval_s\", "
       "\"connect_timeout_ms\", \"handshake_timeout_ms\", \"health_interval_ms\", \"health_timeout_ms\", "
       "\"max_packet_mib\")"},
  };
  for (const auto& [toml, message] : cases) {
    auto o = from_file(toml, {"--listen", "6033", "--backend", "127.0.0.1:3306"});
    ASSERT_FALSE(o) << message;
    EXPECT_EQ(o.error(), message);
  }
}

}  // namespace
}  // namespace affine_mysql
