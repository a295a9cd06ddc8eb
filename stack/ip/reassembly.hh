#pragma once
// IPv4 and IPv6 reassembly (RFC 791 3.2, RFC 815, RFC 8200 4.5), bounded: a fixed number of slots,
// each able to hold a datagram of the largest size, all taken from one arena
// at construction, plus a cap on the fragment bytes held by all slots
// together. Overlapping fragments drop the whole datagram (RFC 5722, written
// for IPv6, applied here as Linux applies it to IPv4 since 4.19): overlaps
// serve only to smuggle headers past filters. A fragment that lies wholly
// inside data already received is a duplicate and is dropped alone.
//
// Fragments are copied into the slot, so the caller frees each packet at
// once. Time is passed in; the owner calls expire() once next_deadline() has
// come. A slot keeps the headers of its first fragment (offset 0) in front
// of the payload, so that an expiry hands that fragment back whole, for the
// Time Exceeded message that quotes it (RFC 792, RFC 8200 4.5).
// Precondition: one owner (a core); nothing here is thread-safe.

#include <array>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <limits>
#include <memory>
#include <span>
#include <string_view>
#include <vector>

namespace affine::stack {

// RFC 791 3.2: IPv4 fragments belong together when source, destination,
// protocol and identification match; RFC 8200 4.5: IPv6 fragments when
// source, destination and identification do (the caller may add the Next
// Header as the protocol). Addresses are
// 16 bytes, an IPv4 one IPv4-mapped (stack/flow.hh's v4_flow), so the two
// families never share a key.
struct fragment_key {
  std::array<std::uint8_t, 16> src{};
  std::array<std::uint8_t, 16> dst{};
  std::uint32_t id = 0;
  std::uint8_t protocol = 0;
  friend constexpr bool operator==(const fragment_key&, const fragment_key&) = default;
};

struct reassembly_config {
  std::uint32_t slots = 8;                // datagrams being reassembled at once
  std::uint32_t memory_cap = 256 * 1024;  // fragment bytes held by all slots together
  std::uint32_t max_holes = 64;           // RFC 815 hole descriptors per datagram
  // RFC 1122 3.3.2: a fixed timeout, not one taken from the TTL. 30 s as in
  // Linux (ipfrag_time), under RFC 1122's 60-120 s: at high rates the 16-bit
  // identification wraps sooner, and a long timeout risks joining fragments
  // of two datagrams (RFC 4963 2).
  std::uint64_t timeout_ns = 30'000'000'000;
  // RFC 8200 4.5: IPv6 fragments have 60 s ("within 60 seconds of the
  // reception of the first-arriving fragment"), as in Linux; a host that
  // gave up sooner would refuse a packet whose fragments came 40 s apart.
  std::uint64_t ipv6_timeout_ns = 60'000'000'000;
};

// Why a fragment was dropped. `duplicate`, `bad_length`, `too_big` and
// `no_slot` drop the fragment alone; the others drop the whole datagram.
enum class reassembly_drop : std::uint8_t {
  bad_length,      // empty, offset not a multiple of 8, or a non-last fragment not a multiple of 8 bytes
  too_big,         // offset + length > 65535
  no_slot,         // every slot busy with another datagram
  duplicate,       // wholly inside data already received
  overlap,         // partly inside data already received (RFC 5722)
  end_mismatch,    // a last fragment disagreeing with the known end, or data past the end
  too_many_holes,  // max_holes reached
  memory_cap,      // memory_cap reached
  timeout,         // not complete within timeout_ns (IPv6: ipv6_timeout_ns)
};
inline constexpr std::size_t reassembly_drop_count = std::size_t(reassembly_drop::timeout) + 1;
std::string_view to_string(reassembly_drop reason);

enum class reassembly_status : std::uint8_t { incomplete, complete, dropped };

struct reassembly_result {
  reassembly_status status = reassembly_status::incomplete;
  reassembly_drop reason{};            // when dropped
  std::uint32_t slot = 0;              // when complete: give it back with release()
  std::span<const std::byte> payload{};  // when complete: the datagram's whole payload
  // When complete: its first fragment as it came, headers and payload,
  // which ends inside `payload` (its headers lie just before it); empty
  // where the headers were longer than max_first_headers. Valid as long as
  // `payload`.
  std::span<const std::byte> first_fragment{};
};

class reassembly {
 public:
  static constexpr std::uint64_t no_deadline = std::numeric_limits<std::uint64_t>::max();
  // RFC 791 3.1: the total length field is 16 bits. The header length is not
  // known here, so this bounds the payload (the ping-of-death check).
  static constexpr std::uint32_t max_payload = 65535;
  // The most header bytes kept of a first fragment (an IPv4 header is at
  // most 60; an IPv6 one 40, with its extension headers up to the Fragment
  // header). A first fragment with more is reassembled all the same, but
  // its expiry is not answered.
  static constexpr std::uint32_t max_first_headers = 256;

  struct counters {
    std::uint64_t fragments = 0;  // fragments kept
    std::uint64_t completed = 0;  // datagrams reassembled
    std::array<std::uint64_t, reassembly_drop_count> dropped{};
    std::uint64_t of(reassembly_drop r) const { return dropped[std::size_t(r)]; }
  };

  explicit reassembly(const reassembly_config& config = {});
  reassembly(const reassembly&) = delete;
  reassembly& operator=(const reassembly&) = delete;

  // One fragment: its payload (after the IP header) at `offset_bytes`, with
  // the MF flag, and `headers`, the bytes of the packet before its payload
  // (kept from the first fragment). A complete result's payload stays
  // valid until release() of its slot or the next add(), which releases it.
  reassembly_result add(const fragment_key& key, std::uint32_t offset_bytes, bool more_fragments,
                        std::span<const std::byte> payload, std::uint64_t now_ns,
                        std::span<const std::byte> headers = {});

  // Gives back the slot of a complete result.
  void release(std::uint32_t slot);

  // Drops the datagrams whose time ran out; returns how many. For each one
  // whose first fragment came, `first_fragment` gets its key and that
  // fragment as it came (headers and payload), valid during the call.
  using expired_fn = std::function<void(const fragment_key&, std::span<const std::byte> first_fragment)>;
  std::uint32_t expire(std::uint64_t now_ns, const expired_fn& first_fragment = {});

  // When expire() next has work, or no_deadline.
  std::uint64_t next_deadline() const;

  std::uint32_t in_progress() const;  // datagrams being reassembled
  std::uint32_t held_bytes() const { return held_; }
  const counters& counts() const { return counts_; }

 private:
  static constexpr std::uint32_t unbounded = std::numeric_limits<std::uint32_t>::max();
  static constexpr std::uint32_t none = std::numeric_limits<std::uint32_t>::max();

  // RFC 815: a range [first, last) not yet received; `last` is unbounded
  // until the last fragment has come.
  struct hole {
    std::uint32_t first;
    std::uint32_t last;
  };

  enum class state : std::uint8_t { free, open, complete };

  struct slot {
    state st = state::free;
    fragment_key key;
    std::uint64_t deadline = 0;
    std::uint32_t end = unbounded;  // the payload length, known from the last fragment
    std::uint32_t max_end = 0;      // the end of the furthest data received
    std::uint32_t held = 0;         // bytes received
    std::uint32_t holes = 0;        // descriptors in use
    std::uint32_t first_len = 0;    // the first fragment's payload bytes (0: it has not come)
    std::uint32_t first_headers = 0;  // its header bytes, kept just before the payload
  };

  std::uint32_t find(const fragment_key& key) const;
  std::uint32_t open(const fragment_key& key, std::uint64_t now_ns);
  hole* holes_of(std::uint32_t s);  // max_holes places, the first slot.holes in use
  // A slot's payload, with room for max_first_headers in front of it.
  std::byte* buffer_of(std::uint32_t s) {
    return arena_.get() + std::size_t(s) * (max_first_headers + max_payload) + max_first_headers;
  }
  void free_slot(std::uint32_t s);
  std::span<const std::byte> first_fragment_of(std::uint32_t s);  // empty before it came
  reassembly_result drop(reassembly_drop reason);
  reassembly_result drop_datagram(std::uint32_t s, reassembly_drop reason);

  reassembly_config config_;
  std::vector<slot> slots_;
  std::vector<hole> holes_;  // max_holes per slot
  std::unique_ptr<std::byte[]> arena_;
  std::uint32_t held_ = 0;
  std::uint32_t complete_ = none;  // the slot whose payload the last add() returned
  counters counts_;
};

}  // namespace affine::stack
