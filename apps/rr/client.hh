#pragma once
// The affine-rr clients. Each runs --flows connections, one fiber each,
// starts measuring once all have connected (after --warmup-s), stops after
// --duration-s, and prints one JSON line (DESIGN.md section 9):
//
//   {"bench":"rr","variant":"kernel-loopback","flows":1,"request_bytes":64,"response_bytes":64,
//    "duration_s":5,"transactions":123456,"transactions_per_s":24691,"p50_us":38.12,"p99_us":52.3,
//    "p999_us":80.1,"p9999_us":112.5,"least_flow_share":1.000,"errors":0}
//   {"bench":"bulk","variant":"kernel-loopback","flows":1,"chunk_bytes":65536,"duration_s":5,
//    "received_bytes":...,"bytes_per_s":...,"errors":0}
//
// A flow stops at its first error (a failed connect, read or write, a
// response that answers another request); `errors` counts the flows that
// stopped so, and "first_error" says what the first was. Latency figures
// are left out when no transaction was measured. least_flow_share is the
// fewest transactions a flow finished over the mean per flow: a flow
// starved for milliseconds at a time hides in the quantiles, not there.
// Bulk figures count the bytes the server says it received, over the time
// until the last flow has its count back.
//
// Exit status: 1 when every flow failed, else 0.

#include "apps/rr/options.hh"

namespace affine_rr {

// Preconditions: in a fiber of affine::run; o.bulk false.
int run_rr_client(const client_options& o);
// Preconditions: in a fiber of affine::run; o.bulk true.
int run_bulk_client(const client_options& o);

}  // namespace affine_rr
