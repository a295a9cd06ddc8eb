#pragma once
// MySQL packet framing: each frame is a 3-byte little-endian payload length,
// a 1-byte sequence id and the payload. A payload of 0xffffff bytes or more
// is split: frames of exactly 0xffffff bytes, then one shorter frame (empty
// when the size is a multiple of 0xffffff); each frame's sequence id is the
// previous one's plus one (mod 256). A "packet" here is the reassembled
// payload.
//
// Sequence ids run through one exchange: a command starts at 0 and every
// later packet of it, in either direction, takes the next id. The framer
// checks that each frame carries the id it was told to expect (the caller,
// which knows the exchange, says which: command_tracker::expected_seq()).
//
// Reassembly is bounded: a packet whose payload would exceed the limit is
// an error as soon as a header says so, before its bytes are buffered.

#include <cstddef>
#include <cstdint>
#include <expected>
#include <optional>
#include <span>
#include <string_view>
#include <vector>

namespace affine_mysql {

inline constexpr std::size_t frame_header_size = 4;
inline constexpr std::size_t max_frame_payload = 0xffffff;
inline constexpr std::size_t default_max_packet = 64u << 20;

enum class packet_error : std::uint8_t {
  too_large,     // the payload would exceed the framer's limit
  bad_sequence,  // a frame's sequence id is not the expected one
};
std::string_view to_string(packet_error e);

struct packet_view {
  std::uint8_t seq = 0;       // the first frame's sequence id
  std::uint8_t next_seq = 0;  // what the exchange's next packet carries: the last frame's id + 1
  std::span<const std::byte> payload;
};

// Splits a byte stream into packets. Not thread-safe; one per direction of a
// connection.
class framer {
 public:
  // `hold_limit`: a one-frame packet of up to this many payload bytes that
  // is not yet wholly in `in` is left there (consumed 0) for the caller to
  // present again with more, so that it too comes back without a copy; the
  // caller's buffer must then have room for hold_limit + 4 bytes. Larger
  // packets are gathered as their bytes arrive.
  explicit framer(std::size_t max_payload = default_max_packet, std::size_t hold_limit = 0)
      : max_payload_(max_payload), hold_limit_(hold_limit) {}

  struct step {
    std::size_t consumed = 0;           // bytes of `in` used up; the caller drops them
    std::optional<packet_view> packet;  // a whole packet, if one was completed
  };

  // Takes what it can from the start of `in`: at most one packet. A packet in
  // one frame that lies wholly in `in` comes back without a copy (its payload
  // points into `in`); any other is gathered in the framer (its payload
  // points there). Either stays valid until the next take(). An incomplete
  // header is left in `in` for the caller to present again with more.
  // `expect_seq` applies to a packet's first frame; later frames must
  // follow it. After an error the framer is unusable.
  std::expected<step, packet_error> take(std::span<const std::byte> in, std::uint8_t expect_seq);

  // A packet is partly taken (its first frame header has been read).
  bool mid_packet() const { return mid_packet_; }

 private:
  std::expected<step, packet_error> finish(std::size_t consumed);

  std::size_t max_payload_;
  std::size_t hold_limit_;
  std::vector<std::byte> assembly_;  // the packet being gathered
  bool mid_packet_ = false;
  bool more_frames_ = false;   // the current frame is 0xffffff long: another follows
  std::size_t body_left_ = 0;  // bytes of the current frame not yet gathered
  std::uint8_t first_seq_ = 0;
  std::uint8_t next_seq_ = 0;
};

// Frames `payload` as one packet whose first frame has sequence id `seq`,
// appended to `out`; returns the id the exchange's next packet takes.
std::uint8_t append_packet(std::vector<std::byte>& out, std::uint8_t seq, std::span<const std::byte> payload);
// Bytes append_packet adds for a payload of `n` bytes.
std::size_t framed_size(std::size_t n);

}  // namespace affine_mysql
