#pragma once
// The userspace stack's part of affine::run (runtime/run.cc): the ports with
// driver = "dpdk" and a stack on each. Meson picks the implementation:
// runtime/stack_ports.cc where affine is built with DPDK, and
// runtime/no_stack_ports.cc without it, where a dpdk port is a configuration
// error that names its file and line.

#include <expected>
#include <functional>
#include <memory>
#include <string>

#include "affine/config.hh"
#include "affine/runtime.hh"

namespace affine::detail {

// Stacks running on a runtime's reactors, the first one the socket API's
// backend. Destroyed in a fiber of that runtime: the backend is unset, then
// the stacks stop.
class running_stacks {
 public:
  virtual ~running_stacks() = default;
  // One stats line per core of each stack (the [stats] interval).
  virtual void log_stats() const = 0;
};

class stack_ports {
 public:
  // Every dpdk port of `cfg`, opened before the reactors start, so that a
  // configuration naming a missing PMD, a bad vdev or more queues than the
  // device has ends start-up with its file, line and key (exit code 2).
  static std::expected<std::unique_ptr<stack_ports>, std::string> open(const config::settings& cfg, unsigned reactors);
  virtual ~stack_ports() = default;

  // What each reactor thread runs as it starts (empty: nothing).
  virtual std::function<void(unsigned reactor)> on_reactor_start() const = 0;
  // A stack on each port, the first installed as the socket API's backend
  // (none without ports). Precondition: in a fiber of `rt`.
  virtual std::expected<std::unique_ptr<running_stacks>, std::string> start(runtime& rt,
                                                                           const config::settings& cfg) = 0;
};

}  // namespace affine::detail
