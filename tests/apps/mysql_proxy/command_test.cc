// The command-phase tracker replays whole captured sessions: at every packet
// it must expect that side and that sequence id, and it must see each
// command end exactly where the client saw it end. Then bytes it must
// refuse: unknown commands and malformed responses are errors, never
// crashes.

#include <gtest/gtest.h>

#include <iterator>
#include <random>
#include <string>

#include "apps/mysql-proxy/command.hh"
#include "apps/mysql-proxy/wire.hh"
#include "tests/apps/mysql_proxy/bytes.hh"
#include "tests/apps/mysql_proxy/captures.hh"

namespace affine_mysql {
namespace {

using affine_mysql_test::captured_packet;
using affine_mysql_test::from_hex;
namespace cap_test = affine_mysql_test;

struct end_of_command {
  std::size_t packet;  // index in the session
  command_kind kind;
  outcome how;
  friend bool operator==(const end_of_command&, const end_of_command&) = default;
};

std::ostream& operator<<(std::ostream& os, const end_of_command& e) {
  return os << "{" << e.packet << ", " << to_string(e.kind) << ", "
            << (e.how == outcome::done     ? "done"
                : e.how == outcome::failed ? "failed"
                                           : "more")
            << "}";
}

struct replayed {
  std::vector<end_of_command> ends;
  std::string error;  // the first mismatch or tracker error, with the packet's index
  turn last_turn = turn::server;
};

capabilities negotiated(std::span<const captured_packet> session) {
  const auto greeting = from_hex(session[0].hex);
  const auto answer = from_hex(session[1].hex);
  auto g = parse_greeting(greeting);
  auto r = parse_handshake_response(answer);
  EXPECT_TRUE(g && r);
  return g && r ? negotiate(offered(*g), requested(*r)) : capabilities{};
}

// Feeds the session after its greeting and answer to a tracker.
replayed replay(std::span<const captured_packet> session, capabilities caps) {
  replayed out;
  command_tracker t(caps, std::uint8_t(session[1].seq + 1));
  for (std::size_t i = 2; i < session.size(); ++i) {
    const auto& p = session[i];
    const bool from_client = p.from == 'C';
    const turn now = t.next();
    const bool right_side = from_client ? (now == turn::client_command || now == turn::client) : now == turn::server;
    if (!right_side || t.expected_seq() != p.seq) {
      out.error = "packet " + std::to_string(i) + ": side or sequence id not expected";
      break;
    }
    const auto payload = from_hex(p.hex);
    const packet_view v{p.seq, std::uint8_t(p.seq + 1), payload};
    auto o = from_client ? t.on_client(v) : t.on_server(v);
    if (!o) {
      out.error = "packet " + std::to_string(i) + ": " + std::string(to_string(o.error()));
      break;
    }
    if (*o != outcome::more) out.ends.push_back({i, t.current(), *o});
  }
  out.last_turn = t.next();
  return out;
}

replayed replay(std::span<const captured_packet> session) { return replay(session, negotiated(session)); }

using k = command_kind;
constexpr auto done = outcome::done;
constexpr auto failed = outcome::failed;

TEST(mysql_command, MariadbSessionEveryCommandEndsWhereTheClientSawItEnd) {
  const auto r = replay(cap_test::mariadb_session);
  EXPECT_EQ(r.error, "");
  const std::vector<end_of_command> expected{
      {2, k::handshake, done},     {11, k::query, done},        {23, k::query, done},  // two result sets: one end
      {25, k::query, failed},      {27, k::init_db, done},      {29, k::ping, done},
      {37, k::stmt_prepare, done}, {43, k::stmt_execute, done}, {45, k::stmt_reset, done},
      {46, k::stmt_close, done},   {50, k::change_user, done},  {51, k::quit, done},
  };
  EXPECT_EQ(r.ends, expected);
  EXPECT_EQ(r.last_turn, turn::closed);
}

TEST(mysql_command, DeprecateEofSessionTerminatorsInsteadOfEofs) {
  const auto r = replay(cap_test::mariadb_deprecate_eof);
  EXPECT_EQ(r.error, "");
  const std::vector<end_of_command> expected{
      {2, k::handshake, done},     {10, k::query, done},        {20, k::query, done},         // two result sets
      {24, k::query, done},        {26, k::query, done},                                      // no rows; an UPDATE's OK
      {32, k::stmt_prepare, done}, {40, k::stmt_execute, done}, {46, k::stmt_execute, done},  // with a cursor
      {49, k::stmt_fetch, done},   {52, k::stmt_fetch, done},   {53, k::stmt_close, done},
      {56, k::stmt_prepare, done},  // parameters, no columns
      {66, k::query, done},         // CALL: 2 results and OK
      {67, k::quit, done},
  };
  EXPECT_EQ(r.ends, expected);
}

TEST(mysql_command, CursorWithoutDeprecateEofEndsTheExecuteAtTheDefinitionsEof) {
  const auto r = replay(cap_test::mariadb_cursor);
  EXPECT_EQ(r.error, "");
  const std::vector<end_of_command> expected{
      {2, k::handshake, done},   {6, k::stmt_prepare, done}, {10, k::stmt_execute, done}, {13, k::stmt_fetch, done},
      {16, k::stmt_fetch, done}, {18, k::stmt_fetch, done},  {19, k::stmt_close, done},   {20, k::quit, done},
  };
  EXPECT_EQ(r.ends, expected);
}

TEST(mysql_command, LocalInfileHandsTheTurnToTheClientAndPassesProgressReports) {
  const auto r = replay(cap_test::mariadb_local_infile);
  EXPECT_EQ(r.error, "");
  const std::vector<end_of_command> expected{{2, k::handshake, done}, {8, k::query, done}, {9, k::quit, done}};
  EXPECT_EQ(r.ends, expected);
}

TEST(mysql_command, RefusedChangeUserKeepsTheSession) {
  const auto r = replay(cap_test::mariadb_change_user_refused);
  EXPECT_EQ(r.error, "");
  const std::vector<end_of_command> expected{
      {2, k::handshake, done}, {6, k::change_user, failed}, {12, k::query, done}, {13, k::quit, done}};
  EXPECT_EQ(r.ends, expected);
}

TEST(mysql_command, AuthSwitchToNativePassword) {
  const auto r = replay(cap_test::mariadb_switch_to_native);
  EXPECT_EQ(r.error, "");
  const std::vector<end_of_command> expected{{4, k::handshake, done}, {5, k::quit, done}};
  EXPECT_EQ(r.ends, expected);
}

TEST(mysql_command, AuthSwitchToClientEd25519) {
  const auto r = replay(cap_test::mariadb_ed25519);
  EXPECT_EQ(r.error, "");
  const std::vector<end_of_command> expected{{4, k::handshake, done}, {5, k::quit, done}};
  EXPECT_EQ(r.ends, expected);
}

TEST(mysql_command, CachingSha2FastAuthServerSendsOkAfterMoreData) {
  const auto r = replay(cap_test::mysql8_fast_auth);
  EXPECT_EQ(r.error, "");
  const std::vector<end_of_command> expected{{3, k::handshake, done}};
  EXPECT_EQ(r.ends, expected);
  EXPECT_EQ(r.last_turn, turn::client_command);
}

TEST(mysql_command, CachingSha2FullAuthPublicKeyExchange) {
  const auto r = replay(cap_test::mysql8_full_auth);
  EXPECT_EQ(r.error, "");
  const std::vector<end_of_command> expected{{6, k::handshake, done}};
  EXPECT_EQ(r.ends, expected);
}

TEST(mysql_command, CachingSha2AfterAnAuthSwitch) {
  const auto r = replay(cap_test::mysql8_switch_to_sha2);
  EXPECT_EQ(r.error, "");
  const std::vector<end_of_command> expected{{5, k::handshake, done}};
  EXPECT_EQ(r.ends, expected);
}

// ---- crafted exchanges ---------------------------------------------------------

capabilities plain() { return {.flags = cap::protocol_41 | cap::secure_connection | cap::plugin_auth}; }

// A tracker past authentication, idle.
command_tracker logged_in(capabilities caps = plain()) {
  command_tracker t(caps, 2);
  const auto ok = from_hex("00000002000000");
  EXPECT_EQ(t.on_server({2, 3, ok}), outcome::done);
  return t;
}

std::expected<outcome, track_error> client(command_tracker& t, std::string_view hex) {
  const auto b = from_hex(hex);
  return t.on_client({t.expected_seq(), std::uint8_t(t.expected_seq() + 1), b});
}
std::expected<outcome, track_error> server(command_tracker& t, std::span<const std::byte> payload) {
  return t.on_server({t.expected_seq(), std::uint8_t(t.expected_seq() + 1), payload});
}
std::expected<outcome, track_error> server(command_tracker& t, std::string_view hex) {
  return server(t, from_hex(hex));
}

TEST(mysql_command, RefusedLoginClosesTheSession) {
  command_tracker t(plain(), 2);
  EXPECT_EQ(server(t, "ff15042332383030304163636573732064656e696564"), outcome::failed);
  EXPECT_EQ(t.next(), turn::closed);
}

TEST(mysql_command, UnknownCommandsAreRefused) {
  for (const char* hex : {"12", "fa01000000", "fe", "00", "20"}) {  // binlog dump, bulk execute, multi, sleep, clone
    auto t = logged_in();
    EXPECT_EQ(client(t, hex), std::unexpected(track_error::unknown_command)) << hex;
  }
  auto t = logged_in();
  EXPECT_EQ(client(t, ""), std::unexpected(track_error::empty_command));
}

TEST(mysql_command, CommandsWithoutResponseEndAtOnce) {
  auto t = logged_in();
  EXPECT_EQ(client(t, "180100000000006162"), outcome::done);  // COM_STMT_SEND_LONG_DATA
  EXPECT_EQ(t.next(), turn::client_command);
  EXPECT_EQ(t.current(), k::stmt_send_long_data);
  EXPECT_EQ(client(t, "1901000000"), outcome::done);
  EXPECT_EQ(t.next(), turn::client_command);
}

TEST(mysql_command, OnePacketResponses) {
  auto t = logged_in();
  EXPECT_EQ(client(t, "09"), outcome::more);  // COM_STATISTICS: a line of text
  EXPECT_EQ(server(t, "557074696d653a2031"), outcome::done);
  EXPECT_EQ(client(t, "1b0000"), outcome::more);  // COM_SET_OPTION: EOF
  EXPECT_EQ(server(t, "fe00000200"), outcome::done);
  EXPECT_EQ(client(t, "1f"), outcome::more);  // COM_RESET_CONNECTION
  EXPECT_EQ(server(t, "ff0000"), outcome::failed);
  EXPECT_EQ(t.current(), k::reset_connection);
}

TEST(mysql_command, FieldListEndsAtEof) {
  auto t = logged_in();
  EXPECT_EQ(client(t, "047800"), outcome::more);
  EXPECT_EQ(server(t, "03646566017401780178026964026964000c3f000b000000030350000000fb"), outcome::more);
  EXPECT_EQ(server(t, "fe00000200"), outcome::done);
}

TEST(mysql_command, ErrInTheMiddleOfRowsEndsTheQuery) {
  auto t = logged_in();
  EXPECT_EQ(client(t, "0353454c454354"), outcome::more);
  EXPECT_EQ(server(t, "01"), outcome::more);
  EXPECT_EQ(server(t, "0364656600000001610000"), outcome::more);
  EXPECT_EQ(server(t, "fe00000200"), outcome::more);
  EXPECT_EQ(server(t, "0131"), outcome::more);
  EXPECT_EQ(server(t, "ff25052337303030314b696c6c6564"), outcome::failed);
  EXPECT_EQ(t.next(), turn::client_command);
}

TEST(mysql_command, RowStartingWithAHugeStringIsNotATerminator) {
  // A text row whose first value is 2^24 bytes long starts with 0xfe (an
  // 8-byte length), like an EOF: its size tells them apart.
  for (const bool deprecate : {false, true}) {
    capabilities caps = plain();
    if (deprecate) caps.flags |= cap::deprecate_eof;
    auto t = logged_in(caps);
    EXPECT_EQ(client(t, "0353454c454354"), outcome::more);
    EXPECT_EQ(server(t, "01"), outcome::more);
    EXPECT_EQ(server(t, "0364656600000001610000"), outcome::more);
    if (!deprecate) {
      EXPECT_EQ(server(t, "fe00000200"), outcome::more);
    }
    std::vector<std::byte> row{std::byte{0xfe}};
    put_u64(row, 1u << 24);
    row.resize(row.size() + (1u << 24), std::byte{'x'});
    EXPECT_EQ(server(t, row), outcome::more);
    EXPECT_EQ(server(t, deprecate ? "fe000002000000" : "fe00000200"), outcome::done);
  }
}

TEST(mysql_command, MalformedResponsesAreErrors) {
  struct bad {
    const char* what;
    std::vector<const char*> server;
    track_error error;
  };
  const std::vector<bad> cases{
      {"column count cut short", {"fc01"}, track_error::malformed},
      {"zero columns", {"00"}, track_error::malformed},  // an OK cut short
      {"column count beyond 65535", {"fd000001"}, track_error::malformed},
      {"OK cut short", {"0000"}, track_error::malformed},
      {"a row where the EOF belongs", {"01", "0364656600000001610000", "0131"}, track_error::unexpected_packet},
      {"EOF cut short", {"01", "0364656600000001610000", "fe00000200", "fe0000"}, track_error::malformed},
  };
  for (const auto& c : cases) {
    auto t = logged_in();
    ASSERT_EQ(client(t, "0353454c454354"), outcome::more);
    std::expected<outcome, track_error> last = outcome::more;
    for (const char* hex : c.server) last = server(t, hex);
    EXPECT_EQ(last, std::unexpected(c.error)) << c.what;
  }
}

TEST(mysql_command, MalformedPrepareResponsesAreErrors) {
  for (const char* hex : {"000100", "fe00000200"}) {
    auto t = logged_in();
    ASSERT_EQ(client(t, "16444f203f"), outcome::more);
    EXPECT_FALSE(server(t, hex)) << hex;
  }
}

TEST(mysql_command, LocalInfileRefusedWithoutTheCapability) {
  auto t = logged_in();
  ASSERT_EQ(client(t, "034c4f4144"), outcome::more);
  EXPECT_EQ(server(t, "fb2f746d702f79"), std::unexpected(track_error::unexpected_packet));
}

TEST(mysql_command, UnknownAuthPacketIsAnError) {
  command_tracker t(plain(), 2);
  EXPECT_EQ(server(t, "02"), std::unexpected(track_error::unexpected_packet));
}

// Every captured session with bytes changed, cut or dropped at random
// (seeded: a failure replays): the parsers and the tracker must answer each
// packet with a value, and nothing may read out of bounds (the ASan build
// runs this too).
TEST(mysql_command, MutatedSessionsNeverCrashTheParsers) {
  const std::span<const captured_packet> sessions[] = {
      cap_test::mariadb_session, cap_test::mariadb_deprecate_eof, cap_test::mariadb_cursor,
      cap_test::mariadb_local_infile, cap_test::mysql8_full_auth};
  std::mt19937 rng(20240611);
  std::size_t errors = 0;
  std::size_t packets = 0;
  for (int round = 0; round < 300; ++round) {
    const auto session = sessions[std::size_t(round) % std::size(sessions)];
    auto greeting = from_hex(session[0].hex);
    auto answer = from_hex(session[1].hex);
    const auto mutate = [&](std::vector<std::byte>& b) {
      if (b.empty()) return;
      switch (rng() % 3) {
        case 0: b[rng() % b.size()] = std::byte(rng()); break;  // a byte changed
        case 1: b.resize(rng() % b.size()); break;                // cut short
        default: break;                                           // left alone
      }
    };
    mutate(greeting);
    mutate(answer);
    (void)rewrite_greeting(greeting);
    (void)rewrite_handshake_response(answer);
    command_tracker t(negotiated(session), 2);
    for (std::size_t i = 2; i < session.size() && t.next() != turn::closed; ++i) {
      auto payload = from_hex(session[i].hex);
      mutate(payload);
      const packet_view v{t.expected_seq(), std::uint8_t(t.expected_seq() + 1), payload};
      const bool from_client = t.next() != turn::server;
      auto o = from_client ? t.on_client(v) : t.on_server(v);
      ++packets;
      if (!o) {
        ++errors;
        break;
      }
    }
  }
  EXPECT_GT(errors, 0u);  // the mutations are not all harmless
  EXPECT_GT(packets, 1000u);
}

}  // namespace
}  // namespace affine_mysql
