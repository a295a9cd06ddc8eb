#pragma once
// What the request/response and bulk clients share: F flows, each a fiber
// with its own connection, that start measuring together once all have
// connected (or failed), and one JSON line that reports them.

#include <cstdint>
#include <expected>
#include <functional>
#include <string>
#include <string_view>

#include "affine/net.hh"
#include "affine/sync.hh"
#include "apps/rr/options.hh"
#include "apps/rr/protocol.hh"

namespace affine_rr {

// A flow stops at its first error; `first` says what it was.
struct flow_error {
  bool failed = false;
  std::string first;
  void set(std::string what) {
    if (!failed) first = std::move(what);
    failed = true;
  }
};

// The measured window, the same for every flow: [from_ns, to_ns).
class start_line {
 public:
  // Precondition: in a flow fiber; called once by each flow. Connects
  // (no_delay) and says hello, then waits until every flow has done so (or
  // failed) and the window is set. The error is one line for the report.
  std::expected<affine::net::tcp_stream, std::string> open(const client_options& o, const hello& h);

  // Precondition: in the fiber that started the flows. Waits for all of
  // them to connect or fail, then opens the window after the warm-up.
  void start(const client_options& o, unsigned flows);  // `flows` of o.flows were started

  std::uint64_t from_ns() const { return from_ns_; }
  std::uint64_t to_ns() const { return to_ns_; }

 private:
  affine::semaphore arrived_;
  affine::event go_;
  std::uint64_t from_ns_ = 0;
  std::uint64_t to_ns_ = 0;
};

// Runs flow(0..o.flows-1), each in a fiber, opens `line`'s window when all
// have arrived, and returns when all have ended.
void run_flows(const client_options& o, start_line& line, const std::function<void(unsigned)>& flow);

// The JSON line's common parts: `{"bench":..,"variant":..,"flows":F` and
// `,"errors":N[,"first_error":".."]}`.
std::string json_head(std::string_view bench, const client_options& o);
std::string json_tail(std::uint64_t errors, std::string_view first_error);

}  // namespace affine_rr
