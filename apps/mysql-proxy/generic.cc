#include "apps/mysql-proxy/generic.hh"

namespace affine_mysql {

wire_result<ok_info> parse_ok(std::span<const std::byte> payload) {
  wire_reader r(payload);
  auto header = r.u8();
  if (!header) return std::unexpected(header.error());
  auto affected = r.lenenc_int();
  if (!affected) return std::unexpected(affected.error());
  auto last_id = r.lenenc_int();
  if (!last_id) return std::unexpected(last_id.error());
  auto status = r.u16();
  if (!status) return std::unexpected(status.error());
  auto warnings = r.u16();
  if (!warnings) return std::unexpected(warnings.error());
  return ok_info{*affected, *last_id, *status, *warnings};
}

wire_result<eof_info> parse_eof(std::span<const std::byte> payload) {
  wire_reader r(payload);
  if (auto header = r.u8(); !header) return std::unexpected(header.error());
  auto warnings = r.u16();
  if (!warnings) return std::unexpected(warnings.error());
  auto status = r.u16();
  if (!status) return std::unexpected(status.error());
  return eof_info{*warnings, *status};
}

wire_result<err_info> parse_err(std::span<const std::byte> payload) {
  wire_reader r(payload);
  if (auto header = r.u8(); !header) return std::unexpected(header.error());
  auto code = r.u16();
  if (!code) return std::unexpected(code.error());
  err_info e{.code = *code, .sql_state = {}, .message = {}};
  if (r.remaining() >= 6 && payload[r.position()] == std::byte{'#'}) {
    (void)r.skip(1);
    e.sql_state = as_text(*r.bytes(5));
  }
  e.message = r.rest_string();
  return e;
}

bool is_progress_report(std::span<const std::byte> payload) {
  return payload.size() >= 3 && header_of(payload) == err_header && payload[1] == std::byte{0xff} &&
         payload[2] == std::byte{0xff};
}

bool is_rows_terminator(std::span<const std::byte> payload, bool deprecate_eof) {
  return header_of(payload) == eof_header && payload.size() < (deprecate_eof ? max_frame_payload : max_eof_size);
}

wire_result<std::uint16_t> terminator_status(std::span<const std::byte> payload, bool deprecate_eof) {
  if (deprecate_eof) {
    auto ok = parse_ok(payload);
    if (!ok) return std::unexpected(ok.error());
    return ok->status;
  }
  auto eof = parse_eof(payload);
  if (!eof) return std::unexpected(eof.error());
  return eof->status;
}

std::vector<std::byte> err_payload(std::uint16_t code, std::string_view sql_state, std::string_view message) {
  std::vector<std::byte> out;
  out.reserve(9 + message.size());
  put_u8(out, err_header);
  put_u16(out, code);
  if (!sql_state.empty()) {
    put_u8(out, '#');
    put_string(out, sql_state.substr(0, 5));
  }
  put_string(out, message);
  return out;
}

}  // namespace affine_mysql
