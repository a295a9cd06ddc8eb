// ICMP errors to a connection (RFC 1122 4.2.3.9, RFC 1191, RFC 5927), as
// stack/rx_icmp.cc hands them over once the quote names this connection:
// acted on only when the quoted sequence number is in flight;
// fragmentation-needed re-segments what is in flight at the new size;
// port unreachable ends a connect; host unreachable is soft, the error of
// a connect that times out.

#include "tests/stack/tcp/harness.hh"

namespace affine::stack::tcp::testing {
namespace {

class Icmp : public tcp_test {
 protected:
  // The data segments emitted since the last look, as (offset, length).
  std::vector<std::pair<std::uint32_t, std::size_t>> data_out() {
    std::vector<std::pair<std::uint32_t, std::size_t>> out;
    for (const seg& s : take_emitted())
      if (!s.payload.empty()) out.emplace_back(std::uint32_t(s.seq - (iss + 1)), s.payload.size());
    return out;
  }
};

TEST_P(Icmp, FragmentationNeededResendsWhatIsInFlightAtTheNewSize_RFC1191_6_4) {
  establish();
  write_segments(3);
  EXPECT_TRUE(conn().on_icmp(icmp_error::fragmentation_needed, iss + 1, 576, now));
  EXPECT_EQ(conn().send_mss(), 536u);  // 576 less the IPv4 and TCP headers
  run_output();
  const auto out = data_out();
  std::uint32_t next = 0;
  for (auto [offset, length] : out) {
    EXPECT_EQ(offset, next);
    EXPECT_LE(length, 536u);
    next += std::uint32_t(length);
  }
  EXPECT_EQ(next, 3000u);  // all of it again, now, without waiting for the RTO
  EXPECT_EQ(conn().stats().path_mtu_reductions, 1u);
  EXPECT_EQ(conn().stats().retransmission_timeouts, 0u);
}

TEST_P(Icmp, AQuotedSequenceNumberNotInFlightIsIgnored_RFC5927_4_1) {
  establish();
  write_segments(1);
  EXPECT_FALSE(conn().on_icmp(icmp_error::fragmentation_needed, iss + 1 + 1000, 576, now));  // SND.NXT itself
  EXPECT_FALSE(conn().on_icmp(icmp_error::fragmentation_needed, iss, 576, now));             // below SND.UNA
  EXPECT_FALSE(conn().on_icmp(icmp_error::port_unreachable, iss + 5000, 0, now));
  run_output();
  expect_nothing();
  EXPECT_EQ(conn().send_mss(), 1000u);
  EXPECT_EQ(conn().state(), tcp_state::established);
  EXPECT_EQ(conn().stats().icmp_out_of_window, 3u);
}

TEST_P(Icmp, ALargerMtuChangesNothing_RFC1191_6_4) {
  establish();
  write_segments(1);
  EXPECT_TRUE(conn().on_icmp(icmp_error::fragmentation_needed, iss + 1, 1500, now));
  run_output();
  expect_nothing();
  EXPECT_EQ(conn().send_mss(), 1000u);
}

TEST_P(Icmp, PortUnreachableEndsAConnect_RFC1122_4_2_3_9) {
  open();
  expect({.control = syn, .seq = iss, .options = {.mss = 1000}});
  EXPECT_TRUE(conn().on_icmp(icmp_error::port_unreachable, iss, 0, now));
  EXPECT_EQ(conn().state(), tcp_state::closed);
  EXPECT_EQ(conn().end(), end_reason::refused);
  EXPECT_EQ(conn().error(), std::make_error_code(std::errc::connection_refused));
}

TEST_P(Icmp, PortUnreachableLeavesAnEstablishedConnection_RFC5461_4) {
  establish();
  write_segments(1);
  EXPECT_TRUE(conn().on_icmp(icmp_error::port_unreachable, iss + 1, 0, now));
  EXPECT_EQ(conn().state(), tcp_state::established);
  EXPECT_EQ(conn().soft_error(), std::make_error_code(std::errc::connection_refused));
}

TEST_P(Icmp, HostUnreachableIsSoftAndTheErrorOfAConnectThatTimesOut_RFC1122_4_2_3_9) {
  open();
  expect({.control = syn, .seq = iss, .options = {.mss = 1000}});
  EXPECT_TRUE(conn().on_icmp(icmp_error::host_unreachable, iss, 0, now));
  EXPECT_EQ(conn().state(), tcp_state::syn_sent);
  advance(200'000);  // every SYN retransmission, then the end
  (void)take_emitted();
  EXPECT_EQ(conn().state(), tcp_state::closed);
  EXPECT_EQ(conn().error(), std::make_error_code(std::errc::host_unreachable));
}

TEST_P(Icmp, AKnownPathMtuBoundsTheMssTheHandshakeSettles_RFC1191_3) {
  open();
  expect({.control = syn, .seq = iss, .options = {.mss = 1000}});
  conn().set_path_mtu(576);
  send({.control = syn, .seq = rn, .ack = iss + 1, .options = {.mss = 1460}});
  expect({.seq = iss + 1, .ack = rn + 1});
  EXPECT_EQ(conn().send_mss(), 536u);
}

TCP_IN_BOTH_SEQUENCE_SPACES(Icmp);

}  // namespace
}  // namespace affine::stack::tcp::testing
