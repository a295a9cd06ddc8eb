#pragma once
// For tests linked with netns_main.cc, which run inside a network namespace
// of their own.

#include <string>

namespace affine::drivers::dpdk::test {

// Why the tests could not get a namespace (they skip with this); empty when
// they run in one.
std::string namespace_skip_reason();

// True in the namespace netns_main.cc made (checked against the root
// namespace itself, so traffic can never reach the host's interfaces).
bool inside_own_namespace();

}  // namespace affine::drivers::dpdk::test
