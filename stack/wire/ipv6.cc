#include "stack/wire/ipv6.hh"

#include <algorithm>

#include "stack/wire/endian.hh"

namespace affine::stack {

bool is_extension(std::uint8_t next) noexcept {
  return next == next_header::hop_by_hop || next == next_header::routing || next == next_header::fragment ||
         next == next_header::destination;
}

namespace {

constexpr be32_field version_class_flow{0};
constexpr be16_field payload_length_field{4};
constexpr u8_field next_header_field{6};
constexpr u8_field hop_limit_field{7};
constexpr ipv6_address_field source{8};
constexpr ipv6_address_field destination{24};

ipv6_chain_error refuse(parse_error reason, std::optional<std::uint8_t> code = std::nullopt,
                        std::size_t pointer = 0) noexcept {
  return {reason, code, std::uint32_t(pointer)};
}

constexpr std::uint8_t code_header_field = 0;
constexpr std::uint8_t code_next_header = 1;
constexpr std::uint8_t code_option = 2;
constexpr std::uint8_t code_incomplete_chain = 3;  // RFC 7112: IPv6 First Fragment has incomplete IPv6 Header Chain

// The fixed header of an upper layer, which a first fragment must hold
// (RFC 7112 5; Linux's ipv6frag_thdr_truncated asks the same of TCP, UDP
// and ICMPv6): 0 for what this host does not parse.
std::size_t upper_header_length(std::uint8_t protocol) noexcept {
  switch (protocol) {
    case next_header::tcp: return 20;
    case next_header::udp: return 8;
    case next_header::icmpv6: return 4;
    default: return 0;
  }
}

// The options of a hop-by-hop or destination options header (RFC 8200 4.2),
// `options` starting at `at` in `packet`. Pad1 and PadN are skipped; an
// unrecognized option is skipped or refused as the two high bits of its
// type say.
std::optional<ipv6_chain_error> check_options(std::span<const std::byte> packet, std::size_t at, std::size_t end,
                                              bool multicast_dst) noexcept {
  while (at < end) {
    const auto type = std::uint8_t(packet[at]);
    if (type == 0) {  // Pad1
      ++at;
      continue;
    }
    if (at + 2 > end) return refuse(parse_error::bad_extension, code_header_field, at);
    const std::size_t len = std::size_t(packet[at + 1]);
    if (at + 2 + len > end) return refuse(parse_error::bad_extension, code_header_field, at + 1);
    if (type != 1) {  // not PadN: nothing else is recognized here
      switch (type >> 6) {
        case 0: break;                                                    // skip it
        case 1: return refuse(parse_error::bad_option);                   // discard silently
        case 2: return refuse(parse_error::bad_option, code_option, at);  // discard, answer
        case 3:                                                           // answer unless multicast
          return multicast_dst ? refuse(parse_error::bad_option) : refuse(parse_error::bad_option, code_option, at);
      }
    }
    at += 2 + len;
  }
  return std::nullopt;
}

// The length of extension header `next` at `at`: 8 for a Fragment header
// (RFC 8200 4.5), else 8 + 8 x Hdr Ext Len (4.3, 4.4, 4.6). Precondition:
// its first 8 bytes are in `packet`.
std::size_t extension_length(std::uint8_t next, std::span<const std::byte> packet, std::size_t at) noexcept {
  if (next == next_header::fragment) return 8;
  return (std::size_t(packet[at + 1]) + 1) * 8;
}

// The Fragment header at `at`. Precondition: its 8 bytes are in `packet`.
ipv6_fragment fragment_at(std::span<const std::byte> packet, std::size_t at) noexcept {
  const std::uint16_t off_flags = load_be16(packet.data() + at + 2);
  return {.id = load_be32(packet.data() + at + 4),
          .offset = std::uint16_t(off_flags & 0xfff8),
          .more = (off_flags & 1) != 0,
          .header_at = at};
}

ipv6_header header_of(std::span<const std::byte> packet) noexcept {
  const std::uint32_t vcf = version_class_flow.get(packet);
  return {.src = source.get(packet),
          .dst = destination.get(packet),
          .traffic_class = std::uint8_t(vcf >> 20),
          .flow_label = vcf & 0xfffff,
          .next = next_header_field.get(packet),
          .hop_limit = hop_limit_field.get(packet),
          .payload_length = payload_length_field.get(packet)};
}

}  // namespace

std::expected<ipv6_view, parse_error> ipv6_view::parse(std::span<const std::byte> bytes) noexcept {
  if (bytes.size() < header_length) return std::unexpected(parse_error::truncated);
  if (version_class_flow.get(bytes) >> 28 != 6) return std::unexpected(parse_error::bad_version);
  const std::size_t payload = payload_length_field.get(bytes);
  if (payload == 0 && bytes.size() > header_length && next_header_field.get(bytes) == next_header::hop_by_hop)
    return std::unexpected(parse_error::unsupported);  // a jumbogram (RFC 2675)
  if (header_length + payload > bytes.size()) return std::unexpected(parse_error::bad_payload_length);
  return ipv6_view(bytes.first(header_length + payload));
}

std::uint8_t ipv6_view::traffic_class() const noexcept {
  return std::uint8_t(version_class_flow.get(packet_) >> 20);
}
std::uint32_t ipv6_view::flow_label() const noexcept { return version_class_flow.get(packet_) & 0xfffff; }
std::uint8_t ipv6_view::next() const noexcept { return next_header_field.get(packet_); }
std::uint8_t ipv6_view::hop_limit() const noexcept { return hop_limit_field.get(packet_); }
ipv6_bytes ipv6_view::src() const noexcept { return source.get(packet_); }
ipv6_bytes ipv6_view::dst() const noexcept { return destination.get(packet_); }

ipv6_header ipv6_view::header() const noexcept { return header_of(packet_); }

std::expected<ipv6_upper, ipv6_chain_error> walk_ipv6_chain(const ipv6_view& v, unsigned max_headers) noexcept {
  const std::span<const std::byte> p = v.packet();
  const bool multicast_dst = is_multicast(v.dst());
  std::uint8_t next = v.next();
  std::size_t next_field = 6;  // the Next Header field that names `next`
  std::size_t at = ipv6_view::header_length;
  std::optional<ipv6_fragment> fragment;
  // In a first fragment, the chain after the Fragment header is walked too,
  // and must end in it with the upper layer's header (RFC 8200 4.5, RFC
  // 7112): refused otherwise with code 3 and pointer 0.
  const auto first_fragment = [&] { return fragment && !fragment->atomic(); };
  const auto truncated = [&](std::size_t pointer) {
    return first_fragment() ? refuse(parse_error::bad_extension, code_incomplete_chain, 0)
                            : refuse(parse_error::bad_extension, code_header_field, pointer);
  };
  for (unsigned seen = 0;; ++seen) {
    if (!is_extension(next)) break;
    if (seen == max_headers) return std::unexpected(refuse(parse_error::bad_extension));
    if (next == next_header::hop_by_hop && at != ipv6_view::header_length)
      return std::unexpected(refuse(parse_error::bad_extension, code_next_header, next_field));
    if (at + 8 > p.size())
      return std::unexpected(first_fragment() ? truncated(0) : refuse(parse_error::bad_extension));
    const auto following = std::uint8_t(p[at]);
    if (next == next_header::fragment) {
      // A second one: a fragment of a fragment, which no sender makes.
      if (fragment) return std::unexpected(refuse(parse_error::bad_extension));
      const ipv6_fragment f = fragment_at(p, at);
      // RFC 8200 4.5: a fragment with more to come carries a multiple of 8 bytes.
      if (f.more && (p.size() - at - 8) % 8 != 0)
        return std::unexpected(refuse(parse_error::bad_extension, code_header_field, 4));
      // ... and the datagram it belongs to fits a Payload Length: code 0 at
      // the Fragment Offset.
      if ((at - ipv6_view::header_length) + f.offset + (p.size() - at - 8) > 65535)
        return std::unexpected(refuse(parse_error::bad_extension, code_header_field, at + 2));
      next_field = at;
      next = following;
      at += 8;
      fragment = f;
      if (f.offset != 0) break;  // the rest waits for reassembly
      continue;
    }
    const std::size_t len = extension_length(next, p, at);
    if (at + len > p.size()) return std::unexpected(truncated(at + 1));
    if (next == next_header::routing) {
      // A final destination: with segments left this host would have to
      // forward, which it does not (RFC 8200 4.4).
      if (std::uint8_t(p[at + 3]) != 0)
        return std::unexpected(refuse(parse_error::bad_extension, code_header_field, at + 2));
    } else if (auto bad = check_options(p, at + 2, at + len, multicast_dst)) {
      return std::unexpected(*bad);
    }
    next_field = at;
    next = following;
    at += len;
  }
  if (fragment && !fragment->atomic()) {
    if (fragment->offset == 0 && p.size() - at < upper_header_length(next)) return std::unexpected(truncated(0));
    // The fragment's data, from just after its Fragment header, is what
    // reassembly joins; the chain there is stepped over once it is whole.
    const std::size_t data = fragment->header_at + 8;
    return ipv6_upper{.protocol = std::uint8_t(p[fragment->header_at]), .protocol_field = fragment->header_at,
                      .offset = data, .payload = p.subspan(data), .fragment = fragment};
  }
  return ipv6_upper{.protocol = next, .protocol_field = next_field, .offset = at, .payload = p.subspan(at),
                    .fragment = fragment};
}

ipv6_chain_end skip_ipv6_chain(std::span<const std::byte> packet, std::uint8_t next, std::size_t field,
                               std::size_t at, unsigned max_headers) noexcept {
  for (unsigned seen = 0; is_extension(next); ++seen) {
    if (seen == max_headers || at + 8 > packet.size()) return {next, field, at, ipv6_chain_end::stop::cut};
    const auto following = std::uint8_t(packet[at]);
    const std::size_t len = extension_length(next, packet, at);
    if (next == next_header::fragment && fragment_at(packet, at).offset != 0)
      return {following, at, at + len, ipv6_chain_end::stop::later_fragment};
    field = at;
    next = following;
    at += len;
  }
  return {next, field, at, ipv6_chain_end::stop::upper};
}

std::expected<std::size_t, emit_error> emit_ipv6(const ipv6_header& h, std::span<std::byte> out) noexcept {
  if (out.size() < ipv6_view::header_length) return std::unexpected(emit_error::buffer_too_small);
  version_class_flow.set(out, std::uint32_t{6} << 28 | std::uint32_t{h.traffic_class} << 20 | (h.flow_label & 0xfffff));
  payload_length_field.set(out, h.payload_length);
  next_header_field.set(out, h.next);
  hop_limit_field.set(out, h.hop_limit);
  source.set(out, h.src);
  destination.set(out, h.dst);
  return ipv6_view::header_length;
}

std::expected<ipv6_quote, parse_error> parse_ipv6_quote(std::span<const std::byte> bytes,
                                                        unsigned max_headers) noexcept {
  if (bytes.size() < ipv6_view::header_length) return std::unexpected(parse_error::truncated);
  if (version_class_flow.get(bytes) >> 28 != 6) return std::unexpected(parse_error::bad_version);
  // No upper-layer bytes until found: an empty span at the quote's end.
  ipv6_quote q{.header = header_of(bytes), .transport = bytes.last(0)};
  const ipv6_chain_end e = skip_ipv6_chain(bytes, q.header.next, 6, ipv6_view::header_length, max_headers);
  // The quote ends in the chain, or the chain passes the bound: the upper
  // layer is not known.
  if (e.how == ipv6_chain_end::stop::cut) return q;
  q.protocol = e.protocol;
  // RFC 8200 4.5: only the first fragment holds the upper-layer header. A
  // header that runs past the quote leaves `at` past it too.
  if (e.how == ipv6_chain_end::stop::upper && e.at + 8 <= bytes.size()) q.transport = bytes.subspan(e.at);
  return q;
}

pseudo_header ipv6_pseudo(const ipv6_bytes& src, const ipv6_bytes& dst, std::uint8_t next) noexcept {
  checksum_accumulator c;
  c.add(std::as_bytes(std::span(src)));
  c.add(std::as_bytes(std::span(dst)));
  c.add32(next);  // three zero bytes, then Next Header
  return pseudo_header::of(c, true);
}

checksum_accumulator ipv6_pseudo_header(const ipv6_bytes& src, const ipv6_bytes& dst, std::uint8_t next,
                                        std::uint32_t length) noexcept {
  return ipv6_pseudo(src, dst, next).with_length(length);
}

std::uint16_t ipv6_transport_checksum(const ipv6_bytes& src, const ipv6_bytes& dst, std::uint8_t next,
                                      std::span<const std::byte> header, std::span<const std::byte> payload,
                                      checksum_mode mode) noexcept {
  return ipv6_pseudo(src, dst, next).checksum(header, payload, mode);
}

bool ipv6_transport_verifies(const ipv6_bytes& src, const ipv6_bytes& dst, std::uint8_t next,
                             std::span<const std::byte> segment) noexcept {
  return ipv6_pseudo(src, dst, next).verifies(segment);
}

}  // namespace affine::stack
