#pragma once
// The RST that answers a segment nobody should have received: a segment for
// no connection (RFC 9293 3.10.7.1), an ACK to a listener (3.10.7.2), or an
// unacceptable ACK during the handshake (3.10.7.3, 3.10.7.4 fifth).

#include <optional>

#include "stack/wire/tcp_segment.hh"

namespace affine::stack::tcp {

// RFC 9293 3.10.7.1: no reply to a RST. Otherwise the RST is made acceptable
// to the sender: with the ACK bit on <SEQ=SEG.ACK><CTL=RST>, else
// <SEQ=0><ACK=SEG.SEQ+SEG.LEN><CTL=RST,ACK>. Ports are swapped.
std::optional<tcp_segment> reset_for(const tcp_segment& seg);

}  // namespace affine::stack::tcp
