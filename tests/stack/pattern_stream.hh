#pragma once
// A byte_pattern through a stream of the socket API: written in 64 KiB
// chunks, read and checked byte for byte.

#include <cstddef>
#include <cstdint>
#include <vector>

#include "affine/net.hh"
#include "tests/stack/byte_pattern.hh"

namespace affine::stack::testing {

// `total` bytes of pattern `seed` written to s; false if a write failed.
inline bool write_pattern(net::tcp_stream& s, std::size_t total, std::uint64_t seed, std::uint64_t deadline_ns) {
  const byte_pattern p{seed};
  std::vector<std::byte> chunk(64 * 1024);
  for (std::size_t off = 0; off < total; off += chunk.size()) {
    p.fill(off, chunk);
    if (!s.write(chunk, deadline_ns)) return false;
  }
  return true;
}

// `total` bytes read from s; true when all came, each as pattern `seed` says.
inline bool read_pattern(net::tcp_stream& s, std::size_t total, std::uint64_t seed, std::uint64_t deadline_ns) {
  const byte_pattern p{seed};
  std::vector<std::byte> buf(64 * 1024);
  std::size_t got = 0;
  bool same = true;
  while (got < total) {
    auto n = s.read(buf, deadline_ns);
    if (!n || *n == 0) break;
    same = same && p.check(got, {buf.data(), *n});
    got += *n;
  }
  return same && got == total;
}

}  // namespace affine::stack::testing
