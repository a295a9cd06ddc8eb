// --set PATH=VALUE: the same checks as the file, reported with the
// assignment in place of FILE:LINE.

#include <fmt/format.h>

#include "base/config_toml.hh"
#include "base/config_tree.hh"

namespace affine::config {

namespace {

using detail::node;
using detail::origin;

struct path_step {
  std::string_view name;
  std::optional<std::size_t> index;  // port[0]
};

// UTF-8 (RFC 3629 3: no overlong forms, no surrogates, nothing past
// U+10FFFF), as TOML requires of a file: a value a file cannot hold would
// not print (print_config) to a file that loads.
bool is_utf8(std::string_view s) {
  constexpr std::uint32_t least[] = {0, 0x80, 0x800, 0x10000};  // by continuation bytes
  for (std::size_t i = 0; i < s.size();) {
    const auto lead = static_cast<unsigned char>(s[i]);
    std::size_t more = 0;
    std::uint32_t cp = 0;
    if (lead < 0x80) {
      ++i;
      continue;
    }
    if ((lead & 0xe0) == 0xc0) {
      more = 1;
      cp = lead & 0x1f;
    } else if ((lead & 0xf0) == 0xe0) {
      more = 2;
      cp = lead & 0x0f;
    } else if ((lead & 0xf8) == 0xf0) {
      more = 3;
      cp = lead & 0x07;
    } else {
      return false;
    }
    if (s.size() - i <= more) return false;
    for (std::size_t k = 1; k <= more; ++k) {
      const auto c = static_cast<unsigned char>(s[i + k]);
      if ((c & 0xc0) != 0x80) return false;
      cp = cp << 6 | (c & 0x3f);
    }
    if (cp < least[more] || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff)) return false;
    i += more + 1;
  }
  return true;
}

// "port[0].rxq[1].rps" -> {port,0} {rxq,1} {rps}; nullopt if malformed.
std::optional<std::vector<path_step>> parse_path(std::string_view path) {
  std::vector<path_step> steps;
  for (std::size_t pos = 0; pos <= path.size();) {
    const std::size_t dot = std::min(path.find('.', pos), path.size());
    std::string_view step = path.substr(pos, dot - pos);
    pos = dot + 1;
    path_step s;
    if (const std::size_t open = step.find('['); open != std::string_view::npos) {
      const std::string_view digits = step.substr(open + 1, step.size() - open - 2);
      if (step.back() != ']' || digits.empty() || digits.size() > 6 ||
          digits.find_first_not_of("0123456789") != std::string_view::npos) {
        return std::nullopt;
      }
      s.index = std::stoul(std::string(digits));
      step = step.substr(0, open);
    }
    if (!detail::is_bare_key(step)) return std::nullopt;
    s.name = step;
    steps.push_back(s);
  }
  return steps;
}

// The value text as TOML (4, true, "x", [..]); anything else is a bare string.
toml::table value_table(std::string_view text) {
  try {
    toml::table t = toml::parse(fmt::format("v = {}", text), std::string_view("--set"));
    if (t.size() == 1 && t.contains("v")) return t;
  } catch (const toml::parse_error&) {
    // Not a TOML value: `always`, `0-7`, `10.77.0.2/24` mean themselves.
  }
  toml::table t;
  t.insert("v", std::string(text));
  return t;
}

class override_one {
 public:
  override_one(const table_spec& root_spec, std::string_view assignment)
      : root_spec_(root_spec), assignment_(assignment) {
    at_.from = origin::kind::command_line;
    at_.source = std::make_shared<const std::string>(fmt::format("--set {}", assignment));
  }

  std::optional<std::string> apply(node& root) {
    const std::string_view assignment = assignment_;
    if (!is_utf8(assignment)) return fmt::format("{}: not UTF-8, which a TOML file must be", at_.text());
    const std::size_t eq = assignment.find('=');
    if (eq == std::string_view::npos) return fmt::format("{}: expected PATH=VALUE, like sched.steal=false", at_.text());
    const std::string_view path = assignment.substr(0, eq);
    at_.subject = std::string(path);
    const auto steps = parse_path(path);
    if (!steps) {
      return fmt::format("{}: \"{}\" is not a key path (allowed: like sched.steal or port[0].queues)", at_.text(),
                         detail::one_line(path));
    }

    node* n = &root;
    for (std::size_t i = 0; i + 1 < steps->size(); ++i) {
      auto next = enter((*steps)[i], *n);
      if (!next) return next.error();
      n = *next;
    }
    const path_step& last = steps->back();
    const std::string key = detail::child_path(n->path, last.name);
    const auto k = detail::find_key(*n->spec, last.name);
    if (!k) return detail::located(at_, key, detail::unknown_name(root_spec_, *n->spec, n->path, last.name, "key"));
    if (last.index) return detail::located(at_, key, "a key takes no index");

    const toml::table parsed = value_table(assignment.substr(eq + 1));
    auto v = detail::from_toml(n->spec->keys[*k], *parsed.get("v"));
    if (!v) return detail::located(at_, detail::element_key(key, v.error().element), v.error().what);
    n->keys[*k] = detail::entry{std::move(*v), at_};
    return std::nullopt;
  }

 private:
  // The table a step names inside `n`; the index one past the end adds it.
  std::expected<node*, std::string> enter(const path_step& step, node& n) {
    const std::string path = detail::child_path(n.path, step.name);
    const auto i = detail::find_table(*n.spec, step.name);
    if (!i) {
      const std::string_view noun = n.spec == &root_spec_ ? "section" : "table";
      return std::unexpected(
          detail::located(at_, path, detail::unknown_name(root_spec_, *n.spec, n.path, step.name, noun)));
    }
    const table_spec& spec = n.spec->tables[*i];
    std::vector<node>& instances = n.tables[*i];
    if (!spec.array) {
      if (step.index) return std::unexpected(detail::located(at_, path, "not an array of tables: it takes no index"));
      return &instances.front();
    }
    if (!step.index) {
      return std::unexpected(detail::located(at_, path, fmt::format("an array of tables: name one, like {}[0]", path)));
    }
    if (*step.index > instances.size()) {
      return std::unexpected(detail::located(
          at_, fmt::format("{}[{}]", path, *step.index),
          fmt::format("no such table (there are {}; {}[{}] adds one)", instances.size(), path, instances.size())));
    }
    if (*step.index == instances.size()) {
      instances.push_back(detail::make_node(spec, fmt::format("{}[{}]", path, instances.size()), at_));
    }
    return &instances[*step.index];
  }

  const table_spec& root_spec_;
  std::string_view assignment_;
  origin at_;
};

}  // namespace

std::expected<void, std::string> apply_sets(settings& s, std::span<const std::string> assignments) {
  const std::shared_ptr<const node>& current = detail::access::root(s);
  node root = *current;
  for (const std::string& assignment : assignments) {
    if (auto error = override_one(*root.spec, assignment).apply(root)) return std::unexpected(std::move(*error));
  }
  // A table an assignment added (or, without a file, the top level) may lack
  // a required key; the message names where the table came from.
  if (auto missing = detail::first_missing_required(root)) return std::unexpected(std::move(missing->message));
  s = detail::access::make(std::move(root));
  return {};
}

std::expected<void, std::string> settings::set(std::string_view assignment) {
  const std::string one(assignment);
  return apply_sets(*this, std::span(&one, 1));
}

}  // namespace affine::config
