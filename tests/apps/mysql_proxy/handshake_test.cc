// The connection phase on captured and documented bytes: greetings from
// MariaDB 10.11 and in MySQL 8's shape, HandshakeResponse41, the capability
// bits the proxy clears, and whose turn it is in the auth exchange.

#include <gtest/gtest.h>

#include "apps/mysql-proxy/handshake.hh"
#include "tests/apps/mysql_proxy/bytes.hh"
#include "tests/apps/mysql_proxy/captures.hh"

namespace affine_mysql {
namespace {

using affine_mysql_test::from_hex;
using affine_mysql_test::from_text;
namespace cap_test = affine_mysql_test;

std::vector<std::byte> payload(const cap_test::captured_packet& p) { return from_hex(p.hex); }

TEST(mysql_handshake, MariadbGreetingParses) {
  const auto g = payload(cap_test::mariadb_session[0]);
  auto parsed = parse_greeting(g);
  ASSERT_TRUE(parsed);
  EXPECT_EQ(parsed->server_version, "5.5.5-10.11.19-MariaDB-0+deb12u1");
  EXPECT_EQ(parsed->connection_id, 8u);
  EXPECT_EQ(parsed->capabilities, 0x81fff7feu);  // bit 0 clear: MariaDB's extended bits follow
  EXPECT_EQ(parsed->mariadb_capabilities, 0x1du);
  EXPECT_EQ(parsed->charset, 8);
  EXPECT_EQ(parsed->status, 2);
  EXPECT_EQ(parsed->auth_plugin, "mysql_native_password");
  EXPECT_EQ(std::vector<std::byte>(parsed->scramble.begin(), parsed->scramble.end()), from_text("xvf|^Cq0"));
  EXPECT_EQ(std::vector<std::byte>(parsed->scramble_rest.begin(), parsed->scramble_rest.end()),
            from_text("9l9rT00A4\"L;"));
}

TEST(mysql_handshake, MariadbGreetingRewriteClearsOnlyWhatTheProxyCannotCarry) {
  const auto g = payload(cap_test::mariadb_session[0]);
  auto rewritten = rewrite_greeting(g);
  ASSERT_TRUE(rewritten);
  ASSERT_EQ(rewritten->size(), g.size());
  auto parsed = parse_greeting(*rewritten);
  ASSERT_TRUE(parsed);
  EXPECT_EQ(parsed->capabilities, 0x81fff7feu & cap::forwarded);
  EXPECT_EQ(parsed->capabilities & (cap::ssl | cap::compress), 0u);
  // STMT_BULK_OPERATIONS (4) goes; PROGRESS, EXTENDED_TYPE_INFO, CACHE_METADATA stay.
  EXPECT_EQ(parsed->mariadb_capabilities, 0x19u);
  std::size_t differing = 0;
  for (std::size_t i = 0; i < g.size(); ++i) differing += g[i] != (*rewritten)[i];
  EXPECT_EQ(differing, 3u);  // capability bytes only: compress, remember-options, bulk operations
}

TEST(mysql_handshake, Mysql8GreetingLosesTlsCompressionAndNewLayouts) {
  const auto g = payload(cap_test::mysql8_fast_auth[0]);
  auto original = parse_greeting(g);
  ASSERT_TRUE(original);
  EXPECT_EQ(original->server_version, "8.0.36");
  EXPECT_EQ(original->capabilities, 0xdfffffffu);
  EXPECT_EQ(original->mariadb_capabilities, 0u);  // bit 0 set: a MySQL server
  EXPECT_EQ(original->auth_plugin, "caching_sha2_password");
  EXPECT_EQ(original->scramble_rest.size(), 12u);
  auto rewritten = rewrite_greeting(g);
  ASSERT_TRUE(rewritten);
  auto parsed = parse_greeting(*rewritten);
  ASSERT_TRUE(parsed);
  for (const std::uint32_t gone : {cap::ssl, cap::compress, cap::zstd_compression, cap::optional_resultset_metadata,
                                   cap::query_attributes, cap::multi_factor_authentication})
    EXPECT_EQ(parsed->capabilities & gone, 0u) << gone;
  for (const std::uint32_t kept : {cap::protocol_41, cap::deprecate_eof, cap::plugin_auth, cap::secure_connection,
                                   cap::multi_results, cap::ps_multi_results, cap::session_track})
    EXPECT_NE(parsed->capabilities & kept, 0u) << kept;
  EXPECT_EQ(parsed->auth_plugin, "caching_sha2_password");
}

TEST(mysql_handshake, GreetingPrefixesAreErrorsNeverCrashes) {
  const auto g = payload(cap_test::mariadb_session[0]);
  const std::size_t plugin_starts = g.size() - std::string_view("mysql_native_password").size() - 1;
  for (std::size_t n = 0; n < plugin_starts; ++n) EXPECT_FALSE(parse_greeting(std::span(g).first(n))) << n << " bytes";
}

TEST(mysql_handshake, GreetingOfAnotherProtocolVersionIsRefused) {
  auto g = payload(cap_test::mariadb_session[0]);
  g[0] = std::byte{9};
  EXPECT_EQ(parse_greeting(g), std::unexpected(handshake_error::not_v10));
  const auto err = from_hex("ff6a04486f7374206e6f7420616c6c6f776564");
  EXPECT_EQ(parse_greeting(err), std::unexpected(handshake_error::not_v10));
}

TEST(mysql_handshake, MariadbHandshakeResponseParses) {
  const auto r = payload(cap_test::mariadb_session[1]);
  auto parsed = parse_handshake_response(r);
  ASSERT_TRUE(parsed);
  EXPECT_EQ(parsed->capabilities, 0x00bfa28cu);
  EXPECT_EQ(parsed->mariadb_capabilities, 0x1du);
  EXPECT_EQ(parsed->max_packet, 1u << 20);
  EXPECT_EQ(parsed->charset, 45);
  EXPECT_EQ(parsed->user, "proxy");
  EXPECT_EQ(parsed->auth_response.size(), 20u);
  EXPECT_EQ(parsed->database, "t");
  EXPECT_EQ(parsed->auth_plugin, "mysql_native_password");
}

TEST(mysql_handshake, ResponseWithoutTokenBeforeASwitch) {
  // libmariadb with caching_sha2_password as its default plugin sends an
  // empty token; MariaDB then switches it to mysql_native_password.
  const auto r = payload(cap_test::mariadb_switch_to_native[1]);
  auto parsed = parse_handshake_response(r);
  ASSERT_TRUE(parsed);
  EXPECT_TRUE(parsed->auth_response.empty());
  EXPECT_EQ(parsed->auth_plugin, "caching_sha2_password");
}

TEST(mysql_handshake, Mysql8StyleResponseParses) {
  const auto r = payload(cap_test::mysql8_fast_auth[1]);
  auto parsed = parse_handshake_response(r);
  ASSERT_TRUE(parsed);
  EXPECT_EQ(parsed->user, "app");
  EXPECT_EQ(parsed->auth_response.size(), 32u);
  EXPECT_EQ(parsed->database, "shop");
  EXPECT_EQ(parsed->mariadb_capabilities, 0u);
  EXPECT_TRUE(parsed->capabilities & cap::deprecate_eof);
}

TEST(mysql_handshake, ResponseRewriteClearsBitsTheClientClaimsAnyway) {
  auto r = payload(cap_test::mariadb_session[1]);
  r[1] |= std::byte{0x08};  // CLIENT_SSL (bit 11) on a full answer
  r[0] |= std::byte{0x20};  // CLIENT_COMPRESS
  auto rewritten = rewrite_handshake_response(r);
  ASSERT_TRUE(rewritten);
  auto parsed = parse_handshake_response(*rewritten);
  ASSERT_TRUE(parsed);
  EXPECT_EQ(parsed->capabilities, 0x00bfa28cu);
  EXPECT_EQ(parsed->mariadb_capabilities, 0x19u);  // STMT_BULK_OPERATIONS cleared
  EXPECT_EQ(parsed->user, "proxy");
}

TEST(mysql_handshake, SslRequestIsRefused) {
  // The 32-byte SSLRequest a client sends before TLS: the answer's fixed
  // part with CLIENT_SSL.
  auto ssl = payload(cap_test::mariadb_session[1]);
  ssl.resize(32);
  ssl[1] |= std::byte{0x08};
  EXPECT_EQ(parse_handshake_response(ssl), std::unexpected(handshake_error::ssl_request));
}

TEST(mysql_handshake, PreProtocol41ClientIsRefused) {
  const auto old = from_hex("8d0000000000007573657200");
  EXPECT_EQ(parse_handshake_response(old), std::unexpected(handshake_error::not_protocol_41));
}

TEST(mysql_handshake, ResponsePrefixesUpToTheTokenAreErrors) {
  const auto r = payload(cap_test::mariadb_session[1]);
  const std::size_t token_ends = 32 + std::string_view("proxy").size() + 1 + 1 + 20;
  for (std::size_t n = 0; n < token_ends; ++n)
    EXPECT_FALSE(parse_handshake_response(std::span(r).first(n))) << n << " bytes";
  EXPECT_TRUE(parse_handshake_response(std::span(r).first(token_ends)));
}

TEST(mysql_handshake, TokenLengthThatLiesIsTruncated) {
  auto r = payload(cap_test::mysql8_fast_auth[1]);
  r[32 + 4] = std::byte{200};  // after "app\0": the one-byte token length
  EXPECT_EQ(parse_handshake_response(r), std::unexpected(handshake_error::truncated));
}

TEST(mysql_handshake, NegotiationKeepsWhatBothEndsHaveAndTheProxyCarries) {
  // The parsed values point into their payloads: keep them.
  const auto greeting = payload(cap_test::mariadb_session[0]);
  const auto answer = payload(cap_test::mariadb_session[1]);
  const auto python_answer = payload(cap_test::mariadb_deprecate_eof[1]);
  auto g = parse_greeting(greeting);
  auto r = parse_handshake_response(answer);
  ASSERT_TRUE(g && r);
  const auto c = negotiate(offered(*g), requested(*r));
  EXPECT_EQ(c.flags, 0x81fff7feu & 0x00bfa28cu & cap::forwarded);
  EXPECT_FALSE(c.has(cap::deprecate_eof));
  EXPECT_TRUE(c.has(cap::local_files));
  EXPECT_EQ(c.mariadb, mariadb_cap::progress | mariadb_cap::extended_type_info | mariadb_cap::cache_metadata);

  auto py = parse_handshake_response(python_answer);
  ASSERT_TRUE(py);
  const auto d = negotiate(offered(*g), requested(*py));
  EXPECT_TRUE(d.has(cap::deprecate_eof));
  EXPECT_EQ(d.mariadb, 0u);  // the client set bit 0: no extended bits
}

TEST(mysql_handshake, AuthTurns) {
  EXPECT_EQ(auth_turn_after(from_hex("00000002000000")), auth_turn::done_ok);
  EXPECT_EQ(auth_turn_after(from_hex("ff15042332383030304163636573732064656e696564")), auth_turn::done_err);
  EXPECT_EQ(auth_turn_after(payload(cap_test::mariadb_ed25519[2])), auth_turn::client);  // switch
  EXPECT_EQ(auth_turn_after(payload(cap_test::mariadb_switch_to_native[2])), auth_turn::client);
  EXPECT_EQ(auth_turn_after(from_hex("0103")), auth_turn::server);  // fast auth success: OK follows
  EXPECT_EQ(auth_turn_after(from_hex("0104")), auth_turn::client);  // perform full authentication
  EXPECT_EQ(auth_turn_after(payload(cap_test::mysql8_full_auth[4])), auth_turn::client);  // public key
  EXPECT_EQ(auth_turn_after(from_hex("02")), auth_turn::bad);
  EXPECT_EQ(auth_turn_after({}), auth_turn::bad);
}

}  // namespace
}  // namespace affine_mysql
