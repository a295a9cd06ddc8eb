#pragma once
// A connected TCP stream on a kernel socket (net::detail::stream_impl).

#include <memory>

#include "drivers/net_backend.hh"
#include "drivers/uring/file.hh"

namespace affine::drivers::uring {

class uring_stream final : public net::detail::stream_impl {
 public:
  // Takes ownership of the connected socket `fd`.
  uring_stream(const ring_set& rings, int fd, net::endpoint local, net::endpoint remote)
      : file_(rings, fd), local_(local), remote_(remote) {}

  // Precondition: in a fiber. A new socket, options applied, connected.
  static std::expected<std::unique_ptr<net::detail::stream_impl>, std::error_code> connect(
      const ring_set& rings, net::endpoint to, std::uint64_t deadline_ns, const net::stream_options& opts);

  // Precondition: before the stream is shared. TCP_NODELAY, SO_KEEPALIVE
  // and SO_LINGER from `opts`.
  std::expected<void, std::error_code> apply(const net::stream_options& opts);

  std::expected<std::size_t, std::error_code> read(std::span<std::byte> buf, std::uint64_t deadline_ns) override;
  std::expected<void, std::error_code> write(std::span<const std::byte> data, std::uint64_t deadline_ns) override;
  std::expected<void, std::error_code> shutdown_write() override;
  void close() override { file_.close(); }
  net::detail::multi_waiter* waiter() const override;  // wait.cc
  ring_file& file() { return file_; }
  void abort() override;
  std::expected<void, std::error_code> set_no_delay(bool on) override;
  std::expected<void, std::error_code> set_keepalive(bool on) override;
  net::endpoint local() const override { return local_; }
  net::endpoint remote() const override { return remote_; }

 private:
  ring_file file_;
  net::endpoint local_;
  net::endpoint remote_;
};

}  // namespace affine::drivers::uring
