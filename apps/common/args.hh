#pragma once
// Command-line values shared by the apps: the role of an app that is both a
// server and a client, numbers in a range and IP:PORT endpoints, each error
// one line naming the flag.

#include <charconv>
#include <cstdint>
#include <expected>
#include <span>
#include <string>
#include <string_view>
#include <system_error>

#include <fmt/format.h>

#include "affine/net.hh"

namespace affine_apps {

enum class role : std::uint8_t { server, client };

// The first argument: "server" or "client".
inline std::expected<role, std::string> parse_role(std::span<const std::string> args) {
  if (args.empty()) return std::unexpected(std::string("say \"server\" or \"client\""));
  if (args[0] == "server") return role::server;
  if (args[0] == "client") return role::client;
  return std::unexpected(fmt::format("\"{}\" is neither \"server\" nor \"client\"", args[0]));
}

// An integer or floating-point `text` in [min, max].
template <class T>
std::expected<T, std::string> number(std::string_view flag, std::string_view text, T min, T max) {
  T v{};
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc{} || end != text.data() + text.size() || !(v >= min && v <= max))
    return std::unexpected(fmt::format("{}: \"{}\" is not a number in {}..{}", flag, text, min, max));
  return v;
}

inline std::expected<affine::net::address, std::string> address(std::string_view flag, std::string_view text) {
  auto a = affine::net::address::parse(text);
  if (!a) return std::unexpected(fmt::format("{}: {}", flag, a.error()));
  return *a;
}

inline std::expected<affine::net::endpoint, std::string> endpoint(std::string_view flag, std::string_view text) {
  auto e = affine::net::endpoint::parse(text);
  if (!e) return std::unexpected(fmt::format("{}: {}", flag, e.error()));
  if (e->port == 0) return std::unexpected(fmt::format("{}: \"{}\": port 0 is no peer's port", flag, text));
  return *e;
}

}  // namespace affine_apps
