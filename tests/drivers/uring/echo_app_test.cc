// affine-echo end to end: the server and the client as separate processes
// (the path comes from meson in AFFINE_ECHO), on loopback. Every command
// runs under timeout(1), so nothing outlives a failing test.

#include <gtest/gtest.h>
#include <sys/wait.h>

#include <cstdio>
#include <cstdlib>
#include <string>

#include "tests/drivers/uring/kernel_peer.hh"

namespace affine::test {
namespace {

struct command_result {
  std::string out;  // everything on stdout
  int status = -1;  // exit status, -1 if it did not exit normally
};

class child {
 public:
  // timeout(1) sends SIGTERM after `seconds`; the status is then the child's.
  explicit child(const std::string& args, int seconds = 20) {
    const char* exe = std::getenv("AFFINE_ECHO");
    if (exe == nullptr) return;
    const std::string cmd = "exec timeout --preserve-status " + std::to_string(seconds) + " " + exe +
                            " --set stats.interval_ms=0 --set log.level=warn " + args + " 2>&1";
    pipe_ = ::popen(cmd.c_str(), "r");
  }
  ~child() { finish(); }
  // One line of its output, without the newline; empty at its end.
  std::string line() {
    char buf[4096];
    if (pipe_ == nullptr || std::fgets(buf, sizeof buf, pipe_) == nullptr) return {};
    std::string s(buf);
    if (!s.empty() && s.back() == '\n') s.pop_back();
    return s;
  }
  command_result finish() {
    command_result r;
    if (pipe_ == nullptr) return r;
    for (std::string l; !(l = line()).empty();) r.out += l + "\n";
    const int st = ::pclose(pipe_);
    pipe_ = nullptr;
    r.status = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
    return r;
  }

 private:
  FILE* pipe_ = nullptr;
};

// The value of a numeric field of a one-line JSON object; -1 if absent.
double field(const std::string& json, const std::string& name) {
  const auto at = json.find("\"" + name + "\":");
  return at == std::string::npos ? -1 : std::strtod(json.c_str() + at + name.size() + 3, nullptr);
}

class echo_app : public ::testing::Test {
 protected:
  void SetUp() override {
    if (std::getenv("AFFINE_ECHO") == nullptr) GTEST_SKIP() << "AFFINE_ECHO is not set (run through meson test)";
  }
};

TEST_F(echo_app, ClientRoundTripsThroughTheServerAndBothReportJson) {
  child server("server --port 0 --max-connections 4");
  const std::string listening = server.line();
  ASSERT_NE(listening.find("\"role\":\"server\""), std::string::npos) << listening;
  const int port = int(field(listening, "port"));
  ASSERT_GT(port, 0) << listening;

  const command_result client =
      child("client --to 127.0.0.1:" + std::to_string(port) + " --connections 4 --requests 200 --size 1000").finish();
  EXPECT_EQ(client.status, 0) << client.out;
  EXPECT_NE(client.out.find("\"bench\":\"echo\""), std::string::npos) << client.out;
  EXPECT_EQ(field(client.out, "errors"), 0) << client.out;
  EXPECT_EQ(field(client.out, "size_bytes"), 1000) << client.out;
  EXPECT_GT(field(client.out, "round_trips_per_s"), 0) << client.out;
  EXPECT_GT(field(client.out, "rtt_p99_us"), 0) << client.out;

  const command_result done = server.finish();  // it stops after 4 connections
  EXPECT_EQ(done.status, 0) << done.out;
  EXPECT_EQ(field(done.out, "connections"), 4) << done.out;
  EXPECT_EQ(field(done.out, "bytes"), 4 * 200 * 1000) << done.out;
}

TEST_F(echo_app, ServerStopsCleanlyOnSigterm) {
  child server("server --port 0", 1);
  ASSERT_NE(server.line().find("\"port\":"), std::string::npos);
  const command_result r = server.finish();
  EXPECT_EQ(r.status, 0) << r.out;
  EXPECT_NE(r.out.find("{\"app\":\"echo\",\"role\":\"server\",\"connections\":0,\"bytes\":0}"), std::string::npos)
      << r.out;
}

TEST_F(echo_app, ClientReportsARefusedConnectionAndFails) {
  auto closed = kernel_socket::bound_only();  // a port nobody listens on
  ASSERT_TRUE(closed.valid());
  const command_result r =
      child("client --to 127.0.0.1:" + std::to_string(closed.port()) + " --connections 2 --requests 1 --size 1").finish();
  EXPECT_EQ(r.status, 1) << r.out;
  EXPECT_EQ(field(r.out, "errors"), 2) << r.out;
  EXPECT_NE(r.out.find("\"first_error\":\"connect to 127.0.0.1:" + std::to_string(closed.port()) +
                       ": Connection refused\""),
            std::string::npos)
      << r.out;
}

TEST_F(echo_app, BadCommandLinesAreExitCodeTwoWithTheReason) {
  const command_result no_to = child("client --size 10").finish();
  EXPECT_EQ(no_to.status, 2);
  EXPECT_NE(no_to.out.find("affine-echo: client needs --to IP:PORT"), std::string::npos) << no_to.out;
  const command_result bad_size = child("client --to 127.0.0.1:7 --size lots").finish();
  EXPECT_EQ(bad_size.status, 2);
  EXPECT_NE(bad_size.out.find("affine-echo: --size: \"lots\" is not a number in 1..67108864"), std::string::npos)
      << bad_size.out;
  const command_result bad_role = child("proxy").finish();
  EXPECT_EQ(bad_role.status, 2);
  EXPECT_NE(bad_role.out.find("\"proxy\" is neither \"server\" nor \"client\""), std::string::npos) << bad_role.out;
}

}  // namespace
}  // namespace affine::test
