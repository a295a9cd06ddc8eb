// Looking names up in a schema, and the near miss for a name that is not
// there: most unknown keys are typos or keys put in the wrong section.

#include <algorithm>

#include <fmt/format.h>

#include "base/config_tree.hh"

namespace affine::config::detail {

namespace {

// Optimal string alignment distance: Levenshtein plus adjacent swaps, the
// commonest typo ("wake_affnie").
std::size_t edit_distance(std::string_view a, std::string_view b) {
  std::vector<std::vector<std::size_t>> d(a.size() + 1, std::vector<std::size_t>(b.size() + 1));
  for (std::size_t i = 0; i <= a.size(); ++i) d[i][0] = i;
  for (std::size_t j = 0; j <= b.size(); ++j) d[0][j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    for (std::size_t j = 1; j <= b.size(); ++j) {
      const std::size_t cost = a[i - 1] == b[j - 1] ? 0 : 1;
      d[i][j] = std::min({d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + cost});
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1])
        d[i][j] = std::min(d[i][j], d[i - 2][j - 2] + 1);
    }
  }
  return d[a.size()][b.size()];
}

// Close enough to suggest: at most two edits, and not most of a short name.
bool near(std::size_t distance, std::string_view name) { return distance <= 2 && 2 * distance <= name.size(); }

struct suggestion {
  std::size_t distance = 0;
  std::string path;
};

void consider(std::optional<suggestion>& best, std::string_view name, std::string_view candidate, std::string path) {
  const std::size_t d = edit_distance(name, candidate);
  if (near(d, name) && (!best || d < best->distance)) best = suggestion{d, std::move(path)};
}

// The names declared directly in `t`, each with its path under `path`.
void consider_table(std::optional<suggestion>& best, std::string_view name, const table_spec& t,
                    std::string_view path) {
  for (const key_spec& k : t.keys) consider(best, name, k.name, child_path(path, k.name));
  for (const table_spec& sub : t.tables) consider(best, name, sub.name, child_path(path, sub.name));
}

// Every name in the schema but those of `skip`, with generic paths
// ("port[].queues"), as candidates for a name put in the wrong table.
void consider_all(std::optional<suggestion>& best, std::string_view name, const table_spec& t, std::string_view path,
                  const table_spec& skip) {
  if (&t != &skip) consider_table(best, name, t, path);
  for (const table_spec& sub : t.tables) {
    const std::string sub_path = child_path(path, sub.name) + (sub.array ? "[]" : "");
    consider_all(best, name, sub, sub_path, skip);
  }
}

}  // namespace

bool is_bare_key(std::string_view name) {
  return !name.empty() && std::ranges::all_of(name, [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '-';
  });
}

std::optional<std::size_t> find_key(const table_spec& t, std::string_view name) {
  const auto it = std::ranges::find(t.keys, name, &key_spec::name);
  if (it == t.keys.end()) return std::nullopt;
  return static_cast<std::size_t>(it - t.keys.begin());
}

std::optional<std::size_t> find_table(const table_spec& t, std::string_view name) {
  const auto it = std::ranges::find(t.tables, name, &table_spec::name);
  if (it == t.tables.end()) return std::nullopt;
  return static_cast<std::size_t>(it - t.tables.begin());
}

std::string unknown_name(const table_spec& root, const table_spec& t, std::string_view table_path,
                         std::string_view name, std::string_view noun) {
  // This table's names first: a typo is likelier than a misplaced key.
  std::optional<suggestion> best;
  consider_table(best, name, t, table_path);
  if (!best) consider_all(best, name, root, "", t);
  if (best) return fmt::format("unknown {} (did you mean \"{}\"?)", noun, best->path);

  std::vector<std::string> names;
  for (const key_spec& k : t.keys) names.push_back(fmt::format("\"{}\"", k.name));
  for (const table_spec& sub : t.tables) names.push_back(fmt::format("\"{}\"", sub.name));
  if (names.empty()) return fmt::format("unknown {}", noun);
  return fmt::format("unknown {} (allowed: {})", noun, fmt::join(names, ", "));
}

}  // namespace affine::config::detail
