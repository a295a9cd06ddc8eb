#include "stack/wire/tcp.hh"

#include <cstdint>
#include <cstring>

#include "stack/wire/endian.hh"
#include "stack/wire/ipv4.hh"

namespace affine::stack {
namespace {

constexpr be16_field source_port{0};
constexpr be16_field destination_port{2};
constexpr be32_field sequence_number{4};
constexpr be32_field acknowledgment_number{8};
constexpr u8_field data_offset{12};  // high nibble, in 32-bit words
constexpr u8_field flag_bits{13};
constexpr be16_field window_field{14};
constexpr be16_field checksum_field{16};
constexpr be16_field urgent{18};


// The largest segment an IPv4 datagram carries: 65535 less a bare header.
constexpr std::size_t max_segment_length = 0xffff - ipv4_view::min_header_length;

// The header length seg needs, or why it cannot be sent.
std::expected<std::size_t, emit_error> header_length_for(const tcp_segment& seg) noexcept {
  const std::size_t options_length = tcp_options_length(seg.options);
  if (options_length > tcp_max_options_length) return std::unexpected(emit_error::options_too_long);
  const std::size_t n = tcp_view::min_header_length + options_length;
  if (n + seg.payload.size() > max_segment_length) return std::unexpected(emit_error::too_long);
  return n;
}

// Precondition: out holds n = header_length_for(seg) bytes; `payload` is
// the sum of seg.payload (unused for checksum_mode::offload).
void write_header(const tcp_segment& seg, std::size_t n, const pseudo_header& ph, std::span<std::byte> out, checksum_mode mode, const checksum_accumulator& payload) noexcept {
  source_port.set(out, seg.src_port);
  destination_port.set(out, seg.dst_port);
  sequence_number.set(out, seg.seq.raw());
  acknowledgment_number.set(out, seg.ack ? seg.ack->raw() : 0);
  data_offset.set(out, std::uint8_t(n / 4 << 4));
  std::uint8_t f = 0;
  switch (seg.control) {
    case tcp_control::none: break;
    case tcp_control::syn: f |= tcp_flag::syn; break;
    case tcp_control::fin: f |= tcp_flag::fin; break;
    case tcp_control::rst: f |= tcp_flag::rst; break;
  }
  if (seg.psh) f |= tcp_flag::psh;
  if (seg.ack) f |= tcp_flag::ack;
  if (seg.urg) f |= tcp_flag::urg;
  if (seg.ece) f |= tcp_flag::ece;
  if (seg.cwr) f |= tcp_flag::cwr;
  flag_bits.set(out, f);
  window_field.set(out, seg.window);
  checksum_field.set(out, 0);
  urgent.set(out, seg.urgent_pointer);
  const std::span<std::byte> options = out.subspan(tcp_view::min_header_length, n - tcp_view::min_header_length);
  (void)emit_tcp_options(seg.options, options);
  checksum_accumulator c = ph.with_length(std::uint32_t(n + seg.payload.size()));
  if (mode == checksum_mode::offload) {
    checksum_field.set(out, c.sum());
    return;
  }
  // The fixed header is summed from its values and the options after the
  // payload: loading bytes just stored a field at a time stalls on store
  // forwarding, and by then they have left the store buffer. The payload
  // and the options sit at even offsets: their sums join in any order.
  c.add16(seg.src_port);
  c.add16(seg.dst_port);
  c.add32(seg.seq.raw());
  c.add32(seg.ack ? seg.ack->raw() : 0);
  c.add16(std::uint16_t(n / 4 << 12 | f));
  c.add16(seg.window);
  c.add16(seg.urgent_pointer);
  c.join_even(payload);
  checksum_accumulator o;
  o.add(options);
  c.join_even(o);
  checksum_field.set(out, c.checksum());
}

}  // namespace

std::expected<tcp_view, parse_error> tcp_view::parse(std::span<const std::byte> bytes, const pseudo_header& ph,
                                                     checksum_mode mode) noexcept {
  if (bytes.size() < min_header_length) return std::unexpected(parse_error::truncated);
  const std::size_t header_length = std::size_t(data_offset.get(bytes) >> 4) * 4;
  if (header_length < min_header_length || header_length > bytes.size())
    return std::unexpected(parse_error::bad_header_length);
  if (mode == checksum_mode::software && !ph.verifies(bytes))
    return std::unexpected(parse_error::bad_checksum);
  // At most one of SYN, FIN and RST: no RFC 9293 state acts on SYN+FIN or
  // RST with either, and such segments are scans or attacks. tcp_control
  // cannot express them, so they stop here.
  const std::uint8_t f = flag_bits.get(bytes);
  const int controls = ((f & tcp_flag::syn) != 0) + ((f & tcp_flag::fin) != 0) + ((f & tcp_flag::rst) != 0);
  if (controls > 1) return std::unexpected(parse_error::bad_flags);
  // The options are checked here and read where they are wanted (segment()),
  // in place: the view stays two words.
  tcp_options checked;
  if (!read_tcp_options(bytes.subspan(min_header_length, header_length - min_header_length), checked))
    return std::unexpected(parse_error::bad_option);
  return tcp_view(bytes);
}

tcp_options tcp_view::options() const noexcept {
  tcp_options o;
  (void)read_tcp_options(option_bytes(), o);
  return o;
}

std::uint16_t tcp_view::src_port() const noexcept { return source_port.get(bytes_); }
std::uint16_t tcp_view::dst_port() const noexcept { return destination_port.get(bytes_); }
seq32 tcp_view::seq() const noexcept { return seq32(sequence_number.get(bytes_)); }
seq32 tcp_view::ack_number() const noexcept { return seq32(acknowledgment_number.get(bytes_)); }
std::size_t tcp_view::header_length() const noexcept { return std::size_t(data_offset.get(bytes_) >> 4) * 4; }
std::uint8_t tcp_view::flags() const noexcept { return flag_bits.get(bytes_); }
std::uint16_t tcp_view::window() const noexcept { return window_field.get(bytes_); }
std::uint16_t tcp_view::checksum() const noexcept { return checksum_field.get(bytes_); }
std::uint16_t tcp_view::urgent_pointer() const noexcept { return urgent.get(bytes_); }

tcp_control tcp_view::control() const noexcept {
  if (syn()) return tcp_control::syn;
  if (fin()) return tcp_control::fin;
  if (rst()) return tcp_control::rst;
  return tcp_control::none;
}

tcp_segment tcp_view::segment() const noexcept {
  tcp_segment s;
  s.src_port = src_port();
  s.dst_port = dst_port();
  s.control = control();
  s.psh = psh();
  s.seq = seq();
  if (ack()) s.ack = ack_number();
  s.window = window();
  s.urg = urg();
  s.ece = ece();
  s.cwr = cwr();
  s.urgent_pointer = urgent_pointer();
  (void)read_tcp_options(option_bytes(), s.options);
  s.payload = payload();
  return s;
}

std::expected<std::size_t, emit_error> emit_tcp_header(const tcp_segment& seg, const pseudo_header& ph,
                                                       std::span<std::byte> out, checksum_mode mode) noexcept {
  const auto n = header_length_for(seg);
  if (!n) return n;
  if (out.size() < *n) return std::unexpected(emit_error::buffer_too_small);
  checksum_accumulator payload;
  if (mode == checksum_mode::software) payload.add(seg.payload);
  write_header(seg, *n, ph, out, mode, payload);
  return n;
}

std::expected<std::size_t, emit_error> emit_tcp(const tcp_segment& seg, const pseudo_header& ph,
                                                std::span<std::byte> out, checksum_mode mode) noexcept {
  const auto n = header_length_for(seg);
  if (!n) return n;
  const std::size_t total = *n + seg.payload.size();
  if (out.size() < total) return std::unexpected(emit_error::buffer_too_small);
  tcp_segment placed = seg;
  placed.payload = out.subspan(*n, seg.payload.size());
  // The payload is copied and summed in one pass; with memmove and then
  // summed where a retransmission or reply built in place overlaps it.
  const auto at = [](const std::byte* q) { return reinterpret_cast<std::uintptr_t>(q); };
  const std::byte* from = seg.payload.data();
  std::byte* to = out.data() + *n;
  const bool overlaps = at(to) < at(from) + seg.payload.size() && at(from) < at(to) + seg.payload.size();
  checksum_accumulator payload;
  if (mode == checksum_mode::software && !overlaps) {
    payload.copy_and_add(to, seg.payload);
  } else {
    if (!seg.payload.empty()) std::memmove(to, from, seg.payload.size());
    if (mode == checksum_mode::software) payload.add(placed.payload);
  }
  write_header(placed, *n, ph, out, mode, payload);
  return total;
}

}  // namespace affine::stack
