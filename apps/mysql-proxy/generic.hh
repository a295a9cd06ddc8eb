#pragma once
// The generic response packets (OK, EOF, ERR) and the server status flags
// they carry, as far as the proxy reads them: enough to know where a
// response ends (SERVER_MORE_RESULTS_EXISTS, SERVER_STATUS_CURSOR_EXISTS)
// and to report errors. Protocol 4.1 only: the proxy refuses older clients.
//
//   OK   0x00 (or 0xfe when it ends a result set under CLIENT_DEPRECATE_EOF),
//        affected rows <lenenc>, last insert id <lenenc>, status u16,
//        warnings u16, then info and session state the proxy does not read.
//   EOF  0xfe, warnings u16, status u16: shorter than 9 bytes, which is what
//        tells it from a text row starting with a 2^24+ byte string.
//   ERR  0xff, code u16, ['#', sql state (5)], message <EOF>. Before the
//        handshake a server leaves the sql state out: the client does not
//        know the capabilities yet.
//   MariaDB progress report: an ERR header with code 0xffff, sent during a
//        long statement to a client that asked for progress; not an error
//        and not the end of the response.

#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

#include "apps/mysql-proxy/packet.hh"
#include "apps/mysql-proxy/wire.hh"

namespace affine_mysql {

namespace server_status {
inline constexpr std::uint16_t in_trans = 0x0001;
inline constexpr std::uint16_t autocommit = 0x0002;
inline constexpr std::uint16_t more_results_exist = 0x0008;
inline constexpr std::uint16_t cursor_exists = 0x0040;
inline constexpr std::uint16_t last_row_sent = 0x0080;
}  // namespace server_status

inline constexpr std::uint8_t ok_header = 0x00;
inline constexpr std::uint8_t more_data_header = 0x01;  // auth: AuthMoreData
inline constexpr std::uint8_t local_infile_header = 0xfb;
inline constexpr std::uint8_t eof_header = 0xfe;  // also auth: AuthSwitchRequest
inline constexpr std::uint8_t err_header = 0xff;
inline constexpr std::size_t max_eof_size = 9;  // an EOF packet is shorter
inline constexpr std::uint16_t progress_code = 0xffff;

// The first byte of a payload; -1 for an empty one.
inline int header_of(std::span<const std::byte> payload) {
  return payload.empty() ? -1 : int(std::uint8_t(payload[0]));
}

struct ok_info {
  std::uint64_t affected_rows = 0;
  std::uint64_t last_insert_id = 0;
  std::uint16_t status = 0;
  std::uint16_t warnings = 0;
};
// An OK packet, with the 0x00 or the 0xfe header.
wire_result<ok_info> parse_ok(std::span<const std::byte> payload);

struct eof_info {
  std::uint16_t warnings = 0;
  std::uint16_t status = 0;
};
wire_result<eof_info> parse_eof(std::span<const std::byte> payload);

struct err_info {
  std::uint16_t code = 0;
  std::string_view sql_state;  // empty in the pre-handshake form
  std::string_view message;
};
wire_result<err_info> parse_err(std::span<const std::byte> payload);

bool is_progress_report(std::span<const std::byte> payload);

// What ends a result set's rows: an EOF packet, or under
// CLIENT_DEPRECATE_EOF an OK packet with the 0xfe header. Its status says
// whether another result set follows.
bool is_rows_terminator(std::span<const std::byte> payload, bool deprecate_eof);
wire_result<std::uint16_t> terminator_status(std::span<const std::byte> payload, bool deprecate_eof);

// An ERR payload. `sql_state`: five characters ("HY000"), or empty for the
// pre-handshake form.
std::vector<std::byte> err_payload(std::uint16_t code, std::string_view sql_state, std::string_view message);

}  // namespace affine_mysql
