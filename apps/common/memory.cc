#include "apps/common/memory.hh"

#include <charconv>
#include <fstream>
#include <string>

namespace affine_apps {

namespace {

// A line "Field:   1234 kB" of `path`.
std::optional<std::uint64_t> kib_field(const char* path, std::string_view field) {
  std::ifstream in(path);
  for (std::string line; std::getline(in, line);) {
    if (line.size() <= field.size() || line.compare(0, field.size(), field) != 0 || line[field.size()] != ':')
      continue;
    const std::size_t at = line.find_first_not_of(" \t", field.size() + 1);
    if (at == std::string::npos) return std::nullopt;
    std::uint64_t kib = 0;
    auto [end, ec] = std::from_chars(line.data() + at, line.data() + line.size(), kib);
    if (ec != std::errc{} || std::string_view(end, line.data() + line.size()) != " kB") return std::nullopt;
    return kib * 1024;
  }
  return std::nullopt;
}

}  // namespace

std::optional<std::uint64_t> process_memory_bytes(std::string_view field) {
  return kib_field("/proc/self/status", field);
}

std::optional<std::uint64_t> system_memory_bytes(std::string_view field) { return kib_field("/proc/meminfo", field); }

}  // namespace affine_apps
