// The JSON line of one variant. Every figure's name ends in its unit.

#include <fmt/format.h>

#include "sim/report.hh"

namespace affine::sim {

namespace {

std::string json_string(std::string_view s) {
  std::string out = "\"";
  for (const char ch : s) {
    if (ch == '"' || ch == '\\') out += '\\';
    out += ch;
  }
  return out + "\"";
}

}  // namespace

double metric_value(std::string_view metric, const result& r) {
  if (metric == "throughput_per_s" || metric == "transactions_per_s") return r.transactions_per_s;
  if (metric == "mean_us") return r.latency.mean_ns() / 1000;
  if (metric == "p50_us") return r.latency.quantile_ns(0.50) / 1000;
  if (metric == "p99_us") return r.latency.quantile_ns(0.99) / 1000;
  return 0;
}

std::string json_line(const scenario& sc, const variant& v, const result& r) {
  const std::string_view throughput = sc.metric == "throughput_per_s" ? "throughput_per_s" : "transactions_per_s";
  std::string out = fmt::format("{{\"bench\":{},\"variant\":{}", json_string(sc.name), json_string(v.name));
  if (v.x && !sc.x_name.empty()) out += fmt::format(",{}:{}", json_string(sc.x_name), *v.x);
  const double per_s = r.measured_s > 0 ? 1.0 / r.measured_s : 0;
  out += fmt::format(",\"{}\":{:.1f},\"requests_per_s\":{:.1f}", throughput, r.transactions_per_s, r.requests_per_s);
  out += fmt::format(",\"p50_us\":{:.2f},\"p99_us\":{:.2f},\"mean_us\":{:.2f}", metric_value("p50_us", r),
                     metric_value("p99_us", r), metric_value("mean_us", r));
  for (std::size_t n = 0; n < r.node_busy_pct.size(); ++n) {
    out += fmt::format(",\"node{}_busy_pct\":{:.1f}", n, r.node_busy_pct[n]);
  }
  std::uint64_t steals = 0;
  for (const std::uint64_t s : r.count.steals) steals += s;
  out += fmt::format(",\"migrations_per_s\":{:.1f},\"remote_migrations_per_s\":{:.1f},\"steals_per_s\":{:.1f}",
                     static_cast<double>(r.count.migrations) * per_s,
                     static_cast<double>(r.count.remote_migrations) * per_s, static_cast<double>(steals) * per_s);
  out += fmt::format(",\"drops_per_s\":{:.1f}}}", static_cast<double>(r.count.drops) * per_s);
  return out;
}

}  // namespace affine::sim
