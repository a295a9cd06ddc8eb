#include "bench/lossy/options.hh"

#include <limits>
#include <string_view>

#include <fmt/format.h>

#include "apps/common/args.hh"
#include "drivers/wire/wire.hh"

namespace affine::bench::lossy {

namespace {

using affine_apps::number;
using result = std::expected<void, std::string>;

template <class T, class Parsed>
result set(T& field, Parsed parsed) {
  if (!parsed) return std::unexpected(parsed.error());
  field = *parsed;
  return {};
}

// --burst GOOD_TO_BAD,BAD_TO_GOOD[,LOSS_IN_BAD]: the Gilbert-Elliott chain's
// chances per frame of entering and of leaving a burst, and of losing a
// frame inside one (1 unless given); "off" for none.
result parse_burst(std::optional<drivers::wire::gilbert_elliott>& burst, std::string_view text) {
  if (text == "off") {
    burst.reset();
    return {};
  }
  drivers::wire::gilbert_elliott ge;
  double* fields[] = {&ge.good_to_bad, &ge.bad_to_good, &ge.loss_in_bad};
  constexpr std::string_view names[] = {"good_to_bad", "bad_to_good", "loss_in_bad"};
  std::size_t n = 0;
  for (std::size_t at = 0; at <= text.size(); ++n) {
    const std::size_t comma = std::min(text.find(',', at), text.size());
    if (n == std::size(fields))
      return std::unexpected(fmt::format("--burst: \"{}\" has more than 3 fields (GOOD_TO_BAD,BAD_TO_GOOD[,LOSS_IN_BAD])", text));
    auto p = number<double>(fmt::format("--burst {}", names[n]), text.substr(at, comma - at), 0.0, 1.0);
    if (!p) return std::unexpected(p.error());
    *fields[n] = *p;
    at = comma + 1;
  }
  if (n < 2) return std::unexpected(fmt::format("--burst: \"{}\" is not GOOD_TO_BAD,BAD_TO_GOOD[,LOSS_IN_BAD] or off", text));
  if (ge.bad_to_good == 0.0) return std::unexpected(std::string("--burst bad_to_good: 0 would never end a burst; 0 < p <= 1"));
  burst = ge;
  return {};
}

result apply(bridge_options& o, std::string_view flag, std::string_view value) {
  drivers::wire::impairments& imp = o.each_direction;
  constexpr std::uint64_t max_us = 10'000'000;  // 10 s each way
  if (flag == "--iface-a" || flag == "--iface-b") {
    if (value.empty() || value.size() > 15) return std::unexpected(fmt::format("{}: an interface name of 1..15 characters", flag));
    (flag == "--iface-a" ? o.iface_a : o.iface_b) = value;
    return {};
  }
  if (flag == "--seed") return set(o.seed, number<std::uint64_t>(flag, value, 0, std::numeric_limits<std::uint64_t>::max()));
  if (flag == "--loss-pct") {
    auto pct = number<double>(flag, value, 0.0, 100.0);
    if (!pct) return std::unexpected(pct.error());
    imp.loss = *pct / 100.0;
    return {};
  }
  if (flag == "--burst") return parse_burst(imp.burst, value);
  if (flag == "--delay-us" || flag == "--jitter-us") {
    auto us = number<std::uint64_t>(flag, value, 0, max_us);
    if (!us) return std::unexpected(us.error());
    (flag == "--delay-us" ? imp.delay_ns : imp.jitter_ns) = *us * 1000;
    return {};
  }
  if (flag == "--rate-mbit") {
    auto mbit = number<std::uint64_t>(flag, value, 0, 400'000);
    if (!mbit) return std::unexpected(mbit.error());
    imp.rate_bytes_per_s = *mbit * 1'000'000 / 8;
    return {};
  }
  if (flag == "--queue-kb") {
    auto kb = number<std::uint64_t>(flag, value, 1, 1'048'576);
    if (!kb) return std::unexpected(kb.error());
    imp.rate_queue_bytes = *kb * 1024;
    return {};
  }
  if (flag == "--ecn-mark-kb") {
    auto kb = number<std::uint64_t>(flag, value, 0, 1'048'576);
    if (!kb) return std::unexpected(kb.error());
    imp.ecn_mark_bytes = *kb * 1024;
    return {};
  }
  if (flag == "--core") return set(o.core, number<unsigned>(flag, value, 0, 1023));
  return std::unexpected(fmt::format("unknown option {}", flag));
}

}  // namespace

std::expected<bridge_options, std::string> parse_bridge_options(std::span<const std::string> args) {
  bridge_options o;
  for (std::size_t i = 0; i < args.size(); i += 2) {
    if (i + 1 == args.size()) return std::unexpected(fmt::format("{} needs a value", args[i]));
    if (auto r = apply(o, args[i], args[i + 1]); !r) return std::unexpected(r.error());
  }
  if (o.iface_a.empty() || o.iface_b.empty()) return std::unexpected(std::string("--iface-a and --iface-b are required"));
  if (o.iface_a == o.iface_b) return std::unexpected(fmt::format("--iface-a and --iface-b are both {}", o.iface_a));
  // The in-process wire's own check as well: the bridge runs only what
  // link::create would accept.
  if (auto ok = drivers::wire::validate(o.each_direction); !ok) return std::unexpected(ok.error());
  return o;
}

std::string bridge_usage() {
  return "usage: lossy_bridge --iface-a IF --iface-b IF [--seed N] [--loss-pct 0..100]\n"
         "                    [--burst GOOD_TO_BAD,BAD_TO_GOOD[,LOSS_IN_BAD] | off] [--delay-us 0..10000000]\n"
         "                    [--jitter-us 0..10000000] [--rate-mbit 0..400000 (0: unlimited)]\n"
         "                    [--queue-kb 1..1048576 (the rate limiter's backlog)]\n"
         "                    [--ecn-mark-kb 0..1048576 (ECN-capable frames behind this much of the backlog\n"
         "                     are marked CE, RFC 3168; 0: never)] [--core CPU]\n";
}

}  // namespace affine::bench::lossy
