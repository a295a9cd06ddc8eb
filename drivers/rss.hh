#pragma once
// RSS as every port type computes it: the Toeplitz hash in software, the
// symmetric key, the hash of a frame or a received packet, and the
// redirection table (RETA) made from the RX-queue plan. Programming a NIC's
// key and table is the DPDK driver's (drivers/dpdk/rss.hh).

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include "affine/topology.hh"

struct rte_mbuf;

namespace affine::drivers {

// A key of `bytes` bytes (a multiple of 2) of repeated 0x6d5a. Toeplitz with a
// key whose bits repeat every 16 gives the same hash for (a, b, pa, pb) and
// (b, a, pb, pa), because addresses and ports are multiples of 16 bits.
std::vector<std::uint8_t> symmetric_rss_key(std::size_t bytes = 40);

// The Toeplitz hash of `input` under `key` (Microsoft RSS spec). Precondition:
// key.size() >= input.size() + 4.
std::uint32_t toeplitz_hash(std::span<const std::uint8_t> key, std::span<const std::uint8_t> input);

// The RSS hash a NIC computes for an Ethernet frame: over source and
// destination IPv4 or IPv6 addresses, plus source and destination ports
// for an unfragmented TCP or UDP packet (IPv6: one right after the fixed
// header). nullopt for anything else (not IP, truncated, malformed): such
// frames have no flow.
std::optional<std::uint32_t> frame_rss_hash(std::span<const std::uint8_t> key, std::span<const std::byte> frame);

// The flow hash of a received packet: the NIC's when the mbuf carries one
// (RTE_MBUF_F_RX_RSS_HASH), else frame_rss_hash over its first segment.
std::optional<std::uint32_t> flow_hash(const rte_mbuf* m, std::span<const std::uint8_t> key);

// RETA entries for a table of `reta_size` from the RX-queue plan: buckets go
// round-robin over the plan's cores (in the order they first appear), and
// round-robin over each core's queues, so every core gets an equal share of
// flows even when cores hold different numbers of queues.
std::vector<std::uint16_t> reta_from_plan(std::span<const rxq_assignment> plan, unsigned reta_size);

}  // namespace affine::drivers
