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

std::expected<affine::net::endpoint, std::string> listen_endpoint(std::string_view value) {
  if (value.find(':') != std::string_view::npos) return affine_apps::endpoint("--listen", value);
  auto port = number<std::uint16_t>("--listen", value, 0, 65535);
  if (!port) return std::unexpected(port.error());
  return affine::net::endpoint{affine::net::any_address, *port};
}

std::expected<void, std::string> apply(options& o, std::string_view flag, std::string_view value) {
  if (flag == "--listen") return set(o.listen, listen_endpoint(value));
  if (flag == "--backend") {
    auto b = parse_backend(value);
    if (!b) return std::unexpected(b.error());
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

std::expected<options, std::string> parse_args(std::span<const std::string> args) {
  options o;
  bool have_listen = false;
  for (std::size_t i = 0; i < args.size(); i += 2) {
    if (i + 1 == args.size()) return std::unexpected(fmt::format("{} needs a value", args[i]));
    if (auto r = apply(o, args[i], args[i + 1]); !r) return std::unexpected(r.error());
    have_listen = have_listen || args[i] == "--listen";
  }
  if (!have_listen) return std::unexpected(std::string("--listen [IP:]PORT is required"));
  if (o.backends.empty()) return std::unexpected(std::string("at least one --backend IP:PORT is required"));
  return o;
}

std::string usage() {
  return "usage: affine-mysql-proxy [--config FILE] [--set KEY=VALUE]... --listen [IP:]PORT\n"
         "                          --backend IP:PORT[,role=primary|replica][,weight=N][,max=N]...\n"
         "                          [--stats-interval-s S] [--connect-timeout-ms T] [--handshake-timeout-ms T]\n"
         "                          [--health-interval-ms T] [--health-timeout-ms T] [--max-packet-mib M]\n";
}

}  // namespace affine_mysql
