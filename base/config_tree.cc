// The settings tree: building it at its defaults, naming its parts in
// messages, and the typed getters of table_view.

#include <fmt/format.h>

#include "base/config_tree.hh"

namespace affine::config {

namespace detail {

std::string origin::text() const {
  switch (from) {
    case kind::default_value: return "(default)";
    // Line 0: the file as a whole, for a key it should have had.
    // one_line: an assignment may hold a newline (--set 'port[0].pci=a<LF>b'),
    // and this text ends a line of print_config too.
    case kind::file: return line == 0 ? one_line(*source) : fmt::format("{}:{}", one_line(*source), line);
    case kind::command_line: return one_line(*source);
  }
  return {};
}

node make_node(const table_spec& spec, std::string path, origin from) {
  node n{.spec = &spec, .path = std::move(path), .from = std::move(from), .keys = {}, .tables = {}};
  for (const key_spec& k : spec.keys) {
    if (k.default_value) {
      n.keys.emplace_back(entry{*k.default_value, origin{}});
    } else {
      n.keys.emplace_back();
    }
  }
  for (const table_spec& sub : spec.tables) {
    auto& instances = n.tables.emplace_back();
    if (!sub.array) instances.push_back(make_node(sub, child_path(n.path, sub.name), n.from));
  }
  return n;
}

std::string child_path(std::string_view parent, std::string_view name) {
  if (parent.empty()) return std::string(name);
  return fmt::format("{}.{}", parent, name);
}

std::string table_header(const table_spec& t, std::string_view dotted) {
  return t.array ? fmt::format("[[{}]]", dotted) : fmt::format("[{}]", dotted);
}

std::string located(const origin& at, std::string_view key, std::string_view what) {
  // A quoted TOML key may hold any character ("x\ny" = 1).
  if (at.from == origin::kind::command_line && at.subject == key) {
    return fmt::format("{}: {}", at.text(), one_line(what));
  }
  return fmt::format("{}: {}: {}", at.text(), one_line(key), one_line(what));
}

std::optional<located_error> first_missing_required(const node& n) {
  std::optional<located_error> first;
  for (std::size_t i = 0; i < n.keys.size(); ++i) {
    if (n.keys[i]) continue;
    const std::string key = child_path(n.path, n.spec->keys[i].name);
    return located_error{n.from.line, located(n.from, key, "required key is missing")};
  }
  for (const auto& instances : n.tables) {
    for (const node& sub : instances) {
      auto missing = first_missing_required(sub);
      if (missing && (!first || missing->line < first->line)) first = std::move(missing);
    }
  }
  return first;
}

}  // namespace detail

namespace {

using detail::node;

struct key_ref {
  const node* table;
  std::size_t index;
};

// Walks "sched.steal" through plain tables; the last name stays unresolved.
std::pair<const node*, std::string_view> walk(const node* n, std::string_view dotted) {
  for (std::size_t dot = dotted.find('.'); dot != std::string_view::npos; dot = dotted.find('.')) {
    const std::string_view name = dotted.substr(0, dot);
    const auto i = detail::find_table(*n->spec, name);
    if (!i || n->spec->tables[*i].array) {
      detail::programming_error(fmt::format("{} is not a table of {}", name, n->path.empty() ? "the schema" : n->path));
    }
    n = &n->tables[*i].front();
    dotted.remove_prefix(dot + 1);
  }
  return {n, dotted};
}

key_ref find(const node* root, std::string_view key) {
  const auto [n, name] = walk(root, key);
  const auto i = detail::find_key(*n->spec, name);
  if (!i) detail::programming_error(fmt::format("{} is not a declared key", detail::child_path(n->path, name)));
  return {n, *i};
}

template <typename T>
const T& get(const node* root, std::string_view key, value_type type) {
  const key_ref ref = find(root, key);
  const key_spec& k = ref.table->spec->keys[ref.index];
  // get_string serves enumerations too: their values are strings; and
  // get_strings string lists, however they were written.
  if (k.type != type && !(type == value_type::string && k.type == value_type::enumeration) &&
      !(type == value_type::string_array && k.type == value_type::string_list)) {
    detail::programming_error(fmt::format("{} is {}, not {}", detail::child_path(ref.table->path, k.name),
                                          detail::expected_noun(k.type), detail::expected_noun(type)));
  }
  return std::get<T>(ref.table->keys[ref.index]->v);
}

const detail::entry& entry_of(const node* root, std::string_view key) {
  const key_ref ref = find(root, key);
  return *ref.table->keys[ref.index];
}

}  // namespace

std::optional<std::int64_t> table_view::get_count(std::string_view key) const {
  const core_list& c = get<core_list>(table_, key, value_type::count);
  if (c.what == core_list::kind::automatic) return std::nullopt;
  return c.count;
}

table_view::table_view(std::shared_ptr<const detail::node> root, const detail::node* table) noexcept
    : root_(std::move(root)), table_(table) {}

bool table_view::get_bool(std::string_view key) const { return get<bool>(table_, key, value_type::boolean); }

std::int64_t table_view::get_int(std::string_view key) const {
  return get<std::int64_t>(table_, key, value_type::integer);
}

const std::string& table_view::get_string(std::string_view key) const {
  return get<std::string>(table_, key, value_type::string);
}

const std::vector<std::string>& table_view::get_strings(std::string_view key) const {
  return get<std::vector<std::string>>(table_, key, value_type::string_array);
}

const core_list& table_view::get_cores(std::string_view key) const {
  return get<core_list>(table_, key, value_type::core_list);
}

std::vector<table_view> table_view::tables(std::string_view name) const {
  const auto [n, last] = walk(table_, name);
  const auto i = detail::find_table(*n->spec, last);
  if (!i || !n->spec->tables[*i].array) {
    detail::programming_error(fmt::format("{} is not an array of tables", detail::child_path(n->path, last)));
  }
  std::vector<table_view> views;
  for (const node& sub : n->tables[*i]) views.push_back(table_view(root_, &sub));
  return views;
}

std::string table_view::where(std::string_view key) const { return entry_of(table_, key).from.text(); }

std::string table_view::error(std::string_view key, std::string_view what) const {
  return detail::located(entry_of(table_, key).from, detail::child_path(table_->path, key), what);
}

const std::string& table_view::path() const noexcept { return table_->path; }

settings::settings(std::shared_ptr<const detail::node> root) noexcept : table_view(root, root.get()) {}

settings defaults(const schema& s) {
  auto root = detail::make_node(s.root(), "", {});
  if (const auto missing = detail::first_missing_required(root)) {
    detail::programming_error(fmt::format("defaults() of a schema with a required key: {}", missing->message));
  }
  return detail::access::make(std::move(root));
}

}  // namespace affine::config
