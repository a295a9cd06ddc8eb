#include "drivers/wire/wire.hh"

#include <time.h>

#include <algorithm>
#include <cassert>
#include <string_view>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "drivers/dpdk/eal.hh"
#include "drivers/wire/direction.hh"

namespace affine::drivers::wire {

namespace {

constexpr unsigned slot(side s) { return unsigned(s); }
constexpr side other(side s) { return s == side::a ? side::b : side::a; }

// The longest frame an end sends: its MTU, the Ethernet header and one VLAN
// tag (no FCS: mbufs never carry it).
constexpr std::uint32_t max_frame(std::uint32_t mtu) { return mtu + 14 + 4; }

void add_stats(std::vector<std::pair<std::string, std::uint64_t>>& out, std::string_view prefix,
               const direction_stats& s) {
  out.emplace_back(fmt::format("{}_sent", prefix), s.sent);
  out.emplace_back(fmt::format("{}_sent_bytes", prefix), s.sent_bytes);
  out.emplace_back(fmt::format("{}_delivered", prefix), s.delivered);
  out.emplace_back(fmt::format("{}_delivered_bytes", prefix), s.delivered_bytes);
  out.emplace_back(fmt::format("{}_duplicated", prefix), s.duplicated);
  out.emplace_back(fmt::format("{}_corrupted", prefix), s.corrupted);
  out.emplace_back(fmt::format("{}_reordered", prefix), s.reordered);
  out.emplace_back(fmt::format("{}_ce_marked", prefix), s.ce_marked);
  for (std::size_t r = 0; r < s.dropped.size(); ++r)
    out.emplace_back(fmt::format("{}_dropped_{}", prefix, drop_reason_name(drop_reason(r))), s.dropped[r]);
}

}  // namespace

// One end of the link, as the stack sees it. Port stats: tx_* count what
// tx_burst took (tx_errors: frames over the MTU), rx_* what rx_burst handed
// out (rx_nombuf: arrivals this end's pool had no mbuf for). What the medium
// lost is in xstats, per direction and reason.
class end_port final : public port {
 public:
  end_port(wire::link& l, side s, const end_config& cfg) : port(1), link_(l), side_(s), cfg_(cfg) {
    caps_.multi_seg_tx = true;
    caps_.max_rx_queues = 1;
    caps_.max_tx_queues = cfg.tx_queues;
    caps_.mtu = cfg.mtu;
  }

  std::string_view name() const override { return cfg_.name; }
  const port_caps& caps() const override { return caps_; }
  mac_address mac() const override { return cfg_.mac; }
  unsigned rx_queue_count() const override { return 1; }
  unsigned tx_queue_count() const override { return cfg_.tx_queues; }
  unsigned numa_node() const override { return cfg_.numa_node; }
  rte_mempool* pool(unsigned /*node*/) override { return cfg_.pool; }

  std::uint16_t rx_burst(unsigned q, rte_mbuf** pkts, std::uint16_t n) override {
    assert(q == 0);
    (void)q;
    return inbound().receive(pkts, n, link_.now_ns());
  }

  std::uint16_t tx_burst(unsigned q, rte_mbuf** pkts, std::uint16_t n) override {
    assert(q < cfg_.tx_queues);
    (void)q;
    outbound().send(pkts, n, link_.now_ns());
    return n;
  }

  port_stats stats() const override {
    const direction_stats out = outbound().stats();
    const direction_stats in = inbound().stats();
    port_stats s;
    s.tx_packets = out.sent;
    s.tx_bytes = out.sent_bytes;
    s.tx_errors = out.drops(drop_reason::oversize);
    s.rx_packets = in.delivered;
    s.rx_bytes = in.delivered_bytes;
    s.rx_nombuf = in.drops(drop_reason::no_mbuf);
    return s;
  }

  std::vector<std::pair<std::string, std::uint64_t>> xstats() const override {
    std::vector<std::pair<std::string, std::uint64_t>> out;
    add_stats(out, "wire_out", outbound().stats());
    add_stats(out, "wire_in", inbound().stats());
    return out;
  }

  // speed_mbps: the outbound rate limit, 0 when unlimited.
  link_status link() const override {
    const std::uint64_t rate = outbound().config().rate_bytes_per_s;
    return {.up = true, .speed_mbps = std::uint32_t(rate * 8 / 1'000'000), .full_duplex = true};
  }

 private:
  direction& outbound() const { return *link_.directions_[slot(side_)]; }
  direction& inbound() const { return *link_.directions_[slot(other(side_))]; }

  wire::link& link_;
  side side_;
  end_config cfg_;
  port_caps caps_;
};

std::expected<void, std::string> validate(const impairments& imp) {
  auto probability = [](std::string_view field, double p) -> std::expected<void, std::string> {
    if (p >= 0.0 && p <= 1.0) return {};
    return std::unexpected(fmt::format("wire impairment '{}' = {}: must be a probability in [0, 1]", field, p));
  };
  for (auto [field, p] : {std::pair{"loss", imp.loss}, {"duplicate", imp.duplicate}, {"corrupt", imp.corrupt},
                          {"reorder", imp.reorder}}) {
    if (auto ok = probability(field, p); !ok) return ok;
  }
  if (imp.burst) {
    const gilbert_elliott& ge = *imp.burst;
    for (auto [field, p] : {std::pair{"burst.good_to_bad", ge.good_to_bad}, {"burst.bad_to_good", ge.bad_to_good},
                            {"burst.loss_in_good", ge.loss_in_good}, {"burst.loss_in_bad", ge.loss_in_bad}}) {
      if (auto ok = probability(field, p); !ok) return ok;
    }
  }
  if (imp.queue_frames == 0) return std::unexpected(std::string("wire impairment 'queue_frames' = 0: must be at least 1"));
  if (imp.ecn_mark_bytes > 0 && imp.rate_bytes_per_s == 0)
    return std::unexpected(fmt::format("wire impairment 'ecn_mark_bytes' = {}: marks by the rate limiter's backlog, and "
                                       "'rate_bytes_per_s' is 0 (no rate limit: no backlog)", imp.ecn_mark_bytes));
  return {};
}

std::expected<std::unique_ptr<link>, std::string> link::create(const link_config& cfg) {
  link_config resolved = cfg;
  for (auto [imp, dir] : {std::pair{&resolved.a_to_b, "a_to_b"}, {&resolved.b_to_a, "b_to_a"}}) {
    if (auto ok = validate(*imp); !ok) return std::unexpected(fmt::format("{} {}: {}", cfg.name, dir, ok.error()));
  }
  std::uint8_t last_mac_byte = 1;
  for (auto [end, tag] : {std::pair{&resolved.a, "a"}, {&resolved.b, "b"}}) {
    if (end->tx_queues == 0) return std::unexpected(fmt::format("{} end {}: tx_queues must be at least 1", cfg.name, tag));
    if (end->name.empty()) end->name = fmt::format("{}.{}", cfg.name, tag);
    if (end->mac == mac_address{}) end->mac = {0x02, 0, 0, 0, 0, last_mac_byte};
    ++last_mac_byte;
    if (end->pool == nullptr) {
      // The end's own frames and the far end's, each whole in one mbuf.
      const std::uint32_t frame = dpdk::frame_bytes(std::max(resolved.a.mtu, resolved.b.mtu));
      auto pool = dpdk::packet_pool(end->numa_node, dpdk::default_pool_mbufs, frame);
      if (!pool) return std::unexpected(fmt::format("{} end {}: {}", cfg.name, tag, pool.error()));
      end->pool = *pool;
    }
  }
  return std::unique_ptr<link>(new link(resolved));
}

link::link(const link_config& cfg) : cfg_(cfg) {
  directions_[slot(side::a)] =
      std::make_unique<direction>(cfg.a_to_b, cfg.seed, slot(side::a), cfg.b.pool, max_frame(cfg.a.mtu));
  directions_[slot(side::b)] =
      std::make_unique<direction>(cfg.b_to_a, cfg.seed, slot(side::b), cfg.a.pool, max_frame(cfg.b.mtu));
  ends_[slot(side::a)] = std::make_unique<end_port>(*this, side::a, cfg.a);
  ends_[slot(side::b)] = std::make_unique<end_port>(*this, side::b, cfg.b);
}

link::~link() = default;

port& link::a() { return end(side::a); }
port& link::b() { return end(side::b); }
port& link::end(side s) { return *ends_[slot(s)]; }

std::uint64_t link::now_ns() const {
  if (cfg_.clock == clock_kind::manual) return manual_now_.load(std::memory_order_acquire);
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return std::uint64_t(ts.tv_sec) * 1'000'000'000 + std::uint64_t(ts.tv_nsec);
}

void link::advance_to(std::uint64_t now_ns) {
  assert(cfg_.clock == clock_kind::manual);
  std::uint64_t seen = manual_now_.load(std::memory_order_relaxed);
  while (seen < now_ns && !manual_now_.compare_exchange_weak(seen, now_ns, std::memory_order_acq_rel)) {
  }
}

void link::advance_by(std::uint64_t ns) { advance_to(now_ns() + ns); }

std::optional<std::uint64_t> link::next_arrival_ns() const {
  auto x = directions_[0]->next_arrival();
  auto y = directions_[1]->next_arrival();
  if (x && y) return std::min(*x, *y);
  return x ? x : y;
}

direction_stats link::stats(side from) const { return directions_[slot(from)]->stats(); }
std::size_t link::in_flight(side from) const { return directions_[slot(from)]->in_flight(); }

std::expected<void, std::string> link::set_impairments(side from, const impairments& imp) {
  if (auto ok = validate(imp); !ok) return ok;
  directions_[slot(from)]->set_impairments(imp);
  return {};
}

}  // namespace affine::drivers::wire
