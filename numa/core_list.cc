// Core lists as people write them in config and on command lines:
// "auto", "5", "0-7", "0,2,4-6". Every error is one line that quotes the
// offending entry and says which cores exist.

#include <charconv>

#include <fmt/format.h>

#include "affine/topology.hh"
#include "numa/describe.hh"

namespace affine {

namespace {

using numa_detail::id_range;

std::string_view trim(std::string_view s) {
  const auto first = s.find_first_not_of(" \t");
  if (first == std::string_view::npos) return {};
  return s.substr(first, s.find_last_not_of(" \t") - first + 1);
}

bool all_digits(std::string_view s) {
  return !s.empty() && s.find_first_not_of("0123456789") == std::string_view::npos;
}

// A core number that exists in `topo`, or the error for `text`.
std::expected<core_id, std::string> existing_core(const topology& topo, std::string_view text) {
  unsigned value = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc{} || end != text.data() + text.size() || value >= topo.core_count()) {
    // Too large to parse is just as absent as one past the end.
    return std::unexpected(fmt::format("core {} does not exist: this machine has {}", text,
                                       id_range("core", topo.core_count())));
  }
  return core_id{value};
}

}  // namespace

std::expected<std::vector<core_id>, std::string> parse_core_list(const topology& topo,
                                                                 std::string_view text) {
  const std::string_view list = trim(text);
  if (list.empty()) {
    return std::unexpected(
        fmt::format("empty core list: write \"auto\", a range like \"0-7\" or a list like \"0,2,4-6\" "
                    "(this machine has {})",
                    id_range("core", topo.core_count())));
  }
  if (list == "auto" || list == "all") return std::vector<core_id>(topo.all_cores().begin(), topo.all_cores().end());

  std::vector<core_id> out;
  std::vector<bool> seen(topo.core_count(), false);
  for (std::size_t pos = 0; pos <= list.size();) {
    const std::size_t comma = std::min(list.find(',', pos), list.size());
    const std::string_view entry = trim(list.substr(pos, comma - pos));
    pos = comma + 1;
    if (entry.empty()) return std::unexpected(fmt::format("empty entry in core list \"{}\"", list));

    const std::size_t dash = entry.find('-');
    const std::string_view lo_text = trim(entry.substr(0, dash));
    const std::string_view hi_text = dash == std::string_view::npos ? lo_text : trim(entry.substr(dash + 1));
    if (!all_digits(lo_text) || !all_digits(hi_text)) {
      return std::unexpected(fmt::format(
          "bad core list entry \"{}\" in \"{}\": expected a core number or a range like \"0-7\" "
          "(this machine has {})",
          entry, list, id_range("core", topo.core_count())));
    }
    const auto lo = existing_core(topo, lo_text);
    if (!lo) return std::unexpected(lo.error());
    const auto hi = existing_core(topo, hi_text);
    if (!hi) return std::unexpected(hi.error());
    if (*hi < *lo) {
      return std::unexpected(fmt::format("bad core range \"{}\": write the lower core first (\"{}-{}\")",
                                         entry, hi->value, lo->value));
    }
    for (std::uint32_t c = lo->value; c <= hi->value; ++c) {
      if (seen[c]) return std::unexpected(fmt::format("core {} is listed twice in \"{}\"", c, list));
      seen[c] = true;
      out.push_back(core_id{c});
    }
  }
  return out;
}

std::string format_core_list(std::span<const core_id> cores) {
  std::string out;
  for (std::size_t i = 0; i < cores.size();) {
    std::size_t j = i;
    while (j + 1 < cores.size() && cores[j + 1].value == cores[j].value + 1) ++j;
    if (!out.empty()) out += ',';
    out += j == i ? fmt::format("{}", cores[i].value) : fmt::format("{}-{}", cores[i].value, cores[j].value);
    i = j + 1;
  }
  return out;
}

}  // namespace affine
