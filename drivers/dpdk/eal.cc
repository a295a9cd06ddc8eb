#include "drivers/dpdk/eal.hh"

#include <rte_eal.h>
#include <rte_errno.h>
#include <rte_lcore.h>
#include <rte_log.h>
#include <rte_mbuf.h>
#include <rte_mempool.h>

#include <map>
#include <mutex>
#include <vector>

#include <fmt/format.h>

namespace affine::drivers::dpdk {

namespace {

std::mutex eal_mutex;
bool eal_done = false;
std::expected<void, std::string> eal_result;
std::map<unsigned, rte_mempool*> pools;  // under eal_mutex

// DPDK's reasons, in words a user can act on.
std::string explain(int err) {
  switch (err) {
    case EACCES: return "permission denied (run as root, or give the process access to hugepages and devices)";
    case ENOMEM:
      return "not enough memory: no hugepages reserved? Reserve some (docs/dpdk.md) or pass --no-huge with -m";
    case EALREADY: return "the EAL was already initialised in this process";
    case ENODEV: return "no device found: check the PCI address or the --vdev string";
    case EINVAL: return "invalid EAL arguments (a malformed --vdev or option?)";
    case EPROTO: return "the EAL cannot run here (no IOVA mode fits; try --no-huge --iova-mode=va)";
    default: return fmt::format("{} ({})", rte_strerror(err), err);
  }
}

}  // namespace

std::expected<void, std::string> init_eal(std::span<const std::string> args) {
  std::lock_guard lock(eal_mutex);
  if (eal_done) return eal_result;
  std::vector<std::string> owned{"affine"};
  owned.insert(owned.end(), args.begin(), args.end());
  std::vector<char*> argv;
  for (auto& a : owned) argv.push_back(a.data());
  argv.push_back(nullptr);
  const int rc = rte_eal_init(int(owned.size()), argv.data());
  eal_done = true;
  if (rc < 0) {
    eal_result = std::unexpected(fmt::format("DPDK EAL: {}", explain(rte_errno)));
  } else {
    eal_result = {};
  }
  return eal_result;
}

std::expected<void, std::string> init_eal_for_tests() {
  static const std::vector<std::string> args{
      "--no-huge", "--no-pci", "--in-memory", "--no-telemetry", "-m", "256", "-l", "0",
      "--log-level=lib.eal:error", "--log-level=pmd:warning"};
  return init_eal(args);
}

bool eal_ready() noexcept {
  std::lock_guard lock(eal_mutex);
  return eal_done && eal_result.has_value();
}

std::expected<rte_mempool*, std::string> packet_pool(unsigned node, unsigned mbufs) {
  std::lock_guard lock(eal_mutex);
  if (!eal_done || !eal_result) return std::unexpected(std::string("DPDK EAL is not initialised"));
  if (auto it = pools.find(node); it != pools.end()) return it->second;
  const int socket = node < rte_socket_count() ? int(node) : SOCKET_ID_ANY;
  const std::string name = fmt::format("affine_pkt_{}", node);
  rte_mempool* mp = rte_pktmbuf_pool_create(name.c_str(), mbufs, 256, 0, RTE_MBUF_DEFAULT_BUF_SIZE, socket);
  if (mp == nullptr)
    return std::unexpected(fmt::format("packet pool for node {} ({} mbufs): {}", node, mbufs, explain(rte_errno)));
  pools.emplace(node, mp);
  return mp;
}

std::expected<void, std::string> register_thread() {
  if (rte_lcore_id() != LCORE_ID_ANY) return {};
  if (rte_thread_register() != 0)
    return std::unexpected(fmt::format("cannot make this thread a DPDK lcore: {}", explain(rte_errno)));
  return {};
}

}  // namespace affine::drivers::dpdk
