#pragma once
// One side of a session: a stream, the framer that splits what it reads
// into packets, and the bytes queued to be written to it. Reads are
// buffered (one read takes whatever the socket has); writes are queued and
// go out in one write when the session flushes, which it does before it
// waits for anything: a result set of many small rows becomes a few large
// writes, and nothing waits in the queue while the proxy sleeps.

#include <cstddef>
#include <cstdint>
#include <expected>
#include <span>
#include <system_error>
#include <vector>

#include "affine/net.hh"
#include "apps/mysql-proxy/packet.hh"

namespace affine_mysql {

struct read_error {
  enum class kind : std::uint8_t {
    closed,     // the peer closed its side (end of stream)
    timed_out,  // the deadline passed; the packet, if begun, is kept
    failed,     // the stream failed: `code`
    protocol,   // the bytes are not packets as expected: `packet`
  };
  kind what = kind::closed;
  std::error_code code{};
  packet_error packet = packet_error::bad_sequence;
};

class packet_io {
 public:
  // Read buffer: large enough for the packets of an OLTP exchange; larger
  // ones are gathered by the framer as they arrive.
  static constexpr std::size_t read_buffer_bytes = 32 * 1024;
  // Queued output past this is written at once, without waiting for the
  // response to end.
  static constexpr std::size_t flush_threshold_bytes = 256 * 1024;

  packet_io(affine::net::tcp_stream stream, std::size_t max_packet);

  // The next packet, whose first frame must carry `expect_seq`. Its payload
  // stays valid until the next read() or peer_open().
  std::expected<packet_view, read_error> read(std::uint8_t expect_seq, std::uint64_t deadline_ns);
  // A whole packet is buffered: read() will not wait.
  bool packet_ready() const;
  // Looks at the stream without waiting: false when the peer has closed it
  // or it failed. Bytes that arrive are kept for read().
  bool peer_open();

  void queue(std::uint8_t seq, std::span<const std::byte> payload) { append_packet(out_, seq, payload); }
  void queue(const packet_view& p) { queue(p.seq, p.payload); }
  std::size_t queued() const { return out_.size(); }
  std::expected<void, std::error_code> flush(std::uint64_t deadline_ns);

  const affine::net::tcp_stream& stream() const { return stream_; }

 private:
  // Drops the bytes of the packet read() returned last.
  void release_last();

  affine::net::tcp_stream stream_;
  framer framer_;
  std::vector<std::byte> in_;
  std::size_t begin_ = 0;  // unread bytes are in_[begin_, end_)
  std::size_t end_ = 0;
  std::size_t last_packet_bytes_ = 0;  // bytes at begin_ that the last packet took
  std::vector<std::byte> out_;
};

}  // namespace affine_mysql
