#pragma once
// The in-process wire: a link with two ends, each a drivers::port, so a
// stack instance or a test harness sends and receives frames through the
// same boundary as on a real NIC. Each direction impairs what it carries
// (impairment.hh) deterministically from the link's seed. This kernel has no
// netem; every lossy test is made with this.
//
// Time is passed in (STYLE.md): with clock_kind::manual the caller moves the
// link's clock (advance_to/advance_by) and a frame is handed out by the far
// end's rx_burst once the clock reaches its arrival time; next_arrival_ns()
// says when that is, so a harness can jump straight there. clock_kind::
// monotonic reads CLOCK_MONOTONIC instead, for stacks run in real time.
//
// Frames delivered to an end are mbufs from that end's pool; the sender's
// mbufs are freed as soon as tx_burst takes them.

#include <atomic>
#include <cstdint>
#include <expected>
#include <memory>
#include <optional>
#include <string>

#include "drivers/port.hh"
#include "drivers/wire/impairment.hh"

struct rte_mempool;

namespace affine::drivers::wire {

enum class side : unsigned { a = 0, b = 1 };
enum class clock_kind { manual, monotonic };

struct end_config {
  std::string name;            // empty: "<link name>.a" / ".b"
  mac_address mac{};           // all zero: 02:00:00:00:00:01 for a, ...:02 for b
  rte_mempool* pool = nullptr; // frames delivered to this end; nullptr: dpdk::packet_pool(numa_node)
  unsigned numa_node = 0;
  unsigned tx_queues = 1;      // one per reactor core that sends
  std::uint32_t mtu = 1500;
};

struct link_config {
  std::string name = "wire";
  std::uint64_t seed = 1;
  clock_kind clock = clock_kind::manual;
  end_config a, b;
  impairments a_to_b, b_to_a;
};

class end_port;
class direction;

class link {
 public:
  // Errors: an impairment out of range (named), no TX queue, or no pool.
  static std::expected<std::unique_ptr<link>, std::string> create(const link_config& cfg);
  ~link();
  link(const link&) = delete;
  link& operator=(const link&) = delete;

  port& a();
  port& b();
  port& end(side s);

  // The link's time. Precondition for advance_*: clock_kind::manual; the
  // clock never goes back (an earlier time is ignored).
  std::uint64_t now_ns() const;
  void advance_to(std::uint64_t now_ns);
  void advance_by(std::uint64_t ns);
  // The earliest time a frame arrives at either end, if any is in flight.
  std::optional<std::uint64_t> next_arrival_ns() const;

  // The direction that starts at end `from`.
  direction_stats stats(side from) const;
  std::size_t in_flight(side from) const;
  // Change a direction's impairments (e.g. heal a lossy link mid-test);
  // frames already in flight keep their fate.
  std::expected<void, std::string> set_impairments(side from, const impairments& imp);

 private:
  friend class end_port;
  explicit link(const link_config& cfg);

  link_config cfg_;
  std::atomic<std::uint64_t> manual_now_{0};
  std::unique_ptr<direction> directions_[2];  // indexed by the sending side
  std::unique_ptr<end_port> ends_[2];
};

// Checks every field of `imp`; the message names the field and its range.
std::expected<void, std::string> validate(const impairments& imp);

}  // namespace affine::drivers::wire
