#include "stack/rps.hh"

#include <rte_ring.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <new>

#include <fmt/format.h>

#include "affine/poller.hh"
#include "reactor/here.hh"
#include "stack/flow.hh"

namespace affine::stack {

namespace {

constexpr unsigned burst = 32;

std::uint16_t be16(const std::byte* p) { return std::uint16_t(std::uint16_t(p[0]) << 8 | std::uint16_t(p[1])); }
std::uint32_t be32(const std::byte* p) { return std::uint32_t(be16(p)) << 16 | be16(p + 2); }

}  // namespace

std::uint32_t flow_hash(std::uint32_t local_ip, std::uint16_t local_port, std::uint32_t remote_ip,
                        std::uint16_t remote_port) noexcept {
  // A 64-bit mix (the murmur3 finalizer): every input bit moves the high
  // bits that rps_target scales by.
  std::uint64_t x = std::uint64_t(local_ip) << 32 | remote_ip;
  x ^= (std::uint64_t(local_port) << 16 | remote_port) * 0x9E3779B97F4A7C15ULL;
  x ^= x >> 33;
  x *= 0xFF51AFD7ED558CCDULL;
  x ^= x >> 33;
  x *= 0xC4CEB9FE1A85EC53ULL;
  x ^= x >> 33;
  return std::uint32_t(x);
}

namespace {

// An IPv6 packet's flow, as note_reader hashes the flow (flow.hh's fold32
// of each address): TCP or UDP right after the fixed header. Packets with
// extension headers are left on the core that polled them.
std::optional<std::uint32_t> ipv6_flow_hash(std::span<const std::byte> ip) noexcept {
  if (ip.size() < 44 || (std::uint8_t(ip[0]) >> 4) != 6) return std::nullopt;
  const std::uint8_t next = std::uint8_t(ip[6]);
  if (next != 6 && next != 17) return std::nullopt;
  flow_address src, dst;
  std::memcpy(src.data(), ip.data() + 8, 16);
  std::memcpy(dst.data(), ip.data() + 24, 16);
  const std::byte* l4 = ip.data() + 40;
  return flow_hash(fold32(dst), be16(l4 + 2), fold32(src), be16(l4));
}

}  // namespace

std::optional<std::uint32_t> frame_flow_hash(std::span<const std::byte> f) noexcept {
  std::size_t at = 12;
  if (f.size() < at + 2) return std::nullopt;
  std::uint16_t type = be16(&f[at]);
  if (type == 0x8100) {  // 802.1Q
    at += 4;
    if (f.size() < at + 2) return std::nullopt;
    type = be16(&f[at]);
  }
  at += 2;
  if (type == 0x86DD) return ipv6_flow_hash(f.subspan(at));
  if (type != 0x0800 || f.size() < at + 20) return std::nullopt;
  const std::byte* ip = &f[at];
  const std::size_t ihl = std::size_t(std::uint8_t(ip[0]) & 0x0F) * 4;
  const bool more_fragments = (std::uint8_t(ip[6]) & 0x20) != 0;
  const bool later_fragment = (be16(ip + 6) & 0x1FFF) != 0;
  const std::uint8_t proto = std::uint8_t(ip[9]);
  if ((std::uint8_t(ip[0]) >> 4) != 4 || ihl < 20 || more_fragments || later_fragment) return std::nullopt;
  if (proto != 6 && proto != 17) return std::nullopt;
  if (f.size() < at + ihl + 4) return std::nullopt;
  const std::byte* l4 = ip + ihl;
  return flow_hash(be32(ip + 16), be16(l4 + 2), be32(ip + 12), be16(l4));
}

// One core's backlog: a bounded multi-producer ring its reactor drains in
// the poll rung, and an eventfd that wakes the reactor when it sleeps.
class rps::backlog final : public poller {
 public:
  backlog(unsigned core, const process_fn& process, core_counters& counters)
      : core_(core), process_(process), counters_(counters) {
    const ssize_t bytes = rte_ring_get_memsize(backlog_capacity);
    ring_ = static_cast<rte_ring*>(std::aligned_alloc(RTE_CACHE_LINE_SIZE, std::size_t(bytes)));
    if (ring_ == nullptr) throw std::bad_alloc();
    const std::string name = fmt::format("rps{}", core);
    rte_ring_init(ring_, name.c_str(), backlog_capacity, RING_F_SC_DEQ);
    efd_ = ::eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
  }
  ~backlog() override {
    std::array<rte_mbuf*, burst> pkts;
    while (unsigned n = rte_ring_sc_dequeue_burst(ring_, reinterpret_cast<void**>(pkts.data()), burst, nullptr))
      rte_pktmbuf_free_bulk(pkts.data(), n);
    std::free(ring_);
    if (efd_ >= 0) ::close(efd_);
  }

  // Any core. Returns how many the ring took.
  unsigned push(std::span<rte_mbuf*> pkts) {
    const unsigned n = rte_ring_mp_enqueue_burst(ring_, reinterpret_cast<void* const*>(pkts.data()),
                                                 unsigned(pkts.size()), nullptr);
    // Dekker with try_enter_interrupt_mode: we published the packets, then
    // read `armed_`; it stores `armed_`, then looks at the ring.
    std::atomic_thread_fence(std::memory_order_seq_cst);
    if (n != 0 && armed_.load(std::memory_order_relaxed) && armed_.exchange(false)) {
      const std::uint64_t one = 1;
      [[maybe_unused]] ssize_t w = ::write(efd_, &one, sizeof one);
    }
    return n;
  }

  unsigned poll() override {
    std::array<rte_mbuf*, burst> pkts;
    const unsigned n = rte_ring_sc_dequeue_burst(ring_, reinterpret_cast<void**>(pkts.data()), burst, nullptr);
    if (n == 0) return 0;
    bump(counters_.rps_backlog_packets, n);
    process_(core_, std::span(pkts.data(), n));
    return n;
  }

  bool is_backlog() const override { return true; }

  bool try_enter_interrupt_mode() override {
    if (efd_ < 0) return false;
    armed_.store(true, std::memory_order_relaxed);
    std::atomic_thread_fence(std::memory_order_seq_cst);
    if (rte_ring_empty(ring_) != 0) return true;
    armed_.store(false, std::memory_order_relaxed);
    return false;
  }
  void exit_interrupt_mode() override {
    armed_.store(false, std::memory_order_relaxed);
    std::uint64_t v;
    [[maybe_unused]] ssize_t r = ::read(efd_, &v, sizeof v);
  }
  int interrupt_fd() const override { return efd_; }

 private:
  unsigned core_;
  const process_fn& process_;
  core_counters& counters_;
  rte_ring* ring_ = nullptr;
  int efd_ = -1;
  std::atomic<bool> armed_{false};
};

rps::rps(runtime& rt, std::vector<policy::rps_mode> modes, process_fn process, std::vector<core_counters*> counters)
    : rt_(rt),
      modes_(std::move(modes)),
      process_(std::move(process)),
      readers_(new std::atomic<std::int32_t>[reader_slots]),
      counters_(std::move(counters)) {
  for (std::size_t i = 0; i < reader_slots; ++i) readers_[i].store(-1, std::memory_order_relaxed);
  reactor_of_.assign(rt.topo().core_count(), -1);
  for (unsigned r = 0; r < rt.cores(); ++r) {
    topo_of_.push_back(rt.topology_core(r));
    reactor_of_[rt.topology_core(r).value] = int(r);
  }
  scratch_.resize(rt.cores());
  for (auto& per_target : scratch_) {
    per_target.resize(rt.cores());
    for (auto& v : per_target) v.reserve(burst);
  }
  for (unsigned r = 0; r < rt.cores(); ++r) backlogs_.push_back(std::make_unique<backlog>(r, process_, *counters_[r]));
  for (unsigned r = 0; r < rt.cores(); ++r) rt.add_poller(r, backlogs_[r].get());
}

rps::~rps() {
  for (unsigned r = 0; r < backlogs_.size(); ++r) rt_.remove_poller(r, backlogs_[r].get());
}

unsigned rps::drain(unsigned core) { return backlogs_[core]->poll(); }

void rps::note_reader(std::uint32_t hash, unsigned core) noexcept {
  std::atomic<std::int32_t>& slot = readers_[hash & (reader_slots - 1)];
  if (slot.load(std::memory_order_relaxed) != std::int32_t(core)) slot.store(std::int32_t(core), std::memory_order_relaxed);
}

std::size_t rps::steer(unsigned core, unsigned queue, std::span<rte_mbuf*> pkts) {
  const policy::sched_view view = detail::here::sched_view();
  const policy::policy_config& cfg = detail::here::policy();
  const core_id rx = topo_of_[core];
  const policy::rps_mode mode = modes_[queue];
  core_counters& counts = *counters_[core];
  std::vector<std::vector<rte_mbuf*>>& out = scratch_[core];
  std::size_t keep = 0;
  for (rte_mbuf* m : pkts) {
    const auto hash = frame_flow_hash({rte_pktmbuf_mtod(m, const std::byte*), m->data_len});
    if (!hash) {
      pkts[keep++] = m;
      continue;
    }
    const std::int32_t reader = readers_[*hash & (reader_slots - 1)].load(std::memory_order_relaxed);
    const std::optional<core_id> consumer =
        reader >= 0 ? std::optional(topo_of_[unsigned(reader)]) : std::nullopt;
    const policy::rps_choice choice = policy::rps_target(view, rx, consumer, *hash, mode, cfg);
    bump(counts.rps_steered[std::size_t(choice.reason)]);
    bump(counts.rps_distance[std::size_t(policy::handoff_distance(view, rx, choice))]);
    const int target = reactor_of_[choice.core.value];
    if (target < 0 || unsigned(target) == core) {
      pkts[keep++] = m;
    } else {
      out[unsigned(target)].push_back(m);
    }
  }
  for (unsigned t = 0; t < out.size(); ++t) {
    if (out[t].empty()) continue;
    hand_over(core, t, out[t]);
    out[t].clear();
  }
  return keep;
}

void rps::hand_over(unsigned from, unsigned to, std::span<rte_mbuf*> pkts) {
  const unsigned took = backlogs_[to]->push(pkts);
  for (rte_mbuf* m : pkts.subspan(took)) {
    rte_pktmbuf_free(m);
    bump(counters_[from]->rps_backlog_full);
  }
}

}  // namespace affine::stack
