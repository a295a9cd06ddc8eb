// affine built without DPDK (meson -Ddpdk=disabled): kernel sockets only.
// A [[port]] with driver = "dpdk" stops start-up, naming its file and line.

#include "runtime/stack_ports.hh"

namespace affine::detail {

namespace {

class no_stacks final : public running_stacks {
 public:
  void log_stats() const override {}
};

class no_ports final : public stack_ports {
 public:
  std::function<void(unsigned)> on_reactor_start() const override { return {}; }
  std::expected<std::unique_ptr<running_stacks>, std::string> start(runtime&, const config::settings&) override {
    return std::make_unique<no_stacks>();
  }
};

}  // namespace

std::expected<std::unique_ptr<stack_ports>, std::string> stack_ports::open(const config::settings& cfg, unsigned) {
  for (const config::table_view& port : cfg.tables("port"))
    if (port.get_string("driver") == "dpdk")
      return std::unexpected(port.error(
          "driver", "this affine was built without DPDK (meson -Ddpdk=disabled), so it has no userspace stack: "
                    "use driver = \"uring\" (kernel sockets), or rebuild with -Ddpdk=enabled"));
  return std::make_unique<no_ports>();
}

}  // namespace affine::detail
