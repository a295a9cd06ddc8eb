// Fuzz target: the configuration loader (include/affine/config.hh, base/)
// with affine's schema: a file's text, and after a NUL byte, if there is
// one, `--set` assignments one a line, applied in order after the file (the
// first max_assignments: each costs a print, and without a bound the inputs
// grew long lists that mostly repeat, at a quarter of the speed).
//
// Invariants:
// - an error is one line that says where: "affine.toml:LINE: ..." for the
//   file, "--set ASSIGNMENT..." for an assignment;
// - a refused assignment leaves the settings as they were;
// - settings print (print_config) to a file that loads back to the same
//   settings: printed again it is the same but for the comments that say
//   where each value came from, and a third print is the second's very text.

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "affine/config.hh"
#include "tests/fuzz/check.hh"

namespace {

using affine_fuzz::require;
namespace config = affine::config;

constexpr std::string_view file_name = "affine.toml";
constexpr std::string_view printed_name = "printed.toml";
constexpr int max_assignments = 16;

void check_error(const std::string& error, std::string_view where) {
  require(error.starts_with(where), "an error says where");
  require(error.find('\n') == std::string::npos, "an error is one line");
}

// print_config's text without its comments: the heading, and the "# FROM"
// after a value (a "  # " inside a quoted value is cut alike on both sides).
std::string without_comments(std::string_view printed) {
  std::string out;
  while (!printed.empty()) {
    const std::size_t eol = printed.find('\n');
    std::string_view line = printed.substr(0, eol);
    printed = eol == std::string_view::npos ? std::string_view{} : printed.substr(eol + 1);
    if (line.starts_with('#')) continue;
    const std::size_t comment = line.rfind("  # ");
    if (comment != std::string_view::npos) line = line.substr(0, comment);
    out += line;
    out += '\n';
  }
  return out;
}

std::string load_and_print(std::string_view text) {
  const auto s = config::load_string(affine::config_schema(), text, printed_name);
  require(s.has_value(), "printed settings load");
  return config::print_config(*s);
}

void check_round_trip(const config::settings& s) {
  const std::string printed = config::print_config(s);
  const std::string again = load_and_print(printed);
  require(without_comments(again) == without_comments(printed), "printed settings load back to the same");
  require(load_and_print(again) == again, "a printed file printed again is the same text");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view input(reinterpret_cast<const char*>(data), size);
  const std::size_t nul = input.find('\0');
  const std::string_view file = input.substr(0, nul);
  std::string_view sets = nul == std::string_view::npos ? std::string_view{} : input.substr(nul + 1);

  auto s = config::load_string(affine::config_schema(), file, file_name);
  if (!s) {
    check_error(s.error(), std::string(file_name) + ":");
    return 0;
  }
  check_round_trip(*s);
  bool changed = false;
  for (int n = 0; n < max_assignments && !sets.empty(); ++n) {
    const std::size_t eol = sets.find('\n');
    const std::string_view assignment = sets.substr(0, eol);
    sets = eol == std::string_view::npos ? std::string_view{} : sets.substr(eol + 1);
    const std::string before = config::print_config(*s);
    if (auto r = s->set(assignment); !r) {
      check_error(r.error(), "--set ");
      require(config::print_config(*s) == before, "a refused assignment changes nothing");
    } else {
      changed = true;
    }
  }
  if (changed) check_round_trip(*s);
  return 0;
}
