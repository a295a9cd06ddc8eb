#include "apps/rr/in_place.hh"

#include <algorithm>
#include <cstring>

namespace affine_rr {

std::expected<bool, std::error_code> take_in_place(affine::net::tcp_stream& s, std::size_t n,
                                                   std::span<std::byte> head, affine::deadline until) {
  for (std::size_t got = 0; got < n;) {
    auto v = s.read_view(until);
    if (!v && v.error() == std::errc::operation_canceled && got == 0) return false;
    if (!v) return std::unexpected(v.error());
    if (v->empty()) {
      if (got == 0) return false;
      return std::unexpected(std::make_error_code(std::errc::connection_reset));
    }
    const std::size_t take = std::min(v->size(), n - got);
    if (got < head.size()) {
      const std::size_t h = std::min(take, head.size() - got);
      std::memcpy(head.data() + got, v->data(), h);
    }
    s.consume(take);
    got += take;
  }
  return true;
}

std::expected<void, std::error_code> send_in_place(affine::net::tcp_stream& s, std::size_t n,
                                                   std::span<const std::byte> head, affine::deadline until) {
  for (std::size_t put = 0; put < n;) {
    auto room = s.write_view(until);
    if (!room) return std::unexpected(room.error());
    const std::size_t len = std::min(room->size(), n - put);
    std::size_t h = 0;
    if (put < head.size()) {
      h = std::min(len, head.size() - put);
      std::memcpy(room->data(), head.data() + put, h);
    }
    std::memset(room->data() + h, 0, len - h);
    if (auto c = s.commit(len, until); !c) return c;
    put += len;
  }
  return {};
}

std::expected<std::uint64_t, std::error_code> count_in_place(affine::net::tcp_stream& s) {
  std::uint64_t received = 0;
  for (;;) {
    auto v = s.read_view();
    if (!v) return std::unexpected(v.error());
    if (v->empty()) return received;
    received += v->size();
    s.consume(v->size());
  }
}

}  // namespace affine_rr
