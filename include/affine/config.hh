#pragma once
// Configuration: one TOML file plus `--set section.key=value` overrides,
// checked against a schema that is declared once, as data. That declaration
// drives parsing, validation, the overrides, --print-config, the commented
// default file (config/affine.toml) and the key reference in
// docs/configuration.md. affine's own schema is affine::config_schema(); other
// programs (the simulator's scenarios) declare their own and use the same
// machinery.
//
// Every error is one line, WHERE: KEY: WHAT, with the allowed values where
// there is a list or a range:
//
//   affine.toml:3: sched.wake_affine: "sometimes" is not allowed (allowed: "off", "task-only", "always")
//   affine.toml:5: sched.rx_wakup_sync: unknown key (did you mean "sched.rx_wakeup_sync"?)
//   --set reactor.spin_us=-1: -1 is out of range (allowed: 0..1000000)
//
// WHERE is FILE:LINE for a value from a file and "--set ASSIGNMENT" for an
// override, where KEY is left out when the assignment itself names it. Keys
// inside arrays of tables are named like port[0].rxq[1].rps, and an element
// of a string list by its index, at its own line:
//
//   affine.toml:4: port[0].ip[1]: "fd77::2" is not an IPv4 or IPv6 address with prefix length (allowed: ...)

#include <cstdint>
#include <expected>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

namespace affine::config {

// ---- values -----------------------------------------------------------------

// Which cores: "auto", a list ("0-7", "0,2,4-6"), or a count. Only the syntax
// is checked here; the topology checks the cores exist (numa's
// parse_core_list), reporting through settings::error().
struct core_list {
  enum class kind : std::uint8_t { automatic, list, count };
  kind what = kind::automatic;
  std::string list{};      // kind::list: as written
  std::int64_t count = 0;  // kind::count
  friend bool operator==(const core_list&, const core_list&) = default;
};

// Highest core number a list may name, plus one; also the largest count.
inline constexpr std::int64_t max_cores = 8192;

// bool: boolean; int64_t: integer; string: string and enumeration;
// vector<string>: string_array and string_list; core_list: core_list and
// count (which allows only "auto" and a count).
using value = std::variant<bool, std::int64_t, std::string, std::vector<std::string>, core_list>;

// ---- the schema ---------------------------------------------------------------

enum class value_type : std::uint8_t {
  boolean,
  integer,
  string,
  enumeration,
  string_array,
  string_list,
  core_list,
  count,
};

struct int_range {
  std::int64_t min = 0;
  std::int64_t max = 0;
};

// A rule for a string key beyond its type, e.g. "an IPv4 address".
struct string_format {
  bool (*valid)(std::string_view text) = nullptr;
  std::string_view noun;     // what a valid value is: "an IPv4 address with prefix length"
  std::string_view allowed;  // shown as (allowed: ...): "like \"10.77.0.2/24\", or \"\""
};

struct key_spec {
  std::string_view name;
  value_type type = value_type::string;
  std::optional<value> default_value;       // none: the key is required
  int_range range{};                        // integer; the count of a core_list or count
  std::vector<std::string_view> choices{};  // enumeration
  const string_format* format = nullptr;    // string, each string_list element; the schema owns it (a static)
  std::string_view help;                    // one line
};

// Pass as the default of a key that has none: the file must give it.
inline constexpr std::nullopt_t required = std::nullopt;

key_spec boolean(std::string_view name, std::optional<bool> def, std::string_view help);
key_spec integer(std::string_view name, int_range range, std::optional<std::int64_t> def, std::string_view help);
key_spec string(std::string_view name, std::optional<std::string_view> def, std::string_view help,
                const string_format* format = nullptr);
key_spec enumeration(std::string_view name, std::vector<std::string_view> choices, std::optional<std::string_view> def,
                     std::string_view help);
key_spec string_array(std::string_view name, std::vector<std::string> def, std::string_view help);
// One string or an array of strings, each checked by `format`: `ip =
// "10.77.0.2/24"` is the list of one, `ip = ["10.77.0.2/24", "fd77::2/64"]`
// a list of two. get_strings() reads either. A bad element is named by its
// index (port[0].ip[1]); a single string by the key alone.
key_spec string_list(std::string_view name, std::vector<std::string> def, std::string_view help,
                     const string_format* format);
key_spec cores(std::string_view name, core_list def, std::string_view help);
// "auto" (the program works the number out; the default) or a number in
// `range`: port.queues = "auto" is one RX queue per reactor.
key_spec count(std::string_view name, int_range range, std::string_view help);

// A [name] table, or with `array` an array of [[name]] tables (any number,
// none by default), with its keys and nested tables.
struct table_spec {
  std::string_view name;
  bool array = false;
  std::string_view help;
  std::vector<key_spec> keys;
  std::vector<table_spec> tables;
};

table_spec section(std::string_view name, std::string_view help, std::vector<key_spec> keys,
                   std::vector<table_spec> tables = {});
table_spec array_of_tables(std::string_view name, std::string_view help, std::vector<key_spec> keys,
                           std::vector<table_spec> tables = {});

class schema {
 public:
  // Checks the declaration itself: names unique, defaults within their own
  // rules. A bad schema is a programming error and aborts with the reason.
  schema(std::string_view title, std::vector<key_spec> keys, std::vector<table_spec> tables);
  // Settings point into their schema's declaration: it stays where it is.
  schema(const schema&) = delete;
  schema& operator=(const schema&) = delete;

  std::string_view title() const noexcept { return title_; }  // "affine": heads generated files
  const table_spec& root() const noexcept { return root_; }   // the top-level keys and tables

 private:
  std::string_view title_;
  table_spec root_;
};

// ---- loaded settings ------------------------------------------------------------

namespace detail {
struct node;
struct access;
}  // namespace detail

// One table of loaded settings: the whole file, or one [[port]]. Keys are
// names in this table, or dotted through plain tables ("sched.steal").
// Asking for a key the schema does not declare, or with the wrong getter, is
// a programming error: it aborts with the key's name.
class table_view {
 public:
  bool get_bool(std::string_view key) const;
  std::int64_t get_int(std::string_view key) const;
  const std::string& get_string(std::string_view key) const;  // string and enumeration keys
  const std::vector<std::string>& get_strings(std::string_view key) const;
  const core_list& get_cores(std::string_view key) const;
  std::optional<std::int64_t> get_count(std::string_view key) const;  // count keys; none: "auto"

  // The tables of an array of tables ("port", or "rxq" in a port), in file order.
  std::vector<table_view> tables(std::string_view name) const;

  // Where the key's value came from: "affine.toml:3", "--set reactor.spin_us=0",
  // or "(default)".
  std::string where(std::string_view key) const;
  // A later check's error about the key, in the loader's shape:
  // error("reactor.cores", "core 9 does not exist") ->
  // "affine.toml:2: reactor.cores: core 9 does not exist".
  std::string error(std::string_view key, std::string_view what) const;

  // This table's name in messages: "port[0]"; empty for the whole file.
  const std::string& path() const noexcept;

 protected:
  table_view(std::shared_ptr<const detail::node> root, const detail::node* table) noexcept;

  std::shared_ptr<const detail::node> root_;  // keeps the tree alive for views and references
  const detail::node* table_;

  friend struct detail::access;
};

// The whole configuration. Cheap to copy (the tree is shared and immutable;
// set() makes a new one). It refers to its schema, which must outlive it.
class settings : public table_view {
 public:
  // Applies one override, "sched.wake_affine=always"; see apply_sets().
  std::expected<void, std::string> set(std::string_view assignment);

 private:
  explicit settings(std::shared_ptr<const detail::node> root) noexcept;
  friend struct detail::access;
};

// Every key at its default; arrays of tables empty. The schema must not have
// required keys outside arrays of tables.
settings defaults(const schema& s);

// A missing or unreadable file: "PATH: cannot open: <strerror>".
std::expected<settings, std::string> load_file(const schema& s, const std::string& path);
// `source_name` stands for the file in messages.
std::expected<settings, std::string> load_string(const schema& s, std::string_view toml_text,
                                                 std::string_view source_name);

// Overrides, in order. Each is "path=value": the value is read as a TOML value
// (4, true, "x", ["a", "b"]) and anything that is not one is taken as a bare
// string (always, 0-7, 10.77.0.2/24). A string list takes a bare string as
// the list of one (port[0].ip=10.77.0.2/24) and several as a TOML array
// (port[0].ip=["10.77.0.2/24","fd77::2/64"]); a comma in a bare string is
// part of it, never a separator, and one element cannot be set alone. Paths
// reach into arrays of tables with an index (port[0].queues=4); the index
// one past the end adds a table. On error `s` is unchanged.
std::expected<void, std::string> apply_sets(settings& s, std::span<const std::string> assignments);

// ---- the command line ---------------------------------------------------------------

struct command_line {
  settings config;
  bool print_config = false;      // --print-config: print_config(config) and exit
  std::vector<std::string> args;  // what is left for the program, in order
};

// Understands --config FILE, --set PATH=VALUE (repeatable, applied in order
// after the file) and --print-config, also in the --opt=value form; stops at
// "--", which it leaves in `args` with all that follows.
std::expected<command_line, std::string> load_command_line(const schema& s, std::span<const std::string> args);
// The same for main's arguments; argv[0] is skipped.
std::expected<command_line, std::string> load_command_line(const schema& s, int argc, const char* const* argv);

// ---- printing and documents ----------------------------------------------------------

// The effective configuration as TOML: every key, defaults included; a value
// that is not a default says where it came from in a comment. Loads back to
// the same settings.
std::string print_config(const settings& s);

// The fully commented default file: every key with its help, allowed values
// and default; arrays of tables as a commented-out example. config/affine.toml
// is this for config_schema() (a test keeps them equal).
std::string emit_default(const schema& s);

// The key reference in Markdown: a table per section.
std::string key_reference(const schema& s);

// `doc` with the text between the reference markers replaced by
// key_reference(s); an error if the markers are missing. A document that is
// up to date comes back unchanged.
inline constexpr std::string_view reference_begin = "<!-- key reference: generated by affine-config --emit-doc -->";
inline constexpr std::string_view reference_end = "<!-- end of key reference -->";
std::expected<std::string, std::string> splice_key_reference(const schema& s, std::string_view doc);

}  // namespace affine::config

namespace affine {

// affine's schema: [reactor], [sched], [busy_poll], [log], [stats], [[port]]
// with [[port.rxq]].
const config::schema& config_schema();
// Its tables, for a program whose file adds tables of its own:
//   static const config::schema s("affine-mysql-proxy", {}, [] {
//     auto t = affine::config_tables(); t.push_back(proxy_table()); return t; }());
std::vector<config::table_spec> config_tables();

}  // namespace affine
