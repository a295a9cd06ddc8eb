#include "apps/mysql-proxy/handshake.hh"

#include <algorithm>
#include <optional>
#include <utility>

#include "apps/mysql-proxy/generic.hh"
#include "apps/mysql-proxy/wire.hh"

namespace affine_mysql {

namespace {

constexpr std::uint8_t protocol_v10 = 10;
// Greeting, after the server version: connection id, scramble part 1,
// filler, capabilities 0-15.
constexpr std::size_t greeting_fixed1 = 4 + 8 + 1 + 2;
// Then: charset, status, capabilities 16-31, auth data length, reserved.
constexpr std::size_t greeting_reserved = 10;
constexpr std::size_t greeting_fixed2 = 1 + 2 + 2 + 1 + greeting_reserved;
constexpr std::size_t min_scramble_part2 = 13;
// Answer: capabilities, max packet, charset, filler.
constexpr std::size_t response_filler = 23;
constexpr std::size_t response_fixed = 4 + 4 + 1 + response_filler;
// caching_sha2_password's AuthMoreData after which the server sends OK.
constexpr std::byte fast_auth_success{0x03};

// Where the capability bits sit in a payload, for rewriting them in place.
struct cap_offsets {
  std::size_t low = 0;                 // greeting: u16, bits 0-15; answer: u32, bits 0-31
  std::optional<std::size_t> high;     // greeting: u16, bits 16-31
  std::optional<std::size_t> mariadb;  // u32, MariaDB's extended bits
};

std::uint32_t u32_at(std::span<const std::byte> p, std::size_t at) {
  return std::uint32_t(p[at]) | std::uint32_t(p[at + 1]) << 8 | std::uint32_t(p[at + 2]) << 16 |
         std::uint32_t(p[at + 3]) << 24;
}

void mask_at(std::vector<std::byte>& p, std::size_t at, std::size_t bytes, std::uint32_t keep) {
  for (std::size_t i = 0; i < bytes; ++i) p[at + i] &= std::byte(keep >> (8 * i));
}

std::expected<std::pair<server_greeting, cap_offsets>, handshake_error> read_greeting(
    std::span<const std::byte> payload) {
  wire_reader r(payload);
  server_greeting g;
  cap_offsets at;
  if (auto version = r.u8(); !version || *version != protocol_v10) return std::unexpected(handshake_error::not_v10);
  auto server_version = r.nul_string();
  if (!server_version || r.remaining() < greeting_fixed1) return std::unexpected(handshake_error::truncated);
  g.server_version = *server_version;
  g.connection_id = *r.u32();
  g.scramble = *r.bytes(8);
  (void)r.skip(1);
  at.low = r.position();
  g.capabilities = *r.u16();
  // A server older than 4.1 may end here; the proxy needs protocol 4.1.
  if ((g.capabilities & cap::protocol_41) == 0) return std::unexpected(handshake_error::not_protocol_41);
  if (r.remaining() < greeting_fixed2) return std::unexpected(handshake_error::truncated);
  g.charset = *r.u8();
  g.status = *r.u16();
  at.high = r.position();
  g.capabilities |= std::uint32_t(*r.u16()) << 16;
  const std::uint8_t auth_data_length = *r.u8();
  if ((g.capabilities & cap::long_password) == 0) {
    at.mariadb = r.position() + greeting_reserved - 4;
    g.mariadb_capabilities = u32_at(payload, *at.mariadb);
  }
  (void)r.skip(greeting_reserved);
  if (g.capabilities & cap::secure_connection) {
    // The rest of the scramble and a NUL: at least 13 bytes.
    const std::size_t part2 =
        std::max<std::size_t>(min_scramble_part2, auth_data_length > 8 ? auth_data_length - 8u : 0u);
    auto rest = r.bytes(part2);
    if (!rest) return std::unexpected(handshake_error::truncated);
    g.scramble_rest = rest->first(rest->back() == std::byte{0} ? rest->size() - 1 : rest->size());
  }
  if (g.capabilities & cap::plugin_auth) {
    // Some servers leave out the NUL after the last field.
    auto name = r.nul_string();
    g.auth_plugin = name ? *name : r.rest_string();
  }
  return std::pair{g, at};
}

// Its length: length-encoded, one byte, or up to a NUL, as the client's
// capabilities say.
wire_result<std::span<const std::byte>> read_auth_response(wire_reader& r, std::uint32_t capabilities) {
  if (capabilities & cap::plugin_auth_lenenc_client_data) return r.lenenc_bytes();
  if (capabilities & cap::secure_connection) {
    auto n = r.u8();
    if (!n) return std::unexpected(n.error());
    return r.bytes(*n);
  }
  auto text = r.nul_string();
  if (!text) return std::unexpected(text.error());
  return as_bytes(*text);
}

std::expected<std::pair<handshake_response, cap_offsets>, handshake_error> read_response(
    std::span<const std::byte> payload) {
  wire_reader r(payload);
  handshake_response h;
  cap_offsets at;
  if (r.remaining() < 4) return std::unexpected(handshake_error::truncated);
  h.capabilities = *r.u32();
  if ((h.capabilities & cap::protocol_41) == 0) return std::unexpected(handshake_error::not_protocol_41);
  if (r.remaining() < response_fixed - 4) return std::unexpected(handshake_error::truncated);
  h.max_packet = *r.u32();
  h.charset = *r.u8();
  if ((h.capabilities & cap::long_password) == 0) {
    at.mariadb = r.position() + response_filler - 4;
    h.mariadb_capabilities = u32_at(payload, *at.mariadb);
  }
  (void)r.skip(response_filler);
  if (r.empty() && (h.capabilities & cap::ssl)) return std::unexpected(handshake_error::ssl_request);
  auto user = r.nul_string();
  if (!user) return std::unexpected(handshake_error::truncated);
  h.user = *user;
  auto auth = read_auth_response(r, h.capabilities);
  if (!auth) return std::unexpected(handshake_error::truncated);
  h.auth_response = *auth;
  // Clients leave out trailing fields they do not use, even with the bit set.
  if ((h.capabilities & cap::connect_with_db) && !r.empty()) {
    auto db = r.nul_string();
    if (!db) return std::unexpected(handshake_error::truncated);
    h.database = *db;
  }
  if ((h.capabilities & cap::plugin_auth) && !r.empty()) {
    auto plugin = r.nul_string();
    if (!plugin) return std::unexpected(handshake_error::truncated);
    h.auth_plugin = *plugin;
  }
  return std::pair{h, at};
}

// `payload` with the capability bits that `parsed` located limited to what
// the proxy forwards.
template <class Parsed>
std::expected<std::vector<std::byte>, handshake_error> masked(
    std::span<const std::byte> payload, const std::expected<std::pair<Parsed, cap_offsets>, handshake_error>& parsed) {
  if (!parsed) return std::unexpected(parsed.error());
  const cap_offsets& at = parsed->second;
  std::vector<std::byte> out(payload.begin(), payload.end());
  if (at.high) {
    mask_at(out, at.low, 2, cap::forwarded);
    mask_at(out, *at.high, 2, cap::forwarded >> 16);
  } else {
    mask_at(out, at.low, 4, cap::forwarded);
  }
  if (at.mariadb) mask_at(out, *at.mariadb, 4, mariadb_cap::forwarded);
  return out;
}

}  // namespace

std::string_view to_string(handshake_error e) {
  switch (e) {
    case handshake_error::truncated: return "truncated handshake packet";
    case handshake_error::not_v10: return "not a protocol 10 greeting";
    case handshake_error::not_protocol_41: return "no protocol 4.1";
    case handshake_error::ssl_request: return "TLS requested";
  }
  return "?";
}

std::expected<server_greeting, handshake_error> parse_greeting(std::span<const std::byte> payload) {
  auto g = read_greeting(payload);
  if (!g) return std::unexpected(g.error());
  return g->first;
}

std::expected<handshake_response, handshake_error> parse_handshake_response(std::span<const std::byte> payload) {
  auto h = read_response(payload);
  if (!h) return std::unexpected(h.error());
  return h->first;
}

std::expected<std::vector<std::byte>, handshake_error> rewrite_greeting(std::span<const std::byte> payload) {
  return masked(payload, read_greeting(payload));
}

std::expected<std::vector<std::byte>, handshake_error> rewrite_handshake_response(std::span<const std::byte> payload) {
  return masked(payload, read_response(payload));
}

capabilities offered(const server_greeting& g) { return {g.capabilities, g.mariadb_capabilities}; }

capabilities requested(const handshake_response& r) { return {r.capabilities, r.mariadb_capabilities}; }

capabilities negotiate(capabilities server, capabilities client) {
  return {server.flags & client.flags & cap::forwarded, server.mariadb & client.mariadb & mariadb_cap::forwarded};
}

auth_turn auth_turn_after(std::span<const std::byte> server_payload) {
  switch (header_of(server_payload)) {
    case ok_header: return auth_turn::done_ok;
    case err_header: return auth_turn::done_err;
    case eof_header: return auth_turn::client;
    case more_data_header:
      return server_payload.size() == 2 && server_payload[1] == fast_auth_success ? auth_turn::server
                                                                                  : auth_turn::client;
    default: return auth_turn::bad;
  }
}

}  // namespace affine_mysql
