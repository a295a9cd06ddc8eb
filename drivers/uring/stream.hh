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
  // Lent from buffers of this stream's (the kernel copies anyway): one
  // recv fills `in_`, one commit sends from `out_`.
  std::expected<std::span<const std::byte>, std::error_code> read_view(std::uint64_t deadline_ns) override;
  void consume(std::size_t n) override;
  std::expected<std::span<std::byte>, std::error_code> write_view(std::uint64_t deadline_ns) override;
  std::expected<void, std::error_code> commit(std::size_t n, std::uint64_t deadline_ns) override;
  bool has_lent_input() const { return in_begin_ < in_end_; }  // readable without the kernel
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
  static constexpr std::size_t view_bytes = 64 * 1024;

  ring_file file_;
  net::endpoint local_;
  net::endpoint remote_;
  std::unique_ptr<std::byte[]> in_;   // read_view's bytes, [in_begin_, in_end_) not consumed
  std::size_t in_begin_ = 0, in_end_ = 0;
  std::unique_ptr<std::byte[]> out_;  // write_view's room; allocated on first use
};

}  // namespace affine::drivers::uring
