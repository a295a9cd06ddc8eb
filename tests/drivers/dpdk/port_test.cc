// dpdk_port over in-process virtual devices: net_ring (a loopback: what TX
// queue q sends, RX queue q receives) and net_null (RSS with a settable key
// and a RETA). Bad configurations give one clear line and leave nothing.

#include <rte_mbuf.h>

#include <fmt/format.h>

#include "drivers/dpdk/port.hh"
#include "tests/drivers/dpdk/dpdk_fixture.hh"

namespace affine::drivers::dpdk::test {
namespace {

class port_test : public dpdk_test {
 protected:
  std::unique_ptr<dpdk_port> open_ok(port_config cfg) {
    auto p = dpdk_port::open(cfg);
    EXPECT_TRUE(p.has_value()) << p.error();
    return p ? std::move(*p) : nullptr;
  }
  std::string open_error(port_config cfg) {
    auto p = dpdk_port::open(cfg);
    EXPECT_FALSE(p.has_value());
    return p ? std::string() : p.error();
  }
};

TEST_F(port_test, ring_round_trip_on_every_queue) {
  auto port = open_ok({.device = "net_ring0", .rx_queues = 2, .tx_queues = 2, .rx_descriptors = 64,
                       .tx_descriptors = 64});
  ASSERT_TRUE(port);
  EXPECT_EQ(port->name(), "net_ring0");
  for (unsigned q = 0; q < 2; ++q) {
    auto sent = ipv4_frame(0x0a000001, 0x0a000002, 17, 4000 + std::uint16_t(q), 53);
    rte_mbuf* m = frame(sent);
    ASSERT_NE(m, nullptr);
    ASSERT_EQ(port->tx_burst(q, &m, 1), 1);
    rte_mbuf* got[4];
    ASSERT_TRUE(port->owner(q).try_lock());
    const std::uint16_t n = port->rx_burst(q, got, 4);
    port->owner(q).unlock();
    ASSERT_EQ(n, 1) << "queue " << q;
    EXPECT_EQ(bytes_of(got[0]), sent);
    rte_pktmbuf_free(got[0]);
  }
  const port_stats s = port->stats();
  EXPECT_EQ(s.tx_packets, 2u);
  EXPECT_EQ(s.rx_packets, 2u);
  EXPECT_TRUE(port->link().up);
}

TEST_F(port_test, ring_caps_say_what_the_pmd_lacks) {
  auto port = open_ok({.device = "net_ring0", .rx_descriptors = 64, .tx_descriptors = 64});
  ASSERT_TRUE(port);
  const port_caps& c = port->caps();
  EXPECT_FALSE(c.rss);
  EXPECT_TRUE(c.rss_key.empty()) << "no key may be assumed where none was read back";
  EXPECT_FALSE(c.rx_interrupts);
  EXPECT_FALSE(c.flow_rules);
  EXPECT_FALSE(c.tx_l4_checksum);
  EXPECT_EQ(c.max_rx_queues, 16u);
  EXPECT_EQ(c.mtu, 1500u);
  EXPECT_EQ(port->rx_interrupt_fd(0), -1);
  EXPECT_FALSE(port->rx_interrupt_enable(0));
  EXPECT_EQ(port->reta_size(), 0u);
}

TEST_F(port_test, xstats_are_readable) {
  auto port = open_ok({.device = "net_ring0", .rx_descriptors = 64, .tx_descriptors = 64});
  ASSERT_TRUE(port);
  rte_mbuf* m = frame(ipv4_frame(1, 2, 17, 3, 4));
  ASSERT_EQ(port->tx_burst(0, &m, 1), 1);
  rte_mbuf* got;
  ASSERT_EQ(port->rx_burst(0, &got, 1), 1);
  rte_pktmbuf_free(got);
  const auto xs = port->xstats();
  const auto it = std::find_if(xs.begin(), xs.end(), [](const auto& x) { return x.first == "rx_good_packets"; });
  ASSERT_NE(it, xs.end());
  EXPECT_EQ(it->second, 1u);
}

TEST_F(port_test, malformed_three_byte_frame_passes_through) {
  auto port = open_ok({.device = "net_ring0", .rx_descriptors = 64, .tx_descriptors = 64});
  ASSERT_TRUE(port);
  const std::vector<std::uint8_t> runt{0xff, 0x00, 0x08};
  rte_mbuf* m = frame(runt);
  ASSERT_EQ(port->tx_burst(0, &m, 1), 1);
  rte_mbuf* got;
  ASSERT_EQ(port->rx_burst(0, &got, 1), 1);
  EXPECT_EQ(bytes_of(got), runt);
  EXPECT_FALSE(flow_hash(got, symmetric_rss_key()).has_value());
  rte_pktmbuf_free(got);
}

TEST_F(port_test, more_rx_queues_than_the_pmd_has) {
  EXPECT_EQ(open_error({.device = "net_ring0", .rx_queues = 17}),
            "port net_ring0: 17 RX queues requested, the PMD has at most 16");
  // The failed open unplugged the device: the name is free again.
  EXPECT_TRUE(open_ok({.device = "net_ring0", .rx_descriptors = 64, .tx_descriptors = 64}));
}

TEST_F(port_test, more_tx_queues_than_the_pmd_has) {
  EXPECT_EQ(open_error({.device = "net_ring0", .tx_queues = 32}),
            "port net_ring0: 32 TX queues (one per reactor core) requested, the PMD has at most 16");
}

TEST_F(port_test, zero_queues) {
  EXPECT_EQ(open_error({.device = "net_ring0", .rx_queues = 0}),
            "port net_ring0: a port needs at least one RX and one TX queue");
}

TEST_F(port_test, a_pmd_that_is_not_installed) {
  EXPECT_EQ(open_error({.device = "net_bogus0"}),
            fmt::format("port net_bogus0: no DPDK driver for 'net_bogus0': not a PCI address, and no PMD of "
                        "that name is installed (PMDs load from {})",
                        RTE_EAL_PMD_PATH));
}

TEST_F(port_test, a_vdev_string_the_pmd_refuses) {
  EXPECT_EQ(open_error({.device = "net_ring0,nodeaction=x"}),
            "port net_ring0: the PMD refused 'net_ring0,nodeaction=x': could not parse node value from x");
}

TEST_F(port_test, an_empty_device_name) {
  const std::string expected =
      "port: no device given (a port name, a PCI address like 0000:03:00.0, or a vdev like net_ring0)";
  EXPECT_EQ(open_error({.device = ""}), expected);
  EXPECT_EQ(open_error({.device = ",iface=x"}), expected);
}

TEST_F(port_test, a_pci_address_without_pci) {
  EXPECT_EQ(open_error({.device = "03:00.0"}),
            "port 0000:03:00.0: no such device: DPDK cannot use this PCI device (bound to vfio-pci? a Mellanox "
            "NIC with its kernel driver? --no-pci in eal? see docs/dpdk.md)");
}

// One frame, one mbuf: a jumbo MTU gets buffers that hold a whole frame, on
// a PMD without scattered RX (net_null) as on one with it (net_ring), and
// the default MTU keeps the default 2 KiB buffers.
TEST_F(port_test, a_jumbo_mtu_gets_buffers_that_hold_a_whole_frame) {
  for (const char* device : {"net_null0", "net_ring0"}) {
    auto port = open_ok({.device = device, .mtu = 9000, .rx_descriptors = 64, .tx_descriptors = 64});
    ASSERT_TRUE(port) << device;
    EXPECT_EQ(port->caps().mtu, 9000u);
    EXPECT_GE(rte_pktmbuf_data_room_size(port->pool(0)) - RTE_PKTMBUF_HEADROOM, 9022u) << device;
  }
  auto port = open_ok({.device = "net_ring0", .rx_descriptors = 64, .tx_descriptors = 64});
  ASSERT_TRUE(port);
  EXPECT_EQ(rte_pktmbuf_data_room_size(port->pool(0)) - RTE_PKTMBUF_HEADROOM, RTE_MBUF_DEFAULT_DATAROOM);
}

TEST_F(port_test, an_mtu_outside_the_pmds_range) {
  EXPECT_EQ(open_error({.device = "net_ring0", .mtu = 70000}),
            "port net_ring0: mtu 70000 is outside the PMD's range 46..65535");
}

TEST(port_device, from_the_pci_key_or_the_first_vdev_in_eal) {
  const std::vector<std::string> eal{"--no-huge", "--vdev=net_tap0,iface=affine0", "--vdev=net_ring0"};
  EXPECT_EQ(device_from_config("0000:03:00.0", eal), "0000:03:00.0");
  EXPECT_EQ(device_from_config("", eal), "net_tap0,iface=affine0");
  EXPECT_EQ(device_from_config("", std::vector<std::string>{"--vdev", "net_memif0,role=client"}),
            "net_memif0,role=client");
  EXPECT_EQ(device_from_config("", std::vector<std::string>{"--no-huge"}).error(),
            "a dpdk port needs a device: set pci (\"0000:03:00.0\") or add a virtual device to eal "
            "(\"--vdev=net_tap0,iface=affine0\")");
}

TEST_F(port_test, symmetric_key_is_set_and_read_back_on_null) {
  // net_null ignores the key given at configure time: the driver must notice
  // from the read-back and set it again.
  auto port = open_ok({.device = "net_null0", .rx_queues = 4, .rx_descriptors = 64, .tx_descriptors = 64});
  ASSERT_TRUE(port);
  EXPECT_TRUE(port->caps().rss);
  EXPECT_EQ(port->caps().rss_key, symmetric_rss_key(40));
  EXPECT_FALSE(port->caps().rss_hash_in_mbuf);
}

TEST_F(port_test, default_rss_keeps_and_reports_the_pmds_key) {
  auto port = open_ok({.device = "net_null0", .rx_queues = 2, .rss = rss_mode::driver_default,
                       .rx_descriptors = 64, .tx_descriptors = 64});
  ASSERT_TRUE(port);
  const auto& key = port->caps().rss_key;
  ASSERT_EQ(key.size(), 40u);
  EXPECT_NE(key, symmetric_rss_key(40));
  EXPECT_EQ(key[0], 0x6d);  // net_null's default is the Microsoft key
  EXPECT_EQ(key[2], 0x56);
}

TEST_F(port_test, rss_off_reports_no_key) {
  auto port = open_ok({.device = "net_null0", .rx_queues = 2, .rss = rss_mode::off, .rx_descriptors = 64,
                       .tx_descriptors = 64});
  ASSERT_TRUE(port);
  EXPECT_FALSE(port->caps().rss);
  EXPECT_TRUE(port->caps().rss_key.empty());
  EXPECT_EQ(port->reta_size(), 0u);
}

TEST_F(port_test, reta_is_programmed_from_the_plan) {
  auto port = open_ok({.device = "net_null0", .rx_queues = 3, .rx_descriptors = 64, .tx_descriptors = 64});
  ASSERT_TRUE(port);
  ASSERT_EQ(port->reta_size(), 128u);
  const std::vector<rxq_assignment> plan{{0, core_id{0}}, {1, core_id{1}}, {2, core_id{0}}};
  ASSERT_TRUE(port->program_reta(plan).has_value());
  auto reta = port->reta();
  ASSERT_TRUE(reta.has_value()) << reta.error();
  EXPECT_EQ(*reta, reta_from_plan(plan, 128));
  EXPECT_EQ(std::count(reta->begin(), reta->end(), 1), 64) << "core 1 gets half the buckets";
}

TEST_F(port_test, steering_falls_back_where_the_pmd_has_no_rte_flow) {
  auto port = open_ok({.device = "net_ring0", .rx_queues = 2, .rx_descriptors = 64, .tx_descriptors = 64});
  ASSERT_TRUE(port);
  auto r = port->steer({.proto = flow_match::protocol::udp, .dst_port = 5000}, 1);
  ASSERT_FALSE(r.has_value());
  EXPECT_EQ(r.error().kind, flow_failure::unsupported);
  EXPECT_EQ(r.error().message,
            "port net_ring0: no rte_flow steering (Function not implemented): udp dst port 5000 stays with RSS "
            "and software RPS");
  auto five = port->steer({.proto = flow_match::protocol::tcp, .dst_port = 80, .src_ip = 0x0a000001,
                           .dst_ip = 0x0a000002, .src_port = 1234},
                          0);
  ASSERT_FALSE(five.has_value());
  EXPECT_NE(five.error().message.find("tcp 10.0.0.1:1234 -> 10.0.0.2:80"), std::string::npos)
      << five.error().message;
}

TEST_F(port_test, steering_to_a_queue_the_port_lacks_is_refused) {
  auto port = open_ok({.device = "net_ring0", .rx_queues = 2, .rx_descriptors = 64, .tx_descriptors = 64});
  ASSERT_TRUE(port);
  auto r = port->steer({.proto = flow_match::protocol::udp, .dst_port = 53}, 2);
  ASSERT_FALSE(r.has_value());
  EXPECT_EQ(r.error().kind, flow_failure::rejected);
  EXPECT_EQ(r.error().message, "port net_ring0: cannot steer udp dst port 53 to queue 2: the port has 2 RX queues");
}

}  // namespace
}  // namespace affine::drivers::dpdk::test
