#include "drivers/pcap/pcap_port.hh"

#include <rte_mbuf.h>
#include <time.h>

#include <algorithm>
#include <cassert>
#include <cstring>
#include <utility>

namespace affine::drivers {

std::uint64_t pcap_port::realtime_ns() {
  timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  return std::uint64_t(ts.tv_sec) * 1'000'000'000 + std::uint64_t(ts.tv_nsec);
}

pcap_port::pcap_port(port& inner, std::unique_ptr<pcap_writer> writer, clock now)
    : port(inner.rx_queue_count()),
      inner_(inner),
      writer_(std::move(writer)),
      now_(std::move(now)),
      snapshots_(inner.tx_queue_count()) {}

std::uint16_t pcap_port::rx_burst(unsigned q, rte_mbuf** pkts, std::uint16_t n) {
  const std::uint16_t got = inner_.rx_burst(q, pkts, n);
  if (got > 0) {
    const std::uint64_t ts = now_();
    for (std::uint16_t i = 0; i < got; ++i) writer_->write(ts, pkts[i]);
  }
  return got;
}

std::uint16_t pcap_port::tx_burst(unsigned q, rte_mbuf** pkts, std::uint16_t n) {
  assert(q < snapshots_.size());
  tx_snapshot& snap = snapshots_[q];
  const std::uint32_t snaplen = writer_->snaplen();
  snap.bytes.clear();
  snap.captured.clear();
  snap.orig_len.clear();
  for (std::uint16_t i = 0; i < n; ++i) {
    const rte_mbuf* m = pkts[i];
    const std::uint32_t len = std::min(m->pkt_len, snaplen);
    const std::size_t at = snap.bytes.size();
    snap.bytes.resize(at + len);
    // rte_pktmbuf_read copies into the buffer only when the bytes span
    // segments; otherwise it points into the mbuf.
    const void* data = rte_pktmbuf_read(m, 0, len, snap.bytes.data() + at);
    if (len > 0 && data != nullptr && data != snap.bytes.data() + at) std::memcpy(snap.bytes.data() + at, data, len);
    snap.captured.push_back(len);
    snap.orig_len.push_back(m->pkt_len);
  }
  const std::uint64_t ts = now_();
  const std::uint16_t taken = inner_.tx_burst(q, pkts, n);
  std::size_t at = 0;
  for (std::uint16_t i = 0; i < taken; ++i) {
    writer_->write(ts, std::span(snap.bytes).subspan(at, snap.captured[i]), snap.orig_len[i]);
    at += snap.captured[i];
  }
  return taken;
}

std::vector<std::pair<std::string, std::uint64_t>> pcap_port::xstats() const {
  auto out = inner_.xstats();
  out.emplace_back("pcap_frames", writer_->frames());
  out.emplace_back("pcap_errors", writer_->errors());
  return out;
}

}  // namespace affine::drivers
