#pragma once
// net::wait_any on the userspace stack (wait_any.cc), and what it needs
// from the socket handles (socket_api.cc).

#include "affine/net.hh"
#include "drivers/net_backend.hh"

namespace affine::stack {

class tcp_socket;
class listen_socket;
class udp_socket;

// The stack's one waiter for net::wait_any; every handle's waiter().
net::detail::multi_waiter* stack_waiter();

// The socket behind each handle of a wait entry (null where it has none);
// no reference is taken.
struct entry_sockets {
  tcp_socket* tcp = nullptr;
  listen_socket* listener = nullptr;
  udp_socket* udp = nullptr;
};
entry_sockets sockets_of(const net::wait_entry& e);

}  // namespace affine::stack
