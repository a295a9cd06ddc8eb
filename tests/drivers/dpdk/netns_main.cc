// main() of tests that need a network namespace (DESIGN.md section 8): the
// binary creates `affine-t-<pid>` (ip netns add), runs itself again inside
// it (ip netns exec), deletes it, and exits as the inner run did. Nothing it
// does reaches the root namespace. Where a namespace cannot be had (no
// /dev/net/tun, not root, no iproute2) the tests run here and skip, saying
// why (namespace_skip_reason()).

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <climits>
#include <cstdlib>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "tests/drivers/dpdk/netns.hh"

namespace affine::drivers::dpdk::test {

namespace {

constexpr const char* netns_env = "AFFINE_TEST_NETNS";
constexpr const char* skip_env = "AFFINE_TEST_NETNS_SKIP";

volatile sig_atomic_t inner_pid = 0;

// meson (or a user) stopping the test stops the inner run; the namespace is
// still deleted after it ends.
void forward_signal(int sig) {
  if (inner_pid > 0) ::kill(inner_pid, sig);
}

std::string why_no_namespace() {
  if (::access("/dev/net/tun", R_OK | W_OK) != 0) return "/dev/net/tun is missing: net_tap cannot run here";
  if (::geteuid() != 0) return "not root: cannot create a network namespace";
  if (std::system("ip netns list >/dev/null 2>&1") != 0) return "iproute2's `ip netns` is not available";
  return {};
}

int run_inside(const std::string& ns, int argc, char** argv) {
  char self[PATH_MAX];
  const ssize_t len = ::readlink("/proc/self/exe", self, sizeof self - 1);
  if (len <= 0) return 1;
  self[len] = '\0';
  if (std::system(fmt::format("ip netns add {}", ns).c_str()) != 0) {
    std::fprintf(stderr, "cannot create network namespace %s\n", ns.c_str());
    return 1;
  }
  std::vector<std::string> args{"ip", "netns", "exec", ns, self};
  for (int i = 1; i < argc; ++i) args.emplace_back(argv[i]);
  const pid_t pid = ::fork();
  if (pid == 0) {
    ::setenv(netns_env, ns.c_str(), 1);
    std::vector<char*> cargs;
    for (auto& a : args) cargs.push_back(a.data());
    cargs.push_back(nullptr);
    ::execvp("ip", cargs.data());
    ::_exit(127);
  }
  inner_pid = pid;
  ::signal(SIGINT, forward_signal);
  ::signal(SIGTERM, forward_signal);
  int status = 0;
  while (pid > 0 && ::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  std::system(fmt::format("ip netns del {}", ns).c_str());
  if (pid < 0) return 1;
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

ino_t net_namespace_of(const char* path) {
  struct stat st {};
  return ::stat(path, &st) == 0 ? st.st_ino : 0;
}

}  // namespace

std::string namespace_skip_reason() {
  const char* why = std::getenv(skip_env);
  return why != nullptr ? why : "";
}

bool inside_own_namespace() {
  return std::getenv(netns_env) != nullptr &&
         net_namespace_of("/proc/self/ns/net") != net_namespace_of("/proc/1/ns/net");
}

}  // namespace affine::drivers::dpdk::test

int main(int argc, char** argv) {
  using namespace affine::drivers::dpdk::test;
  if (std::getenv(netns_env) == nullptr) {
    const std::string why = why_no_namespace();
    if (why.empty()) return run_inside(fmt::format("affine-t-{}", ::getpid()), argc, argv);
    ::setenv(skip_env, why.c_str(), 1);
  }
  ::testing::InitGoogleTest(&argc, argv);
  return RUN_ALL_TESTS();
}
