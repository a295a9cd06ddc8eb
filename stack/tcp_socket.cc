#include "stack/tcp_socket.hh"

#include "stack/listen_socket.hh"

namespace affine::stack {

tcp_socket::tcp_socket(stack& st, unsigned home_core, const tcp::open_params& p, const tcp::connection_config& cfg,
                       std::uint64_t now_ns)
    : conn(p, cfg, now_ns), wheel_entry(&on_wheel_entry, this), st_(st), home_(home_core) {}

tcp_socket::tcp_socket(stack& st, unsigned home_core, const tcp::open_params& p, const tcp::connection_config& cfg,
                       const tcp_segment& syn, std::uint64_t now_ns)
    : conn(p, cfg, syn, now_ns), wheel_entry(&on_wheel_entry, this), st_(st), home_(home_core) {}

tcp_socket::~tcp_socket() {
  // A child still in SYN-RECEIVED when its stack goes away never settled, so
  // child_settled() never gave its listener back.
  if (parent != nullptr) parent->unref();
}

void tcp_socket::unref() noexcept {
  if (refs_.fetch_sub(1, std::memory_order_acq_rel) == 1) delete this;
}

}  // namespace affine::stack
