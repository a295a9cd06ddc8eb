#include "drivers/dpdk/eal.hh"

#include <rte_eal.h>
#include <rte_errno.h>
#include <rte_lcore.h>
#include <rte_mbuf.h>
#include <rte_mempool.h>

#include <algorithm>
#include <map>
#include <mutex>
#include <vector>

#include <fmt/format.h>

#include "affine/log.hh"
#include "drivers/dpdk/error.hh"

namespace affine::drivers::dpdk {

namespace {

std::mutex eal_mutex;
bool eal_done = false;
std::expected<void, std::string> eal_result;
std::map<std::pair<unsigned, std::uint32_t>, rte_mempool*> pools;  // by (node, data room); under eal_mutex

// The EAL logs its reason first and generic "Cannot init ..." lines after
// it; the cases users meet most get a sentence that says what to do.
std::string explain_eal(int err, const log_capture& log) {
  if (log.mentions("hugepage"))
    return "no hugepages reserved and --no-huge not given: reserve hugepages (docs/dpdk.md) or add "
           "--no-huge -m 256 to [[port]].eal";
  const std::string reason = log.first_error();
  if (reason == "Invalid 'command line' arguments.")
    return "invalid EAL arguments (an unknown option? DPDK printed its usage above)";
  if (err == ENODEV)
    return fmt::format("a device in the EAL arguments cannot be used: {} (is its PMD installed? PMDs load from {})",
                       reason, RTE_EAL_PMD_PATH);
  if (err == EINVAL && !reason.empty()) return fmt::format("invalid EAL arguments: {}", reason);
  if (reason.empty()) return explain(err);
  return fmt::format("{}: {}", explain(err), reason);
}

// Reactor threads give their lcore slot back when they end (there are only
// RTE_MAX_LCORE of them, and tests start many runtimes).
struct lcore_registration {
  bool registered = false;
  ~lcore_registration() {
    if (registered) rte_thread_unregister();
  }
};
thread_local lcore_registration this_thread_lcore;

}  // namespace

std::expected<void, std::string> init_eal(std::span<const std::string> args) {
  std::lock_guard lock(eal_mutex);
  if (eal_done) return eal_result;
  std::vector<std::string> owned{"affine"};
  owned.insert(owned.end(), args.begin(), args.end());
  std::vector<char*> argv;
  for (auto& a : owned) argv.push_back(a.data());
  argv.push_back(nullptr);
  log_capture log;
  const int rc = rte_eal_init(int(owned.size()), argv.data());
  eal_done = true;
  if (rc < 0) {
    eal_result = std::unexpected(fmt::format("DPDK EAL: {}", explain_eal(rte_errno, log)));
  } else {
    eal_result = {};
  }
  return eal_result;
}

std::expected<void, std::string> init_eal_for_tests() {
  // --no-huge implies legacy memory, which --in-memory refuses; --no-shconf
  // is the part of --in-memory wanted here (no files under /var/run/dpdk, so
  // several processes can run at once).
  static const std::vector<std::string> args{
      "--no-huge", "--no-pci", "--no-shconf", "--no-telemetry", "-m", "256", "-l", "0",
      "--log-level=lib.eal:error", "--log-level=pmd:warning"};
  return init_eal(args);
}

bool eal_ready() noexcept {
  std::lock_guard lock(eal_mutex);
  return eal_done && eal_result.has_value();
}

std::expected<rte_mempool*, std::string> packet_pool(unsigned node, unsigned mbufs, std::uint32_t frame) {
  std::lock_guard lock(eal_mutex);
  if (!eal_done || !eal_result) return std::unexpected(std::string("DPDK EAL is not initialised"));
  const std::uint32_t room = std::max<std::uint32_t>(frame, RTE_MBUF_DEFAULT_DATAROOM);
  if (room > UINT16_MAX - RTE_PKTMBUF_HEADROOM)
    return std::unexpected(fmt::format("packet pool for node {}: frames of {} bytes do not fit one mbuf", node, frame));
  if (auto it = pools.find({node, room}); it != pools.end()) return it->second;
  const int socket = node < rte_socket_count() ? int(node) : SOCKET_ID_ANY;
  const std::string name = fmt::format("affine_pkt_{}_{}", node, room);
  rte_mempool* mp = rte_pktmbuf_pool_create(name.c_str(), mbufs, 256, 0, std::uint16_t(room + RTE_PKTMBUF_HEADROOM), socket);
  if (mp == nullptr)
    return std::unexpected(fmt::format("packet pool for node {} ({} mbufs of {} bytes): {}", node, mbufs, room,
                                       explain(rte_errno)));
  pools.emplace(std::pair{node, room}, mp);
  return mp;
}

std::vector<pool_usage> packet_pool_usage() {
  std::lock_guard lock(eal_mutex);
  std::vector<pool_usage> out;
  for (const auto& [key, mp] : pools)
    out.push_back({.node = key.first, .room = key.second, .in_use = rte_mempool_in_use_count(mp), .size = mp->size});
  return out;
}

std::expected<void, std::string> register_thread() {
  if (rte_lcore_id() != LCORE_ID_ANY) return {};
  if (rte_thread_register() != 0)
    return std::unexpected(fmt::format("cannot make this thread a DPDK lcore: {}", explain(rte_errno)));
  this_thread_lcore.registered = true;
  return {};
}

void register_reactor(unsigned reactor) {
  // Without an lcore id the thread still works, only without mempool caches.
  if (auto r = register_thread(); !r) AFFINE_LOG_WARN("reactor {}: {}; packet pools run uncached", reactor, r.error());
}

}  // namespace affine::drivers::dpdk
