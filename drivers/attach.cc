#include "drivers/attach.hh"

#include <optional>

#include <fmt/format.h>

#include "affine/log.hh"

namespace affine::drivers {

namespace {

std::optional<unsigned> reactor_of(const runtime& rt, core_id c) {
  for (unsigned r = 0; r < rt.cores(); ++r)
    if (rt.topology_core(r) == c) return r;
  return std::nullopt;
}

// The queues of each reactor, in plan order, or what is wrong with the plan.
std::expected<std::vector<std::vector<unsigned>>, std::string> queues_by_reactor(
    const runtime& rt, const port& port, std::span<const rxq_assignment> plan) {
  std::vector<std::vector<unsigned>> by_reactor(rt.cores());
  std::vector<bool> planned(port.rx_queue_count(), false);
  for (const auto& a : plan) {
    if (a.queue >= port.rx_queue_count())
      return std::unexpected(fmt::format("port {}: the plan names RX queue {}, the port has {}", port.name(),
                                         a.queue, port.rx_queue_count()));
    if (planned[a.queue])
      return std::unexpected(fmt::format("port {}: the plan gives RX queue {} twice", port.name(), a.queue));
    const auto r = reactor_of(rt, a.core);
    if (!r)
      return std::unexpected(fmt::format("port {}: RX queue {} is planned on core {}, which runs no reactor",
                                         port.name(), a.queue, a.core.value));
    planned[a.queue] = true;
    by_reactor[*r].push_back(a.queue);
  }
  for (unsigned q = 0; q < planned.size(); ++q)
    if (!planned[q])
      return std::unexpected(fmt::format("port {}: RX queue {} is not in the plan, so no core would poll it",
                                         port.name(), q));
  return by_reactor;
}

}  // namespace

std::expected<std::unique_ptr<port_attachment>, std::string> attach(runtime& rt, port& port,
                                                                    std::span<const rxq_assignment> plan,
                                                                    packet_sink& sink, attach_options opts) {
  if (port.tx_queue_count() < rt.cores())
    return std::unexpected(fmt::format("port {}: {} TX queues for {} reactor cores (one each is needed)",
                                       port.name(), port.tx_queue_count(), rt.cores()));
  auto by_reactor = queues_by_reactor(rt, port, plan);
  if (!by_reactor) return std::unexpected(by_reactor.error());
  if (auto r = port.program_reta(plan); !r) AFFINE_LOG_WARN("{}; RSS keeps the PMD's table", r.error());

  std::unique_ptr<port_attachment> a(new port_attachment(rt));
  for (unsigned r = 0; r < rt.cores(); ++r)
    a->pollers_.push_back(std::make_unique<rx_poller>(port, r, std::move((*by_reactor)[r]), sink, opts.rx_interrupts));
  if (opts.start_polling) a->start();
  return a;
}

void port_attachment::start() {
  if (started_) return;
  started_ = true;
  for (unsigned r = 0; r < pollers_.size(); ++r) rt_.add_poller(r, pollers_[r].get());
}

port_attachment::~port_attachment() {
  if (!started_) return;
  for (unsigned r = 0; r < pollers_.size(); ++r) rt_.remove_poller(r, pollers_[r].get());
}

}  // namespace affine::drivers
