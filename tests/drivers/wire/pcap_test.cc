// The pcap writer and the recording port: the file format byte for byte,
// what pcap_port records of a port's traffic, and tshark reading the result.

#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <iterator>
#include <sstream>

#include "drivers/pcap/pcap_port.hh"
#include "drivers/pcap/pcap_writer.hh"
#include "tests/drivers/wire/wire_fixture.hh"

namespace affine::drivers::wire::testing {
namespace {

struct record {
  std::uint32_t ts_sec, ts_frac, incl_len, orig_len;
  std::vector<std::uint8_t> data;
};

struct capture {
  std::uint32_t magic = 0, snaplen = 0, network = 0;
  std::uint16_t major = 0, minor = 0;
  std::vector<record> records;
};

// A reader for exactly what pcap_writer writes (host order), to check it
// independently of tshark.
capture read_capture(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  const std::vector<std::uint8_t> f{std::istreambuf_iterator<char>(in), {}};
  capture c;
  if (f.size() < 24) return c;
  auto u32 = [&](std::size_t at) {
    std::uint32_t v;
    std::memcpy(&v, f.data() + at, 4);
    return v;
  };
  c.magic = u32(0);
  std::memcpy(&c.major, f.data() + 4, 2);
  std::memcpy(&c.minor, f.data() + 6, 2);
  c.snaplen = u32(16);
  c.network = u32(20);
  for (std::size_t at = 24; at + 16 <= f.size();) {
    record r{u32(at), u32(at + 4), u32(at + 8), u32(at + 12), {}};
    at += 16;
    if (at + r.incl_len > f.size()) break;
    r.data.assign(f.begin() + std::ptrdiff_t(at), f.begin() + std::ptrdiff_t(at + r.incl_len));
    at += r.incl_len;
    c.records.push_back(std::move(r));
  }
  return c;
}

bool tshark_present() { return std::system("command -v tshark >/dev/null 2>&1") == 0; }

// tshark's view of the file: one "frame.len<TAB>frame.cap_len" line per frame.
std::string tshark_lengths(const std::string& path, int& status) {
  const std::string cmd = "tshark -r '" + path + "' -T fields -e frame.len -e frame.cap_len 2>&1";
  std::FILE* p = ::popen(cmd.c_str(), "r");
  std::string out;
  if (p == nullptr) return out;
  char buf[512];
  while (std::size_t n = std::fread(buf, 1, sizeof buf, p)) out.append(buf, n);
  status = ::pclose(p);
  return out;
}

class pcap : public wire_test {
 protected:
  void SetUp() override {
    wire_test::SetUp();
    path_ = ::testing::TempDir() + "affine_pcap_test_" + std::to_string(::getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name() + ".pcap";
  }
  void TearDown() override {
    std::remove(path_.c_str());
    wire_test::TearDown();
  }

  std::unique_ptr<pcap_writer> open(std::uint32_t snaplen, pcap_resolution res = pcap_resolution::nano) {
    auto w = pcap_writer::open(path_, snaplen, res);
    EXPECT_TRUE(w.has_value()) << (w ? "" : w.error());
    return w ? std::move(*w) : nullptr;
  }

  std::string path_;
};

TEST_F(pcap, writer_writes_the_classic_header_and_cuts_frames_to_the_snap_length) {
  auto w = open(64, pcap_resolution::micro);
  ASSERT_NE(w, nullptr);
  rte_mbuf* big = build(pool_a_, pattern(1, 100));
  rte_mbuf* small = build(pool_a_, pattern(2, 10));
  EXPECT_TRUE(w->write(1'123'456'789, big));
  EXPECT_TRUE(w->write(2'000'000'999, small));
  EXPECT_EQ(w->frames(), 2u);
  w.reset();
  rte_pktmbuf_free(big);
  rte_pktmbuf_free(small);

  const capture c = read_capture(path_);
  EXPECT_EQ(c.magic, 0xa1b2c3d4u);
  EXPECT_EQ(c.major, 2);
  EXPECT_EQ(c.minor, 4);
  EXPECT_EQ(c.snaplen, 64u);
  EXPECT_EQ(c.network, 1u) << "LINKTYPE_ETHERNET";
  ASSERT_EQ(c.records.size(), 2u);
  EXPECT_EQ(c.records[0].ts_sec, 1u);
  EXPECT_EQ(c.records[0].ts_frac, 123456u);
  EXPECT_EQ(c.records[0].incl_len, 64u);
  EXPECT_EQ(c.records[0].orig_len, 100u);
  const auto first = pattern(1, 100);
  EXPECT_EQ(c.records[0].data, std::vector<std::uint8_t>(first.begin(), first.begin() + 64));
  EXPECT_EQ(c.records[1].ts_sec, 2u);
  EXPECT_EQ(c.records[1].ts_frac, 0u);
  EXPECT_EQ(c.records[1].incl_len, 10u);
  EXPECT_EQ(c.records[1].data, pattern(2, 10));
}

TEST_F(pcap, nanosecond_files_carry_their_own_magic_and_full_fractions) {
  auto w = open(65535);
  ASSERT_NE(w, nullptr);
  const auto bytes = pattern(3, 60);
  EXPECT_TRUE(w->write(5'123'456'789, std::as_bytes(std::span(bytes)), 60));
  w.reset();
  const capture c = read_capture(path_);
  EXPECT_EQ(c.magic, 0xa1b23c4du);
  ASSERT_EQ(c.records.size(), 1u);
  EXPECT_EQ(c.records[0].ts_sec, 5u);
  EXPECT_EQ(c.records[0].ts_frac, 123456789u);
}

TEST_F(pcap, a_file_that_cannot_be_created_is_a_clear_error) {
  auto w = pcap_writer::open("/nonexistent-dir/x.pcap");
  ASSERT_FALSE(w.has_value());
  EXPECT_EQ(w.error(), "pcap /nonexistent-dir/x.pcap: cannot create: No such file or directory");
}

// Takes one frame per burst, like a port whose TX ring is nearly full.
class one_at_a_time_port final : public port {
 public:
  one_at_a_time_port() : port(1) {}
  std::string_view name() const override { return "slow"; }
  const port_caps& caps() const override { return caps_; }
  mac_address mac() const override { return {}; }
  unsigned rx_queue_count() const override { return 1; }
  unsigned tx_queue_count() const override { return 1; }
  unsigned numa_node() const override { return 0; }
  std::uint16_t rx_burst(unsigned, rte_mbuf**, std::uint16_t) override { return 0; }
  std::uint16_t tx_burst(unsigned, rte_mbuf** pkts, std::uint16_t n) override {
    if (n == 0) return 0;
    rte_pktmbuf_free(pkts[0]);
    return 1;
  }
  rte_mempool* pool(unsigned) override { return nullptr; }
  port_stats stats() const override { return {}; }
  link_status link() const override { return {}; }

 private:
  port_caps caps_;
};

TEST_F(pcap, frames_the_inner_port_hands_back_are_recorded_only_when_taken) {
  one_at_a_time_port slow;
  pcap_port rec(slow, open(65535), [] { return std::uint64_t(7); });
  rte_mbuf* pkts[3];
  for (std::uint32_t i = 0; i < 3; ++i) pkts[i] = build(pool_a_, pattern(i, 60 + i));
  std::uint16_t sent = 0;
  while (sent < 3) sent += rec.tx_burst(0, pkts + sent, std::uint16_t(3 - sent));
  ASSERT_TRUE(rec.writer().flush());
  const capture c = read_capture(path_);
  ASSERT_EQ(c.records.size(), 3u);
  for (std::uint32_t i = 0; i < 3; ++i) EXPECT_EQ(c.records[i].data, pattern(i, 60 + i));
}

TEST_F(pcap, a_pcap_port_on_the_wire_records_both_directions_and_tshark_reads_it) {
  impairments imp;
  imp.delay_ns = 10'000;
  link_config cfg = config(imp);
  cfg.b_to_a = imp;
  make(cfg);
  constexpr std::uint64_t epoch = 1'700'000'000'000'000'000;  // a plausible wall time
  pcap_port rec(link_->a(), open(128), [this] { return epoch + link_->now_ns(); });
  EXPECT_EQ(rec.name(), "wire.a");

  // Out from a: a minimum, a middling, a full-size, a runt and an empty frame.
  const std::vector<std::uint32_t> out_lens{60, 100, 1514, 18, 0};
  for (std::uint32_t i = 0; i < out_lens.size(); ++i) {
    rte_mbuf* m = build(pool_a_, pattern(i, out_lens[i]));
    ASSERT_EQ(rec.tx_burst(0, &m, 1), 1);
  }
  // In to a, from b.
  const std::vector<std::uint32_t> in_lens{64, 300};
  for (std::uint32_t i = 0; i < in_lens.size(); ++i) {
    rte_mbuf* m = build(pool_b_, pattern(10 + i, in_lens[i]));
    ASSERT_EQ(link_->b().tx_burst(0, &m, 1), 1);
  }
  link_->advance_by(10'000);
  rte_mbuf* got[8];
  const std::uint16_t n = rec.rx_burst(0, got, 8);
  ASSERT_EQ(n, 2);
  for (std::uint16_t i = 0; i < n; ++i) rte_pktmbuf_free(got[i]);
  EXPECT_EQ(drain().size(), 5u);
  EXPECT_EQ(rec.writer().frames(), 7u);
  ASSERT_TRUE(rec.writer().flush());

  const capture c = read_capture(path_);
  ASSERT_EQ(c.records.size(), 7u);
  EXPECT_EQ(c.records[2].incl_len, 128u);
  EXPECT_EQ(c.records[2].orig_len, 1514u);
  EXPECT_EQ(c.records[5].data, pattern(10, 64));
  EXPECT_EQ(std::uint64_t(c.records[5].ts_sec) * 1'000'000'000 + c.records[5].ts_frac, epoch + 10'000);

  if (!tshark_present()) GTEST_SKIP() << "tshark is not installed (apt-get install tshark); the file was not read by it";
  int status = -1;
  const std::string lines = tshark_lengths(path_, status);
  ASSERT_EQ(status, 0) << lines;
  std::ostringstream want;
  for (auto len : {60u, 100u, 1514u, 18u, 0u, 64u, 300u}) want << len << '\t' << std::min(len, 128u) << '\n';
  // tshark warns on stderr when run as root; only the field lines matter.
  std::istringstream got_lines(lines);
  std::string line, fields;
  while (std::getline(got_lines, line))
    if (!line.empty() && std::isdigit(static_cast<unsigned char>(line[0]))) fields += line + '\n';
  EXPECT_EQ(fields, want.str()) << lines;
}

}  // namespace
}  // namespace affine::drivers::wire::testing
