#pragma once
// The loaded settings as a tree that mirrors the schema, and the names and
// messages every stage (file, --set, later checks) shares.

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "affine/config.hh"

namespace affine::config::detail {

// Where a value (or a table) came from.
struct origin {
  enum class kind : std::uint8_t { default_value, file, command_line };
  kind from = kind::default_value;
  std::shared_ptr<const std::string> source;  // the file name, or "--set ASSIGNMENT"
  std::uint32_t line = 0;                     // kind::file; 0: the whole file
  std::string subject;                        // kind::command_line: the key the assignment names

  std::string text() const;  // "affine.toml:3", "--set a.b=c", "(default)"
};

struct entry {
  value v;
  origin from;
};

struct node {
  const table_spec* spec = nullptr;
  std::string path;                        // "sched", "port[0].rxq[1]"; empty for the root
  origin from;                             // where the table was opened
  std::vector<std::optional<entry>> keys;  // parallel to spec->keys; empty: required, not given
  std::vector<std::vector<node>> tables;   // parallel to spec->tables; a plain table has one
};

// A table at its defaults; its plain sub-tables too, its arrays empty.
node make_node(const table_spec& spec, std::string path, origin from);

// "sched" + "steal" -> "sched.steal"; "" + "reactor" -> "reactor".
std::string child_path(std::string_view parent, std::string_view name);
// "[sched]", "[[port.rxq]]": the TOML header of the table at a dotted path.
std::string table_header(const table_spec& t, std::string_view dotted);

// The one-line error: "WHERE: KEY: WHAT", without KEY when an override names it.
std::string located(const origin& at, std::string_view key, std::string_view what);
// `text` with its control characters escaped as TOML escapes them ("\n"),
// so that a message quoting what a file holds stays one line.
std::string one_line(std::string_view text);

// A name TOML takes without quotes: letters, digits, '_' and '-'. Schema
// names must be bare, so every path can be written without quoting.
bool is_bare_key(std::string_view name);
std::optional<std::size_t> find_key(const table_spec& t, std::string_view name);
std::optional<std::size_t> find_table(const table_spec& t, std::string_view name);

// WHAT for a name `t` does not declare, with a near miss if there is one:
// `unknown key (did you mean "sched.rx_wakeup_sync"?)`, or the allowed names.
// `noun` is "key" or "section"; `table_path` is the instance's path.
std::string unknown_name(const table_spec& root, const table_spec& t, std::string_view table_path,
                         std::string_view name, std::string_view noun);

// A required key nobody gave, first in line order: {line, message}.
struct located_error {
  std::uint32_t line = 0;
  std::string message;
};
std::optional<located_error> first_missing_required(const node& n);

// A key's allowed values as "(allowed: ...)" shows them: 0..1000000, "off", "on".
std::string allowed_text(const key_spec& k);
// What is wrong with a value: WHAT, and for a string list the element it is
// about, which messages name as KEY[element] at that element's line.
struct value_error {
  std::string what;
  std::optional<std::size_t> element{};
};
// "port[0].ip", or with an element "port[0].ip[1]".
std::string element_key(std::string_view key, std::optional<std::size_t> element);
// A value problem (range, choice, core-list syntax, string format), or none.
std::optional<value_error> check_value(const key_spec& k, const value& v);
// The value as a TOML literal: 50, true, "sleep", ["a", "b"].
std::string toml_literal(const value& v);
// "a boolean", "an integer", ...: what a key of this type must be given.
std::string_view expected_noun(value_type t);

// A bug in a schema or in a caller (an undeclared key): says so and aborts.
[[noreturn]] void programming_error(const std::string& what);

// The one way in to the private parts of the public classes.
struct access {
  static settings make(node root) { return settings(std::make_shared<const node>(std::move(root))); }
  static const std::shared_ptr<const node>& root(const table_view& v) noexcept { return v.root_; }
};

}  // namespace affine::config::detail
