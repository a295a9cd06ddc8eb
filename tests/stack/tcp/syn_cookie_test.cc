// SYN cookies (RFC 4987 3.6), as tcp::listener answers with them: a full
// SYN-RECEIVED queue answers a SYN with a cookie and keeps nothing; the ACK
// that returns a valid cookie becomes the connection; a forged or stale
// one is dropped and counted; window scale and SACK-permitted come back
// in the echoed timestamp, and are not offered without one.

#include "stack/tcp/syn_cookie.hh"

#include <array>
#include <string>

#include "tests/stack/tcp/harness.hh"

namespace affine::stack::tcp::testing {
namespace {

class SynCookie : public tcp_test {
 protected:
  static constexpr std::uint16_t first = 40001;  // fills SYN-RECEIVED
  static constexpr std::uint16_t peer = 40002;   // gets the cookie

  // A listener whose SYN-RECEIVED queue holds one, filled by `first`.
  void fill_the_queue() {
    listen_config.syn_backlog = 1;
    listen();
    send({.control = syn, .seq = rn, .options = {.mss = 1000}, .peer = first});
    expect({.control = syn, .seq = iss_for(first), .ack = rn + 1, .options = {.mss = config.mss}, .peer = first});
  }
  // The SYN-ACK a SYN from `peer` with `options` gets; its ISS is the cookie.
  seg cookie_for(const tcp_options& options) {
    EXPECT_EQ(send({.control = syn, .seq = rn, .options = options, .peer = peer}), drop_reason::none);
    auto out = take_emitted();
    EXPECT_EQ(out.size(), 1u);
    if (out.empty()) return {};
    EXPECT_EQ(out[0].control, syn);
    EXPECT_EQ(out[0].ack, rn + 1);
    EXPECT_EQ(out[0].peer, peer);
    return out[0];
  }
};

TEST_P(SynCookie, AFullQueueAnswersWithACookieAndKeepsNothing_RFC4987_3_6) {
  fill_the_queue();
  const seg synack = cookie_for({.mss = 1460});
  EXPECT_EQ(synack.options, (tcp_options{.mss = 1000}));
  EXPECT_FALSE(has_conn(peer));
  EXPECT_EQ(lst().syn_received(), 1u);
  EXPECT_EQ(lst().stats().cookies_sent, 1u);
}

TEST_P(SynCookie, TheAckOfAValidCookieBecomesTheConnection_RFC4987_3_6) {
  fill_the_queue();
  const seg synack = cookie_for({.mss = 1460});
  EXPECT_EQ(send({.seq = rn + 1, .ack = synack.seq + 1, .payload = "hello", .peer = peer}), drop_reason::none);
  ASSERT_TRUE(has_conn(peer));
  EXPECT_EQ(conn(peer).state(), tcp_state::established);
  EXPECT_EQ(accept(), &conn(peer));
  EXPECT_EQ(lst().stats().cookies_accepted, 1u);
  // Its MSS is the cookie's 1460 bounded by ours, and the data that came
  // with the cookie is kept.
  EXPECT_EQ(conn(peer).send_mss(), 1000u);
  std::array<std::byte, 16> buf{};
  auto r = conn(peer).recv(buf);
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(std::string(reinterpret_cast<const char*>(buf.data()), *r), "hello");
  advance(40);
  // The delayed ACK of it; the window stays (RFC 9293 3.8.6.2.2: a
  // receiver opens it by at least an MSS at a time).
  expect({.seq = synack.seq + 1, .ack = rn + 6, .window = 63995, .peer = peer});
}

// RFC 4987: the cookie stands for the SYN queue's entry, so the child a
// valid one makes is never counted in the queue, not even between the
// listener's verdict and its admission (a gauge read there once showed the
// queue over its bound under a SYN flood).
TEST_P(SynCookie, ACookiesChildIsNeverInTheSynQueue_RFC4987_3_6) {
  fill_the_queue();
  const seg synack = cookie_for({.mss = 1460});
  tcp_segment ack;
  ack.src_port = peer;
  ack.dst_port = local_port;
  ack.seq = rn + 1;
  ack.ack = synack.seq + 1;
  ack.window = 65535;
  const listener::verdict v = lst().input(tuple_for(peer), ack, now, config);
  ASSERT_TRUE(v.open);
  EXPECT_EQ(lst().syn_received(), 1u);  // `first` alone, at the bound of 1
  lst().child_gone(false);              // the child is not made here
  EXPECT_EQ(lst().syn_received(), 1u);
}

TEST_P(SynCookie, TheMssComesBackAsTheLargestTableValueNotAboveThePeers_RFC4987_3_6) {
  config.mss = 1460;
  fill_the_queue();
  const seg synack = cookie_for({.mss = 1450});
  send({.seq = rn + 1, .ack = synack.seq + 1, .peer = peer});
  ASSERT_TRUE(has_conn(peer));
  EXPECT_EQ(conn(peer).send_mss(), 1440u);
}

TEST_P(SynCookie, AForgedCookieIsDroppedAndCounted_RFC4987_3_6) {
  fill_the_queue();
  const seg synack = cookie_for({.mss = 1000});
  EXPECT_EQ(send({.seq = rn + 1, .ack = synack.seq + 2, .peer = peer}), drop_reason::syn_cookie_invalid);
  EXPECT_EQ(send({.seq = rn + 2, .ack = synack.seq + 1, .peer = peer}), drop_reason::syn_cookie_invalid);
  expect_nothing();  // dropped: no RST to reflect at a flood of forged ACKs
  EXPECT_FALSE(has_conn(peer));
  EXPECT_EQ(lst().stats().cookies_invalid, 2u);
}

// (Cookies on every SYN, so that an ACK is taken for one however long ago
// the last was sent.)
TEST_P(SynCookie, ACookieIsGoodForItsSlotAndTheNextOnly_RFC4987_3_6) {
  listen_config.cookies = syn_cookie_mode::always;
  listen();
  const seg synack = cookie_for({.mss = 1000});
  advance(2 * syn_cookies::slot_ns / ms);  // two slots later, whatever the phase
  EXPECT_EQ(send({.seq = rn + 1, .ack = synack.seq + 1, .peer = peer}), drop_reason::syn_cookie_invalid);
  expect_nothing();
  EXPECT_FALSE(has_conn(peer));
}

TEST_P(SynCookie, ACookieFromTheSlotBeforeIsStillGood_RFC4987_3_6) {
  listen_config.cookies = syn_cookie_mode::always;
  listen();
  const seg synack = cookie_for({.mss = 1000});
  advance(syn_cookies::slot_ns / ms);  // the next slot, whatever the phase
  send({.seq = rn + 1, .ack = synack.seq + 1, .peer = peer});
  ASSERT_TRUE(has_conn(peer));
  EXPECT_EQ(conn(peer).state(), tcp_state::established);
}

// The stack's cores read their clocks apart: the ACK of a cookie may be
// taken on a core whose batch read the time a little before the core that
// sent the cookie read its own. Found by the attack suite (SYN flood,
// tests/attack): such ACKs got LISTEN's RST, and the kernel client's
// connect ECONNRESET.
TEST_P(SynCookie, AnAckTakenAtAnEarlierClockReadingStillFindsItsCookie_RFC4987_3_6) {
  fill_the_queue();
  const seg synack = cookie_for({.mss = 1000});
  now -= 2'000;  // 2 us earlier
  EXPECT_EQ(send({.seq = rn + 1, .ack = synack.seq + 1, .peer = peer}), drop_reason::none);
  ASSERT_TRUE(has_conn(peer));
  EXPECT_EQ(conn(peer).state(), tcp_state::established);
  EXPECT_EQ(lst().stats().cookies_accepted, 1u);
}

// In auto mode a cookie is looked for only while cookies have been sent in
// the last two slots; after that an ACK gets LISTEN's RST again.
TEST_P(SynCookie, LongAfterTheLastCookieAnAckGetsListensReset_RFC9293_3_10_7_2) {
  fill_the_queue();
  const seg synack = cookie_for({.mss = 1000});
  advance(2 * syn_cookies::slot_ns / ms);
  (void)take_emitted();  // the first's SYN-ACKs, until it gave up
  reap();
  EXPECT_EQ(send({.seq = rn + 1, .ack = synack.seq + 1, .peer = peer}), drop_reason::listen_ack);
  expect({.control = rst, .seq = synack.seq + 1, .peer = peer});
}

TEST_P(SynCookie, WindowScaleAndSackComeBackInTheTimestamp_RFC4987_3_6) {
  config.window_scaling = true;
  config.timestamps = true;
  config.sack = true;
  fill_the_queue();
  const seg synack = cookie_for({.mss = 1000, .window_scale = 7, .sack_permitted = true,
                                 .timestamps = tcp_timestamps{777, 0}});
  ASSERT_TRUE(synack.options.timestamps.has_value());
  EXPECT_TRUE(synack.options.window_scale.has_value());
  EXPECT_TRUE(synack.options.sack_permitted);
  EXPECT_EQ(synack.options.timestamps->echo, 777u);
  EXPECT_LE(std::int32_t(synack.options.timestamps->value - tsval()), 0) << "never ahead of the clock";
  send({.seq = rn + 1, .ack = synack.seq + 1, .window = 100,
        .options = {.timestamps = tcp_timestamps{778, synack.options.timestamps->value}}, .peer = peer});
  ASSERT_TRUE(has_conn(peer));
  EXPECT_EQ(conn(peer).state(), tcp_state::established);
  EXPECT_EQ(conn(peer).send_window_scale(), 7u);
  EXPECT_EQ(conn(peer).send_window(), 100u << 7);
  EXPECT_TRUE(conn(peer).sack_enabled());
  EXPECT_TRUE(conn(peer).timestamps_enabled());
}

TEST_P(SynCookie, WithoutTimestampsNeitherScaleNorSackIsOffered_RFC4987_3_6) {
  config.window_scaling = true;
  config.sack = true;
  fill_the_queue();
  const seg synack = cookie_for({.mss = 1000, .window_scale = 7, .sack_permitted = true});
  EXPECT_EQ(synack.options, (tcp_options{.mss = 1000}));
  send({.seq = rn + 1, .ack = synack.seq + 1, .window = 100, .peer = peer});
  ASSERT_TRUE(has_conn(peer));
  EXPECT_EQ(conn(peer).send_window_scale(), 0u);
  EXPECT_EQ(conn(peer).send_window(), 100u);
  EXPECT_FALSE(conn(peer).sack_enabled());
}

TEST_P(SynCookie, AlwaysAnswersEverySynWithACookie) {
  listen_config.cookies = syn_cookie_mode::always;
  listen();
  const seg synack = cookie_for({.mss = 1000});
  EXPECT_EQ(lst().syn_received(), 0u);
  EXPECT_FALSE(has_conn(peer));
  send({.seq = rn + 1, .ack = synack.seq + 1, .peer = peer});
  EXPECT_EQ(conn(peer).state(), tcp_state::established);
}

TEST_P(SynCookie, NeverDropsTheSynOfAFullQueue) {
  listen_config.cookies = syn_cookie_mode::never;
  fill_the_queue();
  EXPECT_EQ(send({.control = syn, .seq = rn, .peer = peer}), drop_reason::syn_queue_full);
  expect_nothing();
}

TEST_P(SynCookie, WithNoCookieSentAnAckGetsListensReset_RFC9293_3_10_7_2) {
  listen();
  EXPECT_EQ(send({.seq = rn + 1, .ack = iss + 1, .peer = peer}), drop_reason::listen_ack);
  expect({.control = rst, .seq = iss + 1, .peer = peer});
}

TCP_IN_BOTH_SEQUENCE_SPACES(SynCookie);

}  // namespace
}  // namespace affine::stack::tcp::testing
