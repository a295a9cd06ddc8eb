#include "apps/mysql-proxy/packet_io.hh"

#include <cstring>

#include "affine/fiber.hh"

namespace affine_mysql {

namespace {

// After a large result the queue's memory goes back rather than staying
// with an idle session.
constexpr std::size_t keep_out_bytes = 4 * packet_io::flush_threshold_bytes;

}  // namespace

packet_io::packet_io(affine::net::tcp_stream stream, std::size_t max_packet)
    : stream_(std::move(stream)), framer_(max_packet, read_buffer_bytes - frame_header_size), in_(read_buffer_bytes) {}

void packet_io::release_last() {
  begin_ += last_packet_bytes_;
  last_packet_bytes_ = 0;
  if (begin_ == end_) begin_ = end_ = 0;
}

std::expected<packet_view, read_error> packet_io::read(std::uint8_t expect_seq, std::uint64_t deadline_ns) {
  release_last();
  for (;;) {
    auto s = framer_.take(std::span(in_).subspan(begin_, end_ - begin_), expect_seq);
    if (!s) return std::unexpected(read_error{.what = read_error::kind::protocol, .packet = s.error()});
    if (s->packet) {
      last_packet_bytes_ = s->consumed;
      return *s->packet;
    }
    begin_ += s->consumed;
    // What is left is the start of a packet the framer holds back: move it
    // to the front so the rest fits behind it (the framer's hold limit is
    // the buffer's size).
    if (begin_ > 0) {
      std::memmove(in_.data(), in_.data() + begin_, end_ - begin_);
      end_ -= begin_;
      begin_ = 0;
    }
    auto n = stream_.read(std::span(in_).subspan(end_), deadline_ns);
    if (!n) {
      const bool timeout = n.error() == std::errc::timed_out;
      return std::unexpected(
          read_error{.what = timeout ? read_error::kind::timed_out : read_error::kind::failed, .code = n.error()});
    }
    if (*n == 0) return std::unexpected(read_error{.what = read_error::kind::closed});
    end_ += *n;
  }
}

bool packet_io::packet_ready() const {
  if (framer_.mid_packet()) return false;
  const std::size_t at = begin_ + last_packet_bytes_;
  if (end_ - at < frame_header_size) return false;
  const std::size_t length = std::size_t(in_[at]) | std::size_t(in_[at + 1]) << 8 | std::size_t(in_[at + 2]) << 16;
  return length < max_frame_payload && end_ - at >= frame_header_size + length;
}

bool packet_io::peer_open() {
  if (end_ == in_.size()) return true;  // no room to look; the bytes there say it was open
  auto n = stream_.read(std::span(in_).subspan(end_), affine::now_ns());
  if (!n) return n.error() == std::errc::timed_out;
  end_ += *n;
  return *n > 0;
}

std::expected<void, std::error_code> packet_io::flush(std::uint64_t deadline_ns) {
  if (out_.empty()) return {};
  auto w = stream_.write(out_, deadline_ns);
  if (out_.capacity() > keep_out_bytes) {
    out_ = {};
  } else {
    out_.clear();
  }
  return w;
}

}  // namespace affine_mysql
