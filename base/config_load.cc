// Loading a TOML file against a schema. The whole file is checked and the
// error reported is the first one in line order (toml++ keeps tables sorted by
// name, so walking order is not file order).

#include <cerrno>
#include <cstdio>
#include <cstring>

#include <fmt/format.h>

#include "base/config_toml.hh"
#include "base/config_tree.hh"

namespace affine::config {

namespace {

using detail::located_error;
using detail::node;
using detail::origin;

class loader {
 public:
  loader(const table_spec& root, std::shared_ptr<const std::string> source) : root_(root), source_(std::move(source)) {}

  void load_table(node& n, const toml::table& t) {
    for (auto&& [k, v] : t) {
      const std::uint32_t line = k.source().begin.line;
      const std::string_view name = k.str();
      const std::string path = detail::child_path(n.path, name);
      if (const auto i = detail::find_key(*n.spec, name)) {
        auto converted = detail::from_toml(n.spec->keys[*i], v);
        if (converted) {
          n.keys[*i] = detail::entry{std::move(*converted), at(line)};
        } else {
          const detail::value_error& e = converted.error();
          // An element of a list is reported at its own line (an array may span lines).
          const std::uint32_t at_line = e.element ? v.as_array()->get(*e.element)->source().begin.line : line;
          fail(at_line, detail::element_key(path, e.element), e.what);
          // Given, though wrong: not to be reported as missing too.
          n.keys[*i] = detail::entry{value{}, at(line)};
        }
      } else if (const auto j = detail::find_table(*n.spec, name)) {
        load_sub_table(n.tables[*j], n.spec->tables[*j], path, v, line);
      } else {
        const bool table = v.is_table() || v.is_array_of_tables();
        const std::string_view noun = !table ? "key" : (n.spec == &root_ ? "section" : "table");
        fail(line, path, detail::unknown_name(root_, *n.spec, n.path, name, noun));
      }
    }
  }

  // The earliest error of the file, required keys included.
  std::optional<std::string> first_error(const node& root) {
    if (auto missing = detail::first_missing_required(root)) fail_with(std::move(*missing));
    if (!first_) return std::nullopt;
    return first_->message;
  }

  origin at(std::uint32_t line) const {
    return {.from = origin::kind::file, .source = source_, .line = line, .subject = {}};
  }

 private:
  void load_sub_table(std::vector<node>& instances, const table_spec& spec, const std::string& path,
                      const toml::node& v, std::uint32_t line) {
    if (!spec.array) {
      if (const auto* t = v.as_table()) {
        instances.front().from = at(t->source().begin.line);
        load_table(instances.front(), *t);
      } else {
        fail(line, path, fmt::format("expected a table, got {}", detail::toml_noun(v)));
      }
      return;
    }
    const auto* a = v.as_array();
    // An empty array is zero tables; toml++ does not call it an array of tables.
    if (!a || (!a->empty() && !a->is_array_of_tables())) {
      fail(line, path, fmt::format("expected an array of tables, got {}", detail::toml_noun(v)));
      return;
    }
    for (const toml::node& element : *a) {
      const toml::table& t = *element.as_table();
      node instance = detail::make_node(spec, fmt::format("{}[{}]", path, instances.size()), at(t.source().begin.line));
      load_table(instance, t);
      instances.push_back(std::move(instance));
    }
  }

  void fail(std::uint32_t line, std::string_view key, std::string_view what) {
    fail_with({line, detail::located(at(line), key, what)});
  }

  void fail_with(located_error e) {
    if (!first_ || e.line < first_->line) first_ = std::move(e);
  }

  const table_spec& root_;
  std::shared_ptr<const std::string> source_;
  std::optional<located_error> first_;
};

}  // namespace

std::expected<settings, std::string> load_string(const schema& s, std::string_view toml_text,
                                                 std::string_view source_name) {
  auto source = std::make_shared<const std::string>(source_name);
  toml::table doc;
  try {
    doc = toml::parse(toml_text, std::string_view(*source));
  } catch (const toml::parse_error& e) {
    // toml++ quotes what it saw as it is in some messages ("saw 'f\n'").
    return std::unexpected(
        fmt::format("{}:{}: syntax error: {}", *source, e.source().begin.line, detail::one_line(e.description())));
  }
  loader l(s.root(), source);
  node root = detail::make_node(s.root(), "", l.at(0));
  l.load_table(root, doc);
  if (auto error = l.first_error(root)) return std::unexpected(std::move(*error));
  return detail::access::make(std::move(root));
}

std::expected<settings, std::string> load_file(const schema& s, const std::string& path) {
  std::FILE* f = std::fopen(path.c_str(), "rb");
  if (!f) return std::unexpected(fmt::format("{}: cannot open: {}", path, std::strerror(errno)));
  std::string text;
  char buffer[4096];
  std::size_t n = 0;
  while ((n = std::fread(buffer, 1, sizeof buffer, f)) > 0) text.append(buffer, n);
  const bool failed = std::ferror(f) != 0;
  const int read_errno = errno;
  std::fclose(f);
  if (failed) return std::unexpected(fmt::format("{}: cannot read: {}", path, std::strerror(read_errno)));
  return load_string(s, text, path);
}

}  // namespace affine::config
