#include "drivers/uring/install.hh"

#include <cassert>

#include "affine/fiber.hh"
#include "drivers/uring/backend.hh"
#include "reactor/runtime_state.hh"

namespace affine::drivers::uring {

struct installation::state {
  explicit state(ring_set rings) : backend(std::move(rings)) {}
  uring_backend backend;
  unsigned attached = 0;      // cores whose reactor polls its ring
  runtime* outside = nullptr;  // set by install(runtime&): reset() from outside runs there
};

namespace {

// Precondition: in a fiber of the runtime. Each ring joins its reactor on
// that reactor's thread (the poller list and epoll set are owner-only).
void detach_all(installation::state& s) {
  for (; s.attached > 0; --s.attached) {
    const unsigned c = s.attached - 1;
    submit_to(c, [&] { s.backend.rings().on(c).detach(); });
  }
}

std::expected<void, std::string> attach_all(installation::state& s) {
  for (unsigned c = 0; c < s.backend.rings().size(); ++c) {
    auto r = submit_to(c, [&] { return s.backend.rings().on(c).attach(); });
    if (!r) {
      detach_all(s);
      return r;
    }
    ++s.attached;
  }
  return {};
}

void uninstall(installation::state& s) {
  if (net::detail::current_backend() == &s.backend) net::detail::set_backend(nullptr);
  detach_all(s);
}

}  // namespace

installation::installation() = default;
installation::installation(std::unique_ptr<state> s) : s_(std::move(s)) {}
installation::installation(installation&&) noexcept = default;
installation& installation::operator=(installation&& o) noexcept {
  if (this != &o) {
    reset();
    s_ = std::move(o.s_);
  }
  return *this;
}
installation::~installation() { reset(); }

bool installation::deferred_task_work() const {
  assert(s_ != nullptr);
  return s_->backend.rings().on(0).deferred();  // all made alike: a kernel takes the flags or not
}

void installation::reset() {
  if (!s_) return;
  if (this_fiber::in_fiber()) {
    uninstall(*s_);
  } else {
    assert(s_->outside != nullptr && "an installation made in a fiber is reset in a fiber");
    s_->outside->run([&] { uninstall(*s_); });
  }
  s_.reset();  // closes the rings: none is polled any more
}

std::expected<installation, std::string> install(const install_options& opts) {
  assert(this_fiber::in_fiber());
  if (net::detail::current_backend() != nullptr)
    return std::unexpected(std::string("a network backend is installed already"));
  const auto cores = unsigned(detail::this_core()->rt->cores.size());
  auto rings = ring_set::create(cores, opts.ring_entries, opts.deferred_task_work);
  if (!rings) return std::unexpected(rings.error());
  auto s = std::make_unique<installation::state>(std::move(*rings));
  if (auto r = attach_all(*s); !r) return std::unexpected(r.error());
  net::detail::set_backend(&s->backend);
  return installation(std::move(s));
}

std::expected<installation, std::string> install(runtime& rt, const install_options& opts) {
  auto inst = rt.run([&] { return install(opts); });
  if (inst) inst->s_->outside = &rt;
  return inst;
}

}  // namespace affine::drivers::uring
