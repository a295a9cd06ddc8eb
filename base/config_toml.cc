// Reading a key's value out of a toml++ node: type first, then the key's own
// rules (check_value), so the file and --set report alike.

#include "base/config_toml.hh"

#include <fmt/format.h>

#include "base/config_tree.hh"

namespace affine::config::detail {

namespace {

// The value if the node has the key's type; nullopt otherwise.
std::optional<value> typed(const key_spec& k, const toml::node& n) {
  switch (k.type) {
    case value_type::boolean:
      if (const auto* b = n.as_boolean()) return value(b->get());
      return std::nullopt;
    case value_type::integer:
      if (const auto* i = n.as_integer()) return value(i->get());
      return std::nullopt;
    case value_type::string:
    case value_type::enumeration:
      if (const auto* s = n.as_string()) return value(s->get());
      return std::nullopt;
    case value_type::core_list:
    case value_type::count:  // a word other than "auto" is a list, which check_value refuses
      if (const auto* i = n.as_integer()) return value(core_list{.what = core_list::kind::count, .count = i->get()});
      if (const auto* s = n.as_string()) {
        if (s->get() == "auto") return value(core_list{});
        return value(core_list{.what = core_list::kind::list, .list = s->get()});
      }
      return std::nullopt;
    case value_type::string_array:
      if (const auto* a = n.as_array()) {
        std::vector<std::string> list;
        for (const toml::node& element : *a) {
          const auto* s = element.as_string();
          if (!s) return std::nullopt;
          list.push_back(s->get());
        }
        return value(std::move(list));
      }
      return std::nullopt;
    case value_type::string_list: break;  // string_list_from_toml
  }
  return std::nullopt;
}

// One string, the list of one, named by the key alone; or an array, each
// element named by its index.
std::expected<value, value_error> string_list_from_toml(const key_spec& k, const toml::node& n) {
  std::vector<std::string> list;
  if (const auto* s = n.as_string()) {
    list.push_back(s->get());
  } else if (const auto* a = n.as_array()) {
    for (std::size_t i = 0; i < a->size(); ++i) {
      const toml::node& element = *a->get(i);
      const auto* s = element.as_string();
      if (!s) return std::unexpected(value_error{fmt::format("expected a string, got {}", toml_noun(element)), i});
      list.push_back(s->get());
    }
  } else {
    return std::unexpected(value_error{fmt::format("expected {}, got {}", expected_noun(k.type), toml_noun(n))});
  }
  value v(std::move(list));
  if (auto problem = check_value(k, v)) {
    if (n.is_string()) problem->element.reset();
    return std::unexpected(std::move(*problem));
  }
  return v;
}

// What the node is, for "got ...": an array says what its wrong element is.
std::string given_noun(const key_spec& k, const toml::node& n) {
  const auto* a = n.as_array();
  if (k.type != value_type::string_array || !a) return std::string(toml_noun(n));
  for (std::size_t i = 0; i < a->size(); ++i) {
    const toml::node& element = *a->get(i);
    if (!element.is_string()) return fmt::format("{} at index {}", toml_noun(element), i);
  }
  return std::string(toml_noun(n));
}

}  // namespace

std::string_view toml_noun(const toml::node& n) {
  switch (n.type()) {
    case toml::node_type::table: return "a table";
    case toml::node_type::array: return "an array";
    case toml::node_type::string: return "a string";
    case toml::node_type::integer: return "an integer";
    case toml::node_type::floating_point: return "a floating-point number";
    case toml::node_type::boolean: return "a boolean";
    case toml::node_type::date: return "a date";
    case toml::node_type::time: return "a time";
    case toml::node_type::date_time: return "a date-time";
    case toml::node_type::none: break;
  }
  return "nothing";
}

std::expected<value, value_error> from_toml(const key_spec& k, const toml::node& n) {
  if (k.type == value_type::string_list) return string_list_from_toml(k, n);
  auto v = typed(k, n);
  if (!v) {
    std::string what = fmt::format("expected {}, got {}", expected_noun(k.type), given_noun(k, n));
    // A list of choices helps more than the type alone.
    if (k.type == value_type::enumeration || k.type == value_type::core_list || k.type == value_type::count) {
      what += fmt::format(" (allowed: {})", allowed_text(k));
    }
    return std::unexpected(value_error{std::move(what)});
  }
  if (auto problem = check_value(k, *v)) return std::unexpected(std::move(*problem));
  return std::move(*v);
}

}  // namespace affine::config::detail
