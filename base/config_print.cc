// The configuration as TOML: the effective one (--print-config) and the
// fully commented default file (--emit-default, config/affine.toml).

#include <fmt/format.h>

#include "base/config_tree.hh"

namespace affine::config {

namespace {

using detail::node;

constexpr std::size_t comment_width = 79;

// "# " + text, wrapped at word boundaries.
void append_comment(std::string& out, std::string_view text) {
  std::size_t column = 0;
  while (!text.empty()) {
    const std::size_t space = text.find(' ');
    const std::string_view word = text.substr(0, space);
    text = space == std::string_view::npos ? std::string_view{} : text.substr(space + 1);
    if (column > 0 && column + 1 + word.size() > comment_width) {
      out += '\n';
      column = 0;
    }
    if (column == 0) {
      out += "#";
      column = 1;
    }
    out += ' ';
    out += word;
    column += 1 + word.size();
  }
  if (column > 0) out += '\n';
}

void print_node(std::string& out, const node& n, std::string_view header) {
  for (std::size_t i = 0; i < n.keys.size(); ++i) {
    const detail::entry& e = *n.keys[i];
    out += fmt::format("{} = {}", n.spec->keys[i].name, detail::toml_literal(e.v));
    if (e.from.from != detail::origin::kind::default_value) out += fmt::format("  # {}", e.from.text());
    out += '\n';
  }
  for (std::size_t j = 0; j < n.tables.size(); ++j) {
    const table_spec& sub = n.spec->tables[j];
    const std::string sub_header = detail::child_path(header, sub.name);
    for (const node& instance : n.tables[j]) {
      out += fmt::format("\n{}\n", detail::table_header(sub, sub_header));
      print_node(out, instance, sub_header);
    }
  }
}

// What a commented-out example shows for a key without a default.
value example_value(const key_spec& k) {
  switch (k.type) {
    case value_type::boolean: return false;
    case value_type::integer: return k.range.min;
    case value_type::string: return std::string();
    case value_type::enumeration: return std::string(k.choices.front());
    case value_type::string_array:
    case value_type::string_list: return std::vector<std::string>();
    case value_type::core_list:
    case value_type::count: return core_list{};
  }
  return false;
}

// Keys and tables of `t` with their help; `code` is "" or, inside an array
// of tables shown as an example, "#".
void emit_table(std::string& out, const table_spec& t, std::string_view header, std::string_view code) {
  for (const key_spec& k : t.keys) {
    out += '\n';
    append_comment(out, k.help);
    const std::string allowed = k.type == value_type::boolean ? std::string() : detail::allowed_text(k);
    if (!allowed.empty() || !k.default_value) {
      append_comment(out, fmt::format("allowed: {}{}", allowed.empty() ? "any" : allowed,
                                      k.default_value ? "" : "; required, no default"));
    }
    out += fmt::format("{}{} = {}\n", code, k.name, detail::toml_literal(k.default_value.value_or(example_value(k))));
  }
  for (const table_spec& sub : t.tables) {
    const std::string sub_header = detail::child_path(header, sub.name);
    const std::string_view sub_code = sub.array ? "#" : code;
    out += '\n';
    append_comment(out, sub.help);
    if (sub.array && code.empty()) append_comment(out, "None by default. An example, with every key at its default:");
    out += fmt::format("{}{}\n", sub_code, detail::table_header(sub, sub_header));
    emit_table(out, sub, sub_header, sub_code);
  }
}

}  // namespace

std::string print_config(const settings& s) {
  std::string out =
      "# The effective configuration. A comment says where a value that is not the\n"
      "# default came from.\n";
  print_node(out, *detail::access::root(s), "");
  return out;
}

std::string emit_default(const schema& s) {
  std::string out;
  append_comment(out, fmt::format("{} configuration: every key, with its allowed values and its default. "
                                  "A file needs only the keys it changes.",
                                  s.title()));
  append_comment(out,
                 "Generated from the schema declared in the code, and tested to match it: edit "
                 "the schema, not this file, then regenerate it.");
  emit_table(out, s.root(), "", "");
  return out;
}

}  // namespace affine::config
