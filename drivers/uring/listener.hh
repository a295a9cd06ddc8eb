#pragma once
// A listening TCP socket (net::detail::listener_impl). Any number of fibers
// may accept at once; close() wakes them all with ECANCELED.

#include <memory>

#include "drivers/net_backend.hh"
#include "drivers/uring/file.hh"

namespace affine::drivers::uring {

class uring_listener final : public net::detail::listener_impl {
 public:
  // Precondition: in a fiber. Bound (SO_REUSEADDR) and listening.
  static std::expected<std::unique_ptr<net::detail::listener_impl>, std::error_code> listen(
      const ring_set& rings, const net::listen_options& opts);

  std::expected<std::unique_ptr<net::detail::stream_impl>, std::error_code> accept(std::uint64_t deadline_ns) override;
  net::endpoint local() const override { return local_; }
  void close() override { file_.close(); }
  net::detail::multi_waiter* waiter() const override;  // wait.cc
  ring_file& file() { return file_; }

  // Use listen(); public for make_unique.
  uring_listener(const ring_set& rings, int fd, const net::stream_options& accepted)
      : rings_(rings), file_(rings, fd), accepted_(accepted) {}

 private:
  const ring_set& rings_;
  ring_file file_;
  net::stream_options accepted_;
  net::endpoint local_;
};

}  // namespace affine::drivers::uring
