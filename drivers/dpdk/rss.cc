#include "drivers/dpdk/rss.hh"

#include <rte_ethdev.h>
#include <rte_mbuf.h>

#include <algorithm>
#include <array>
#include <cstring>

#include <fmt/format.h>

#include "affine/log.hh"
#include "drivers/dpdk/error.hh"

namespace affine::drivers::dpdk {

namespace {

std::vector<std::uint8_t> read_key(std::uint16_t port_id, std::size_t key_bytes, std::uint64_t* hash_functions) {
  std::vector<std::uint8_t> key(key_bytes);
  rte_eth_rss_conf conf{};
  conf.rss_key = key.data();
  conf.rss_key_len = std::uint8_t(key_bytes);
  if (rte_eth_dev_rss_hash_conf_get(port_id, &conf) != 0) return {};
  if (hash_functions != nullptr) *hash_functions = conf.rss_hf;
  return key;
}

}  // namespace

std::optional<rss_mode> parse_rss_mode(std::string_view text) {
  if (text == "symmetric") return rss_mode::symmetric;
  if (text == "default") return rss_mode::driver_default;
  if (text == "off") return rss_mode::off;
  return std::nullopt;
}






std::vector<std::uint8_t> settle_rss_key(std::uint16_t port_id, rss_mode mode, std::size_t key_bytes) {
  if (mode == rss_mode::off) return {};
  std::uint64_t hash_functions = 0;
  std::vector<std::uint8_t> key = read_key(port_id, key_bytes, &hash_functions);
  const std::vector<std::uint8_t> wanted = symmetric_rss_key(key_bytes);
  if (mode != rss_mode::symmetric || key.empty() || key == wanted) return key;

  // Some PMDs ignore the key given at configure time; ask once more.
  std::vector<std::uint8_t> copy = wanted;
  rte_eth_rss_conf conf{};
  conf.rss_key = copy.data();
  conf.rss_key_len = std::uint8_t(copy.size());
  conf.rss_hf = hash_functions;
  {
    log_capture quiet;
    rte_eth_dev_rss_hash_update(port_id, &conf);
  }
  key = read_key(port_id, key_bytes, nullptr);
  if (key != wanted) AFFINE_LOG_INFO("port {}: the PMD keeps its own RSS key; flows hash asymmetrically", port_id);
  return key;
}

std::expected<void, std::string> write_reta(std::uint16_t port_id, std::span<const std::uint16_t> entries) {
  std::vector<rte_eth_rss_reta_entry64> conf((entries.size() + RTE_ETH_RETA_GROUP_SIZE - 1) / RTE_ETH_RETA_GROUP_SIZE);
  for (std::size_t i = 0; i < entries.size(); ++i) {
    auto& group = conf[i / RTE_ETH_RETA_GROUP_SIZE];
    group.mask |= 1ULL << (i % RTE_ETH_RETA_GROUP_SIZE);
    group.reta[i % RTE_ETH_RETA_GROUP_SIZE] = entries[i];
  }
  log_capture log;
  const int rc = rte_eth_dev_rss_reta_update(port_id, conf.data(), std::uint16_t(entries.size()));
  if (rc != 0) return std::unexpected(failure("RETA update", rc, log));
  return {};
}

std::expected<std::vector<std::uint16_t>, std::string> read_reta(std::uint16_t port_id, unsigned reta_size) {
  std::vector<rte_eth_rss_reta_entry64> conf((reta_size + RTE_ETH_RETA_GROUP_SIZE - 1) / RTE_ETH_RETA_GROUP_SIZE);
  for (unsigned i = 0; i < reta_size; ++i) conf[i / RTE_ETH_RETA_GROUP_SIZE].mask |= 1ULL << (i % RTE_ETH_RETA_GROUP_SIZE);
  log_capture log;
  const int rc = rte_eth_dev_rss_reta_query(port_id, conf.data(), std::uint16_t(reta_size));
  if (rc != 0) return std::unexpected(failure("RETA query", rc, log));
  std::vector<std::uint16_t> entries(reta_size);
  for (unsigned i = 0; i < reta_size; ++i)
    entries[i] = conf[i / RTE_ETH_RETA_GROUP_SIZE].reta[i % RTE_ETH_RETA_GROUP_SIZE];
  return entries;
}

}  // namespace affine::drivers::dpdk
