#pragma once
// Follows a connection from the authentication exchange through the
// command phase, packet by packet, so the proxy knows at every point whose
// packet comes next, with which sequence id, and where each command's
// response ends. That is what per-command latency needs, and what a later
// multiplexer or read/write splitter needs: a backend connection can change
// hands only between commands.
//
// How each command's response ends (MySQL's Command Phase):
//   COM_QUERY, COM_PROCESS_INFO, COM_STMT_EXECUTE: a result. OK or ERR; or
//     LOCAL INFILE (0xfb: the client sends the file's packets and an empty
//     one, then the server sends OK or ERR); or a result set: column count,
//     column definitions (left out under MariaDB's CACHE_METADATA when the
//     count packet's second byte is 0), EOF unless CLIENT_DEPRECATE_EOF,
//     rows, and a terminator (EOF, or an OK with the 0xfe header). An OK or
//     terminator with SERVER_MORE_RESULTS_EXISTS is followed by another
//     result. COM_STMT_EXECUTE with a cursor sends no rows: without
//     CLIENT_DEPRECATE_EOF the EOF after the column definitions carries
//     SERVER_STATUS_CURSOR_EXISTS and ends the response; with it, a
//     terminator follows the definitions directly.
//   COM_STMT_PREPARE: ERR, or OK with num_params and num_columns, then that
//     many parameter definitions and column definitions, each group followed
//     by EOF unless CLIENT_DEPRECATE_EOF.
//   COM_STMT_FETCH: binary rows and a terminator.
//   COM_FIELD_LIST: column definitions until EOF (or ERR).
//   COM_STMT_CLOSE, COM_STMT_SEND_LONG_DATA: no response.
//   COM_QUIT: no response; the connection closes.
//   COM_CHANGE_USER: an authentication exchange (handshake.hh); a refusal
//     leaves the old user logged in (MariaDB, MySQL), so the session goes on.
//   COM_PING, COM_INIT_DB, COM_STMT_RESET, COM_RESET_CONNECTION,
//     COM_SET_OPTION, COM_STATISTICS, COM_PROCESS_KILL, COM_REFRESH,
//     COM_DEBUG, COM_SHUTDOWN, COM_CREATE_DB, COM_DROP_DB: one packet (OK,
//     EOF, ERR, or COM_STATISTICS' text).
// In any response an ERR packet ends it (as clients read it), and a MariaDB
// progress report (ERR header, code 0xffff) is passed on and changes nothing.
//
// Any other command byte (replication, COM_STMT_BULK_EXECUTE, COM_MULTI,
// the server-internal COM_SLEEP, COM_CONNECT, ...) is refused with
// track_error::unknown_command: its response cannot be followed, so the
// session answers ERR 1047 and closes rather than guess.

#include <cstdint>
#include <expected>
#include <string_view>

#include "apps/mysql-proxy/handshake.hh"
#include "apps/mysql-proxy/packet.hh"

namespace affine_mysql {

enum class command_kind : std::uint8_t {
  handshake,  // the connection's first authentication
  query,
  stmt_prepare,
  stmt_execute,
  stmt_fetch,
  stmt_close,
  stmt_reset,
  stmt_send_long_data,
  ping,
  init_db,
  change_user,
  reset_connection,
  set_option,
  field_list,
  statistics,
  admin,  // COM_PROCESS_INFO, COM_PROCESS_KILL, COM_REFRESH, COM_DEBUG, COM_SHUTDOWN, COM_CREATE_DB, COM_DROP_DB
  quit,
  count_
};
std::string_view to_string(command_kind k);

enum class turn : std::uint8_t {
  client_command,  // idle: the client's next command (sequence id 0)
  client,          // the client's packet inside an exchange (auth, LOCAL INFILE data)
  server,          // the server's packet
  closed,          // nothing more: COM_QUIT, or authentication refused
};

enum class track_error : std::uint8_t {
  unknown_command,    // a command byte the proxy does not follow
  empty_command,      // a command packet without a command byte
  unexpected_packet,  // a server packet that has no place where it came
  malformed,          // a field the proxy must read is cut short or out of range
};
std::string_view to_string(track_error e);

enum class outcome : std::uint8_t {
  more,    // the exchange goes on; next() says who sends
  done,    // the command (or authentication) ended well
  failed,  // it ended with ERR
};

class command_tracker {
 public:
  // Starts after the client's handshake answer, whose next sequence id is
  // `next_seq`: the server's turn in the authentication exchange.
  command_tracker(capabilities caps, std::uint8_t next_seq);

  turn next() const { return next_; }
  // The sequence id of the next packet, from whichever side.
  std::uint8_t expected_seq() const { return next_ == turn::client_command ? 0 : seq_; }
  // The command in progress, or the last one.
  command_kind current() const { return kind_; }

  // Preconditions: next() is client_command or client (on_client), server
  // (on_server), and the packet's sequence id is expected_seq(). After an
  // error the tracker is unusable: the session closes.
  std::expected<outcome, track_error> on_client(const packet_view& p);
  std::expected<outcome, track_error> on_server(const packet_view& p);

 private:
  enum class phase : std::uint8_t {
    auth,  // an authentication exchange
    idle,
    result_start,  // OK, ERR, LOCAL INFILE or a column count
    definitions,   // column or parameter definitions: defs_left_ to go
    definitions_eof,
    rows,
    infile_data,  // the client sends the file
    prepare_ok,
    field_list,
    single,  // one packet ends the response
    closed,
  };
  // What follows a group of definitions.
  enum class then : std::uint8_t { rows, prepare_columns, done };

  std::expected<outcome, track_error> start_command(std::uint8_t command);
  std::expected<outcome, track_error> on_auth(const packet_view& p);
  std::expected<outcome, track_error> on_result_start(const packet_view& p);
  std::expected<outcome, track_error> on_prepare_ok(const packet_view& p);
  std::expected<outcome, track_error> on_definition(const packet_view& p);
  std::expected<outcome, track_error> on_definitions_eof(const packet_view& p);
  std::expected<outcome, track_error> on_row(const packet_view& p);
  // Enter a group of `count` definitions, or what follows it if empty.
  outcome definitions(std::uint64_t count, then after);
  outcome after_definitions();
  // The response ends here; `more_results`: another result follows.
  outcome end_result(bool more_results);
  outcome finish(outcome o);

  capabilities caps_;
  phase phase_ = phase::auth;
  turn next_ = turn::server;
  command_kind kind_ = command_kind::handshake;
  std::uint8_t seq_ = 0;
  std::uint64_t defs_left_ = 0;
  then after_defs_ = then::done;
  std::uint16_t prepare_columns_ = 0;  // COM_STMT_PREPARE: column definitions after the parameters
};

}  // namespace affine_mysql
