#include "apps/mysql-proxy/command.hh"

#include <cassert>
#include <optional>

#include "apps/mysql-proxy/generic.hh"
#include "apps/mysql-proxy/wire.hh"

namespace affine_mysql {

namespace {

// How the server answers a command.
enum class shape : std::uint8_t { none, quit, result, prepare, fetch, field_list, auth, single };

struct command_info {
  command_kind kind;
  shape response;
};

// MySQL's command bytes (include/my_command.h), and what the proxy follows.
std::optional<command_info> lookup(std::uint8_t command) {
  using k = command_kind;
  switch (command) {
    case 0x01: return command_info{k::quit, shape::quit};
    case 0x02: return command_info{k::init_db, shape::single};
    case 0x03: return command_info{k::query, shape::result};
    case 0x04: return command_info{k::field_list, shape::field_list};
    case 0x05:  // COM_CREATE_DB
    case 0x06:  // COM_DROP_DB
    case 0x07:  // COM_REFRESH
    case 0x08:  // COM_SHUTDOWN
    case 0x0c:  // COM_PROCESS_KILL
    case 0x0d:  // COM_DEBUG
      return command_info{k::admin, shape::single};
    case 0x09: return command_info{k::statistics, shape::single};
    case 0x0a: return command_info{k::admin, shape::result};  // COM_PROCESS_INFO
    case 0x0e: return command_info{k::ping, shape::single};
    case 0x11: return command_info{k::change_user, shape::auth};
    case 0x16: return command_info{k::stmt_prepare, shape::prepare};
    case 0x17: return command_info{k::stmt_execute, shape::result};
    case 0x18: return command_info{k::stmt_send_long_data, shape::none};
    case 0x19: return command_info{k::stmt_close, shape::none};
    case 0x1a: return command_info{k::stmt_reset, shape::single};
    case 0x1b: return command_info{k::set_option, shape::single};
    case 0x1c: return command_info{k::stmt_fetch, shape::fetch};
    case 0x1f: return command_info{k::reset_connection, shape::single};
    default: return std::nullopt;
  }
}

// A result set's column count is at most 4096 in MySQL and MariaDB; a
// prepared statement's fits in 16 bits. Anything larger is garbage.
constexpr std::uint64_t max_columns = 0xffff;

}  // namespace

std::string_view to_string(command_kind k) {
  switch (k) {
    case command_kind::handshake: return "handshake";
    case command_kind::query: return "query";
    case command_kind::stmt_prepare: return "stmt_prepare";
    case command_kind::stmt_execute: return "stmt_execute";
    case command_kind::stmt_fetch: return "stmt_fetch";
    case command_kind::stmt_close: return "stmt_close";
    case command_kind::stmt_reset: return "stmt_reset";
    case command_kind::stmt_send_long_data: return "stmt_send_long_data";
    case command_kind::ping: return "ping";
    case command_kind::init_db: return "init_db";
    case command_kind::change_user: return "change_user";
    case command_kind::reset_connection: return "reset_connection";
    case command_kind::set_option: return "set_option";
    case command_kind::field_list: return "field_list";
    case command_kind::statistics: return "statistics";
    case command_kind::admin: return "admin";
    case command_kind::quit: return "quit";
    case command_kind::count_: break;
  }
  return "?";
}

std::string_view to_string(track_error e) {
  switch (e) {
    case track_error::unknown_command: return "unknown command";
    case track_error::empty_command: return "empty command packet";
    case track_error::unexpected_packet: return "unexpected packet";
    case track_error::malformed: return "malformed packet";
  }
  return "?";
}

command_tracker::command_tracker(capabilities caps, std::uint8_t next_seq) : caps_(caps), seq_(next_seq) {}

std::expected<outcome, track_error> command_tracker::on_client(const packet_view& p) {
  assert(next_ == turn::client_command || next_ == turn::client);
  seq_ = p.next_seq;
  switch (phase_) {
    case phase::idle:
      if (p.payload.empty()) return std::unexpected(track_error::empty_command);
      return start_command(std::uint8_t(p.payload[0]));
    case phase::auth: next_ = turn::server; return outcome::more;
    case phase::infile_data:
      // An empty packet ends the file; the server answers with OK or ERR.
      if (p.payload.empty()) {
        phase_ = phase::result_start;
        next_ = turn::server;
      }
      return outcome::more;
    default: return std::unexpected(track_error::unexpected_packet);
  }
}

std::expected<outcome, track_error> command_tracker::start_command(std::uint8_t command) {
  const auto info = lookup(command);
  if (!info) return std::unexpected(track_error::unknown_command);
  kind_ = info->kind;
  next_ = turn::server;
  switch (info->response) {
    case shape::none: return finish(outcome::done);
    case shape::quit:
      phase_ = phase::closed;
      next_ = turn::closed;
      return outcome::done;
    case shape::result: phase_ = phase::result_start; break;
    case shape::prepare: phase_ = phase::prepare_ok; break;
    case shape::fetch: phase_ = phase::rows; break;
    case shape::field_list: phase_ = phase::field_list; break;
    case shape::auth: phase_ = phase::auth; break;
    case shape::single: phase_ = phase::single; break;
  }
  return outcome::more;
}

std::expected<outcome, track_error> command_tracker::on_server(const packet_view& p) {
  assert(next_ == turn::server);
  seq_ = p.next_seq;
  if (phase_ == phase::auth) return on_auth(p);
  if (caps_.has_mariadb(mariadb_cap::progress) && is_progress_report(p.payload)) return outcome::more;
  if (header_of(p.payload) == err_header) return finish(outcome::failed);
  switch (phase_) {
    case phase::result_start: return on_result_start(p);
    case phase::prepare_ok: return on_prepare_ok(p);
    case phase::definitions: return on_definition(p);
    case phase::definitions_eof: return on_definitions_eof(p);
    case phase::rows: return on_row(p);
    case phase::field_list:
      return is_rows_terminator(p.payload, caps_.has(cap::deprecate_eof)) ? finish(outcome::done) : outcome::more;
    case phase::single: return finish(outcome::done);
    default: return std::unexpected(track_error::unexpected_packet);
  }
}

std::expected<outcome, track_error> command_tracker::on_auth(const packet_view& p) {
  switch (auth_turn_after(p.payload)) {
    case auth_turn::done_ok: return finish(outcome::done);
    case auth_turn::done_err:
      // A refused login ends the connection; a refused COM_CHANGE_USER
      // leaves the previous user logged in.
      if (kind_ != command_kind::handshake) return finish(outcome::failed);
      phase_ = phase::closed;
      next_ = turn::closed;
      return outcome::failed;
    case auth_turn::client: next_ = turn::client; return outcome::more;
    case auth_turn::server: return outcome::more;
    case auth_turn::bad: break;
  }
  return std::unexpected(track_error::unexpected_packet);
}

std::expected<outcome, track_error> command_tracker::on_result_start(const packet_view& p) {
  const int header = header_of(p.payload);
  if (header == ok_header) {
    auto ok = parse_ok(p.payload);
    if (!ok) return std::unexpected(track_error::malformed);
    return end_result((ok->status & server_status::more_results_exist) != 0);
  }
  if (header == local_infile_header) {
    if (!caps_.has(cap::local_files) || kind_ != command_kind::query)
      return std::unexpected(track_error::unexpected_packet);
    phase_ = phase::infile_data;
    next_ = turn::client;
    return outcome::more;
  }
  wire_reader r(p.payload);
  auto count = r.lenenc_int();
  if (!count || *count == 0 || *count > max_columns) return std::unexpected(track_error::malformed);
  if (caps_.has_mariadb(mariadb_cap::cache_metadata)) {
    // MariaDB: a second byte says whether the definitions follow; when
    // they do not, the EOF after them still does.
    auto metadata_follows = r.u8();
    if (!metadata_follows) return std::unexpected(track_error::malformed);
    if (*metadata_follows == 0) {
      after_defs_ = then::rows;
      phase_ = caps_.has(cap::deprecate_eof) ? phase::rows : phase::definitions_eof;
      return outcome::more;
    }
  }
  return definitions(*count, then::rows);
}

std::expected<outcome, track_error> command_tracker::on_prepare_ok(const packet_view& p) {
  wire_reader r(p.payload);
  if (header_of(p.payload) != ok_header) return std::unexpected(track_error::unexpected_packet);
  (void)r.skip(1);
  auto statement_id = r.u32();
  auto columns = r.u16();
  auto params = r.u16();
  if (!statement_id || !columns || !params) return std::unexpected(track_error::malformed);
  prepare_columns_ = *columns;
  return definitions(*params, then::prepare_columns);
}

std::expected<outcome, track_error> command_tracker::on_definition(const packet_view&) {
  if (--defs_left_ > 0) return outcome::more;
  if (!caps_.has(cap::deprecate_eof)) {
    phase_ = phase::definitions_eof;
    return outcome::more;
  }
  return after_definitions();
}

std::expected<outcome, track_error> command_tracker::on_definitions_eof(const packet_view& p) {
  if (!is_rows_terminator(p.payload, false)) return std::unexpected(track_error::unexpected_packet);
  auto eof = parse_eof(p.payload);
  if (!eof) return std::unexpected(track_error::malformed);
  // A cursor was opened: the rows come with COM_STMT_FETCH.
  if (after_defs_ == then::rows && kind_ == command_kind::stmt_execute &&
      (eof->status & server_status::cursor_exists) != 0)
    return finish(outcome::done);
  return after_definitions();
}

std::expected<outcome, track_error> command_tracker::on_row(const packet_view& p) {
  const bool deprecate_eof = caps_.has(cap::deprecate_eof);
  if (!is_rows_terminator(p.payload, deprecate_eof)) return outcome::more;
  auto status = terminator_status(p.payload, deprecate_eof);
  if (!status) return std::unexpected(track_error::malformed);
  return end_result((*status & server_status::more_results_exist) != 0);
}

outcome command_tracker::definitions(std::uint64_t count, then after) {
  after_defs_ = after;
  defs_left_ = count;
  if (count == 0) return after_definitions();
  phase_ = phase::definitions;
  return outcome::more;
}

outcome command_tracker::after_definitions() {
  switch (after_defs_) {
    case then::rows: phase_ = phase::rows; return outcome::more;
    case then::prepare_columns: return definitions(prepare_columns_, then::done);
    case then::done: break;
  }
  return finish(outcome::done);
}

outcome command_tracker::end_result(bool more_results) {
  if (!more_results) return finish(outcome::done);
  phase_ = phase::result_start;
  return outcome::more;
}

outcome command_tracker::finish(outcome o) {
  phase_ = phase::idle;
  next_ = turn::client_command;
  return o;
}

}  // namespace affine_mysql
