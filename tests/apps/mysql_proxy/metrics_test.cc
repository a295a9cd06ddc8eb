// The Prometheus text: exact output for a small snapshot, cumulative
// latency buckets, escaping, the runtime's samples grouped by name, and a
// running runtime's whole text checked line by line against the format.

#include <gtest/gtest.h>

#include <array>
#include <map>
#include <memory>
#include <cctype>
#include <string_view>
#include <sstream>
#include <string>
#include <vector>

#include "apps/mysql-proxy/metrics.hh"
#include "tests/apps/mysql_proxy/harness.hh"

namespace affine_mysql {
namespace {

const std::array<backend_config, 2> two_backends = {
    backend_config{.address = {affine::net::loopback, 3306}},
    backend_config{.address = {affine::net::ipv4_address{0x0a000002}, 3307}, .role = backend_role::replica},
};

// The value on the line that starts with `series` and a space; -1 if none.
long long value_of(const std::string& text, const std::string& series) {
  const std::string key = "\n" + series + " ";
  const auto at = text.find(key);
  if (at == std::string::npos) return -1;
  return std::stoll(text.substr(at + key.size()));
}

TEST(mysql_metrics, SmallSnapshotExactText) {
  auto s = std::make_unique<stats_snapshot>();
  s->sessions_opened = 3;
  s->closes[std::size_t(close_reason::client_quit)] = 1;
  s->closes[std::size_t(close_reason::backend_down)] = 1;
  command_counters& query = s->commands[std::size_t(command_kind::query)];
  query.count = 2;
  query.errors = 1;
  query.latency.add(40'000);     // under the first bound
  query.latency.add(3'000'000);  // between 2.5 and 5 ms
  backend_set backends(two_backends);
  auto lease = backends.acquire(backend_role::primary);
  ASSERT_TRUE(lease);
  backends.at(0).count_connect_failure();
  backends.mark(1, false);
  const std::vector<affine::metric_sample> runtime = {
      {.name = "affine_fiber_runs_total", .help = "Fiber resumes.", .labels = {{"core", "0"}}, .value = 7},
      {.name = "affine_fiber_runs_total", .help = "Fiber resumes.", .labels = {{"core", "1"}}, .value = 9},
      {.name = "affine_runnable", .help = "Fibers ready.", .counter = false, .labels = {}, .value = 2},
  };

  EXPECT_EQ(prometheus_text(*s, backends, runtime),
            "# HELP affine_mysql_commands_total Commands relayed, by type (handshake: a client's login).\n"
            "# TYPE affine_mysql_commands_total counter\n"
            "affine_mysql_commands_total{command=\"query\"} 2\n"
            "# HELP affine_mysql_command_errors_total Commands whose response was an ERR, by type.\n"
            "# TYPE affine_mysql_command_errors_total counter\n"
            "affine_mysql_command_errors_total{command=\"query\"} 1\n"
            "# HELP affine_mysql_command_latency_seconds From a command's first byte forwarded to its response's "
            "last byte received, by type (each bucket counts to about 1.6% beyond its bound).\n"
            "# TYPE affine_mysql_command_latency_seconds histogram\n"
            "affine_mysql_command_latency_seconds_bucket{command=\"query\",le=\"0.00005\"} 1\n"
            "affine_mysql_command_latency_seconds_bucket{command=\"query\",le=\"0.0001\"} 1\n"
            "affine_mysql_command_latency_seconds_bucket{command=\"query\",le=\"0.00025\"} 1\n"
            "affine_mysql_command_latency_seconds_bucket{command=\"query\",le=\"0.0005\"} 1\n"
            "affine_mysql_command_latency_seconds_bucket{command=\"query\",le=\"0.001\"} 1\n"
            "affine_mysql_command_latency_seconds_bucket{command=\"query\",le=\"0.0025\"} 1\n"
            "affine_mysql_command_latency_seconds_bucket{command=\"query\",le=\"0.005\"} 2\n"
            "affine_mysql_command_latency_seconds_bucket{command=\"query\",le=\"0.01\"} 2\n"
            "affine_mysql_command_latency_seconds_bucket{command=\"query\",le=\"0.025\"} 2\n"
            "affine_mysql_command_latency_seconds_bucket{command=\"query\",le=\"0.05\"} 2\n"
            "affine_mysql_command_latency_seconds_bucket{command=\"query\",le=\"0.1\"} 2\n"
            "affine_mysql_command_latency_seconds_bucket{command=\"query\",le=\"0.25\"} 2\n"
            "affine_mysql_command_latency_seconds_bucket{command=\"query\",le=\"0.5\"} 2\n"
            "affine_mysql_command_latency_seconds_bucket{command=\"query\",le=\"1\"} 2\n"
            "affine_mysql_command_latency_seconds_bucket{command=\"query\",le=\"2.5\"} 2\n"
            "affine_mysql_command_latency_seconds_bucket{command=\"query\",le=\"5\"} 2\n"
            "affine_mysql_command_latency_seconds_bucket{command=\"query\",le=\"+Inf\"} 2\n"
            "affine_mysql_command_latency_seconds_sum{command=\"query\"} 0.003040000\n"
            "affine_mysql_command_latency_seconds_count{command=\"query\"} 2\n"
            "# HELP affine_mysql_sessions_opened_total Client sessions accepted.\n"
            "# TYPE affine_mysql_sessions_opened_total counter\n"
            "affine_mysql_sessions_opened_total 3\n"
            "# HELP affine_mysql_sessions_open Client sessions open now.\n"
            "# TYPE affine_mysql_sessions_open gauge\n"
            "affine_mysql_sessions_open 1\n"
            "# HELP affine_mysql_session_closes_total Client sessions ended, by reason.\n"
            "# TYPE affine_mysql_session_closes_total counter\n"
            "affine_mysql_session_closes_total{reason=\"client_quit\"} 1\n"
            "affine_mysql_session_closes_total{reason=\"backend_down\"} 1\n"
            "# HELP affine_mysql_backend_up 1 when the last health checks found the backend up.\n"
            "# TYPE affine_mysql_backend_up gauge\n"
            "affine_mysql_backend_up{backend=\"127.0.0.1:3306\",role=\"primary\"} 1\n"
            "affine_mysql_backend_up{backend=\"10.0.0.2:3307\",role=\"replica\"} 0\n"
            "# HELP affine_mysql_backend_active_sessions Sessions on the backend now.\n"
            "# TYPE affine_mysql_backend_active_sessions gauge\n"
            "affine_mysql_backend_active_sessions{backend=\"127.0.0.1:3306\",role=\"primary\"} 1\n"
            "affine_mysql_backend_active_sessions{backend=\"10.0.0.2:3307\",role=\"replica\"} 0\n"
            "# HELP affine_mysql_backend_sessions_total Sessions given the backend.\n"
            "# TYPE affine_mysql_backend_sessions_total counter\n"
            "affine_mysql_backend_sessions_total{backend=\"127.0.0.1:3306\",role=\"primary\"} 1\n"
            "affine_mysql_backend_sessions_total{backend=\"10.0.0.2:3307\",role=\"replica\"} 0\n"
            "# HELP affine_mysql_backend_connect_failures_total Connections to the backend that failed or "
            "timed out.\n"
            "# TYPE affine_mysql_backend_connect_failures_total counter\n"
            "affine_mysql_backend_connect_failures_total{backend=\"127.0.0.1:3306\",role=\"primary\"} 1\n"
            "affine_mysql_backend_connect_failures_total{backend=\"10.0.0.2:3307\",role=\"replica\"} 0\n"
            "# HELP affine_fiber_runs_total Fiber resumes.\n"
            "# TYPE affine_fiber_runs_total counter\n"
            "affine_fiber_runs_total{core=\"0\"} 7\n"
            "affine_fiber_runs_total{core=\"1\"} 9\n"
            "# HELP affine_runnable Fibers ready.\n"
            "# TYPE affine_runnable gauge\n"
            "affine_runnable 2\n");
}

TEST(mysql_metrics, NothingSeenWritesNoCommandOrCloseSeries) {
  const auto s = std::make_unique<stats_snapshot>();
  const std::string text = prometheus_text(*s, backend_set({}), {});
  EXPECT_EQ(text.find("affine_mysql_commands_total{"), std::string::npos);
  EXPECT_EQ(text.find("affine_mysql_command_latency_seconds_bucket"), std::string::npos);
  EXPECT_EQ(text.find("affine_mysql_session_closes_total{"), std::string::npos);
  EXPECT_EQ(value_of(text, "affine_mysql_sessions_opened_total"), 0);
  EXPECT_EQ(value_of(text, "affine_mysql_sessions_open"), 0);
}

TEST(mysql_metrics, LatencyBucketsAreCumulativeToTheHistogramsResolution) {
  auto s = std::make_unique<stats_snapshot>();
  command_counters& ping = s->commands[std::size_t(command_kind::ping)];
  ping.count = 5;
  ping.latency.add(50'000);          // exactly the first bound: counted there (le is "at most")
  ping.latency.add(51'100);          // 2.2% over it: beyond that bucket's reach
  ping.latency.add(700'000);         // 0.5 to 1 ms
  ping.latency.add(1'000'000'000);   // exactly 1 s
  ping.latency.add(10'000'000'000);  // past the last bound: only in +Inf
  const std::string text = prometheus_text(*s, backend_set({}), {});
  const auto bucket = [&](std::string_view le) {
    return value_of(text, "affine_mysql_command_latency_seconds_bucket{command=\"ping\",le=\"" + std::string(le) +
                              "\"}");
  };
  EXPECT_EQ(bucket("0.00005"), 1);
  EXPECT_EQ(bucket("0.0001"), 2);
  EXPECT_EQ(bucket("0.0005"), 2);
  EXPECT_EQ(bucket("0.001"), 3);
  EXPECT_EQ(bucket("0.5"), 3);
  EXPECT_EQ(bucket("1"), 4);
  EXPECT_EQ(bucket("5"), 4);
  EXPECT_EQ(bucket("+Inf"), 5);
  EXPECT_EQ(value_of(text, "affine_mysql_command_latency_seconds_count{command=\"ping\"}"), 5);
  long long previous = 0;
  for (const latency_bound& b : latency_bounds) {
    EXPECT_GE(bucket(b.seconds), previous) << b.seconds;
    previous = bucket(b.seconds);
  }
}

TEST(mysql_metrics, LabelValuesAndHelpAreEscaped) {
  const auto s = std::make_unique<stats_snapshot>();
  const std::vector<affine::metric_sample> runtime = {
      {.name = "affine_odd_total",
       .help = "back\\slash \"quoted\"\nsecond line",
       .labels = {{"port", "a\\b\"c\nd"}, {"core", "0"}},
       .value = 1},
  };
  const std::string text = prometheus_text(*s, backend_set({}), runtime);
  EXPECT_NE(text.find("# HELP affine_odd_total back\\\\slash \"quoted\"\\nsecond line\n"
                      "# TYPE affine_odd_total counter\n"
                      "affine_odd_total{port=\"a\\\\b\\\"c\\nd\",core=\"0\"} 1\n"),
            std::string::npos)
      << text;
}

TEST(mysql_metrics, RuntimeSamplesOfOneNameAreWrittenTogetherUnderOneHeader) {
  const auto s = std::make_unique<stats_snapshot>();
  const std::vector<affine::metric_sample> runtime = {
      {.name = "affine_a_total", .help = "A.", .labels = {{"core", "0"}}, .value = 1},
      {.name = "affine_b", .help = "B.", .counter = false, .labels = {}, .value = 2},
      {.name = "affine_a_total", .help = "A.", .labels = {{"core", "1"}}, .value = 3},
  };
  const std::string text = prometheus_text(*s, backend_set({}), runtime);
  EXPECT_NE(text.find("# HELP affine_a_total A.\n"
                      "# TYPE affine_a_total counter\n"
                      "affine_a_total{core=\"0\"} 1\n"
                      "affine_a_total{core=\"1\"} 3\n"
                      "# HELP affine_b B.\n"
                      "# TYPE affine_b gauge\n"
                      "affine_b 2\n"),
            std::string::npos)
      << text;
}

// Text format 0.0.4, read by hand (GCC 12's <regex> trips -Werror under
// the sanitizers): a metric name, a label name, a sample line.
bool name_char(char c, bool first, bool colon) {
  return std::isalpha(static_cast<unsigned char>(c)) != 0 || c == '_' || (colon && c == ':') ||
         (!first && std::isdigit(static_cast<unsigned char>(c)) != 0);
}

// The name at the front of `s` (empty if none), taken off `s`.
std::string_view take_name(std::string_view& s, bool colon) {
  std::size_t n = 0;
  while (n < s.size() && name_char(s[n], n == 0, colon)) ++n;
  const std::string_view name = s.substr(0, n);
  s.remove_prefix(n);
  return name;
}

// `l` is NAME[{K="V",...}] VALUE with escaped values (\\, \", \n) and VALUE
// digits with an optional fraction; returns NAME, or empty if malformed.
std::string_view sample_name(std::string_view l) {
  const std::string_view name = take_name(l, true);
  if (name.empty()) return {};
  if (!l.empty() && l.front() == '{') {
    l.remove_prefix(1);
    for (;;) {
      if (take_name(l, false).empty() || l.substr(0, 2) != "=\"") return {};
      l.remove_prefix(2);
      for (;;) {
        if (l.empty() || l.front() == '\n') return {};
        if (l.front() == '"') break;
        if (l.front() == '\\') {
          if (l.size() < 2 || (l[1] != '\\' && l[1] != '"' && l[1] != 'n')) return {};
          l.remove_prefix(1);
        }
        l.remove_prefix(1);
      }
      l.remove_prefix(1);
      if (!l.empty() && l.front() == ',') {
        l.remove_prefix(1);
        continue;
      }
      if (l.empty() || l.front() != '}') return {};
      l.remove_prefix(1);
      break;
    }
  }
  if (l.empty() || l.front() != ' ') return {};
  l.remove_prefix(1);
  const auto digits = [&] {
    std::size_t n = 0;
    while (n < l.size() && std::isdigit(static_cast<unsigned char>(l[n])) != 0) ++n;
    l.remove_prefix(n);
    return n;
  };
  if (digits() == 0) return {};
  if (!l.empty() && l.front() == '.') {
    l.remove_prefix(1);
    if (digits() == 0) return {};
  }
  return l.empty() ? name : std::string_view{};
}

TEST(mysql_metrics, TheTestsLineCheckerRefusesMalformedLines) {
  EXPECT_EQ(sample_name("a_b{c=\"x\\\"y\",d=\"\"} 12"), "a_b");
  EXPECT_EQ(sample_name("a:b 0.5"), "a:b");
  for (std::string_view bad : {"", "1a 2", "a", "a 1x", "a{c=x} 1", "a{c=\"x} 1", "a{c=\"\\q\"} 1", "a{} 1",
                               "a{c=\"x\",} 1", "a 1.", "a  1"})
    EXPECT_EQ(sample_name(bad), "") << bad;
}

// Each family's HELP and TYPE once, before its samples, which are adjacent.
void expect_well_formed(const std::string& text) {
  std::map<std::string, int> families;  // name -> times its TYPE appeared
  std::string current;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    std::string_view l = line;
    if (l.starts_with("# HELP ")) {
      l.remove_prefix(7);
      EXPECT_FALSE(take_name(l, true).empty()) << line;
      EXPECT_TRUE(l.starts_with(" ")) << line;
      continue;
    }
    if (l.starts_with("# TYPE ")) {
      l.remove_prefix(7);
      current = std::string(take_name(l, true));
      EXPECT_TRUE(l == " counter" || l == " gauge" || l == " histogram") << line;
      ++families[current];
      continue;
    }
    const std::string name(sample_name(l));
    ASSERT_FALSE(name.empty()) << line;
    // A histogram's series carry its name with a suffix.
    EXPECT_TRUE(name == current || name == current + "_bucket" || name == current + "_sum" ||
                name == current + "_count")
        << line;
  }
  for (const auto& [name, times] : families) EXPECT_EQ(times, 1) << name;
}

TEST(mysql_metrics, ARunningRuntimesTextIsWellFormed) {
  affine_mysql_test::in_runtime([] {
    auto s = std::make_unique<stats_snapshot>();
    s->sessions_opened = 1;
    s->commands[std::size_t(command_kind::handshake)].count = 1;
    s->commands[std::size_t(command_kind::handshake)].latency.add(300'000);
    const std::vector<affine::metric_sample> runtime = affine::collect_metrics();
    ASSERT_FALSE(runtime.empty());
    const std::string text = prometheus_text(*s, backend_set(two_backends), runtime);
    expect_well_formed(text);
    EXPECT_NE(text.find("\naffine_fiber_runs_total{core=\"1\"} "), std::string::npos) << text;
  });
}

}  // namespace
}  // namespace affine_mysql
