// The file's [tcp] keys as every connection of the stack gets them
// (stack_config_from into stack_config::tcp): the retransmission and probe
// bounds, the FIN-WAIT-2 timeout, keepalive's timing, the user timeout and
// the receive buffer's tuning, with Linux's sysctl defaults and its ranges.

#include <gtest/gtest.h>

#include <string>

#include "affine/affine.hh"
#include "stack/from_config.hh"

namespace affine::stack {
namespace {

constexpr std::uint64_t ms = 1'000'000, s = 1'000 * ms;

std::expected<stack_config, std::string> with_tcp(std::string_view keys) {
  const std::string toml = "[tcp]\n" + std::string(keys) +
                           "\n[[port]]\ndriver = \"dpdk\"\neal = [\"--vdev=net_ring0\"]\nip = \"10.77.0.2/24\"\n";
  auto c = config::load_string(config_schema(), toml, "affine.toml");
  if (!c) return std::unexpected(c.error());
  return stack_config_from(*c, c->tables("port")[0], 1);
}

TEST(tcp_config, TheDefaultsAreLinuxs) {
  auto sc = with_tcp("");
  ASSERT_TRUE(sc.has_value()) << sc.error();
  const tcp::connection_config& t = sc->tcp;
  EXPECT_EQ(t.max_retransmissions, 15u);
  EXPECT_EQ(t.max_syn_retransmissions, 6u);
  EXPECT_EQ(t.max_synack_retransmissions, 5u);
  EXPECT_EQ(t.max_orphan_probes, 8u);
  EXPECT_EQ(t.fin_wait_2_timeout_ns, 60 * s);
  EXPECT_EQ(t.keepalive.idle_ns, 7200 * s);
  EXPECT_EQ(t.keepalive.interval_ns, 75 * s);
  EXPECT_EQ(t.keepalive.count, 9u);
  EXPECT_FALSE(t.keepalive.enabled);  // a stream turns it on
  EXPECT_EQ(t.user_timeout_ns, 0u);
  EXPECT_EQ(t.recv_buffer, 256u * 1024);
  EXPECT_EQ(t.recv_buffer_max, 6u * 1024 * 1024);  // tcp_rmem[2]
  EXPECT_EQ(t.send_buffer, 256u * 1024);
  EXPECT_EQ(t.send_buffer_max, 4u * 1024 * 1024);  // tcp_wmem[2]
  EXPECT_EQ(t.buffer_memory_limit, 0u);            // the stack's default: 3/32 of memory
  EXPECT_FALSE(t.pacing);
}

TEST(tcp_config, EachKeyReachesEveryConnectionsSettings) {
  auto sc = with_tcp(
      "retransmissions = 8\nsyn_retransmissions = 3\nsynack_retransmissions = 2\norphan_probes = 1\n"
      "fin_timeout_s = 10\nkeepalive_idle_s = 600\nkeepalive_interval_s = 10\nkeepalive_count = 3\n"
      "user_timeout_ms = 30000\nreceive_buffer_kb = 64\nreceive_buffer_max_kb = 16384\n"
      "send_buffer_kb = 32\nsend_buffer_max_kb = 8192\nbuffer_memory_mb = 512\npacing = true\n");
  ASSERT_TRUE(sc.has_value()) << sc.error();
  const tcp::connection_config& t = sc->tcp;
  EXPECT_EQ(t.max_retransmissions, 8u);
  EXPECT_EQ(t.max_syn_retransmissions, 3u);
  EXPECT_EQ(t.max_synack_retransmissions, 2u);
  EXPECT_EQ(t.max_orphan_probes, 1u);
  EXPECT_EQ(t.fin_wait_2_timeout_ns, 10 * s);
  EXPECT_EQ(t.keepalive.idle_ns, 600 * s);
  EXPECT_EQ(t.keepalive.interval_ns, 10 * s);
  EXPECT_EQ(t.keepalive.count, 3u);
  EXPECT_EQ(t.user_timeout_ns, 30'000 * ms);
  EXPECT_EQ(t.recv_buffer, 64u * 1024);
  EXPECT_EQ(t.recv_buffer_max, 16u * 1024 * 1024);
  EXPECT_EQ(t.send_buffer, 32u * 1024);
  EXPECT_EQ(t.send_buffer_max, 8u * 1024 * 1024);
  EXPECT_EQ(t.buffer_memory_limit, 512u * 1024 * 1024);
  EXPECT_TRUE(t.pacing);
}

// Bad input names the file, line, key and the allowed values.
TEST(tcp_config, AValueOutOfRangeNamesTheKeyAndItsRange) {
  auto sc = with_tcp("keepalive_count = 128\n");
  ASSERT_FALSE(sc.has_value());
  EXPECT_NE(sc.error().find("affine.toml:2: tcp.keepalive_count"), std::string::npos) << sc.error();
  EXPECT_NE(sc.error().find("1..127"), std::string::npos) << sc.error();
  EXPECT_FALSE(with_tcp("user_timeout_ms = -1\n").has_value());
  EXPECT_FALSE(with_tcp("retransmissions = 0\n").has_value());
  EXPECT_FALSE(with_tcp("receive_buffer_kb = 2\n").has_value());
}

}  // namespace
}  // namespace affine::stack
