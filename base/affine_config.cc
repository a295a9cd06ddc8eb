// affine-config: check, print and document affine's configuration.
//
//   affine-config --config affine.toml --set sched.steal=false --check
//   affine-config --emit-default > config/affine.toml
//   affine-config --emit-doc docs/configuration.md > /tmp/doc && mv /tmp/doc docs/configuration.md

#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>

#include <fmt/format.h>

#include "affine/config.hh"

namespace {

constexpr std::string_view usage =
    "usage: affine-config [--config FILE] [--set SECTION.KEY=VALUE]... ACTION\n"
    "actions:\n"
    "  --check           load the configuration; print the first error (exit 1) or \"ok\"\n"
    "  --print-config    print the effective configuration, every key, as TOML\n"
    "  --emit-default    print the fully commented default file (config/affine.toml)\n"
    "  --help-config     print the key reference (Markdown)\n"
    "  --emit-doc FILE   print FILE with its key reference regenerated\n";

int print(const std::string& text) {
  std::fputs(text.c_str(), stdout);
  return 0;
}

int fail(std::string_view message, int code) {
  std::fprintf(stderr, "%.*s\n", static_cast<int>(message.size()), message.data());
  return code;
}

int emit_doc(const std::string& path) {
  std::ifstream in(path);
  if (!in) return fail(fmt::format("{}: cannot open", path), 1);
  std::ostringstream doc;
  doc << in.rdbuf();
  const auto spliced = affine::config::splice_key_reference(affine::config_schema(), doc.str());
  if (!spliced) return fail(fmt::format("{}: {}", path, spliced.error()), 1);
  return print(*spliced);
}

}  // namespace

int main(int argc, char** argv) {
  const affine::config::schema& schema = affine::config_schema();
  const auto cli = affine::config::load_command_line(schema, argc, argv);
  if (!cli) return fail(cli.error(), 1);
  if (cli->print_config) return print(affine::config::print_config(cli->config));

  const std::vector<std::string>& args = cli->args;
  if (args.size() == 1 && args[0] == "--check") return print("ok\n");
  if (args.size() == 1 && args[0] == "--emit-default") return print(affine::config::emit_default(schema));
  if (args.size() == 1 && args[0] == "--help-config") return print(affine::config::key_reference(schema));
  if (args.size() == 2 && args[0] == "--emit-doc") return emit_doc(args[1]);
  if (args.size() == 1 && (args[0] == "--help" || args[0] == "-h")) return print(std::string(usage));
  return fail(usage, 2);
}
