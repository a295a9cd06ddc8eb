#include "apps/mysql-proxy/stats.hh"

#include <fmt/format.h>

#include "affine/fiber.hh"

namespace affine_mysql {

std::string_view to_string(close_reason r) {
  switch (r) {
    case close_reason::client_quit: return "client_quit";
    case close_reason::client_closed: return "client_closed";
    case close_reason::client_gone_mid_command: return "client_gone_mid_command";
    case close_reason::client_protocol_error: return "client_protocol_error";
    case close_reason::client_wants_tls: return "client_wants_tls";
    case close_reason::unknown_command: return "unknown_command";
    case close_reason::packet_too_large: return "packet_too_large";
    case close_reason::auth_failed: return "auth_failed";
    case close_reason::no_backend: return "no_backend";
    case close_reason::backend_unreachable: return "backend_unreachable";
    case close_reason::backend_refused: return "backend_refused";
    case close_reason::backend_closed: return "backend_closed";
    case close_reason::backend_down: return "backend_down";
    case close_reason::server_protocol_error: return "server_protocol_error";
    case close_reason::timeout: return "timeout";
    case close_reason::io_error: return "io_error";
    case close_reason::shutdown: return "shutdown";
    case close_reason::count_: break;
  }
  return "?";
}

std::uint64_t stats_snapshot::sessions_open() const {
  std::uint64_t closed = 0;
  for (auto c : closes) closed += c;
  return sessions_opened - closed;
}

proxy_stats::shard& proxy_stats::here() { return shards_[affine::this_fiber::core() % shards]; }

void proxy_stats::session_opened() {
  shard& s = here();
  s.lock.lock();
  ++s.opened;
  s.lock.unlock();
}

void proxy_stats::session_closed(close_reason r) {
  shard& s = here();
  s.lock.lock();
  ++s.closes[std::size_t(r)];
  s.lock.unlock();
}

void proxy_stats::command_done(command_kind k, bool ok, std::uint64_t latency_ns) {
  const auto i = std::size_t(k);
  shard& s = here();
  // Made outside the lock: a spinlock section must not allocate.
  std::unique_ptr<affine_apps::latency_histogram> fresh;
  s.lock.lock();
  if (!s.latency[i]) {
    s.lock.unlock();
    fresh = std::make_unique<affine_apps::latency_histogram>();
    s.lock.lock();
    if (!s.latency[i]) s.latency[i] = std::move(fresh);
  }
  ++s.count[i];
  s.errors[i] += ok ? 0 : 1;
  s.latency[i]->add(latency_ns);
  s.lock.unlock();
}

std::unique_ptr<stats_snapshot> proxy_stats::snapshot() const {
  auto out = std::make_unique<stats_snapshot>();
  for (const shard& s : shards_) {
    s.lock.lock();
    out->sessions_opened += s.opened;
    for (std::size_t r = 0; r < close_reasons; ++r) out->closes[r] += s.closes[r];
    for (std::size_t k = 0; k < command_kinds; ++k) {
      out->commands[k].count += s.count[k];
      out->commands[k].errors += s.errors[k];
      if (s.latency[k]) out->commands[k].latency.merge(*s.latency[k]);
    }
    s.lock.unlock();
  }
  return out;
}

std::string format_stats(const stats_snapshot& s) {
  std::string line = fmt::format("sessions open={} opened={}", s.sessions_open(), s.sessions_opened);
  for (std::size_t k = 0; k < command_kinds; ++k) {
    const command_counters& c = s.commands[k];
    if (c.count == 0) continue;
    line += fmt::format(" | {} n={} err={} p50={}us p99={}us", to_string(command_kind(k)), c.count, c.errors,
                        c.latency.quantile_ns(0.5) / 1000, c.latency.quantile_ns(0.99) / 1000);
  }
  std::string closes;
  for (std::size_t r = 0; r < close_reasons; ++r)
    if (s.closes[r] != 0) closes += fmt::format(" {}={}", to_string(close_reason(r)), s.closes[r]);
  if (!closes.empty()) line += " | closes" + closes;
  return line;
}

}  // namespace affine_mysql
