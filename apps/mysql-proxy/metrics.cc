#include "apps/mysql-proxy/metrics.hh"

#include <initializer_list>
#include <unordered_map>
#include <utility>
#include <vector>

#include <fmt/format.h>

namespace affine_mysql {

namespace {

using label = std::pair<std::string_view, std::string_view>;

// Label values escape backslash, double quote and newline; help texts only
// backslash and newline.
void append_escaped(std::string& out, std::string_view text, bool is_label_value) {
  for (char c : text) {
    if (c == '\\') out += "\\\\";
    else if (c == '\n') out += "\\n";
    else if (c == '"' && is_label_value) out += "\\\"";
    else out += c;
  }
}

void family(std::string& out, std::string_view name, std::string_view help, std::string_view type) {
  out += fmt::format("# HELP {} ", name);
  append_escaped(out, help, false);
  out += fmt::format("\n# TYPE {} {}\n", name, type);
}

// `labels`: pairs of a label name and its value, in order.
template <class Labels>
void sample(std::string& out, std::string_view name, const Labels& labels, std::uint64_t value) {
  out += name;
  const char* sep = "{";
  for (const auto& [key, text] : labels) {
    out += fmt::format("{}{}=\"", sep, key);
    append_escaped(out, text, true);
    out += '"';
    sep = ",";
  }
  if (*sep == ',') out += '}';
  out += fmt::format(" {}\n", value);
}

void sample(std::string& out, std::string_view name, std::initializer_list<label> labels, std::uint64_t value) {
  sample<std::initializer_list<label>>(out, name, labels, value);
}

void commands(std::string& out, const stats_snapshot& s) {
  family(out, "affine_mysql_commands_total", "Commands relayed, by type (handshake: a client's login).", "counter");
  for (std::size_t k = 0; k < command_kinds; ++k)
    if (s.commands[k].count != 0)
      sample(out, "affine_mysql_commands_total", {{"command", to_string(command_kind(k))}}, s.commands[k].count);
  family(out, "affine_mysql_command_errors_total", "Commands whose response was an ERR, by type.", "counter");
  for (std::size_t k = 0; k < command_kinds; ++k)
    if (s.commands[k].count != 0)
      sample(out, "affine_mysql_command_errors_total", {{"command", to_string(command_kind(k))}},
             s.commands[k].errors);
  family(out, "affine_mysql_command_latency_seconds",
         "From a command's first byte forwarded to its response's last byte received, by type "
         "(each bucket counts to about 1.6% beyond its bound).",
         "histogram");
  for (std::size_t k = 0; k < command_kinds; ++k) {
    const command_counters& c = s.commands[k];
    if (c.count == 0) continue;
    const std::string_view kind = to_string(command_kind(k));
    for (const latency_bound& b : latency_bounds)
      sample(out, "affine_mysql_command_latency_seconds_bucket", {{"command", kind}, {"le", b.seconds}},
             c.latency.count_at_most(b.ns));
    sample(out, "affine_mysql_command_latency_seconds_bucket", {{"command", kind}, {"le", "+Inf"}},
           c.latency.count());
    out += fmt::format("affine_mysql_command_latency_seconds_sum{{command=\"{}\"}} {:.9f}\n", kind,
                       double(c.latency.sum_ns()) / 1e9);
    sample(out, "affine_mysql_command_latency_seconds_count", {{"command", kind}}, c.latency.count());
  }
}

void sessions(std::string& out, const stats_snapshot& s) {
  family(out, "affine_mysql_sessions_opened_total", "Client sessions accepted.", "counter");
  sample(out, "affine_mysql_sessions_opened_total", {}, s.sessions_opened);
  family(out, "affine_mysql_sessions_open", "Client sessions open now.", "gauge");
  sample(out, "affine_mysql_sessions_open", {}, s.sessions_open());
  family(out, "affine_mysql_session_closes_total", "Client sessions ended, by reason.", "counter");
  for (std::size_t r = 0; r < close_reasons; ++r)
    if (s.closes[r] != 0)
      sample(out, "affine_mysql_session_closes_total", {{"reason", to_string(close_reason(r))}}, s.closes[r]);
}

void backends(std::string& out, const backend_set& set) {
  struct column {
    std::string_view name, help, type;
    std::uint64_t (*value)(const backend&);
  };
  static constexpr column columns[] = {
      {"affine_mysql_backend_up", "1 when the last health checks found the backend up.", "gauge",
       [](const backend& b) -> std::uint64_t { return b.healthy() ? 1 : 0; }},
      {"affine_mysql_backend_active_sessions", "Sessions on the backend now.", "gauge",
       [](const backend& b) -> std::uint64_t { return b.active(); }},
      {"affine_mysql_backend_sessions_total", "Sessions given the backend.", "counter",
       [](const backend& b) { return b.sessions(); }},
      {"affine_mysql_backend_connect_failures_total", "Connections to the backend that failed or timed out.",
       "counter", [](const backend& b) { return b.connect_failures(); }},
  };
  std::vector<std::string> addresses;
  for (std::size_t i = 0; i < set.size(); ++i) addresses.push_back(set.at(i).config().address.to_string());
  for (const column& c : columns) {
    family(out, c.name, c.help, c.type);
    for (std::size_t i = 0; i < set.size(); ++i) {
      const backend& b = set.at(i);
      sample(out, c.name, {{"backend", addresses[i]}, {"role", to_string(b.config().role)}}, c.value(b));
    }
  }
}

void runtime_samples(std::string& out, std::span<const affine::metric_sample> runtime) {
  std::vector<std::string_view> names;  // in the order they first appear
  std::unordered_map<std::string_view, std::vector<const affine::metric_sample*>> by_name;
  for (const affine::metric_sample& m : runtime) {
    auto& same = by_name[m.name];
    if (same.empty()) names.push_back(m.name);
    same.push_back(&m);
  }
  for (std::string_view name : names) {
    const auto& same = by_name[name];
    family(out, name, same.front()->help, same.front()->counter ? "counter" : "gauge");
    for (const affine::metric_sample* m : same) sample(out, name, m->labels, m->value);
  }
}

}  // namespace

std::string prometheus_text(const stats_snapshot& s, const backend_set& b,
                            std::span<const affine::metric_sample> runtime) {
  std::string out;
  commands(out, s);
  sessions(out, s);
  backends(out, b);
  runtime_samples(out, runtime);
  return out;
}

}  // namespace affine_mysql
