#pragma once
// The proxy's counters in the Prometheus text exposition format, version
// 0.0.4 (https://prometheus.io/docs/instrumenting/exposition_formats/):
// per command type a count, an error count and a latency histogram; the
// sessions and why they ended; per backend its state and counts; and the
// runtime's own counters (scheduler and stack, per core and port).
//
// Command types and close reasons appear once seen, as on the stats line:
// every kind from the start would be mostly zero histograms (17 kinds x 20
// series).

#include <cstdint>
#include <span>
#include <string>
#include <string_view>

#include "affine/stats.hh"
#include "apps/mysql-proxy/backends.hh"
#include "apps/mysql-proxy/stats.hh"

namespace affine_mysql {

inline constexpr std::string_view prometheus_content_type = "text/plain; version=0.0.4; charset=utf-8";

// The latency histogram's `le` bounds, 50us to 5s; +Inf follows them. A
// sample is counted at a bound when the lower end of its bucket in the
// proxy's histogram (about 1.6% wide) is at most the bound. There is no
// _sum: the proxy's histograms keep counts only.
struct latency_bound {
  std::uint64_t ns;
  std::string_view seconds;  // the label value, written once here rather than formatted from a double
};
inline constexpr latency_bound latency_bounds[] = {
    {50'000, "0.00005"},    {100'000, "0.0001"},   {250'000, "0.00025"},   {500'000, "0.0005"},
    {1'000'000, "0.001"},   {2'500'000, "0.0025"}, {5'000'000, "0.005"},   {10'000'000, "0.01"},
    {25'000'000, "0.025"},  {50'000'000, "0.05"},  {100'000'000, "0.1"},   {250'000'000, "0.25"},
    {500'000'000, "0.5"},   {1'000'000'000, "1"},  {2'500'000'000, "2.5"}, {5'000'000'000, "5"},
};

// Precondition: the runtime samples' names and label names are valid
// Prometheus names ([a-zA-Z_:][a-zA-Z0-9_:]*, labels without ':'). Label
// values and help texts may hold anything: they are escaped. Samples of one
// name are written together under one HELP and TYPE (the first sample's),
// in the order the names first appear.
std::string prometheus_text(const stats_snapshot& s, const backend_set& b,
                            std::span<const affine::metric_sample> runtime);

}  // namespace affine_mysql
