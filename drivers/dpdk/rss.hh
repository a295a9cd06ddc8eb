#pragma once
// RSS: the Toeplitz hash in software, the symmetric key, the key a port
// actually uses (read back, never assumed), and the redirection table (RETA)
// made from the RX-queue plan.

#include <cstddef>
#include <cstdint>
#include <expected>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "affine/topology.hh"

struct rte_mbuf;

namespace affine::drivers::dpdk {

enum class rss_mode : std::uint8_t {
  symmetric,       // ask for a key that hashes both directions of a flow alike
  driver_default,  // leave the PMD's key alone
  off,             // no RSS
};
// "symmetric" | "default" | "off", as [[port]].rss writes them.
std::optional<rss_mode> parse_rss_mode(std::string_view text);

// A key of `bytes` bytes (a multiple of 2) of repeated 0x6d5a. Toeplitz with a
// key whose bits repeat every 16 gives the same hash for (a, b, pa, pb) and
// (b, a, pb, pa), because addresses and ports are multiples of 16 bits.
std::vector<std::uint8_t> symmetric_rss_key(std::size_t bytes = 40);

// The Toeplitz hash of `input` under `key` (Microsoft RSS spec). Precondition:
// key.size() >= input.size() + 4.
std::uint32_t toeplitz_hash(std::span<const std::uint8_t> key, std::span<const std::uint8_t> input);

// The RSS hash a NIC computes for an Ethernet frame: over source and
// destination IPv4 addresses, plus source and destination ports for an
// unfragmented TCP or UDP packet. nullopt for anything else (not IPv4,
// truncated, malformed): such frames have no flow.
std::optional<std::uint32_t> frame_rss_hash(std::span<const std::uint8_t> key, std::span<const std::byte> frame);

// The flow hash of a received packet: the NIC's when the mbuf carries one
// (RTE_MBUF_F_RX_RSS_HASH), else frame_rss_hash over its first segment.
std::optional<std::uint32_t> flow_hash(const rte_mbuf* m, std::span<const std::uint8_t> key);

// RETA entries for a table of `reta_size` from the RX-queue plan: buckets go
// round-robin over the plan's cores (in the order they first appear), and
// round-robin over each core's queues, so every core gets an equal share of
// flows even when cores hold different numbers of queues.
std::vector<std::uint16_t> reta_from_plan(std::span<const rxq_assignment> plan, unsigned reta_size);

// ---- on a started port ------------------------------------------------------

// The key in use after asking for `mode`: read back; where the PMD kept
// another key than the symmetric one, ask again (rte_eth_dev_rss_hash_update)
// and read back again. Empty when the PMD cannot report its key.
std::vector<std::uint8_t> settle_rss_key(std::uint16_t port_id, rss_mode mode, std::size_t key_bytes);

// Write / read the whole RETA. Errors are one line ("not supported by this PMD").
std::expected<void, std::string> write_reta(std::uint16_t port_id, std::span<const std::uint16_t> entries);
std::expected<std::vector<std::uint16_t>, std::string> read_reta(std::uint16_t port_id, unsigned reta_size);

}  // namespace affine::drivers::dpdk
