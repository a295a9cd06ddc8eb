#include "apps/mysql-proxy/options.hh"

#include <fmt/format.h>

#include "apps/common/args.hh"

namespace affine_mysql {

namespace {

using affine_apps::number;

constexpr std::uint64_t ns_per_ms = 1'000'000;

template <class T, class Parsed>
std::expected<void, std::string> set(T& field, Parsed parsed) {
  if (!parsed) return std::unexpected(parsed.error());
  field = *parsed;
  return {};
}

// Milliseconds from the command line into nanoseconds.
std::expected<void, std::string> set_ms(std::uint64_t& field_ns, std::string_view flag, std::string_view value,
                                        std::uint64_t min_ms) {
  auto ms = number<std::uint64_t>(flag, value, min_ms, 3'600'000);
  if (!ms) return std::unexpected(ms.error());
  field_ns = *ms * ns_per_ms;
  return {};
}

std::expected<affine::net::endpoint, std::string> listen_endpoint(std::string_view flag, std::string_view value) {
  if (value.find(':') != std::string_view::npos) return affine_apps::endpoint(flag, value);
  auto port = number<std::uint16_t>(flag, value, 0, 65535);
  if (!port) return std::unexpected(port.error());
  return affine::net::endpoint{affine::net::any_address, *port};
}

std::expected<void, std::string> apply(options& o, bool& file_backends, std::string_view flag,
                                       std::string_view value) {
  if (flag == "--listen") return set(o.listen, listen_endpoint(flag, value));
  if (flag == "--metrics") return set(o.metrics, listen_endpoint(flag, value));
  if (flag == "--backend") {
    auto b = parse_backend(value);
    if (!b) return std::unexpected(b.error());
    if (file_backends) o.backends.clear();
    file_backends = false;
    o.backends.push_back(*b);
    return {};
  }
  if (flag == "--stats-interval-s") return set(o.stats_interval_s, number<double>(flag, value, 0, 86'400));
  if (flag == "--connect-timeout-ms") return set_ms(o.session.connect_timeout_ns, flag, value, 1);
  if (flag == "--handshake-timeout-ms") return set_ms(o.session.handshake_timeout_ns, flag, value, 1);
  if (flag == "--health-interval-ms") {
    auto r = set_ms(o.health.interval_ns, flag, value, 0);
    o.health_checks = o.health.interval_ns != 0;
    return r;
  }
  if (flag == "--health-timeout-ms") return set_ms(o.health.timeout_ns, flag, value, 1);
  if (flag == "--max-packet-mib") {
    auto mib = number<std::size_t>(flag, value, 1, 1024);
    if (!mib) return std::unexpected(mib.error());
    o.session.max_packet = *mib << 20;
    return {};
  }
  return std::unexpected(fmt::format("unknown option \"{}\"", flag));
}

}  // namespace

std::expected<backend_config, std::string> parse_backend(std::string_view spec) {
  backend_config b;
  const auto comma = spec.find(',');
  auto address = affine_apps::endpoint("--backend", spec.substr(0, comma));
  if (!address) return std::unexpected(address.error());
  b.address = *address;
  std::string_view rest = comma == std::string_view::npos ? std::string_view{} : spec.substr(comma + 1);
  while (!rest.empty()) {
    const auto next = rest.find(',');
    const std::string_view item = rest.substr(0, next);
    rest = next == std::string_view::npos ? std::string_view{} : rest.substr(next + 1);
    const auto eq = item.find('=');
    const std::string_view key = item.substr(0, eq);
    const std::string_view value = eq == std::string_view::npos ? std::string_view{} : item.substr(eq + 1);
    if (key == "role" && (value == "primary" || value == "replica")) {
      b.role = value == "primary" ? backend_role::primary : backend_role::replica;
    } else if (key == "role") {
      return std::unexpected(fmt::format("--backend: role \"{}\" is neither \"primary\" nor \"replica\"", value));
    } else if (key == "weight") {
      if (auto r = set(b.weight, number<unsigned>("--backend weight", value, 1, 1000)); !r)
        return std::unexpected(r.error());
    } else if (key == "max") {
      if (auto r = set(b.max_connections, number<unsigned>("--backend max", value, 0, 1'000'000)); !r)
        return std::unexpected(r.error());
    } else {
      return std::unexpected(fmt::format("--backend: unknown setting \"{}\" (allowed: role, weight, max)", item));
    }
  }
  return b;
}

std::expected<options, std::string> parse_args(std::span<const std::string> args, options base) {
  options o = std::move(base);
  bool file_backends = !o.backends.empty();
  for (std::size_t i = 0; i < args.size(); i += 2) {
    if (i + 1 == args.size()) return std::unexpected(fmt::format("{} needs a value", args[i]));
    if (auto r = apply(o, file_backends, args[i], args[i + 1]); !r) return std::unexpected(r.error());
  }
  if (!o.listen) return std::unexpected(std::string("--listen [IP:]PORT (or [proxy] listen) is required"));
  if (o.backends.empty())
    return std::unexpected(std::string("at least one --backend IP:PORT (or [[backend]] address) is required"));
  return o;
}

namespace {

namespace cfg = affine::config;

bool valid_listen_or_none(std::string_view text) { return text.empty() || listen_endpoint("", text).has_value(); }
bool valid_backend(std::string_view text) { return affine_apps::endpoint("", text).has_value(); }

const cfg::string_format listen_format{valid_listen_or_none, "an address and port, or a port",
                                       "like \"10.88.0.2:3307\", \"[::]:3307\" or \"3307\", or \"\" to give --listen"};
const cfg::string_format endpoint_or_none_format{valid_listen_or_none, "an address and port, or a port",
                                                 "like \"10.88.0.2:9104\" or \"[fd88::2]:9104\", or \"\" for none"};
const cfg::string_format backend_format{valid_backend, "an address and port",
                                        "like \"10.88.0.1:3306\" or \"[fd88::1]:3306\""};

cfg::table_spec proxy_table() {
  return cfg::section(
      "proxy", "affine-mysql-proxy: where it listens, its metrics endpoint, timeouts and health checks.",
      {
          cfg::string("listen", "", "Where clients connect, [IP:]PORT; \"\" = give --listen.", &listen_format),
          cfg::string("metrics", "", "The Prometheus text endpoint (HTTP GET /metrics), [IP:]PORT; \"\" = none.",
                      &endpoint_or_none_format),
          cfg::integer("stats_interval_s", {0, 86'400}, 10, "Seconds between stats lines; 0 = only at exit."),
          cfg::integer("connect_timeout_ms", {1, 3'600'000}, 2'000, "Connecting to a backend."),
          cfg::integer("handshake_timeout_ms", {1, 3'600'000}, 10'000, "From accept to authenticated."),
          cfg::integer("health_interval_ms", {0, 3'600'000}, 2'000, "Between health checks; 0 = no checks."),
          cfg::integer("health_timeout_ms", {1, 3'600'000}, 1'000, "A health check's connect and greeting."),
          cfg::integer("max_packet_mib", {1, 1024}, 64, "The largest MySQL packet relayed, in MiB."),
      });
}

cfg::table_spec backend_table() {
  return cfg::array_of_tables(
      "backend", "A MySQL/MariaDB server sessions are relayed to; each session goes to one backend.",
      {
          cfg::string("address", cfg::required, "IP:PORT of the server.", &backend_format),
          cfg::enumeration("role", {"primary", "replica"}, "primary",
                           "Sessions go to primaries; replicas are checked and listed."),
          cfg::integer("weight", {1, 1000}, 1, "A share of the sessions."),
          cfg::integer("max_connections", {0, 1'000'000}, 0, "Live sessions at most; 0 = no limit."),
      });
}

}  // namespace

const affine::config::schema& proxy_schema() {
  static const cfg::schema s("affine-mysql-proxy", {}, [] {
    auto tables = affine::config_tables();
    tables.push_back(proxy_table());
    tables.push_back(backend_table());
    return tables;
  }());
  return s;
}

options options_from(const affine::config::settings& c) {
  options o;
  const auto ms = [&](std::string_view key) { return std::uint64_t(c.get_int(key)) * ns_per_ms; };
  if (const auto& l = c.get_string("proxy.listen"); !l.empty()) o.listen = *listen_endpoint("", l);
  if (const auto& m = c.get_string("proxy.metrics"); !m.empty()) o.metrics = *listen_endpoint("", m);
  o.stats_interval_s = double(c.get_int("proxy.stats_interval_s"));
  o.session.connect_timeout_ns = ms("proxy.connect_timeout_ms");
  o.session.handshake_timeout_ns = ms("proxy.handshake_timeout_ms");
  o.health.interval_ns = ms("proxy.health_interval_ms");
  o.health_checks = o.health.interval_ns != 0;
  o.health.timeout_ns = ms("proxy.health_timeout_ms");
  o.session.max_packet = std::size_t(c.get_int("proxy.max_packet_mib")) << 20;
  for (const cfg::table_view& b : c.tables("backend")) {
    backend_config bc;
    bc.address = *affine_apps::endpoint("", b.get_string("address"));
    bc.role = b.get_string("role") == "primary" ? backend_role::primary : backend_role::replica;
    bc.weight = unsigned(b.get_int("weight"));
    bc.max_connections = unsigned(b.get_int("max_connections"));
    o.backends.push_back(bc);
  }
  return o;
}

std::string usage() {
  return "usage: affine-mysql-proxy [--config FILE] [--set KEY=VALUE]... --listen [IP:]PORT [--metrics [IP:]PORT]\n"
         "                          --backend IP:PORT[,role=primary|replica][,weight=N][,max=N]...\n"
         "                          [--stats-interval-s S] [--connect-timeout-ms T] [--handshake-timeout-ms T]\n"
         "                          [--health-interval-ms T] [--health-timeout-ms T] [--max-packet-mib M]\n";
}

}  // namespace affine_mysql
