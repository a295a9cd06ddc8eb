// IPv6 on the stack against the Linux kernel over net_tap (issue 21),
// inside the network namespace netns_main.cc creates: the link carries
// IPv6 only on the kernel's side (fd77::1/64, no IPv4 address), affine
// holds fd77::2/64 and a link-local address. Neighbor Discovery both ways,
// ping -6 to either address, and DAD finding an address the kernel holds.

#include <gtest/gtest.h>

#include <chrono>
#include <cstdlib>
#include <string>
#include <thread>

#include <fmt/format.h>

#include "affine/address.hh"
#include "affine/runtime.hh"
#include "stack/stack.hh"
#include "tests/stack/wire_peer.hh"

namespace affine::stack {
namespace {

using namespace std::chrono_literals;

constexpr const char* tap_iface = "affv6";

ipv6_bytes v6(std::string_view text) { return net::ipv6_address::parse(text).value().bytes; }

class ipv6_tap : public testing::tap_peer {
 protected:
  // nodad: the kernel's address is usable at once (its own DAD would take
  // a second and is not what is tested).
  ipv6_tap() : tap_peer({.device = "net_tap0", .iface = tap_iface, .kernel_address = "fd77::1/64 nodad", .max_cores = 1}) {}

  // The tap's two ends share a MAC, so a modified EUI-64 would give both
  // the same link-local address (and each side's DAD would find the
  // other's): the stable identifier of RFC 7217 differs.
  static stack_config config(std::string_view address) {
    stack_config sc;
    sc.address = 0x0a4e0002;  // 10.78.0.2: the stack still needs one; the kernel has no IPv4 on the link
    sc.prefix_length = 24;
    sc.ipv6 = {{v6(address), 64}};
    sc.link_local = stack_config::link_local_mode::stable;
    sc.stable_secret = {0x61, 0x66, 0x66, 0x69, 0x6e, 0x65};
    return sc;
  }

  // Until DAD has ended for every address (RFC 4862 5.4: a second after
  // its one probe), or `limit`.
  static bool dad_done(stack& st, std::chrono::milliseconds limit = 5s) {
    const auto until = std::chrono::steady_clock::now() + limit;
    for (;;) {
      bool tentative = false;
      for (const auto& a : st.ipv6_addresses()) tentative |= a.state == ipv6_address_state::tentative;
      if (!tentative) return true;
      if (std::chrono::steady_clock::now() > until) return false;
      this_fiber::sleep_for(20ms);
    }
  }
};

TEST_F(ipv6_tap, KernelPingsTheGlobalAndTheLinkLocalAddress) {
  with_stack(config("fd77::2"), [&](stack& st) {
    ASSERT_TRUE(dad_done(st));
    const auto addresses = st.ipv6_addresses();
    ASSERT_EQ(addresses.size(), 2u);
    for (const auto& a : addresses) EXPECT_EQ(a.state, ipv6_address_state::preferred);
    const std::string link_local = net::ipv6_address{addresses[0].address.address}.to_string();
    testing::kernel_side kernel([&] {
      int rc = std::system("ping -6 -c 3 -i 0.2 -W 2 -q fd77::2 >/dev/null");
      EXPECT_EQ(rc, 0) << "ping -6 fd77::2 failed";
      // From the kernel's link-local address, once its own DAD is done.
      const std::string settled =
          fmt::format("for i in $(seq 50); do ip -6 addr show dev {} scope link tentative | grep -q inet6 || exit 0; "
                      "sleep 0.1; done; exit 1",
                      tap_iface);
      ASSERT_EQ(std::system(settled.c_str()), 0) << "the kernel's link-local address stayed tentative";
      const std::string ll = fmt::format("ping -6 -c 3 -i 0.2 -W 2 -q {}%{} >/dev/null", link_local, tap_iface);
      rc = std::system(ll.c_str());
      EXPECT_EQ(rc, 0) << ll << " failed";
      // The kernel learned our link-layer address by Neighbor Discovery.
      rc = std::system(fmt::format("ip -6 neigh show fd77::2 dev {} | grep -q lladdr", tap_iface).c_str());
      EXPECT_EQ(rc, 0) << "the kernel has no neighbor entry for fd77::2";
    });
    kernel.join();
    EXPECT_GE(st.counters(0).icmp_echo_replies.load(), 6u);
    EXPECT_EQ(st.ipv6_counts().dad_duplicates, 0u);
  });
}

TEST_F(ipv6_tap, DadFindsAnAddressTheKernelHolds) {
  ASSERT_EQ(std::system(fmt::format("ip -6 addr add fd77::3/64 dev {} nodad", tap_iface).c_str()), 0);
  with_stack(config("fd77::3"), [&](stack& st) {
    ASSERT_TRUE(dad_done(st));
    const auto addresses = st.ipv6_addresses();
    ASSERT_EQ(addresses.size(), 2u);
    EXPECT_EQ(addresses[0].state, ipv6_address_state::preferred);  // the link-local one is ours alone
    EXPECT_EQ(addresses[1].state, ipv6_address_state::duplicate);
    EXPECT_EQ(st.ipv6_counts().dad_duplicates, 1u);
    EXPECT_EQ(st.counters(0).ipv6_duplicates.load(), 1u);
  });
}

}  // namespace
}  // namespace affine::stack
