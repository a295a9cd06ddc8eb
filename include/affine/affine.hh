#pragma once
// The one-call entry point of DESIGN.md section 5: read the configuration
// (--config FILE, --set section.key=value, --print-config), build the
// topology, start one reactor per configured core, run `main_fiber` as the
// first fiber, and stop everything when it returns.
//
//   int main(int argc, char** argv) {
//     return affine::run(argc, argv, [](std::span<const std::string> args) { ...; return 0; });
//   }
//
// SIGINT and SIGTERM become a stop request on the main fiber's token, which
// every fiber it spawns inherits (fiber.hh): blocking calls return
// std::errc::operation_canceled at once and the program winds down; a
// second SIGINT (Ctrl-C again) ends the process at once. When the main fiber returns, the
// fibers it left running get the stop too, and up to 10 s to end.
//
// Returns the fiber's exit code; 2 with one line on stderr for a bad
// configuration or command line; 1 when the runtime cannot start or the
// fiber throws.

#include <functional>
#include <span>
#include <string>

#include "affine/channel.hh"
#include "affine/config.hh"
#include "affine/fiber.hh"
#include "affine/runtime.hh"
#include "affine/sync.hh"

namespace affine {

// `args`: the command-line arguments the configuration did not consume.
using main_fn = std::move_only_function<int(std::span<const std::string> args)>;

int run(int argc, const char* const* argv, main_fn main_fiber);

// The same for a program with settings of its own in the same file: `app`
// declares affine's tables (config_tables()) and the program's; the main
// fiber also gets the loaded settings, checked against `app`.
using main_with_settings_fn =
    std::move_only_function<int(std::span<const std::string> args, const config::settings& settings)>;
int run(int argc, const char* const* argv, const config::schema& app, main_with_settings_fn main_fiber);

}  // namespace affine
