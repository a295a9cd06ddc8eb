#pragma once
// affine-rr's messages with --zero-copy: read and written where the stack
// holds them (tcp_stream::read_view / write_view, include/affine/net.hh)
// instead of through a buffer of the program's own. Only a message's
// first bytes (its number, up to 8) are looked at or written; the rest of
// a request or response is zeros, as on the copying path.

#include <cstddef>
#include <cstdint>
#include <expected>
#include <span>
#include <system_error>

#include "affine/net.hh"

namespace affine_rr {

// Takes `n` bytes off the stream, copying its first head.size() (<= n)
// into `head`. True: all n taken; false: the stream ended (or a stop came)
// before the first byte. An end after the first byte is connection_reset.
std::expected<bool, std::error_code> take_in_place(affine::net::tcp_stream& s, std::size_t n,
                                                   std::span<std::byte> head, affine::deadline until = {});

// Sends `n` bytes: `head` (<= n) first, zeros after, written into the
// stream's send room.
std::expected<void, std::error_code> send_in_place(affine::net::tcp_stream& s, std::size_t n,
                                                   std::span<const std::byte> head, affine::deadline until = {});

// Bulk: the bytes until the end of the stream, counted where they lie.
// A stop ends it early with operation_canceled.
std::expected<std::uint64_t, std::error_code> count_in_place(affine::net::tcp_stream& s);

}  // namespace affine_rr
