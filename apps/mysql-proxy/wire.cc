#include "apps/mysql-proxy/wire.hh"

#include <cstring>

namespace affine_mysql {

std::string_view to_string(wire_error e) {
  switch (e) {
    case wire_error::truncated: return "truncated";
    case wire_error::bad_lenenc: return "bad length-encoded integer";
    case wire_error::missing_nul: return "string without NUL";
  }
  return "?";
}

std::uint64_t wire_reader::le(std::size_t n) {
  std::uint64_t v = 0;
  for (std::size_t i = 0; i < n; ++i) v |= std::uint64_t(bytes_[pos_ + i]) << (8 * i);
  pos_ += n;
  return v;
}

wire_result<std::uint8_t> wire_reader::u8() {
  if (remaining() < 1) return std::unexpected(wire_error::truncated);
  return std::uint8_t(le(1));
}

wire_result<std::uint16_t> wire_reader::u16() {
  if (remaining() < 2) return std::unexpected(wire_error::truncated);
  return std::uint16_t(le(2));
}

wire_result<std::uint32_t> wire_reader::u24() {
  if (remaining() < 3) return std::unexpected(wire_error::truncated);
  return std::uint32_t(le(3));
}

wire_result<std::uint32_t> wire_reader::u32() {
  if (remaining() < 4) return std::unexpected(wire_error::truncated);
  return std::uint32_t(le(4));
}

wire_result<std::uint64_t> wire_reader::u64() {
  if (remaining() < 8) return std::unexpected(wire_error::truncated);
  return le(8);
}

wire_result<std::uint64_t> wire_reader::lenenc_int() {
  if (remaining() < 1) return std::unexpected(wire_error::truncated);
  const auto first = std::uint8_t(bytes_[pos_]);
  if (first < 0xfb) return std::uint64_t(le(1));
  if (first == 0xfb || first == 0xff) return std::unexpected(wire_error::bad_lenenc);
  const std::size_t n = first == 0xfc ? 2 : first == 0xfd ? 3 : 8;
  if (remaining() < 1 + n) return std::unexpected(wire_error::truncated);
  ++pos_;
  return le(n);
}

wire_result<std::span<const std::byte>> wire_reader::bytes(std::size_t n) {
  if (remaining() < n) return std::unexpected(wire_error::truncated);
  auto out = bytes_.subspan(pos_, n);
  pos_ += n;
  return out;
}

wire_result<std::span<const std::byte>> wire_reader::lenenc_bytes() {
  const std::size_t start = pos_;
  auto n = lenenc_int();
  if (!n) return std::unexpected(n.error());
  if (*n > remaining()) {
    pos_ = start;
    return std::unexpected(wire_error::truncated);
  }
  return bytes(std::size_t(*n));
}

wire_result<std::string_view> wire_reader::lenenc_string() {
  auto b = lenenc_bytes();
  if (!b) return std::unexpected(b.error());
  return as_text(*b);
}

wire_result<std::string_view> wire_reader::nul_string() {
  const auto left = bytes_.subspan(pos_);
  const void* nul = std::memchr(left.data(), 0, left.size());
  if (nul == nullptr) return std::unexpected(wire_error::missing_nul);
  const auto n = std::size_t(static_cast<const std::byte*>(nul) - left.data());
  pos_ += n + 1;
  return as_text(left.first(n));
}

wire_result<void> wire_reader::skip(std::size_t n) {
  if (remaining() < n) return std::unexpected(wire_error::truncated);
  pos_ += n;
  return {};
}

std::span<const std::byte> wire_reader::rest() {
  auto out = bytes_.subspan(pos_);
  pos_ = bytes_.size();
  return out;
}

std::string_view wire_reader::rest_string() { return as_text(rest()); }

namespace {

void put_le(std::vector<std::byte>& out, std::uint64_t v, std::size_t n) {
  for (std::size_t i = 0; i < n; ++i) out.push_back(std::byte(v >> (8 * i)));
}

}  // namespace

void put_u8(std::vector<std::byte>& out, std::uint8_t v) { out.push_back(std::byte(v)); }
void put_u16(std::vector<std::byte>& out, std::uint16_t v) { put_le(out, v, 2); }
void put_u24(std::vector<std::byte>& out, std::uint32_t v) { put_le(out, v, 3); }
void put_u32(std::vector<std::byte>& out, std::uint32_t v) { put_le(out, v, 4); }
void put_u64(std::vector<std::byte>& out, std::uint64_t v) { put_le(out, v, 8); }

void put_lenenc_int(std::vector<std::byte>& out, std::uint64_t v) {
  if (v < 0xfb) return put_u8(out, std::uint8_t(v));
  if (v <= 0xffff) {
    put_u8(out, 0xfc);
    return put_u16(out, std::uint16_t(v));
  }
  if (v <= 0xffffff) {
    put_u8(out, 0xfd);
    return put_u24(out, std::uint32_t(v));
  }
  put_u8(out, 0xfe);
  put_u64(out, v);
}

void put_bytes(std::vector<std::byte>& out, std::span<const std::byte> bytes) {
  out.insert(out.end(), bytes.begin(), bytes.end());
}

void put_string(std::vector<std::byte>& out, std::string_view s) { put_bytes(out, as_bytes(s)); }

void put_lenenc_string(std::vector<std::byte>& out, std::string_view s) {
  put_lenenc_int(out, s.size());
  put_string(out, s);
}

void put_nul_string(std::vector<std::byte>& out, std::string_view s) {
  put_string(out, s);
  put_u8(out, 0);
}

}  // namespace affine_mysql
