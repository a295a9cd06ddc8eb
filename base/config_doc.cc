// The key reference in Markdown, generated from the schema, and splicing it
// into a hand-written document between two markers.

#include <fmt/format.h>

#include "base/config_tree.hh"

namespace affine::config {

namespace {

std::string_view type_name(value_type t) {
  switch (t) {
    case value_type::boolean: return "bool";
    case value_type::integer: return "integer";
    case value_type::string: return "string";
    case value_type::enumeration: return "enum";
    case value_type::string_array: return "string array";
    case value_type::string_list: return "string or string array";
    case value_type::core_list: return "core list";
    case value_type::count: return "count or \"auto\"";
  }
  return {};
}

// A table cell: pipes escaped, so help text cannot break the table.
std::string cell(std::string_view text) {
  std::string out;
  for (const char c : text) {
    if (c == '|') out += '\\';
    out += c;
  }
  return out;
}

// `path` is the table's dotted name ("port.rxq"), empty for the top level.
void reference_table(std::string& out, const table_spec& t, std::string_view path) {
  if (!path.empty() || !t.keys.empty()) {
    out += fmt::format("\n### {}\n\n", path.empty() ? "Top level" : fmt::format("`{}`", detail::table_header(t, path)));
    if (!t.help.empty()) out += fmt::format("{}\n\n", t.help);
  }
  if (!t.keys.empty()) {
    out += "| key | type | default | allowed | meaning |\n|---|---|---|---|---|\n";
    for (const key_spec& k : t.keys) {
      const std::string def =
          k.default_value ? fmt::format("`{}`", detail::toml_literal(*k.default_value)) : "required";
      const std::string allowed = k.type == value_type::boolean ? std::string() : detail::allowed_text(k);
      out += fmt::format("| `{}` | {} | {} | {} | {} |\n", k.name, type_name(k.type), cell(def), cell(allowed),
                         cell(k.help));
    }
  }
  for (const table_spec& sub : t.tables) reference_table(out, sub, detail::child_path(path, sub.name));
}

}  // namespace

std::string key_reference(const schema& s) {
  std::string out;
  reference_table(out, s.root(), "");
  return out;
}

std::expected<std::string, std::string> splice_key_reference(const schema& s, std::string_view doc) {
  const std::size_t begin = doc.find(reference_begin);
  const std::size_t end = doc.find(reference_end);
  if (begin == std::string_view::npos || end == std::string_view::npos || end < begin) {
    return std::unexpected(
        fmt::format("the document needs the lines\n{}\n{}\naround the key reference", reference_begin, reference_end));
  }
  const std::size_t body = begin + reference_begin.size();
  return fmt::format("{}\n{}\n{}", doc.substr(0, body), key_reference(s), doc.substr(end));
}

}  // namespace affine::config
