#include <algorithm>
#include <vector>

#include <fmt/format.h>

#include "affine/fiber.hh"
#include "apps/rr/client.hh"
#include "apps/rr/flows.hh"
#include "apps/rr/in_place.hh"

namespace affine_rr {

namespace {

using namespace affine;

struct flow_result {
  std::uint64_t received_bytes = 0;  // as the server counted them
  std::uint64_t done_ns = 0;         // when that count came back
  flow_error error;
};

void one_flow(const client_options& o, start_line& line, flow_result& out) {
  auto s = line.open(o, {.what = mode::bulk});
  if (!s) return out.error.set(s.error());
  const std::uint64_t timeout_ns = o.timeout_ms * 1'000'000;
  const std::vector<std::byte> chunk(bulk_chunk_bytes);
  while (now_ns() < line.to_ns())
    if (auto w = o.zero_copy ? send_in_place(*s, chunk.size(), {}, now_ns() + timeout_ns)
                             : s->write(chunk, now_ns() + timeout_ns);
        !w)
      return out.error.set("write: " + w.error().message());
  if (auto sh = s->shutdown_write(); !sh) return out.error.set("shutdown: " + sh.error().message());
  std::array<std::byte, count_size> count;
  if (auto r = s->read_exactly(count, now_ns() + timeout_ns); !r)
    return out.error.set("byte count: " + r.error().message());
  out.received_bytes = decode_u64(count);
  out.done_ns = now_ns();
}

}  // namespace

int run_bulk_client(const client_options& o) {
  std::vector<flow_result> flows(o.flows);
  start_line line;
  run_flows(o, line, [&](unsigned f) { one_flow(o, line, flows[f]); });

  std::uint64_t received = 0, last_ns = line.from_ns(), failed = 0;
  std::string first_error;
  for (const auto& f : flows) {
    received += f.received_bytes;
    last_ns = std::max(last_ns, f.done_ns);
    if (f.error.failed && failed++ == 0) first_error = f.error.first;
  }
  const double seconds = double(last_ns - line.from_ns()) / 1e9;
  fmt::print("{}\n", json_head("bulk", o) +
                         fmt::format(",\"chunk_bytes\":{},\"duration_s\":{},\"received_bytes\":{},\"bytes_per_s\":{:.0f}",
                                     bulk_chunk_bytes, o.duration_s, received, seconds > 0 ? double(received) / seconds : 0.0) +
                         json_tail(failed, first_error));
  return failed == o.flows ? 1 : 0;
}

}  // namespace affine_rr
