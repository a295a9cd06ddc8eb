#pragma once
// The connection phase: the server's greeting (Protocol::HandshakeV10), the
// client's answer (Protocol::HandshakeResponse41), the capabilities the
// proxy lets through, and the authentication exchange that follows.
//
// Capabilities. The proxy relays packets without changing them, so it can
// let through only capabilities whose effect on the wire it follows. It
// clears every other bit in the greeting it forwards to the client, and
// again in the client's answer it forwards to the server, so both ends agree
// on the reduced set. Left out, among others: CLIENT_SSL (the proxy carries
// no TLS: a client that requires TLS gives up by itself), CLIENT_COMPRESS and
// CLIENT_ZSTD_COMPRESSION_ALGORITHM (compressed frames), CLIENT_OPTIONAL_
// RESULTSET_METADATA and CLIENT_QUERY_ATTRIBUTES (other request and result
// layouts), CLIENT_MULTI_FACTOR_AUTHENTICATION (AuthNextFactor packets),
// MariaDB's STMT_BULK_OPERATIONS and BULK_UNIT_RESULTS (COM_STMT_BULK_EXECUTE)
// and COM_MULTI. Kept and followed: CLIENT_DEPRECATE_EOF, CLIENT_LOCAL_FILES,
// CLIENT_MULTI_RESULTS, CLIENT_PS_MULTI_RESULTS, CLIENT_SESSION_TRACK, and
// MariaDB's CACHE_METADATA, PROGRESS and EXTENDED_TYPE_INFO.
//
// MariaDB's extended capabilities (bits 32-63) travel in the last 4 of the
// greeting's 10 reserved bytes and of the answer's 23 filler bytes, and only
// when bit 0 (CLIENT_MYSQL, once CLIENT_LONG_PASSWORD) is clear: a MariaDB
// server clears it to say "read my extended bits".
//
// Authentication is relayed, never performed: the proxy needs no password
// and sees only scrambled tokens. After the client's answer (sequence id 1)
// the exchange goes on, each packet with the next sequence id, until the
// server sends OK (authenticated) or ERR (refused; the server then closes).
// Whose turn it is follows from each server packet (auth_turn_after):
//   0xfe AuthSwitchRequest (plugin name + data): the client answers with
//        the new plugin's data (mysql_native_password's 20-byte token,
//        client_ed25519's 64-byte signature, ...).
//   0x01 AuthMoreData: the client answers (caching_sha2_password's
//        "perform full authentication" 0x01 0x04, an RSA public key), except
//        0x01 0x03, caching_sha2_password's "fast auth success", after
//        which the server itself sends OK.
//   0x00 OK, 0xff ERR: the exchange is over.
// COM_CHANGE_USER runs the same exchange again (command.hh).

#include <cstdint>
#include <expected>
#include <span>
#include <string_view>
#include <vector>

namespace affine_mysql {

namespace cap {
inline constexpr std::uint32_t long_password = 1u << 0;  // MariaDB: CLIENT_MYSQL
inline constexpr std::uint32_t found_rows = 1u << 1;
inline constexpr std::uint32_t long_flag = 1u << 2;
inline constexpr std::uint32_t connect_with_db = 1u << 3;
inline constexpr std::uint32_t no_schema = 1u << 4;
inline constexpr std::uint32_t compress = 1u << 5;
inline constexpr std::uint32_t odbc = 1u << 6;
inline constexpr std::uint32_t local_files = 1u << 7;
inline constexpr std::uint32_t ignore_space = 1u << 8;
inline constexpr std::uint32_t protocol_41 = 1u << 9;
inline constexpr std::uint32_t interactive = 1u << 10;
inline constexpr std::uint32_t ssl = 1u << 11;
inline constexpr std::uint32_t ignore_sigpipe = 1u << 12;
inline constexpr std::uint32_t transactions = 1u << 13;
inline constexpr std::uint32_t reserved = 1u << 14;
inline constexpr std::uint32_t secure_connection = 1u << 15;
inline constexpr std::uint32_t multi_statements = 1u << 16;
inline constexpr std::uint32_t multi_results = 1u << 17;
inline constexpr std::uint32_t ps_multi_results = 1u << 18;
inline constexpr std::uint32_t plugin_auth = 1u << 19;
inline constexpr std::uint32_t connect_attrs = 1u << 20;
inline constexpr std::uint32_t plugin_auth_lenenc_client_data = 1u << 21;
inline constexpr std::uint32_t can_handle_expired_passwords = 1u << 22;
inline constexpr std::uint32_t session_track = 1u << 23;
inline constexpr std::uint32_t deprecate_eof = 1u << 24;
inline constexpr std::uint32_t optional_resultset_metadata = 1u << 25;
inline constexpr std::uint32_t zstd_compression = 1u << 26;
inline constexpr std::uint32_t query_attributes = 1u << 27;
inline constexpr std::uint32_t multi_factor_authentication = 1u << 28;
inline constexpr std::uint32_t capability_extension = 1u << 29;
inline constexpr std::uint32_t ssl_verify_server_cert = 1u << 30;
inline constexpr std::uint32_t remember_options = 1u << 31;

// The bits the proxy lets through (see the top of this file).
inline constexpr std::uint32_t forwarded =
    long_password | found_rows | long_flag | connect_with_db | no_schema | odbc | local_files | ignore_space |
    protocol_41 | interactive | ignore_sigpipe | transactions | reserved | secure_connection | multi_statements |
    multi_results | ps_multi_results | plugin_auth | connect_attrs | plugin_auth_lenenc_client_data |
    can_handle_expired_passwords | session_track | deprecate_eof;
}  // namespace cap

// MariaDB's extended capabilities, numbered from bit 32 as bit 0.
namespace mariadb_cap {
inline constexpr std::uint32_t progress = 1u << 0;
inline constexpr std::uint32_t com_multi = 1u << 1;
inline constexpr std::uint32_t stmt_bulk_operations = 1u << 2;
inline constexpr std::uint32_t extended_type_info = 1u << 3;
inline constexpr std::uint32_t cache_metadata = 1u << 4;
inline constexpr std::uint32_t bulk_unit_results = 1u << 5;
inline constexpr std::uint32_t forwarded = progress | extended_type_info | cache_metadata;
}  // namespace mariadb_cap

enum class handshake_error : std::uint8_t {
  truncated,        // a field runs past the payload
  not_v10,          // the greeting's protocol version is not 10
  not_protocol_41,  // a client (or server) without CLIENT_PROTOCOL_41
  ssl_request,      // the client asks for TLS, which the proxy did not offer
};
std::string_view to_string(handshake_error e);

struct server_greeting {
  std::string_view server_version;
  std::uint32_t connection_id = 0;
  std::uint32_t capabilities = 0;
  std::uint32_t mariadb_capabilities = 0;  // 0 unless the server is MariaDB (bit 0 clear)
  std::uint8_t charset = 0;
  std::uint16_t status = 0;
  std::span<const std::byte> scramble;       // part 1, 8 bytes
  std::span<const std::byte> scramble_rest;  // part 2, without its trailing NUL
  std::string_view auth_plugin;              // empty without CLIENT_PLUGIN_AUTH
};
std::expected<server_greeting, handshake_error> parse_greeting(std::span<const std::byte> payload);

// A copy of a greeting with every capability bit the proxy does not forward
// cleared, extended bits included; otherwise byte for byte the same.
std::expected<std::vector<std::byte>, handshake_error> rewrite_greeting(std::span<const std::byte> payload);

struct handshake_response {
  std::uint32_t capabilities = 0;
  std::uint32_t max_packet = 0;
  std::uint8_t charset = 0;
  std::uint32_t mariadb_capabilities = 0;  // 0 unless bit 0 is clear
  std::string_view user;
  std::span<const std::byte> auth_response;
  std::string_view database;     // empty without CLIENT_CONNECT_WITH_DB
  std::string_view auth_plugin;  // empty without CLIENT_PLUGIN_AUTH
};
// An SSLRequest (a 32-byte answer with CLIENT_SSL) is handshake_error::ssl_request.
std::expected<handshake_response, handshake_error> parse_handshake_response(std::span<const std::byte> payload);

// A copy of the client's answer with the bits the proxy does not forward
// cleared, so the server never acts on a capability that the client
// claims but the proxy cannot carry.
std::expected<std::vector<std::byte>, handshake_error> rewrite_handshake_response(std::span<const std::byte> payload);

struct capabilities {
  std::uint32_t flags = 0;
  std::uint32_t mariadb = 0;  // extended bits; 0 when bit 0 is set
  bool has(std::uint32_t bit) const { return (flags & bit) != 0; }
  bool has_mariadb(std::uint32_t bit) const { return (mariadb & bit) != 0; }
};
capabilities offered(const server_greeting& g);
capabilities requested(const handshake_response& r);
// What both ends use from here on: the bits both set that the proxy forwards.
capabilities negotiate(capabilities server, capabilities client);

// Whose packet comes next in an authentication exchange, after this packet
// from the server.
enum class auth_turn : std::uint8_t {
  done_ok,   // OK: authenticated
  done_err,  // ERR: refused
  client,    // the client answers (auth switch, more data)
  server,    // the server goes on (caching_sha2_password fast auth success)
  bad,       // none of the above: the session cannot be followed
};
auth_turn auth_turn_after(std::span<const std::byte> server_payload);

}  // namespace affine_mysql
