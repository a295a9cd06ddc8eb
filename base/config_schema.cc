// Declaring a schema: the key builders, and the checks that keep a
// declaration honest (a default outside its own range would be printed into
// config/affine.toml and then rejected when read back).

#include <algorithm>
#include <cstdio>
#include <cstdlib>

#include <fmt/format.h>

#include "base/config_tree.hh"

namespace affine::config {

namespace {

template <typename T>
std::optional<value> as_value(const std::optional<T>& def) {
  if (!def) return std::nullopt;
  return value(*def);
}

void check_table(const table_spec& t, const std::string& path) {
  std::vector<std::string_view> names;
  for (const key_spec& k : t.keys) names.push_back(k.name);
  for (const table_spec& sub : t.tables) names.push_back(sub.name);
  const std::string table = path.empty() ? "the top level" : fmt::format("[{}]", path);
  for (const std::string_view name : names) {
    if (!detail::is_bare_key(name)) {
      detail::programming_error(fmt::format("schema: \"{}\" in {} is not a bare TOML key", name, table));
    }
    if (std::ranges::count(names, name) > 1) {
      detail::programming_error(fmt::format("schema: \"{}\" is declared twice in {}", name, table));
    }
  }
  for (const key_spec& k : t.keys) {
    const std::string name = detail::child_path(path, k.name);
    if (k.help.empty()) detail::programming_error(fmt::format("schema: {} has no help", name));
    if (k.range.min > k.range.max) detail::programming_error(fmt::format("schema: {} has an empty range", name));
    if (k.type == value_type::enumeration && k.choices.empty()) {
      detail::programming_error(fmt::format("schema: {} has no choices", name));
    }
    if (!k.default_value) continue;
    if (const auto problem = detail::check_value(k, *k.default_value)) {
      detail::programming_error(
          fmt::format("schema: default of {}: {}", detail::element_key(name, problem->element), problem->what));
    }
  }
  for (const table_spec& sub : t.tables) check_table(sub, detail::child_path(path, sub.name));
}

}  // namespace

key_spec boolean(std::string_view name, std::optional<bool> def, std::string_view help) {
  return {.name = name, .type = value_type::boolean, .default_value = as_value(def), .help = help};
}

key_spec integer(std::string_view name, int_range range, std::optional<std::int64_t> def, std::string_view help) {
  return {.name = name, .type = value_type::integer, .default_value = as_value(def), .range = range, .help = help};
}

key_spec string(std::string_view name, std::optional<std::string_view> def, std::string_view help,
                const string_format* format) {
  std::optional<value> v;
  if (def) v = value(std::string(*def));
  return {.name = name, .type = value_type::string, .default_value = std::move(v), .format = format, .help = help};
}

key_spec enumeration(std::string_view name, std::vector<std::string_view> choices, std::optional<std::string_view> def,
                     std::string_view help) {
  std::optional<value> v;
  if (def) v = value(std::string(*def));
  return {.name = name,
          .type = value_type::enumeration,
          .default_value = std::move(v),
          .choices = std::move(choices),
          .help = help};
}

key_spec string_array(std::string_view name, std::vector<std::string> def, std::string_view help) {
  return {.name = name, .type = value_type::string_array, .default_value = value(std::move(def)), .help = help};
}

key_spec string_list(std::string_view name, std::vector<std::string> def, std::string_view help,
                     const string_format* format) {
  return {.name = name,
          .type = value_type::string_list,
          .default_value = value(std::move(def)),
          .format = format,
          .help = help};
}

key_spec cores(std::string_view name, core_list def, std::string_view help) {
  return {.name = name,
          .type = value_type::core_list,
          .default_value = value(std::move(def)),
          .range = {1, max_cores},
          .help = help};
}

key_spec count(std::string_view name, int_range range, std::string_view help) {
  return {.name = name, .type = value_type::count, .default_value = value(core_list{}), .range = range, .help = help};
}

table_spec section(std::string_view name, std::string_view help, std::vector<key_spec> keys,
                   std::vector<table_spec> tables) {
  return {.name = name, .array = false, .help = help, .keys = std::move(keys), .tables = std::move(tables)};
}

table_spec array_of_tables(std::string_view name, std::string_view help, std::vector<key_spec> keys,
                           std::vector<table_spec> tables) {
  return {.name = name, .array = true, .help = help, .keys = std::move(keys), .tables = std::move(tables)};
}

schema::schema(std::string_view title, std::vector<key_spec> keys, std::vector<table_spec> tables)
    : title_(title),
      root_{.name = {}, .array = false, .help = {}, .keys = std::move(keys), .tables = std::move(tables)} {
  check_table(root_, "");
}

namespace detail {

void programming_error(const std::string& what) {
  std::fprintf(stderr, "affine config: programming error: %s\n", what.c_str());
  std::abort();
}

}  // namespace detail

}  // namespace affine::config
