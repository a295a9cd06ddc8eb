// End to end: run the built affine-topo binary (path in $AFFINE_TOPO, set by
// meson) and check what it prints and how it exits.

#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include <gtest/gtest.h>

extern char** environ;

namespace {

struct result {
  int status = -1;
  std::string out;
  std::string err;
};

std::string read_all(int fd) {
  std::string s;
  char buf[4096];
  for (ssize_t n; (n = read(fd, buf, sizeof buf)) > 0;) s.append(buf, static_cast<std::size_t>(n));
  close(fd);
  return s;
}

// Runs affine-topo with `args`. stderr is read after stdout; the tool writes
// at most one line there, far below a pipe's capacity.
result run_topo(std::vector<std::string> args) {
  const char* path = std::getenv("AFFINE_TOPO");
  EXPECT_NE(path, nullptr) << "AFFINE_TOPO is not set";
  if (path == nullptr) return {};
  int out[2];
  int err[2];
  EXPECT_EQ(pipe2(out, O_CLOEXEC), 0);
  EXPECT_EQ(pipe2(err, O_CLOEXEC), 0);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, out[1], 1);
  posix_spawn_file_actions_adddup2(&actions, err[1], 2);
  std::vector<char*> argv{const_cast<char*>(path)};
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  pid_t pid = -1;
  const int spawned = posix_spawn(&pid, path, &actions, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  close(out[1]);
  close(err[1]);
  result r;
  r.out = read_all(out[0]);
  r.err = read_all(err[0]);
  EXPECT_EQ(spawned, 0) << "cannot run " << path;
  if (spawned == 0) {
    int status = 0;
    waitpid(pid, &status, 0);
    r.status = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  }
  return r;
}

bool contains(const std::string& s, std::string_view part) { return s.find(part) != std::string::npos; }

std::size_t count_of(const std::string& s, std::string_view part) {
  std::size_t n = 0;
  for (auto pos = s.find(part); pos != std::string::npos; pos = s.find(part, pos + 1)) ++n;
  return n;
}

TEST(affine_topo, json_for_four_nodes_of_thirty_two_cores) {
  const result r = run_topo({"--synthetic", "pack:4 numa:1 l3:8 core:4 pu:1", "--json"});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.err, "");
  EXPECT_TRUE(contains(r.out, "\"cores\": 128,"));
  EXPECT_TRUE(contains(r.out, "\"nodes\": 4,"));
  EXPECT_TRUE(contains(r.out, "\"llc_domains\": 32,"));
  EXPECT_TRUE(contains(r.out, "\"packages\": 4,"));
  EXPECT_EQ(count_of(r.out, "\"os_cpu\""), 128u);
  EXPECT_TRUE(contains(r.out, "{\"core\": 127, \"os_cpu\": 127, \"llc\": 31, \"node\": 3, \"package\": 3}"));
  // Default: one queue per core, capped at 16, all on the NIC's node 0.
  EXPECT_TRUE(contains(r.out, "\"rx_plan\": {\"nic_node\": 0, \"queues\": 16, \"placement\": \"local\""));
  EXPECT_EQ(count_of(r.out, "\"queue\""), 16u);
  EXPECT_TRUE(contains(r.out, "{\"queue\": 15, \"core\": 15, \"node\": 0}"));
  // One object on one line, braces balanced.
  EXPECT_EQ(count_of(r.out, "\n"), 1u);
  EXPECT_EQ(r.out.front(), '{');
  EXPECT_EQ(count_of(r.out, "{"), count_of(r.out, "}"));
  EXPECT_EQ(count_of(r.out, "["), count_of(r.out, "]"));
}

TEST(affine_topo, json_spread_plan_on_chosen_cores) {
  const result r = run_topo({"--synthetic", "pack:2 numa:1 l3:1 core:4 pu:1", "--json", "--placement=spread",
                             "--nic-node", "1", "--queues", "4"});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_TRUE(contains(r.out,
                       "\"assignments\": [{\"queue\": 0, \"core\": 4, \"node\": 1}, "
                       "{\"queue\": 1, \"core\": 0, \"node\": 0}, {\"queue\": 2, \"core\": 5, \"node\": 1}, "
                       "{\"queue\": 3, \"core\": 1, \"node\": 0}]"));
}

TEST(affine_topo, table_names_the_topology_and_the_plan) {
  const result r = run_topo({"--synthetic", "pack:2 numa:1 l3:1 core:4 pu:1", "--cores", "4-7"});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_TRUE(contains(r.out, "8 cores, 2 nodes, 2 LLC domains, 2 packages"));
  EXPECT_TRUE(contains(r.out, "RX plan    4 queues, NIC on node 0, placement local, reactor cores 4-7"));
}

TEST(affine_topo, this_machine_and_help_succeed) {
  EXPECT_EQ(run_topo({}).status, 0);
  const result help = run_topo({"--help"});
  EXPECT_EQ(help.status, 0);
  EXPECT_TRUE(contains(help.out, "usage: affine-topo"));
}

// Every bad input: exit 2, nothing on stdout, one line on stderr.
void expect_bad_input(std::vector<std::string> args, std::string_view message) {
  const result r = run_topo(args);
  EXPECT_EQ(r.status, 2);
  EXPECT_EQ(r.out, "");
  EXPECT_EQ(r.err, "affine-topo: " + std::string(message) + "\n");
}

TEST(affine_topo, bad_input_exits_2_with_one_line) {
  const std::string desc = "pack:2 numa:1 l3:1 core:4 pu:1";
  expect_bad_input({"--synthetic", "pack:x"},
                   "bad synthetic topology \"pack:x\": hwloc cannot parse it "
                   "(expected e.g. \"pack:4 numa:1 l3:8 core:4 pu:1\")");
  expect_bad_input({"--synthetic", desc, "--nic-node", "2"},
                   "NUMA node 2 does not exist: this machine has nodes 0-1");
  expect_bad_input({"--queues", "0"}, "--queues wants a number from 1 to 1024, not \"0\"");
  expect_bad_input({"--queues", "many"}, "--queues wants a number from 1 to 1024, not \"many\"");
  expect_bad_input({"--frobnicate"}, "unknown option \"--frobnicate\" (try --help)");
  expect_bad_input({"--cores"}, "--cores needs a value");
  expect_bad_input({"--synthetic", desc, "--cores", "6-9"},
                   "--cores: core 9 does not exist: this machine has cores 0-7");
  expect_bad_input({"--placement", "near"}, "--placement wants \"local\" or \"spread\", not \"near\"");
  expect_bad_input({"--synthetic", desc, "--xml", "x.xml"}, "--synthetic and --xml cannot be combined");
}

// --config: reactor.cores, reactor.rxq_placement and the first [[port]]'s
// queues and node come from an affine configuration file; the command line
// still wins; a bad file is one line naming file, line and key.
std::string write_config(const std::string& name, const std::string& text) {
  const std::string path = ::testing::TempDir() + name;
  FILE* f = std::fopen(path.c_str(), "w");
  std::fputs(text.c_str(), f);
  std::fclose(f);
  return path;
}

TEST(affine_topo, config_file_gives_cores_placement_and_port) {
  const std::string desc = "pack:2 numa:1 l3:1 core:4 pu:1";
  const std::string path = write_config("topo_good.toml",
                                        "[reactor]\ncores = \"0-1,4-5\"\nrxq_placement = \"spread\"\n"
                                        "[[port]]\nqueues = 3\nnuma_node = 1\n");
  const result r = run_topo({"--synthetic", desc, "--config", path, "--json"});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("\"rx_plan\": {\"nic_node\": 1, \"queues\": 3, \"placement\": \"spread\""),
            std::string::npos) << r.out;
  EXPECT_NE(r.out.find("{\"queue\": 0, \"core\": 4, \"node\": 1}"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("{\"queue\": 1, \"core\": 0, \"node\": 0}"), std::string::npos) << r.out;
  const result cli = run_topo({"--synthetic", desc, "--config", path, "--queues", "1", "--set",
                               "reactor.rxq_placement=local", "--json"});
  ASSERT_EQ(cli.status, 0) << cli.err;
  EXPECT_NE(cli.out.find("\"queues\": 1, \"placement\": \"local\""), std::string::npos) << cli.out;
}

TEST(affine_topo, bad_config_names_file_line_and_key) {
  const std::string desc = "pack:2 numa:1 l3:1 core:4 pu:1";
  const std::string path = write_config("topo_bad.toml", "[reactor]\ncores = \"0-11\"\n");
  expect_bad_input({"--synthetic", desc, "--config", path},
                   path + ":2: reactor.cores: core 11 does not exist: this machine has cores 0-7");
  expect_bad_input({"--synthetic", desc, "--set", "sched.wake_afine=always"},
                   "--set sched.wake_afine=always: unknown key (did you mean \"sched.wake_affine\"?)");
}

}  // namespace
