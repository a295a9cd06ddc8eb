#include "apps/mysql-proxy/packet.hh"

#include <algorithm>

namespace affine_mysql {

namespace {

// After a large packet, the gathering buffer goes back to nothing rather
// than holding megabytes per idle connection.
constexpr std::size_t keep_assembly_bytes = 256 * 1024;

}  // namespace

std::string_view to_string(packet_error e) {
  switch (e) {
    case packet_error::too_large: return "packet too large";
    case packet_error::bad_sequence: return "bad sequence id";
  }
  return "?";
}

std::expected<framer::step, packet_error> framer::take(std::span<const std::byte> in, std::uint8_t expect_seq) {
  if (!mid_packet_) {
    if (assembly_.capacity() > keep_assembly_bytes) assembly_ = {};
    assembly_.clear();
  }
  std::size_t consumed = 0;
  for (;;) {
    if (body_left_ > 0) {
      const std::size_t n = std::min(body_left_, in.size() - consumed);
      assembly_.insert(assembly_.end(), in.begin() + std::ptrdiff_t(consumed),
                       in.begin() + std::ptrdiff_t(consumed + n));
      consumed += n;
      body_left_ -= n;
      if (body_left_ > 0) return step{consumed, std::nullopt};
      if (!more_frames_) return finish(consumed);
      continue;
    }
    const auto header = in.subspan(consumed);
    if (header.size() < frame_header_size) return step{consumed, std::nullopt};
    const std::size_t length = std::size_t(header[0]) | std::size_t(header[1]) << 8 | std::size_t(header[2]) << 16;
    const auto seq = std::uint8_t(header[3]);
    if (seq != (mid_packet_ ? next_seq_ : expect_seq)) return std::unexpected(packet_error::bad_sequence);
    if ((mid_packet_ ? assembly_.size() : 0) + length > max_payload_) return std::unexpected(packet_error::too_large);
    next_seq_ = std::uint8_t(seq + 1);
    if (!mid_packet_) {
      first_seq_ = seq;
      // The common case: a packet of one frame, all of it here. No copy.
      if (length < max_frame_payload && header.size() >= frame_header_size + length)
        return step{consumed + frame_header_size + length,
                    packet_view{seq, next_seq_, header.subspan(frame_header_size, length)}};
      if (length < max_frame_payload && length <= hold_limit_) return step{consumed, std::nullopt};
    }
    mid_packet_ = true;
    more_frames_ = length == max_frame_payload;
    body_left_ = length;
    consumed += frame_header_size;
    if (length == 0) return finish(consumed);
  }
}

std::expected<framer::step, packet_error> framer::finish(std::size_t consumed) {
  mid_packet_ = false;
  more_frames_ = false;
  return step{consumed, packet_view{first_seq_, next_seq_, assembly_}};
}

std::uint8_t append_packet(std::vector<std::byte>& out, std::uint8_t seq, std::span<const std::byte> payload) {
  for (;;) {
    const std::size_t n = std::min(payload.size(), max_frame_payload);
    out.push_back(std::byte(n));
    out.push_back(std::byte(n >> 8));
    out.push_back(std::byte(n >> 16));
    out.push_back(std::byte(seq++));
    out.insert(out.end(), payload.begin(), payload.begin() + std::ptrdiff_t(n));
    payload = payload.subspan(n);
    // A frame of exactly 0xffffff says "more follows": even an empty one.
    if (n < max_frame_payload) return seq;
  }
}

std::size_t framed_size(std::size_t n) { return n + (n / max_frame_payload + 1) * frame_header_size; }

}  // namespace affine_mysql
