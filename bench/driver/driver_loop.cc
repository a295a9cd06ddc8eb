// affine-driver: each side is a one-core runtime with the port attached
// (rx_poller + tx_batch); the echo and the next ping are sent from the
// packet sink, in the RX path, and leave at the loop turn's TX flush.

#include <csignal>
#include <cstdio>
#include <semaphore>
#include <thread>

#include "affine/runtime.hh"
#include "bench/driver/pingpong.hh"
#include "drivers/attach.hh"
#include "drivers/dpdk/eal.hh"

namespace affine::bench::driver {

namespace {

using drivers::packet_sink;
using drivers::port_attachment;

class echo_sink : public packet_sink {
 public:
  void receive(unsigned core, unsigned /*queue*/, std::span<rte_mbuf*> pkts) override {
    for (rte_mbuf* m : pkts) {
      if (is_stop(m)) {
        stop_requested.store(true);
        rte_pktmbuf_free(m);
      } else {
        att->tx(core).send(m);
      }
    }
  }
  port_attachment* att = nullptr;
};

class ping_sink : public packet_sink {
 public:
  ping_sink(std::uint64_t warmup, std::uint64_t measured) : warmup_(warmup), total_(warmup + measured) {
    rtt.reserve(measured);
  }
  void receive(unsigned core, unsigned /*queue*/, std::span<rte_mbuf*> pkts) override {
    const std::uint64_t now = rte_rdtsc();
    for (rte_mbuf* m : pkts) {
      if (count_.load(std::memory_order_relaxed) >= warmup_) rtt.push_back(now - stamp_of(m));
      const std::uint64_t n = count_.load(std::memory_order_relaxed) + 1;
      count_.store(n, std::memory_order_relaxed);
      if (n == warmup_) start = rte_rdtsc();
      if (n == total_) {
        end = rte_rdtsc();
        rte_pktmbuf_free(m);
        done.release();
        continue;
      }
      stamp(m);
      att->tx(core).send(m);
    }
  }
  // Read by the main thread to notice a stalled run.
  std::uint64_t count() const { return count_.load(std::memory_order_relaxed); }

  port_attachment* att = nullptr;
  std::vector<std::uint64_t> rtt;
  std::uint64_t start = 0, end = 0;
  std::binary_semaphore done{0};

 private:
  std::uint64_t warmup_, total_;
  std::atomic<std::uint64_t> count_{0};
};

// A one-core runtime on `cfg.core` that spins rather than sleeps (memif has
// no RX interrupts, and the raw loop spins too).
std::unique_ptr<runtime> one_core_runtime(const topology& topo, const run_config& cfg) {
  runtime_options o;
  o.cores = {core_id{cfg.core}};
  o.idle = idle_mode::spin;
  o.balance_interval_us = 0;
  o.on_reactor_start = drivers::dpdk::register_reactor;
  auto rt = runtime::start(topo, std::move(o));
  if (!rt) {
    std::fprintf(stderr, "runtime: %s\n", rt.error().c_str());
    return nullptr;
  }
  return std::move(*rt);
}

std::unique_ptr<port_attachment> attach_one_queue(runtime& rt, drivers::dpdk::dpdk_port& port,
                                                  const run_config& cfg, packet_sink& sink) {
  const std::vector<rxq_assignment> plan{{0, core_id{cfg.core}}};
  auto a = drivers::attach(rt, port, plan, sink);
  if (!a) {
    std::fprintf(stderr, "attach: %s\n", a.error().c_str());
    return nullptr;
  }
  return std::move(*a);
}

}  // namespace

bool driver_server(drivers::dpdk::dpdk_port& port, const run_config& cfg) {
  auto topo = topology::from_system();
  if (!topo) return false;
  auto rt = one_core_runtime(*topo, cfg);
  if (!rt) return false;
  echo_sink sink;
  auto att = attach_one_queue(*rt, port, cfg, sink);
  if (!att) return false;
  sink.att = att.get();
  while (!stop_requested.load(std::memory_order_relaxed)) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  att.reset();
  return true;
}

bool driver_client(drivers::dpdk::dpdk_port& port, const run_config& cfg, client_result& out) {
  auto topo = topology::from_system();
  if (!topo) return false;
  auto rt = one_core_runtime(*topo, cfg);
  if (!rt) return false;
  ping_sink sink(cfg.warmup, cfg.round_trips);
  auto att = attach_one_queue(*rt, port, cfg, sink);
  if (!att) return false;
  sink.att = att.get();
  rte_mbuf* m = first_frame(port.pool(port.numa_node()), cfg.frame_bytes);
  if (m == nullptr) return false;
  rt->run([&] {
    stamp(m);
    att->tx(0).send(m);
  });
  // Progress is checked every second: a lost frame would stall the run.
  std::uint64_t seen = 0;
  while (!sink.done.try_acquire_for(std::chrono::seconds(1))) {
    const std::uint64_t now = sink.count();
    if (now == seen) {
      std::fprintf(stderr, "driver client: no answer for a second after %lu round trips\n", (unsigned long)now);
      return false;
    }
    seen = now;
  }
  att.reset();
  out.rtt_cycles = std::move(sink.rtt);
  out.elapsed_cycles = sink.end - sink.start;
  return true;
}

}  // namespace affine::bench::driver
