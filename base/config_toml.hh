#pragma once
// toml++ nodes to checked values. Only base/*.cc include this: toml++ is a
// heavy header, kept out of everything that merely reads settings.

#include <expected>
#include <string>
#include <string_view>

#include <toml++/toml.h>

#include "affine/config.hh"
#include "base/config_tree.hh"

namespace affine::config::detail {

// "a string", "an integer", "a table", ...: what the file gave.
std::string_view toml_noun(const toml::node& n);

// The value for key `k`, of the right type and within its rules; otherwise
// WHAT: `expected an integer, got a string`, `5000 is out of range (...)`,
// with the index of a string list's element it is about.
std::expected<value, value_error> from_toml(const key_spec& k, const toml::node& n);

}  // namespace affine::config::detail
