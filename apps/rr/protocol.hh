#pragma once
// What an affine-rr client says first on every connection: a 16-byte hello
// that tells the server the mode and the message sizes, so one server serves
// any mix of clients and the sizes a client reports are the ones it used
// (netperf's control connection, folded into the data connection).
//
//   bytes 0-3   "afrr"
//   byte  4     version (1)
//   byte  5     mode: 0 request/response, 1 bulk
//   bytes 6-7   zero
//   bytes 8-11  request bytes (big-endian; 0 in bulk mode)
//   bytes 12-15 response bytes (big-endian; 0 in bulk mode)
//
// Request/response: the client writes a request, the server reads all of it
// and writes a response that begins with the request's first bytes (up to
// 8; the client numbers its requests there), so a response that answers
// another request is seen.
//
// Bulk: the client writes until it is done, then shuts its side down; the
// server counts what it read (after the hello) and answers with that count,
// 8 bytes big-endian, so the client reports the bytes the server received.

#include <array>
#include <cstddef>
#include <cstdint>
#include <expected>
#include <span>
#include <string>

namespace affine_rr {

enum class mode : std::uint8_t { request_response = 0, bulk = 1 };

struct hello {
  mode what = mode::request_response;
  std::uint32_t request_bytes = 0;
  std::uint32_t response_bytes = 0;
};

inline constexpr std::size_t hello_size = 16;
inline constexpr std::uint32_t max_message_bytes = 64u << 20;  // bounds the server's buffers
inline constexpr std::size_t bulk_chunk_bytes = 64 * 1024;
inline constexpr std::size_t count_size = 8;  // the bulk server's answer
inline constexpr std::size_t request_tag_size = 8;  // request number echoed at a response's start

std::array<std::byte, hello_size> encode(const hello& h);
// Errors name what is wrong, for the server's log line.
std::expected<hello, std::string> decode(std::span<const std::byte, hello_size> bytes);

std::array<std::byte, 8> encode_u64(std::uint64_t v);
std::uint64_t decode_u64(std::span<const std::byte, 8> bytes);

}  // namespace affine_rr
