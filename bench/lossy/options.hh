#pragma once
// The impairing bridge's command line (bench/lossy/bridge.cc): the two
// interfaces it joins and what each direction does to the frames it
// carries (drivers/wire/impairment.hh), the same in both directions.

#include <cstdint>
#include <expected>
#include <optional>
#include <span>
#include <string>

#include "drivers/wire/impairment.hh"

namespace affine::bench::lossy {

struct bridge_options {
  std::string iface_a, iface_b;  // port 0 and port 1
  std::uint64_t seed = 1;
  drivers::wire::impairments each_direction;
  std::optional<unsigned> core;  // the CPU the bridge runs on; none: wherever the kernel puts it
};

// Every error is one line naming the flag and the values it takes.
std::expected<bridge_options, std::string> parse_bridge_options(std::span<const std::string> args);

std::string bridge_usage();

}  // namespace affine::bench::lossy
