#pragma once
// What a process and the kernel hold in memory, from procfs, for the
// benchmarks' per-connection figures: a field of /proc/self/status
// ("VmRSS", "VmHWM") or /proc/meminfo ("Slab"), in bytes; nothing where
// the file or the field is missing.

#include <cstdint>
#include <optional>
#include <string_view>

namespace affine_apps {

std::optional<std::uint64_t> process_memory_bytes(std::string_view field);  // /proc/self/status
std::optional<std::uint64_t> system_memory_bytes(std::string_view field);   // /proc/meminfo

}  // namespace affine_apps
