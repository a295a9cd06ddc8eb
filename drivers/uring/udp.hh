#pragma once
// A bound UDP socket on a kernel socket (net::detail::udp_impl): datagrams
// through io_uring recvmsg/sendmsg, any number of fibers at once.

#include <memory>

#include "drivers/net_backend.hh"
#include "drivers/uring/file.hh"

namespace affine::drivers::uring {

class uring_udp final : public net::detail::udp_impl {
 public:
  // Precondition: in a fiber. A new socket, bound.
  static std::expected<std::unique_ptr<net::detail::udp_impl>, std::error_code> bind(const ring_set& rings,
                                                                                      const net::udp_options& opts);

  std::expected<void, std::error_code> send_to(net::endpoint to, std::span<const std::byte> datagram) override;
  std::expected<net::udp_socket::datagram_info, std::error_code> recv_from(std::span<std::byte> buf,
                                                                           std::uint64_t deadline_ns) override;
  net::endpoint local() const override { return local_; }
  void close() override { file_.close(); }
  net::detail::multi_waiter* waiter() const override;  // wait.cc
  ring_file& file() { return file_; }

  // Use bind(); public for make_unique. Takes ownership of `fd`.
  uring_udp(const ring_set& rings, int fd) : file_(rings, fd) {}

 private:
  ring_file file_;
  net::endpoint local_;
};

}  // namespace affine::drivers::uring
