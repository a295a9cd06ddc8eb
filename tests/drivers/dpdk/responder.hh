#pragma once
// A packet_sink that plays a host at one IPv4 address, just enough for the
// Linux kernel to reach it: it answers ARP requests and ICMP echo requests
// (rewriting the frame in place and sending it back on the receiving core's
// TX batch), counts them, and frees everything else.

#include <atomic>
#include <cstring>

#include "drivers/attach.hh"

namespace affine::drivers::dpdk::test {

class responder : public packet_sink {
 public:
  responder(mac_address mac, std::uint32_t ip) : mac_(mac), ip_(ip) {}

  // Before the pollers start (attach_options::start_polling = false).
  void set_attachment(port_attachment* a) { attachment_ = a; }

  void receive(unsigned core, unsigned /*queue*/, std::span<rte_mbuf*> pkts) override {
    for (rte_mbuf* m : pkts) {
      auto* f = rte_pktmbuf_mtod(m, std::uint8_t*);
      const std::size_t len = m->data_len;
      if (answer_arp(f, len) || answer_echo(f, len)) {
        attachment_->tx(core).send(m);
      } else {
        rte_pktmbuf_free(m);
      }
    }
  }

  std::atomic<unsigned> arp_requests{0};
  std::atomic<unsigned> echo_requests{0};

 private:
  static std::uint16_t be16(const std::uint8_t* p) { return std::uint16_t(p[0] << 8 | p[1]); }
  static std::uint32_t be32(const std::uint8_t* p) { return std::uint32_t(be16(p)) << 16 | be16(p + 2); }
  static void put_be32(std::uint8_t* p, std::uint32_t v) {
    p[0] = std::uint8_t(v >> 24), p[1] = std::uint8_t(v >> 16), p[2] = std::uint8_t(v >> 8), p[3] = std::uint8_t(v);
  }

  // RFC 1071 Internet checksum.
  static std::uint16_t checksum(const std::uint8_t* p, std::size_t n) {
    std::uint32_t sum = 0;
    for (std::size_t i = 0; i + 1 < n; i += 2) sum += be16(p + i);
    if (n % 2) sum += std::uint32_t(p[n - 1]) << 8;
    while (sum >> 16) sum = (sum & 0xffff) + (sum >> 16);
    return std::uint16_t(~sum);
  }

  void swap_ethernet(std::uint8_t* f) {
    std::memcpy(f, f + 6, 6);
    std::memcpy(f + 6, mac_.data(), 6);
  }

  // RFC 826: a request for our address becomes a reply from us.
  bool answer_arp(std::uint8_t* f, std::size_t len) {
    if (len < 42 || be16(f + 12) != 0x0806 || be16(f + 20) != 1 || be32(f + 38) != ip_) return false;
    ++arp_requests;
    swap_ethernet(f);
    f[21] = 2;
    std::memcpy(f + 32, f + 22, 10);  // target := the asker (hardware and protocol address)
    std::memcpy(f + 22, mac_.data(), 6);
    put_be32(f + 28, ip_);
    return true;
  }

  // RFC 792: an echo request to us becomes an echo reply with the same data.
  bool answer_echo(std::uint8_t* f, std::size_t len) {
    if (len < 34 || be16(f + 12) != 0x0800 || f[23] != 1 || be32(f + 30) != ip_) return false;
    const std::size_t ihl = std::size_t(f[14] & 0x0f) * 4;
    const std::size_t total = be16(f + 16);
    if (ihl < 20 || total < ihl + 8 || 14 + total > len || f[14 + ihl] != 8) return false;
    ++echo_requests;
    swap_ethernet(f);
    std::uint8_t* ip = f + 14;
    std::uint8_t src[4];
    std::memcpy(src, ip + 12, 4);
    std::memcpy(ip + 12, ip + 16, 4);
    std::memcpy(ip + 16, src, 4);
    std::uint8_t* icmp = ip + ihl;
    icmp[0] = 0;
    icmp[2] = icmp[3] = 0;
    const std::uint16_t c = checksum(icmp, total - ihl);
    icmp[2] = std::uint8_t(c >> 8), icmp[3] = std::uint8_t(c);
    return true;
  }

  mac_address mac_;
  std::uint32_t ip_;
  port_attachment* attachment_ = nullptr;
};

}  // namespace affine::drivers::dpdk::test
