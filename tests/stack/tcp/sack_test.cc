// SACK, the data receiver (RFC 2018): SACK-permitted on the two SYNs, and
// the blocks every ACK carries while data past RCV.NXT is held: the block
// of the segment that triggered the ACK first, then the most recently
// reported ones, as many as fit. And D-SACK (RFC 2883): a duplicate
// received is reported once, in a block before them.

#include "tests/stack/tcp/harness.hh"

namespace affine::stack::tcp::testing {
namespace {

class Sack : public tcp_test {
 protected:
  Sack() { config.sack = true; }
  // Our SYN offers SACK; the SYN,ACK accepts it or not.
  void establish_with(bool peer_sack) {
    open();
    expect({.control = syn, .seq = iss, .options = {.mss = 1000, .sack_permitted = true}});
    send({.control = syn, .seq = rn, .ack = iss + 1, .options = {.mss = 1000, .sack_permitted = peer_sack}});
    expect({.seq = iss + 1, .ack = rn + 1});
    ASSERT_EQ(conn().state(), tcp_state::established);
  }
  // An ACK of RCV.NXT = rn + 1 + `acked` carrying `blocks` (offsets from rn + 1).
  seg ack_with(std::initializer_list<std::pair<std::uint32_t, std::uint32_t>> blocks, std::uint16_t window,
               std::uint32_t acked = 0) {
    seg s{.seq = iss + 1, .ack = rn + 1 + acked, .window = window};
    for (auto [from, to] : blocks) s.options.sack[s.options.sack_count++] = {rn + 1 + from, rn + 1 + to};
    return s;
  }
  void send_at(std::uint32_t offset, std::uint32_t len) {
    send({.seq = rn + 1 + offset, .ack = iss + 1, .payload = pattern(offset, len)});
  }
};

TEST_P(Sack, SynOffersSackPermitted_RFC2018_2) {
  open();
  expect({.control = syn, .seq = iss, .options = {.mss = 1000, .sack_permitted = true}});
}

TEST_P(Sack, SynAckOffersItOnlyIfTheSynDid_RFC2018_2) {
  listen();
  send({.control = syn, .seq = rn, .options = {.mss = 1000, .sack_permitted = true}});
  expect({.control = syn, .seq = iss, .ack = rn + 1, .options = {.mss = 1000, .sack_permitted = true}});
  send({.control = syn, .seq = rn + 50, .options = {.mss = 1000}, .peer = 40001});
  expect({.control = syn, .seq = iss_for(40001), .ack = rn + 51, .options = {.mss = 1000}, .peer = 40001});
}

TEST_P(Sack, NoBlocksWhenThePeerDidNotOfferIt_RFC2018_2) {
  establish_with(false);
  EXPECT_FALSE(conn().sack_enabled());
  send_at(1000, 1000);
  expect({.seq = iss + 1, .ack = rn + 1});
}

TEST_P(Sack, TheOutOfOrderSegmentIsTheFirstBlock_RFC2018_4) {
  establish_with(true);
  EXPECT_TRUE(conn().sack_enabled());
  send_at(1000, 1000);
  expect(ack_with({{1000, 2000}}, 64000));
}

TEST_P(Sack, TheNewestBlockFirstThenTheMostRecentlyReported_RFC2018_4) {
  establish_with(true);
  send_at(1000, 1000);
  expect(ack_with({{1000, 2000}}, 64000));
  send_at(3000, 1000);
  expect(ack_with({{3000, 4000}, {1000, 2000}}, 64000));
  send_at(5000, 1000);
  expect(ack_with({{5000, 6000}, {3000, 4000}, {1000, 2000}}, 64000));
  // 2000-3000 joins the first two: the joined block is reported first.
  send_at(2000, 1000);
  expect(ack_with({{1000, 4000}, {5000, 6000}}, 64000));
  // A duplicate of held data: a D-SACK block for it, then its block as
  // the first SACK block (RFC 2883 4.2), then the rest.
  send_at(5000, 1000);
  expect(ack_with({{5000, 6000}, {5000, 6000}, {1000, 4000}}, 64000));
  // Reported once: the next ACK has the SACK blocks only.
  send_at(7000, 1000);
  expect(ack_with({{7000, 8000}, {5000, 6000}, {1000, 4000}}, 64000));
}

// RFC 2883 4.1.1: a segment all below RCV.NXT (our ACK of it was lost, or
// the peer resent too soon) is answered at once, its range a D-SACK block.
TEST_P(Sack, AnOldSegmentIsReportedInADsackBlock_RFC2883_4_1_1) {
  establish_with(true);
  send_at(0, 1000);
  advance(40);
  expect({.seq = iss + 1, .ack = rn + 1001, .window = 63000});
  send_at(0, 1000);
  expect(ack_with({{0, 1000}}, 63000, 1000));
  expect_nothing();
  send_at(2000, 1000);  // the next ACK: the SACK block only
  expect(ack_with({{2000, 3000}}, 63000, 1000));
}

// RFC 2883 4.1.1: a segment partly below RCV.NXT: its old part is reported,
// with the ACK its new bytes earn (delayed, as Linux sends it).
TEST_P(Sack, APartlyOldSegmentReportsItsOldPart_RFC2883_4_1_1) {
  establish_with(true);
  send_at(0, 1000);
  send_at(500, 1000);
  expect_nothing();
  advance(40);
  expect(ack_with({{500, 1000}}, 62500, 1500));
  EXPECT_EQ(app_read(), pattern(0, 1500));
  EXPECT_EQ(conn().stats().dsacks_sent, 1u);
}

// RFC 2883 4.1.3: a segment that fills the hole and reaches into data held
// past it reports the overlap, in the ACK that moves RCV.NXT past both.
TEST_P(Sack, FillingTheHoleIntoHeldDataReportsTheOverlap_RFC2883_4_1_3) {
  establish_with(true);
  send_at(1000, 1000);
  expect(ack_with({{1000, 2000}}, 64000));
  send_at(0, 1500);
  expect(ack_with({{1000, 1500}}, 62000, 2000));
  EXPECT_EQ(app_read(), pattern(0, 2000));
}

// RFC 2883 is a SACK extension: without SACK negotiated a duplicate gets
// the plain ACK of RFC 9293 3.10.7.4.
TEST_P(Sack, NoDsackWithoutSack_RFC2883_4) {
  establish_with(false);
  send_at(0, 1000);
  advance(40);
  expect({.seq = iss + 1, .ack = rn + 1001, .window = 63000});
  send_at(0, 1000);
  expect({.seq = iss + 1, .ack = rn + 1001, .window = 63000});
  EXPECT_EQ(conn().stats().dsacks_sent, 0u);
}

TEST_P(Sack, AtMostFourBlocks_RFC2018_3) {
  establish_with(true);
  for (std::uint32_t i = 1; i <= 5; ++i) {
    send_at(2000 * i, 1000);
    take_emitted();
  }
  send_at(1000 * 12, 1000);  // a sixth: the four newest ranges
  expect(ack_with({{12000, 13000}, {10000, 11000}, {8000, 9000}, {6000, 7000}}, 64000));
}

TEST_P(Sack, FillingTheHoleEndsTheBlocks_RFC2018_4) {
  establish_with(true);
  send_at(1000, 1000);
  expect(ack_with({{1000, 2000}}, 64000));
  send_at(0, 1000);
  expect({.seq = iss + 1, .ack = rn + 2001, .window = 62000});
  EXPECT_EQ(app_read(), pattern(0, 2000));
}

// The blocks and the payload share Eff.snd.MSS (1000 here): a full-sized
// segment has no room for one, a shorter one for what fits (12 bytes: one).
TEST_P(Sack, DataSegmentsCarryTheBlocksThatFit_RFC2018_3) {
  establish_with(true);
  send_at(1000, 1000);
  send_at(3000, 1000);
  take_emitted();
  app_write(988);
  seg data = ack_with({{3000, 4000}}, 64000);
  data.payload = pattern(0, 988);
  data.psh = true;
  expect(data);
  app_write(1000);
  expect({.seq = iss + 989, .ack = rn + 1, .payload = pattern(988, 1000), .psh = true});
}

TCP_IN_BOTH_SEQUENCE_SPACES(Sack);

// Beside timestamps the option space holds three blocks.
class SackWithTimestamps : public tcp_test {
 protected:
  SackWithTimestamps() {
    config.sack = true;
    config.timestamps = true;
  }
};

TEST_P(SackWithTimestamps, AtMostThreeBlocks_RFC2018_3) {
  open();
  const std::uint32_t syn_ts = tsval();
  expect({.control = syn, .seq = iss, .options = {.mss = 1000, .sack_permitted = true,
                                                 .timestamps = tcp_timestamps{syn_ts, 0}}});
  send({.control = syn, .seq = rn, .ack = iss + 1,
        .options = {.mss = 1000, .sack_permitted = true, .timestamps = tcp_timestamps{500, syn_ts}}});
  take_emitted();
  for (std::uint32_t i = 1; i <= 4; ++i) {
    send({.seq = rn + 1 + 2000 * i, .ack = iss + 1, .options = {.timestamps = tcp_timestamps{500, 0}},
          .payload = pattern(2000 * i, 1000)});
    const auto sent = take_emitted();
    ASSERT_FALSE(sent.empty());
    EXPECT_EQ(sent.back().options.sack_count, std::min<std::uint32_t>(i, 3));
  }
}

TCP_IN_BOTH_SEQUENCE_SPACES(SackWithTimestamps);

}  // namespace
}  // namespace affine::stack::tcp::testing
