#include "apps/echo/options.hh"

#include <charconv>
#include <string_view>

#include <fmt/format.h>

#include "apps/common/args.hh"

namespace affine_echo {

namespace {

using affine_apps::number;

// One "--flag value" pair into `o`; an error names the flag.
std::expected<void, std::string> apply(options& o, std::string_view flag, std::string_view value) {
  auto set = [](auto& field, auto parsed) -> std::expected<void, std::string> {
    if (!parsed) return std::unexpected(parsed.error());
    field = *parsed;
    return {};
  };
  if (o.what == options::role::server) {
    if (flag == "--port") return set(o.server.port, number<std::uint16_t>(flag, value, 0, 65535));
    if (flag == "--listen") return set(o.server.listen, affine_apps::address(flag, value));
    if (flag == "--max-connections")
      return set(o.server.max_connections, number<std::uint64_t>(flag, value, 0, UINT64_MAX));
    if (flag == "--backlog") return set(o.server.backlog, number<unsigned>(flag, value, 1, 65535));
    if (flag == "--metrics-port") return set(o.server.metrics_port, number<std::uint16_t>(flag, value, 0, 65535));
  } else {
    if (flag == "--to") return set(o.client.to, affine_apps::endpoint(flag, value));
    if (flag == "--connections") return set(o.client.connections, number<unsigned>(flag, value, 1, 100'000));
    if (flag == "--requests") return set(o.client.requests, number<std::uint64_t>(flag, value, 1, UINT64_MAX));
    if (flag == "--size") return set(o.client.size, number<std::size_t>(flag, value, 1, 64 << 20));
    if (flag == "--timeout-ms") return set(o.client.timeout_ms, number<std::uint64_t>(flag, value, 1, 3'600'000));
  }
  return std::unexpected(fmt::format("unknown option \"{}\" for {}", flag,
                                     o.what == options::role::server ? "server" : "client"));
}

}  // namespace

std::expected<options, std::string> parse_args(std::span<const std::string> args) {
  options o;
  if (args.empty()) return std::unexpected(std::string("say \"server\" or \"client\""));
  if (args[0] == "client") {
    o.what = options::role::client;
  } else if (args[0] != "server") {
    return std::unexpected(fmt::format("\"{}\" is neither \"server\" nor \"client\"", args[0]));
  }
  bool have_to = false;
  for (std::size_t i = 1; i < args.size(); i += 2) {
    if (i + 1 == args.size()) return std::unexpected(fmt::format("{} needs a value", args[i]));
    if (auto r = apply(o, args[i], args[i + 1]); !r) return std::unexpected(r.error());
    have_to = have_to || args[i] == "--to";
  }
  if (o.what == options::role::client && !have_to) return std::unexpected(std::string("client needs --to IP:PORT"));
  return o;
}

std::string usage() {
  return "usage: affine-echo [--config FILE] [--set KEY=VALUE]... server --port N [--listen ADDR]\n"
         "                   [--max-connections K] [--backlog B] [--metrics-port M]\n"
         "       affine-echo [--config FILE] [--set KEY=VALUE]... client --to IP:PORT --connections C\n"
         "                   --requests R --size S [--timeout-ms T]\n";
}

}  // namespace affine_echo
