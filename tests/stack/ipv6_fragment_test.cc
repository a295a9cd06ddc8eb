// IPv6 fragments on the stack's receive path over the in-process wire
// (RFC 8200 4.5): reassembled in any order, checked in the first fragment
// (RFC 7112), overlaps dropped (RFC 5722), expiry answered with Time
// Exceeded. Teardown checks that every mbuf came back.

#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <optional>
#include <vector>

#include "tests/stack/ipv6_peer.hh"

namespace affine::stack {
namespace {

using namespace testing;

// RFC 8200 4.5: fragments are reassembled (in any order) and the whole
// packet goes on: an echo request in two fragments is answered once.
TEST_F(ipv6_input, AFragmentedEchoRequestIsReassembledAndAnswered) {
  with_v6([&](stack& st) {
    (void)introduce_peer();
    std::vector<std::byte> echo(8 + 24);
    std::vector<std::byte> data(24);
    for (std::size_t i = 0; i < data.size(); ++i) data[i] = std::byte(i);
    (void)emit_icmpv6({.type = icmpv6_type::echo_request, .id = 7, .seq = 10, .data = data}, peer, ours, echo);
    send(fragment_of(echo, 16, 16, false));
    EXPECT_TRUE(drain().empty()) << "answered half a packet";
    send(fragment_of(echo, 0, 16, true));
    const auto reply = icmpv6_of(drain());
    ASSERT_EQ(reply.size(), 1u);
    const auto r = icmpv6_view::parse(reply[0].bytes, ours, peer);
    ASSERT_TRUE(r.has_value());
    EXPECT_EQ(r->type(), icmpv6_type::echo_reply);
    EXPECT_EQ(r->seq(), 10);
    EXPECT_TRUE(std::ranges::equal(r->data(), data));
    EXPECT_EQ(st.counters(0).get(drop::fragment), 0u);
  });
}

// RFC 8200 4.1 and 4.5: the fragmentable part may begin with extension
// headers (Destination Options); once whole, the packet goes on past them.
// They are checked in the first fragment, which must hold them all through
// the upper layer's header (RFC 7112): a first fragment with an option
// that asks for an answer gets Parameter Problem code 2 at it, one that
// cuts the chain short code 3 at pointer 0, each quoting that fragment.
TEST_F(ipv6_input, ExtensionHeadersAfterTheFragmentHeaderAreCheckedInTheFirstFragment) {
  with_v6([&](stack& st) {
    (void)introduce_peer();
    std::vector<std::byte> echo(8 + 24);
    std::vector<std::byte> data(24);
    for (std::size_t i = 0; i < data.size(); ++i) data[i] = std::byte(i);
    (void)emit_icmpv6({.type = icmpv6_type::echo_request, .id = 7, .seq = 13, .data = data}, peer, ours, echo);
    // Destination Options of 8 bytes, one option of type `option` and 4
    // bytes, then the echo request.
    const auto behind_options = [&](std::uint8_t option) {
      std::vector<std::byte> whole{std::byte(next_header::icmpv6), std::byte{0}, std::byte(option), std::byte{4},
                                   std::byte{0}, std::byte{0}, std::byte{0}, std::byte{0}};
      whole.insert(whole.end(), echo.begin(), echo.end());
      return whole;
    };
    const auto padded = behind_options(1);  // PadN
    send(fragment_of(padded, 24, 16, false, 50, next_header::destination));
    send(fragment_of(padded, 0, 24, true, 50, next_header::destination));
    const auto reply = icmpv6_of(drain());
    ASSERT_EQ(reply.size(), 1u);
    const auto r = icmpv6_view::parse(reply[0].bytes, ours, peer);
    ASSERT_TRUE(r.has_value());
    EXPECT_EQ(r->type(), icmpv6_type::echo_reply);
    EXPECT_EQ(r->seq(), 13);
    EXPECT_TRUE(std::ranges::equal(r->data(), data));
    EXPECT_EQ(st.counters(0).get(drop::fragment), 0u);

    const auto problem = [&](const frame& sent, std::uint8_t code, std::uint32_t pointer) {
      send(sent);
      const auto out = icmpv6_of(drain());
      ASSERT_EQ(out.size(), 1u);
      const auto v = icmpv6_view::parse(out[0].bytes, ours, peer);
      ASSERT_TRUE(v.has_value());
      EXPECT_EQ(v->type(), icmpv6_type::parameter_problem);
      EXPECT_EQ(v->code(), code);
      EXPECT_EQ(v->pointer(), pointer);
      EXPECT_TRUE(std::ranges::equal(v->data(), std::span(sent).subspan(14))) << "quotes the fragment";
    };
    const auto asks = behind_options(0xbe);
    problem(fragment_of(asks, 0, 24, true, 51, next_header::destination), 2, 40 + 8 + 2);
    EXPECT_EQ(st.counters(0).get(layer::ipv6, parse_error::bad_option), 1u);
    send(fragment_of(asks, 24, 16, false, 51, next_header::destination));
    EXPECT_TRUE(drain().empty()) << "the packet went on without its first fragment";
    problem(fragment_of(padded, 0, 8, true, 52, next_header::destination), 3, 0);
    EXPECT_EQ(st.counters(0).get(layer::ipv6, parse_error::bad_extension), 1u);
  });
}

// RFC 5722: fragments that overlap drop the whole packet, silently; what
// comes of it later is a new packet that never completes.
TEST_F(ipv6_input, OverlappingFragmentsDropThePacketUnanswered) {
  with_v6([&](stack& st) {
    (void)introduce_peer();
    std::vector<std::byte> echo(8 + 24);
    const std::vector<std::byte> data(24, std::byte{0x5a});
    (void)emit_icmpv6({.type = icmpv6_type::echo_request, .id = 7, .seq = 11, .data = data}, peer, ours, echo);
    send(fragment_of(echo, 0, 16, true, 43));
    send(fragment_of(echo, 8, 24, false, 43));  // [8, 16) again
    EXPECT_TRUE(drain().empty());
    EXPECT_EQ(st.counters(0).get(drop::fragment), 1u);
    send(fragment_of(echo, 16, 16, false, 43));
    EXPECT_TRUE(drain().empty()) << "the dropped packet completed after all";
  });
}

// RFC 8200 4.5: a packet not whole within the reassembly time is dropped
// and counted; where its first fragment came, that fragment's source gets
// Time Exceeded, code 1 (fragment reassembly time exceeded), quoting the
// fragment as it came; where only a later one came, nothing.
TEST_F(ipv6_input, AnExpiredReassemblyIsAnsweredWithTimeExceededWhereItsFirstFragmentCame) {
  with_stack(
      [&](stack& st) {
        (void)drain();
        (void)introduce_peer();
        std::vector<std::byte> echo(8 + 24);
        const std::vector<std::byte> data(24, std::byte{0x33});
        (void)emit_icmpv6({.type = icmpv6_type::echo_request, .id = 7, .seq = 12, .data = data}, peer, ours, echo);
        const frame first = fragment_of(echo, 0, 16, true, 44);
        send(first);
        send(fragment_of(echo, 16, 16, false, 45));  // another packet's last fragment
        std::vector<frame> out;
        for (int i = 0; i < 100 && st.counters(0).get(drop::fragment_timeout) < 2; ++i)
          for (frame& f : drain()) out.push_back(std::move(f));
        for (frame& f : drain()) out.push_back(std::move(f));
        EXPECT_EQ(st.counters(0).get(drop::fragment_timeout), 2u);
        const auto got = icmpv6_of(out);
        ASSERT_EQ(got.size(), 1u) << "one Time Exceeded, for the packet whose first fragment came";
        EXPECT_EQ(got[0].ip.src, ours);
        EXPECT_EQ(got[0].ip.dst, peer);
        const auto r = icmpv6_view::parse(got[0].bytes, ours, peer);
        ASSERT_TRUE(r.has_value());
        EXPECT_EQ(r->type(), icmpv6_type::time_exceeded);
        EXPECT_EQ(r->code(), 1);
        EXPECT_TRUE(std::ranges::equal(r->data(), std::span(first).subspan(14)));
      },
      [](stack_config& sc) {
        sc.ipv6 = {{ours, 64}};
        sc.dad_transmits = 0;
        sc.reassembly.ipv6_timeout_ns = 30'000'000;
      });
}

}  // namespace
}  // namespace affine::stack
