#pragma once
// RSS on a DPDK port: the mode a [[port]] asks for, the key the port
// actually uses (read back, never assumed), and its redirection table (RETA).
// The hash itself and the table's contents are drivers/rss.hh.

#include <cstddef>
#include <cstdint>
#include <expected>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "affine/topology.hh"
#include "drivers/rss.hh"

struct rte_mbuf;

namespace affine::drivers::dpdk {

enum class rss_mode : std::uint8_t {
  symmetric,       // ask for a key that hashes both directions of a flow alike
  driver_default,  // leave the PMD's key alone
  off,             // no RSS
};
// "symmetric" | "default" | "off", as [[port]].rss writes them.
std::optional<rss_mode> parse_rss_mode(std::string_view text);

// ---- on a started port ------------------------------------------------------

// The key in use after asking for `mode`: read back; where the PMD kept
// another key than the symmetric one, ask again (rte_eth_dev_rss_hash_update)
// and read back again. Empty when the PMD cannot report its key.
std::vector<std::uint8_t> settle_rss_key(std::uint16_t port_id, rss_mode mode, std::size_t key_bytes);

// Write / read the whole RETA. Errors are one line ("not supported by this PMD").
std::expected<void, std::string> write_reta(std::uint16_t port_id, std::span<const std::uint16_t> entries);
std::expected<std::vector<std::uint16_t>, std::string> read_reta(std::uint16_t port_id, unsigned reta_size);

}  // namespace affine::drivers::dpdk
