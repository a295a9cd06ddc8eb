// A [[port]] table opened as the runtime opens it (open_port_from_config):
// queues = "auto", the default, gives one RX queue per reactor, as far as
// the device has them; a count is kept as written.

#include <string>

#include "affine/config.hh"
#include "drivers/dpdk/from_config.hh"
#include "tests/drivers/dpdk/dpdk_fixture.hh"

namespace affine::drivers::dpdk::test {
namespace {

class from_config_test : public dpdk_test {
 protected:
  // One [[port]] on net_ring0 with `keys` besides; the EAL is already up.
  std::expected<std::unique_ptr<dpdk_port>, std::string> open(const std::string& keys, unsigned reactors) {
    auto s = config::load_string(config_schema(),
                                 "[[port]]\ndriver = \"dpdk\"\neal = [\"--vdev=net_ring0\"]\n" + keys, "affine.toml");
    if (!s) return std::unexpected(s.error());
    return open_port_from_config(s->tables("port")[0], reactors);
  }
};

TEST_F(from_config_test, auto_queues_are_one_per_reactor) {
  for (const unsigned reactors : {1U, 3U}) {
    for (const std::string keys : {"", "queues = \"auto\"\n"}) {
      auto p = open(keys, reactors);
      ASSERT_TRUE(p.has_value()) << p.error();
      EXPECT_EQ((*p)->rx_queue_count(), reactors) << keys;
      EXPECT_EQ((*p)->tx_queue_count(), reactors) << keys;
    }
  }
}

TEST_F(from_config_test, a_count_is_kept_and_tx_follows_the_larger) {
  auto p = open("queues = 2\n", 1);
  ASSERT_TRUE(p.has_value()) << p.error();
  EXPECT_EQ((*p)->rx_queue_count(), 2U);
  EXPECT_EQ((*p)->tx_queue_count(), 2U) << "net_tap wants as many TX queues as RX";
  p->reset();  // closed before the device is opened again
  p = open("queues = 1\n", 3);
  ASSERT_TRUE(p.has_value()) << p.error();
  EXPECT_EQ((*p)->rx_queue_count(), 1U) << "fewer RX queues than reactors: seed 003's case";
  EXPECT_EQ((*p)->tx_queue_count(), 3U);
}

TEST_F(from_config_test, auto_stops_at_the_devices_rx_queues) {
  // net_ring has 16 of each: 20 reactors ask 16 RX queues of "auto", and
  // the error is the TX queues they need; a count of 20 is refused for RX.
  auto p = open("", 20);
  ASSERT_FALSE(p.has_value());
  EXPECT_EQ(p.error(), "(default): port[0].queues: 20 reactor cores need 20 TX queues; net_ring0 (net_ring) has "
                       "at most 16: run fewer reactors (reactor.cores) or use a device with more queues");
  p = open("queues = 20\n", 1);
  ASSERT_FALSE(p.has_value());
  EXPECT_EQ(p.error(), "affine.toml:4: port[0].queues: 20 RX queues asked for; net_ring0 (net_ring) has at most 16");
  EXPECT_TRUE(open("", 16).has_value()) << "the failed opens unplugged the device";
}

}  // namespace
}  // namespace affine::drivers::dpdk::test
