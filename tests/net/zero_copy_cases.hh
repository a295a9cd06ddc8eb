#pragma once
// Zero-copy I/O of the socket API (tcp_stream::read_view / consume,
// write_view / commit; include/affine/net.hh), the same cases on every
// backend, with the fixtures of wait_any_cases.hh: what a view lends is
// what came, in order; nothing is lost between a view and a plain read;
// the end of the stream is an empty view; a commit larger than its view is
// refused; a megabyte each way through views arrives intact; a stream with
// lent, unconsumed bytes stays readable for wait_any.

#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <string>
#include <vector>

#include "tests/net/wait_any_cases.hh"

namespace affine::test::zero_copy_cases {

using wait_any_cases::bytes_of;
using wait_any_cases::connect_pair;
using wait_any_cases::in_5s;
using wait_any_cases::listen_on;
using wait_any_cases::stream_pair;
using wait_any_cases::two_ends;

inline std::string text_of(std::span<const std::byte> b) { return {reinterpret_cast<const char*>(b.data()), b.size()}; }

// Reads through views until `n` bytes or the end; what came, in order.
inline std::string take_views(net::tcp_stream& s, std::size_t n) {
  std::string got;
  while (got.size() < n) {
    auto v = s.read_view(in_5s());
    EXPECT_TRUE(v.has_value()) << v.error().message();
    if (!v || v->empty()) break;
    const std::size_t take = std::min(v->size(), n - got.size());
    got += text_of(v->first(take));
    s.consume(take);
  }
  return got;
}

// Writes `data` through views.
inline void put_views(net::tcp_stream& s, std::span<const std::byte> data) {
  while (!data.empty()) {
    auto room = s.write_view(in_5s());
    ASSERT_TRUE(room.has_value()) << room.error().message();
    ASSERT_FALSE(room->empty());
    const std::size_t n = std::min(room->size(), data.size());
    std::memcpy(room->data(), data.data(), n);
    ASSERT_TRUE(s.commit(n, in_5s()).has_value());
    data = data.subspan(n);
  }
}

template <class Ends>
class zero_copy_on : public Ends {};
TYPED_TEST_SUITE_P(zero_copy_on);

TYPED_TEST_P(zero_copy_on, AViewLendsWhatCameAndAReadGoesOnFromWhatIsNotConsumed) {
  this->on_ends([](const two_ends& e) {
    auto l = listen_on(e.far);
    auto p = connect_pair(e, l);
    ASSERT_TRUE(p.far.write(bytes_of("hello, world"), in_5s()));
    EXPECT_EQ(take_views(p.near, 7), "hello, ");
    // The view lends again what was not consumed; a read takes it from there.
    auto v = p.near.read_view(in_5s());
    ASSERT_TRUE(v.has_value()) << v.error().message();
    ASSERT_FALSE(v->empty());
    EXPECT_EQ(text_of(*v).substr(0, 1), "w");
    std::array<std::byte, 16> buf;
    std::size_t got = 0;
    while (got < 5) {
      auto n = p.near.read(std::span(buf).subspan(got), in_5s());
      ASSERT_TRUE(n.has_value() && *n > 0);
      got += *n;
    }
    EXPECT_EQ(text_of(std::span(buf).first(got)), "world");
  });
}

TYPED_TEST_P(zero_copy_on, TheEndOfTheStreamIsAnEmptyView) {
  this->on_ends([](const two_ends& e) {
    auto l = listen_on(e.far);
    auto p = connect_pair(e, l);
    ASSERT_TRUE(p.far.write(bytes_of("last"), in_5s()));
    ASSERT_TRUE(p.far.shutdown_write());
    EXPECT_EQ(take_views(p.near, 100), "last");
    auto v = p.near.read_view(in_5s());
    ASSERT_TRUE(v.has_value()) << v.error().message();
    EXPECT_TRUE(v->empty());
  });
}

TYPED_TEST_P(zero_copy_on, ACommitLargerThanItsViewIsRefusedAndSendsNothing) {
  this->on_ends([](const two_ends& e) {
    auto l = listen_on(e.far);
    auto p = connect_pair(e, l);
    auto room = p.near.write_view(in_5s());
    ASSERT_TRUE(room.has_value()) << room.error().message();
    auto c = p.near.commit(room->size() + 1, in_5s());
    ASSERT_FALSE(c.has_value());
    EXPECT_EQ(c.error(), std::errc::invalid_argument);
    put_views(p.near, bytes_of("only this"));
    ASSERT_TRUE(p.near.shutdown_write());
    EXPECT_EQ(take_views(p.far, 100), "only this");
  });
}

// A megabyte each way at once, both ends through views: every byte, in order.
TYPED_TEST_P(zero_copy_on, AMegabyteEachWayArrivesIntact) {
  this->on_ends([](const two_ends& e) {
    auto l = listen_on(e.far, {.receive_buffer = 65536});
    auto p = connect_pair(e, l, {.send_buffer = 65536});
    std::string data(1 << 20, '\0');
    for (std::size_t i = 0; i < data.size(); ++i) data[i] = char((i * 131 + i / 4093) & 0xff);
    std::string back;
    auto echo = spawn([&] {
                  back = take_views(p.far, data.size());
                  put_views(p.far, bytes_of(back));
                }).value();
    put_views(p.near, bytes_of(data));
    EXPECT_EQ(take_views(p.near, data.size()) == data, true) << "the bytes that came back differ";
    echo.join();
    EXPECT_EQ(back.size(), data.size());
  });
}

TYPED_TEST_P(zero_copy_on, LentBytesNotConsumedKeepTheStreamReadable) {
  this->on_ends([](const two_ends& e) {
    auto l = listen_on(e.far);
    auto p = connect_pair(e, l);
    ASSERT_TRUE(p.far.write(bytes_of("abc"), in_5s()));
    EXPECT_EQ(take_views(p.near, 1), "a");
    std::array entries{net::wait_entry(p.near, net::readiness::readable)};
    auto n = net::wait_any(entries, in_5s());
    ASSERT_TRUE(n.has_value()) << n.error().message();
    EXPECT_EQ(entries[0].ready, net::readiness::readable);
    EXPECT_EQ(take_views(p.near, 2), "bc");
  });
}

REGISTER_TYPED_TEST_SUITE_P(zero_copy_on, AViewLendsWhatCameAndAReadGoesOnFromWhatIsNotConsumed,
                            TheEndOfTheStreamIsAnEmptyView, ACommitLargerThanItsViewIsRefusedAndSendsNothing,
                            AMegabyteEachWayArrivesIntact, LentBytesNotConsumedKeepTheStreamReadable);

}  // namespace affine::test::zero_copy_cases
