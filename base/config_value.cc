// Values against their key's rules (range, choices, core-list syntax, string
// format), and values as TOML text. One place for both, so an error message,
// the printed configuration and the generated documents quote a value alike.

#include <algorithm>
#include <charconv>

#include <fmt/format.h>

#include "base/config_tree.hh"

namespace affine::config::detail {

namespace {

std::string_view trim(std::string_view s) {
  const auto first = s.find_first_not_of(" \t");
  if (first == std::string_view::npos) return {};
  return s.substr(first, s.find_last_not_of(" \t") - first + 1);
}

std::optional<std::int64_t> core_number(std::string_view text) {
  std::int64_t n = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), n);
  if (text.empty() || text[0] == '-' || text[0] == '+' || ec != std::errc{} || end != text.data() + text.size() ||
      n >= max_cores) {
    return std::nullopt;
  }
  return n;
}

// "0-7", "0,2,4-6", "5": comma-separated cores or ascending ranges. Whether
// the cores exist is the topology's question (numa's parse_core_list).
bool is_core_list(std::string_view text) {
  if (text == "all") return true;  // every core, whatever the load (reactor.cores)
  for (std::size_t pos = 0; pos <= text.size();) {
    const std::size_t comma = std::min(text.find(',', pos), text.size());
    const std::string_view entry = trim(text.substr(pos, comma - pos));
    pos = comma + 1;
    const std::size_t dash = entry.find('-');
    const auto lo = core_number(trim(entry.substr(0, dash)));
    const auto hi = dash == std::string_view::npos ? lo : core_number(trim(entry.substr(dash + 1)));
    if (!lo || !hi || *hi < *lo) return false;
  }
  return true;
}

// TOML's escape for a control character (a newline as backslash n, the rest
// as backslash u and four hex digits); false, and nothing appended, for any
// other character.
bool append_control_escape(std::string& out, char c) {
  switch (c) {
    case '\b': out += "\\b"; return true;
    case '\t': out += "\\t"; return true;
    case '\n': out += "\\n"; return true;
    case '\f': out += "\\f"; return true;
    case '\r': out += "\\r"; return true;
    default:
      if (static_cast<unsigned char>(c) >= 0x20 && c != 0x7f) return false;
      out += fmt::format("\\u{:04X}", static_cast<unsigned>(c));
      return true;
  }
}

void append_toml_string(std::string& out, std::string_view s) {
  out += '"';
  for (const char c : s) {
    if (c == '"') {
      out += "\\\"";
    } else if (c == '\\') {
      out += "\\\\";
    } else if (!append_control_escape(out, c)) {
      out += c;
    }
  }
  out += '"';
}

std::string quoted(std::string_view s) {
  std::string out;
  append_toml_string(out, s);
  return out;
}

std::string choices_text(const key_spec& k) {
  std::vector<std::string> quoted_choices;
  for (const std::string_view c : k.choices) quoted_choices.push_back(quoted(c));
  return fmt::format("{}", fmt::join(quoted_choices, ", "));
}

std::string out_of_range(std::int64_t n, const key_spec& k) {
  return fmt::format("{} is out of range (allowed: {})", n, allowed_text(k));
}

// A string key's text, or one element of a string list, against its format.
std::optional<std::string> format_problem(const key_spec& k, const std::string& s) {
  if (!k.format || k.format->valid(s)) return std::nullopt;
  return fmt::format("{} is not {} (allowed: {})", quoted(s), k.format->noun, k.format->allowed);
}

}  // namespace

std::string one_line(std::string_view text) {
  std::string out;
  for (const char c : text)
    if (!append_control_escape(out, c)) out += c;
  return out;
}

std::string allowed_text(const key_spec& k) {
  switch (k.type) {
    case value_type::boolean: return "true, false";
    case value_type::integer: return fmt::format("{}..{}", k.range.min, k.range.max);
    case value_type::enumeration: return choices_text(k);
    case value_type::string:
    case value_type::string_list: return k.format ? std::string(k.format->allowed) : std::string();
    case value_type::string_array: return {};
    case value_type::core_list:
      return fmt::format("\"auto\", \"all\", a list like \"0-7\" or \"0,2,4-6\", or a count {}..{}", k.range.min,
                         k.range.max);
    case value_type::count: return fmt::format("\"auto\", {}..{}", k.range.min, k.range.max);
  }
  return {};
}

std::string_view expected_noun(value_type t) {
  switch (t) {
    case value_type::boolean: return "a boolean";
    case value_type::integer: return "an integer";
    case value_type::string:
    case value_type::enumeration: return "a string";
    case value_type::string_array: return "an array of strings";
    case value_type::string_list: return "a string or an array of strings";
    case value_type::core_list:
    case value_type::count: return "a string or an integer";
  }
  return {};
}

std::string element_key(std::string_view key, std::optional<std::size_t> element) {
  if (!element) return std::string(key);
  return fmt::format("{}[{}]", key, *element);
}

std::optional<value_error> check_value(const key_spec& k, const value& v) {
  switch (k.type) {
    case value_type::integer: {
      const std::int64_t n = std::get<std::int64_t>(v);
      if (n < k.range.min || n > k.range.max) return value_error{out_of_range(n, k)};
      return std::nullopt;
    }
    case value_type::enumeration: {
      const std::string& s = std::get<std::string>(v);
      if (std::ranges::find(k.choices, s) == k.choices.end()) {
        return value_error{fmt::format("{} is not allowed (allowed: {})", quoted(s), allowed_text(k))};
      }
      return std::nullopt;
    }
    case value_type::string: {
      if (auto problem = format_problem(k, std::get<std::string>(v))) return value_error{std::move(*problem)};
      return std::nullopt;
    }
    case value_type::string_list: {
      const auto& list = std::get<std::vector<std::string>>(v);
      for (std::size_t i = 0; i < list.size(); ++i) {
        if (auto problem = format_problem(k, list[i])) return value_error{std::move(*problem), i};
      }
      return std::nullopt;
    }
    case value_type::core_list:
    case value_type::count: {  // a count key takes no list
      const core_list& c = std::get<core_list>(v);
      if (c.what == core_list::kind::count && (c.count < k.range.min || c.count > k.range.max)) {
        return value_error{out_of_range(c.count, k)};
      }
      if (c.what == core_list::kind::list && (k.type == value_type::count || !is_core_list(c.list))) {
        const std::string_view what = k.type == value_type::count ? "allowed" : "a core list";
        return value_error{fmt::format("{} is not {} (allowed: {})", quoted(c.list), what, allowed_text(k))};
      }
      return std::nullopt;
    }
    case value_type::boolean:
    case value_type::string_array: return std::nullopt;
  }
  return std::nullopt;
}

std::string toml_literal(const value& v) {
  struct visitor {
    std::string operator()(bool b) const { return b ? "true" : "false"; }
    std::string operator()(std::int64_t n) const { return fmt::format("{}", n); }
    std::string operator()(const std::string& s) const { return quoted(s); }
    std::string operator()(const std::vector<std::string>& list) const {
      std::string out = "[";
      for (std::size_t i = 0; i < list.size(); ++i) {
        if (i > 0) out += ", ";
        append_toml_string(out, list[i]);
      }
      return out + "]";
    }
    std::string operator()(const core_list& c) const {
      switch (c.what) {
        case core_list::kind::automatic: return "\"auto\"";
        case core_list::kind::list: return quoted(c.list);
        case core_list::kind::count: return fmt::format("{}", c.count);
      }
      return {};
    }
  };
  return std::visit(visitor{}, v);
}

}  // namespace affine::config::detail
