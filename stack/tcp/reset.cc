#include "stack/tcp/reset.hh"

namespace affine::stack::tcp {

std::optional<tcp_segment> reset_for(const tcp_segment& seg) {
  if (seg.control == tcp_control::rst) return std::nullopt;
  tcp_segment rst;
  rst.src_port = seg.dst_port;
  rst.dst_port = seg.src_port;
  rst.control = tcp_control::rst;
  if (seg.ack) {
    rst.seq = *seg.ack;
  } else {
    rst.seq = seq32(0);
    rst.ack = seg.seq + seg.seq_len();
  }
  return rst;
}

}  // namespace affine::stack::tcp
