#include "drivers/dpdk/packet_socket.hh"

#include <dirent.h>
#include <linux/if_packet.h>
#include <sys/socket.h>

#include <algorithm>
#include <cstdlib>

#include <fmt/format.h>

namespace affine::drivers::dpdk {

namespace {

bool is_packet_socket_on(int fd, unsigned if_index) {
  int domain = 0;
  socklen_t len = sizeof domain;
  if (::getsockopt(fd, SOL_SOCKET, SO_DOMAIN, &domain, &len) != 0 || domain != AF_PACKET) return false;
  sockaddr_ll addr{};
  len = sizeof addr;
  if (::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) != 0) return false;
  return addr.sll_family == AF_PACKET && unsigned(addr.sll_ifindex) == if_index;
}

}  // namespace

std::vector<int> af_packet_queue_sockets(unsigned if_index, unsigned queue_pairs, std::string& why) {
  std::vector<int> fds;
  DIR* d = ::opendir("/proc/self/fd");
  if (d == nullptr) {
    why = "cannot list /proc/self/fd";
    return {};
  }
  const int own = ::dirfd(d);
  while (const dirent* e = ::readdir(d)) {
    char* end = nullptr;
    const long fd = std::strtol(e->d_name, &end, 10);
    if (end == e->d_name || *end != '\0' || fd == own) continue;
    if (is_packet_socket_on(int(fd), if_index)) fds.push_back(int(fd));
  }
  ::closedir(d);
  if (fds.size() != queue_pairs) {
    why = fmt::format("{} packet sockets on interface {} for {} queue pairs", fds.size(), if_index, queue_pairs);
    return {};
  }
  std::sort(fds.begin(), fds.end());
  return fds;
}

}  // namespace affine::drivers::dpdk
