#pragma once
// The MySQL protocol's basic data types inside a packet payload: fixed-size
// little-endian integers, length-encoded integers and strings, NUL-terminated
// strings. The reader is checked: every read either returns a value that lies
// wholly inside the payload or an error and leaves the position unchanged,
// so a parser built on it can be fed any bytes.
//
// Length-encoded integer (MySQL "int<lenenc>"): a first byte < 0xfb is the
// value; 0xfc, 0xfd, 0xfe are followed by 2, 3, 8 bytes. 0xfb is NULL in a
// text row and 0xff starts an ERR packet: as an integer, both are errors.

#include <cstddef>
#include <cstdint>
#include <expected>
#include <span>
#include <string_view>
#include <vector>

namespace affine_mysql {

enum class wire_error : std::uint8_t {
  truncated,    // fewer bytes left than the field needs
  bad_lenenc,   // 0xfb or 0xff where a length-encoded integer belongs
  missing_nul,  // a NUL-terminated string runs to the end
};
std::string_view to_string(wire_error e);

template <class T>
using wire_result = std::expected<T, wire_error>;

class wire_reader {
 public:
  explicit wire_reader(std::span<const std::byte> bytes) : bytes_(bytes) {}

  wire_result<std::uint8_t> u8();
  wire_result<std::uint16_t> u16();
  wire_result<std::uint32_t> u24();
  wire_result<std::uint32_t> u32();
  wire_result<std::uint64_t> u64();
  wire_result<std::uint64_t> lenenc_int();
  wire_result<std::span<const std::byte>> bytes(std::size_t n);
  wire_result<std::span<const std::byte>> lenenc_bytes();
  wire_result<std::string_view> lenenc_string();
  // Up to the next NUL, which is consumed but not returned.
  wire_result<std::string_view> nul_string();
  wire_result<void> skip(std::size_t n);
  // Everything left, consumed.
  std::span<const std::byte> rest();
  // Everything left as text (MySQL's string<EOF>), consumed.
  std::string_view rest_string();

  std::size_t position() const { return pos_; }
  std::size_t remaining() const { return bytes_.size() - pos_; }
  bool empty() const { return pos_ == bytes_.size(); }

 private:
  // The integer in the next `n` bytes, little-endian (n <= 8, checked by the caller).
  std::uint64_t le(std::size_t n);

  std::span<const std::byte> bytes_;
  std::size_t pos_ = 0;
};

// Writers append to a payload under construction.
void put_u8(std::vector<std::byte>& out, std::uint8_t v);
void put_u16(std::vector<std::byte>& out, std::uint16_t v);
void put_u24(std::vector<std::byte>& out, std::uint32_t v);
void put_u32(std::vector<std::byte>& out, std::uint32_t v);
void put_u64(std::vector<std::byte>& out, std::uint64_t v);
void put_lenenc_int(std::vector<std::byte>& out, std::uint64_t v);
void put_bytes(std::vector<std::byte>& out, std::span<const std::byte> bytes);
void put_string(std::vector<std::byte>& out, std::string_view s);  // no length, no NUL
void put_lenenc_string(std::vector<std::byte>& out, std::string_view s);
void put_nul_string(std::vector<std::byte>& out, std::string_view s);

// Text as bytes, and back, for payloads that hold names and messages.
inline std::span<const std::byte> as_bytes(std::string_view s) {
  return {reinterpret_cast<const std::byte*>(s.data()), s.size()};
}
inline std::string_view as_text(std::span<const std::byte> b) {
  return {reinterpret_cast<const char*>(b.data()), b.size()};
}

}  // namespace affine_mysql
