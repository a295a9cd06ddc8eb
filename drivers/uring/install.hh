#pragma once
// Putting the uring backend behind the socket API of a runtime: one
// io_uring per reactor core, each polled by its reactor (and slept on: a
// reactor with only uring work sleeps in epoll on the ring's eventfd), and
// the process's net backend set to it. Undone when the installation ends.
//
//   auto inst = drivers::uring::install(*rt);   // outside the reactors
//   rt->run([] { auto l = net::listen({.local = {net::loopback, 8080}}); ... });
//
// Preconditions: one backend per process at a time; every socket made
// through it is closed before the installation ends.

#include <expected>
#include <memory>
#include <string>

#include "affine/runtime.hh"

namespace affine::drivers::uring {

struct install_options {
  unsigned ring_entries = 256;  // submission queue entries per core
  // Deferred task work where the kernel has it (6.1); false: the rings as
  // older kernels make them (the fallback, kept under test this way).
  bool deferred_task_work = true;
};

class installation {
 public:
  installation();
  installation(installation&&) noexcept;
  installation& operator=(installation&&) noexcept;
  ~installation();  // reset()

  bool installed() const { return s_ != nullptr; }
  // Precondition: installed(). Its rings were made with deferred task work.
  bool deferred_task_work() const;
  // Unset the backend, take the rings off their reactors, close them. From
  // a fiber of the runtime, or from outside the reactors when it was made
  // by install(runtime&).
  void reset();

  struct state;

 private:
  friend std::expected<installation, std::string> install(const install_options&);
  friend std::expected<installation, std::string> install(runtime&, const install_options&);
  explicit installation(std::unique_ptr<state> s);
  std::unique_ptr<state> s_;
};

// Precondition: in a fiber of the runtime to serve (an app's main fiber).
std::expected<installation, std::string> install(const install_options& opts = {});
// Precondition: outside the reactors (before or between rt.run calls).
std::expected<installation, std::string> install(runtime& rt, const install_options& opts = {});

}  // namespace affine::drivers::uring
