#pragma once
// The idle connections of --idle-connections N (issue 19: the busy flow's
// RR/s beside 100k idle connections, and what each costs): opened before
// the measured flows, by a few fibers at a time; each connects with
// keepalive on, makes one request/response exchange (so both ends have
// carried data, as a pooled connection has), and then stays open and
// silent until the report is printed. They go to the client's --to
// address, on the --idle-ports in turn.
//
// What they cost is measured around their opening: this process's resident
// memory (VmRSS) and the kernel's slab (where kernel sockets live, both
// ends of a loopback connection in it), each as bytes per connection.

#include <cstdint>
#include <expected>
#include <string>
#include <vector>

#include "affine/net.hh"
#include "apps/rr/options.hh"

namespace affine_rr {

struct idle_connections {
  std::vector<affine::net::tcp_stream> streams;
  double setup_s = 0;               // to open them all
  std::int64_t rss_bytes = 0;       // this process's resident memory, after less before
  std::int64_t kernel_slab_bytes = 0;  // the kernel's slab, likewise

  // `,"idle_connections":N,...` for the report (nothing when there are none).
  std::string json() const;
};

// Precondition: in a fiber of affine::run. Opens o.idle_connections; the
// first failure ends the opening, and is the error (one line).
std::expected<idle_connections, std::string> open_idle(const client_options& o);

}  // namespace affine_rr
