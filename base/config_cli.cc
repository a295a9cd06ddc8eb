// The configuration options of a program's command line: --config, --set and
// --print-config; everything else is left for the program.

#include <fmt/format.h>

#include "base/config_tree.hh"

namespace affine::config {

namespace {

// "--config FILE" or "--config=FILE": the option's value, consuming what it
// uses; nullopt if `args[i]` is not this option.
std::optional<std::expected<std::string, std::string>> option_value(std::span<const std::string> args, std::size_t& i,
                                                                    std::string_view option) {
  const std::string& arg = args[i];
  if (arg.starts_with(option) && arg.size() > option.size() && arg[option.size()] == '=') {
    return arg.substr(option.size() + 1);
  }
  if (arg != option) return std::nullopt;
  if (i + 1 == args.size()) return std::unexpected(fmt::format("{}: missing its value", option));
  return args[++i];
}

}  // namespace

std::expected<command_line, std::string> load_command_line(const schema& s, std::span<const std::string> args) {
  std::optional<std::string> file;
  std::vector<std::string> sets;
  bool print = false;
  std::vector<std::string> rest;
  for (std::size_t i = 0; i < args.size(); ++i) {
    if (args[i] == "--") {
      rest.insert(rest.end(), args.begin() + static_cast<std::ptrdiff_t>(i), args.end());
      break;
    }
    if (args[i] == "--print-config") {
      print = true;
    } else if (auto path = option_value(args, i, "--config")) {
      if (!*path) return std::unexpected(path->error());
      if (file) return std::unexpected(fmt::format("--config {}: a second --config (the first: {})", **path, *file));
      file = **path;
    } else if (auto assignment = option_value(args, i, "--set")) {
      if (!*assignment) return std::unexpected(assignment->error());
      sets.push_back(**assignment);
    } else {
      rest.push_back(args[i]);
    }
  }

  // Without a file: the defaults, unchecked, since --set may give a required
  // key; apply_sets checks them all.
  const detail::origin no_file{.from = detail::origin::kind::file,
                               .source = std::make_shared<const std::string>("(no --config)"),
                               .line = 0,
                               .subject = {}};
  auto loaded = file ? load_file(s, *file) : detail::access::make(detail::make_node(s.root(), "", no_file));
  if (!loaded) return std::unexpected(std::move(loaded.error()));
  if (auto applied = apply_sets(*loaded, sets); !applied) return std::unexpected(std::move(applied.error()));
  return command_line{.config = std::move(*loaded), .print_config = print, .args = std::move(rest)};
}

std::expected<command_line, std::string> load_command_line(const schema& s, int argc, const char* const* argv) {
  std::vector<std::string> args;
  for (int i = 1; i < argc; ++i) args.emplace_back(argv[i]);
  return load_command_line(s, args);
}

}  // namespace affine::config
