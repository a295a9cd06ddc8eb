#include "apps/rr/options.hh"

#include <algorithm>
#include <string_view>

#include <fmt/format.h>

#include "apps/common/args.hh"
#include "apps/rr/protocol.hh"

namespace affine_rr {

namespace {

using affine_apps::number;

template <class T, class Parsed>
std::expected<void, std::string> set(T& field, Parsed parsed) {
  if (!parsed) return std::unexpected(parsed.error());
  field = *parsed;
  return {};
}

// "0,1,1": numbers in [min, max], at least one.
template <class T>
std::expected<std::vector<T>, std::string> number_list(std::string_view flag, std::string_view text, T min, T max) {
  std::vector<T> values;
  for (std::size_t at = 0; at <= text.size();) {
    const std::size_t comma = std::min(text.find(',', at), text.size());
    auto v = number<T>(flag, text.substr(at, comma - at), min, max);
    if (!v) return std::unexpected(v.error());
    values.push_back(*v);
    at = comma + 1;
  }
  return values;
}

std::expected<affine::net::congestion_control, std::string> congestion(std::string_view flag, std::string_view text) {
  if (text == "cubic") return affine::net::congestion_control::cubic;
  if (text == "newreno") return affine::net::congestion_control::newreno;
  return std::unexpected(fmt::format("{}: \"{}\" is neither \"cubic\" nor \"newreno\"", flag, text));
}

std::expected<void, std::string> apply_server(server_options& o, std::string_view flag, std::string_view value) {
  if (flag == "--port") return set(o.port, number<std::uint16_t>(flag, value, 0, 65535));
  if (flag == "--listeners") return set(o.listeners, number<unsigned>(flag, value, 1, 64));
  if (flag == "--serve-cores") return set(o.serve_cores, number_list<unsigned>(flag, value, 0, 8191));
  if (flag == "--antagonist-core") return set(o.antagonist_core, number<unsigned>(flag, value, 0, 8191));
  if (flag == "--antagonist-slice-us")
    return set(o.antagonist_slice_us, number<std::uint32_t>(flag, value, 0, 1'000'000));
  if (flag == "--congestion") return set(o.congestion, congestion(flag, value));
  return std::unexpected(fmt::format("unknown option \"{}\" for server", flag));
}

std::expected<void, std::string> apply_client(client_options& o, std::string_view flag, std::string_view value) {
  if (flag == "--to") return set(o.to, affine_apps::endpoint(flag, value));
  if (flag == "--flows") return set(o.flows, number<unsigned>(flag, value, 1, 100'000));
  if (flag == "--request-size") return set(o.request_bytes, number<std::uint32_t>(flag, value, 1, max_message_bytes));
  if (flag == "--response-size") return set(o.response_bytes, number<std::uint32_t>(flag, value, 1, max_message_bytes));
  if (flag == "--duration-s") return set(o.duration_s, number<double>(flag, value, 0.001, 86'400));
  if (flag == "--warmup-s") return set(o.warmup_s, number<double>(flag, value, 0, 3'600));
  if (flag == "--timeout-ms") return set(o.timeout_ms, number<std::uint64_t>(flag, value, 1, 3'600'000));
  if (flag == "--congestion") return set(o.congestion, congestion(flag, value));
  if (flag == "--idle-connections") return set(o.idle_connections, number<unsigned>(flag, value, 0, 1'000'000));
  if (flag == "--idle-ports") return set(o.idle_ports, number_list<std::uint16_t>(flag, value, 1, 65535));
  if (flag == "--variant") {
    if (value.empty()) return std::unexpected(std::string("--variant: needs a name"));
    o.variant = value;
    return {};
  }
  return std::unexpected(fmt::format("unknown option \"{}\" for client", flag));
}

// Flags that only request/response uses, which a bulk client must not be given.
constexpr std::string_view rr_only[] = {"--request-size", "--response-size", "--warmup-s", "--idle-connections",
                                        "--idle-ports"};

std::expected<client_options, std::string> parse_client(std::span<const std::string> args) {
  client_options o;
  bool have_to = false;
  std::string_view rr_flag;  // the first request/response-only flag given
  for (std::size_t i = 0; i < args.size(); ++i) {
    if (args[i] == "--bulk" || args[i] == "--zero-copy") {
      (args[i] == "--bulk" ? o.bulk : o.zero_copy) = true;
      continue;
    }
    if (i + 1 == args.size()) return std::unexpected(fmt::format("{} needs a value", args[i]));
    if (auto r = apply_client(o, args[i], args[i + 1]); !r) return std::unexpected(r.error());
    have_to = have_to || args[i] == "--to";
    if (rr_flag.empty() && std::ranges::find(rr_only, args[i]) != std::ranges::end(rr_only)) rr_flag = args[i];
    ++i;
  }
  if (!have_to) return std::unexpected(std::string("client needs --to IP:PORT"));
  if (o.bulk && !rr_flag.empty()) return std::unexpected(fmt::format("{} does not apply to --bulk", rr_flag));
  if (o.bulk) o.warmup_s = 0;
  if (o.variant.empty()) o.variant = o.bulk ? "bulk" : "rr";
  return o;
}

}  // namespace

std::expected<options, std::string> parse_args(std::span<const std::string> args) {
  auto what = affine_apps::parse_role(args);
  if (!what) return std::unexpected(what.error());
  options o;
  o.what = *what;
  if (o.what == affine_apps::role::client) {
    auto c = parse_client(args.subspan(1));
    if (!c) return std::unexpected(c.error());
    o.client = std::move(*c);
    return o;
  }
  for (std::size_t i = 1; i < args.size(); ++i) {
    if (args[i] == "--zero-copy" || args[i] == "--keepalive") {  // flags: no value
      (args[i] == "--zero-copy" ? o.server.zero_copy : o.server.keepalive) = true;
      continue;
    }
    if (i + 1 == args.size()) return std::unexpected(fmt::format("{} needs a value", args[i]));
    if (auto r = apply_server(o.server, args[i], args[i + 1]); !r) return std::unexpected(r.error());
    ++i;
  }
  if (o.server.port != 0 && o.server.port + (o.server.listeners - 1) > 65535)
    return std::unexpected(fmt::format("--listeners {} from --port {} runs past port 65535", o.server.listeners,
                                       o.server.port));
  return o;
}

std::string usage() {
  return "usage: affine-rr [--config FILE] [--set KEY=VALUE]... server [--port N] [--listeners K]\n"
         "                 [--keepalive] [--serve-cores C,...] [--antagonist-core C] [--antagonist-slice-us U]\n"
         "                 [--congestion cubic|newreno] [--zero-copy]\n"
         "       affine-rr [--config FILE] [--set KEY=VALUE]... client --to IP:PORT [--flows F]\n"
         "                 [--request-size B] [--response-size B] [--duration-s S] [--warmup-s W]\n"
         "                 [--timeout-ms T] [--variant NAME] [--congestion cubic|newreno] [--zero-copy]\n"
         "                 [--idle-connections N [--idle-ports P,...]]\n"
         "       affine-rr [--config FILE] [--set KEY=VALUE]... client --bulk --to IP:PORT [--flows F]\n"
         "                 [--duration-s S] [--timeout-ms T] [--variant NAME] [--congestion cubic|newreno]\n"
         "                 [--zero-copy]\n";
}

}  // namespace affine_rr
