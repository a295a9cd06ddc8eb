// Sessions through the proxy on loopback: captured sessions pass byte for
// byte, and every failure ends the session the documented way: the ERR the
// client gets (code, SQL state, message, sequence id), what becomes of the
// backend connection, and the counted reason.

#include <gtest/gtest.h>

#include <fmt/format.h>

#include "apps/mysql-proxy/wire.hh"
#include "tests/apps/mysql_proxy/bytes.hh"
#include "tests/apps/mysql_proxy/harness.hh"

namespace affine_mysql_test {
namespace {

using namespace affine;
using affine_mysql::close_reason;
using affine_mysql::command_kind;

// An ERR payload, spelled out rather than built by the code under test.
std::vector<std::byte> err(std::uint16_t code, std::string_view state, std::string_view message) {
  std::vector<std::byte> out{std::byte{0xff}, std::byte(code & 0xff), std::byte(code >> 8)};
  if (!state.empty()) {
    out.push_back(std::byte{'#'});
    const auto s = from_text(state);
    out.insert(out.end(), s.begin(), s.end());
  }
  const auto m = from_text(message);
  out.insert(out.end(), m.begin(), m.end());
  return out;
}

const auto query_sleep = from_text("\x03SELECT SLEEP(100)");
const auto query_one = from_text("\x03SELECT 1");
const auto com_quit = from_hex("01");
const auto ok_packet = from_hex("00000002000000");

constexpr std::uint64_t close_timeout_ns = 2'000'000'000;

TEST(mysql_session, MariadbSessionPassesThroughByteForByteAndIsCounted) {
  in_runtime([] {
    const auto s = replay_through_proxy(mariadb_session);
    const auto count = [&](command_kind k) { return s->commands[std::size_t(k)].count; };
    const auto errors = [&](command_kind k) { return s->commands[std::size_t(k)].errors; };
    EXPECT_EQ(count(command_kind::handshake), 1u);
    EXPECT_EQ(count(command_kind::query), 3u);
    EXPECT_EQ(errors(command_kind::query), 1u);
    EXPECT_EQ(count(command_kind::stmt_prepare), 1u);
    EXPECT_EQ(count(command_kind::stmt_execute), 1u);
    EXPECT_EQ(count(command_kind::stmt_close), 1u);
    EXPECT_EQ(count(command_kind::change_user), 1u);
    EXPECT_EQ(count(command_kind::quit), 1u);
    EXPECT_EQ(s->commands[std::size_t(command_kind::query)].latency.count(), 3u);
    EXPECT_EQ(s->sessions_opened, 1u);
    EXPECT_EQ(s->closes[std::size_t(close_reason::client_quit)], 1u);
    EXPECT_EQ(s->sessions_open(), 0u);
  });
}

TEST(mysql_session, DeprecateEofCursorAndLocalInfileSessionsPassThrough) {
  in_runtime([] {
    replay_through_proxy(mariadb_deprecate_eof);
    replay_through_proxy(mariadb_cursor);
    replay_through_proxy(mariadb_local_infile);
  });
}

TEST(mysql_session, AuthExchangesPassThrough) {
  in_runtime([] {
    replay_through_proxy(mariadb_ed25519);
    replay_through_proxy(mariadb_switch_to_native);
    replay_through_proxy(mariadb_change_user_refused);
    replay_through_proxy(mysql8_fast_auth);
    replay_through_proxy(mysql8_full_auth);
    replay_through_proxy(mysql8_switch_to_sha2);
  });
}

TEST(mysql_session, UnreachableBackendIsAnErrInPlaceOfTheGreeting) {
  in_runtime([] {
    const auto dead = refusing_address();
    proxy_under_test proxy({{.address = dead}});
    peer client = proxy.connect();
    auto e = client.receive();
    ASSERT_TRUE(e);
    EXPECT_EQ(e->seq, 0);
    EXPECT_EQ(e->payload,
              err(1429, "", fmt::format("Can't connect to backend {}: connection refused", dead.to_string())));
    EXPECT_TRUE(client.closed_within(close_timeout_ns));
    EXPECT_EQ(proxy.next_end(), close_reason::backend_unreachable);
    EXPECT_EQ(proxy.backends.at(0).connect_failures(), 1u);
  });
}

TEST(mysql_session, NextHealthyBackendServesWhenTheFirstRefuses) {
  in_runtime([] {
    fake_backend live;
    proxy_under_test proxy({{.address = refusing_address()}, {.address = live.address()}});
    peer client = proxy.connect();
    peer server = live.accept();
    log_in(client, server);
    client.send(0, com_quit);
    EXPECT_TRUE(server.receive());
    EXPECT_EQ(proxy.next_end(), close_reason::client_quit);
    EXPECT_EQ(proxy.backends.at(0).connect_failures(), 1u);
    EXPECT_EQ(proxy.backends.at(1).sessions(), 1u);
  });
}

TEST(mysql_session, NoHealthyBackend) {
  in_runtime([] {
    fake_backend backend;
    proxy_under_test proxy({{.address = backend.address()}});
    proxy.backends.mark(0, false);
    peer client = proxy.connect();
    auto e = client.receive();
    ASSERT_TRUE(e);
    EXPECT_EQ(e->payload, err(1429, "", "Can't connect to a backend: none is healthy"));
    EXPECT_EQ(proxy.next_end(), close_reason::no_backend);
  });
}

TEST(mysql_session, EveryBackendAtItsLimit) {
  in_runtime([] {
    fake_backend backend;
    proxy_under_test proxy({{.address = backend.address(), .max_connections = 1}});
    peer first = proxy.connect();
    peer server = backend.accept();
    log_in(first, server);
    peer second = proxy.connect();
    auto e = second.receive();
    ASSERT_TRUE(e);
    EXPECT_EQ(e->payload, err(1040, "", "Too many connections: every healthy backend is at its limit"));
    EXPECT_EQ(proxy.next_end(), close_reason::no_backend);
    first.send(0, com_quit);
    EXPECT_EQ(proxy.next_end(), close_reason::client_quit);
  });
}

TEST(mysql_session, ErrGreetingGoesToTheClientUnchanged) {
  in_runtime([] {
    fake_backend backend;
    proxy_under_test proxy({{.address = backend.address()}});
    peer client = proxy.connect();
    peer server = backend.accept();
    const auto blocked = err(1129, "", "Host '10.0.0.9' is blocked because of many connection errors");
    server.send(0, blocked);
    auto e = client.receive();
    ASSERT_TRUE(e);
    EXPECT_EQ(e->payload, blocked);
    EXPECT_EQ(proxy.next_end(), close_reason::backend_refused);
  });
}

TEST(mysql_session, ClientGoneMidQueryClosesTheBackendConnection) {
  in_runtime([] {
    logged_in session;
    auto& [backend, proxy, client, server] = session;
    client.send(0, query_sleep);
    ASSERT_TRUE(server.receive());
    client.close();
    EXPECT_TRUE(server.closed_within(close_timeout_ns));
    EXPECT_EQ(proxy.next_end(), close_reason::client_gone_mid_command);
  });
}

TEST(mysql_session, SlowBackendSessionDoesNotStallAnother) {
  in_runtime([] {
    fake_backend backend;
    proxy_under_test proxy({{.address = backend.address()}});
    peer slow_client = proxy.connect();
    peer slow_server = backend.accept();
    log_in(slow_client, slow_server);
    slow_client.send(0, query_sleep);
    ASSERT_TRUE(slow_server.receive());  // and no answer yet
    peer client = proxy.connect();
    peer server = backend.accept();
    log_in(client, server);
    const std::uint64_t start = now_ns();
    for (int i = 0; i < 100; ++i) {
      client.send(0, query_one);
      ASSERT_TRUE(server.receive());
      server.send(1, ok_packet);
      ASSERT_TRUE(client.receive());
    }
    EXPECT_LT(now_ns() - start, 2'000'000'000u);  // 100 round trips; the slow one still runs
    slow_server.send(1, ok_packet);
    auto late = slow_client.receive();
    ASSERT_TRUE(late);
    EXPECT_EQ(late->payload, ok_packet);
    client.send(0, com_quit);
    slow_client.send(0, com_quit);
    EXPECT_EQ(proxy.next_end(), close_reason::client_quit);
    EXPECT_EQ(proxy.next_end(), close_reason::client_quit);
  });
}

TEST(mysql_session, BackendMarkedDownEndsItsSessionsWithAnErr) {
  in_runtime([] {
    logged_in session;
    auto& [backend, proxy, client, server] = session;
    proxy.backends.mark(0, false);
    auto e = client.receive();
    ASSERT_TRUE(e);
    EXPECT_EQ(e->seq, 0);  // unasked, between commands
    EXPECT_EQ(e->payload, err(1158, "08S01",
                              fmt::format("Lost connection to backend {}: the health check marked it down",
                                          backend.address().to_string())));
    EXPECT_TRUE(server.closed_within(close_timeout_ns));
    EXPECT_EQ(proxy.next_end(), close_reason::backend_down);
  });
}

TEST(mysql_session, BackendClosingMidQueryIsLostConnection) {
  in_runtime([] {
    logged_in session;
    auto& [backend, proxy, client, server] = session;
    client.send(0, query_one);
    ASSERT_TRUE(server.receive());
    server.close();
    auto e = client.receive();
    ASSERT_TRUE(e);
    EXPECT_EQ(e->seq, 1);  // in the place of the response
    EXPECT_EQ(e->payload,
              err(1158, "08S01", fmt::format("Lost connection to backend {}", backend.address().to_string())));
    EXPECT_EQ(proxy.next_end(), close_reason::backend_closed);
  });
}

TEST(mysql_session, UnknownCommandIsAnsweredAndTheSessionClosed) {
  in_runtime([] {
    logged_in session;
    auto& [backend, proxy, client, server] = session;
    client.send(0, from_hex("1200000000"));  // COM_BINLOG_DUMP
    auto e = client.receive();
    ASSERT_TRUE(e);
    EXPECT_EQ(e->seq, 1);
    EXPECT_EQ(e->payload, err(1047, "08S01", "Unknown command"));
    EXPECT_FALSE(server.receive());  // never forwarded; the connection ends
    EXPECT_EQ(proxy.next_end(), close_reason::unknown_command);
  });
}

TEST(mysql_session, MalformedResponseEndsTheSessionNotTheProxy) {
  in_runtime([] {
    logged_in session;
    auto& [backend, proxy, client, server] = session;
    client.send(0, query_one);
    ASSERT_TRUE(server.receive());
    server.send(1, from_hex("fc01"));  // a column count cut short
    auto e = client.receive();
    ASSERT_TRUE(e);
    EXPECT_EQ(e->seq, 2);
    EXPECT_EQ(e->payload,
              err(1835, "HY000",
                  fmt::format("Malformed packet from backend {}: malformed packet", backend.address().to_string())));
    EXPECT_EQ(proxy.next_end(), close_reason::server_protocol_error);
    // The proxy goes on serving.
    peer next = proxy.connect();
    peer next_server = backend.accept();
    log_in(next, next_server);
    next.send(0, com_quit);
    EXPECT_EQ(proxy.next_end(), close_reason::client_quit);
  });
}

TEST(mysql_session, WrongSequenceIdFromTheClientEndsTheSession) {
  in_runtime([] {
    logged_in session;
    auto& [backend, proxy, client, server] = session;
    client.send(3, query_one);
    EXPECT_TRUE(client.closed_within(close_timeout_ns));
    EXPECT_EQ(proxy.next_end(), close_reason::client_protocol_error);
  });
}

TEST(mysql_session, SplitPacketsPassBothWays) {
  in_runtime([] {
    logged_in session;
    auto& [backend, proxy, client, server] = session;
    std::vector<std::byte> query{std::byte{0x03}};
    query.resize((16u << 20) + 3, std::byte{'q'});
    client.send(0, query);
    auto got = server.receive();
    ASSERT_TRUE(got);
    EXPECT_EQ(got->seq, 0);
    EXPECT_TRUE(got->payload == query);
    // A result set (log_in negotiated MariaDB's CACHE_METADATA: the column
    // count's second byte says the definition follows) whose one row holds
    // a 0xffffff-byte string: two frames.
    std::vector<std::byte> row;
    affine_mysql::put_lenenc_int(row, affine_mysql::max_frame_payload);
    row.resize(row.size() + affine_mysql::max_frame_payload, std::byte{'r'});
    const std::vector<std::vector<std::byte>> response{from_hex("0101"), from_hex("0364656600000001610000"),
                                                       from_hex("fe00000200"), row, from_hex("fe00000200")};
    // The query took sequence ids 0 and 1: the response starts at 2.
    const auto next_seq = [](std::uint8_t seq, const std::vector<std::byte>& p) {
      return std::uint8_t(seq + 1 + p.size() / affine_mysql::max_frame_payload);
    };
    const std::uint8_t first = next_seq(0, query);
    ASSERT_EQ(first, 2);
    std::uint8_t seq = first;
    for (const auto& p : response) {
      server.send(seq, p);
      seq = next_seq(seq, p);
    }
    seq = first;
    for (const auto& p : response) {
      auto r = client.receive();
      ASSERT_TRUE(r);
      EXPECT_EQ(r->seq, seq);
      EXPECT_TRUE(r->payload == p);
      seq = next_seq(seq, p);
    }
    client.send(0, com_quit);
    EXPECT_EQ(proxy.next_end(), close_reason::client_quit);
  });
}

TEST(mysql_session, PacketOverTheLimitIsRefused) {
  in_runtime([] {
    auto o = proxy_under_test::test_options();
    o.max_packet = 1024;
    logged_in session(o);
    auto& [backend, proxy, client, server] = session;
    std::vector<std::byte> query{std::byte{0x03}};
    query.resize(2048, std::byte{'q'});
    client.send(0, query);
    auto e = client.receive();
    ASSERT_TRUE(e);
    EXPECT_EQ(e->payload, err(1153, "08S01", "Got a packet bigger than the proxy's limit"));
    EXPECT_EQ(proxy.next_end(), close_reason::packet_too_large);
  });
}

TEST(mysql_session, ShutdownEndsIdleSessionsWithErr1053) {
  in_runtime([] {
    logged_in session;
    auto& [backend, proxy, client, server] = session;
    proxy.stop();
    auto e = client.receive();
    ASSERT_TRUE(e);
    EXPECT_EQ(e->seq, 0);
    EXPECT_EQ(e->payload, err(1053, "08S01", "Server shutdown in progress"));
    EXPECT_EQ(proxy.next_end(), close_reason::shutdown);
  });
}

TEST(mysql_session, TlsRequestEndsTheSession) {
  in_runtime([] {
    fake_backend backend;
    proxy_under_test proxy({{.address = backend.address()}});
    peer client = proxy.connect();
    peer server = backend.accept();
    server.send(0, from_hex(mariadb_session[0].hex));
    ASSERT_TRUE(client.receive());
    auto ssl = from_hex(mariadb_session[1].hex);
    ssl.resize(32);
    ssl[1] |= std::byte{0x08};
    client.send(1, ssl);
    EXPECT_TRUE(client.closed_within(close_timeout_ns));
    EXPECT_EQ(proxy.next_end(), close_reason::client_wants_tls);
  });
}

TEST(mysql_session, ClientClosingBetweenCommandsSaysQuitForIt) {
  in_runtime([] {
    logged_in session;
    auto& [backend, proxy, client, server] = session;
    client.close();
    auto quit = server.receive();
    ASSERT_TRUE(quit);
    EXPECT_EQ(quit->seq, 0);
    EXPECT_EQ(quit->payload, com_quit);
    EXPECT_EQ(proxy.next_end(), close_reason::client_closed);
  });
}

}  // namespace
}  // namespace affine_mysql_test
