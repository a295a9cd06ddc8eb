#pragma once
// Putting a started port on a running runtime: one rx_poller per reactor
// core, owning the RX queues the plan gives that core (possibly none) and
// that core's TX queue, and the RETA programmed from the same plan.
//
// Reactor threads should be DPDK lcores (runtime_options::on_reactor_start =
// register_reactor, eal.hh) so that packet pools use their per-core caches.

#include <expected>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "affine/runtime.hh"
#include "affine/topology.hh"
#include "drivers/poller.hh"
#include "drivers/port.hh"

namespace affine::drivers {

struct attach_options {
  // Let idle reactors sleep on the port's RX interrupts where it has them.
  bool rx_interrupts = true;
  // Put the pollers on the reactors at once. A sink that must finish setting
  // itself up with the attachment (its TX batches) first says false and
  // calls start() when it is ready: a reactor polls as soon as its poller is
  // on, and a frame may be waiting already (a tap's kernel side sends some
  // the moment the interface comes up).
  bool start_polling = true;
};

class port_attachment {
 public:
  // Takes the pollers off the reactors (waiting for each), then drops what
  // their TX batches still hold. Call from outside the reactors, before the
  // runtime stops.
  ~port_attachment();
  port_attachment(const port_attachment&) = delete;
  port_attachment& operator=(const port_attachment&) = delete;

  // Puts the pollers on their reactors (attach_options::start_polling);
  // once only.
  void start();

  unsigned cores() const { return unsigned(pollers_.size()); }
  rx_poller& poller(unsigned reactor) { return *pollers_[reactor]; }
  // The TX batch of a reactor core. Precondition: used on that core.
  tx_batch& tx(unsigned reactor) { return pollers_[reactor]->tx(); }
  const tx_batch& tx(unsigned reactor) const { return pollers_[reactor]->tx(); }

 private:
  friend std::expected<std::unique_ptr<port_attachment>, std::string> attach(runtime&, port&,
                                                                             std::span<const rxq_assignment>,
                                                                             packet_sink&, attach_options);
  explicit port_attachment(runtime& rt) : rt_(rt) {}

  runtime& rt_;
  std::vector<std::unique_ptr<rx_poller>> pollers_;  // by reactor index
  bool started_ = false;
};

// `plan` (plan_rx_queues) must give every RX queue of the port exactly one
// core that runs a reactor; the port needs a TX queue per reactor core.
// Errors say which queue or core is wrong. A RETA the PMD will not take is
// logged, and RSS keeps the PMD's table.
std::expected<std::unique_ptr<port_attachment>, std::string> attach(runtime& rt, port& port,
                                                                    std::span<const rxq_assignment> plan,
                                                                    packet_sink& sink, attach_options opts = {});

}  // namespace affine::drivers
