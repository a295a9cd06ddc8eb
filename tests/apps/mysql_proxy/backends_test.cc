// The backend set: least connections per weight among healthy backends of
// the role, limits held, leases counted, and the down epoch that ends the
// sessions of a backend marked down.

#include <gtest/gtest.h>

#include <array>
#include <optional>

#include "apps/mysql-proxy/backends.hh"

namespace affine_mysql {
namespace {

backend_config at_port(std::uint16_t port, unsigned weight = 1, unsigned max = 0,
                       backend_role role = backend_role::primary) {
  return {.address = {affine::net::loopback, port}, .role = role, .weight = weight, .max_connections = max};
}

// Takes `n` leases and returns how many each backend got.
std::vector<unsigned> spread(backend_set& set, unsigned n, std::vector<backend_lease>& held) {
  std::vector<unsigned> got(set.size(), 0);
  for (unsigned i = 0; i < n; ++i) {
    auto l = set.acquire(backend_role::primary);
    EXPECT_TRUE(l);
    if (!l) break;
    ++got[l->index()];
    held.push_back(std::move(*l));
  }
  return got;
}

TEST(mysql_backends, LeastConnectionsSpreadsSessionsEvenly) {
  const std::array configs{at_port(1), at_port(2), at_port(3)};
  backend_set set(configs);
  std::vector<backend_lease> held;
  EXPECT_EQ(spread(set, 7, held), (std::vector<unsigned>{3, 2, 2}));
  EXPECT_EQ(set.at(0).active(), 3u);
  EXPECT_EQ(set.at(0).sessions(), 3u);
}

TEST(mysql_backends, WeightsShareSessionsInProportion) {
  const std::array configs{at_port(1, 1), at_port(2, 3)};
  backend_set set(configs);
  std::vector<backend_lease> held;
  EXPECT_EQ(spread(set, 8, held), (std::vector<unsigned>{2, 6}));
}

TEST(mysql_backends, LeastConnectionsFollowsSessionsThatEnd) {
  const std::array configs{at_port(1), at_port(2)};
  backend_set set(configs);
  std::vector<backend_lease> held;
  spread(set, 4, held);  // backends 0, 1, 0, 1
  held.erase(held.begin() + 2);
  held.erase(held.begin());  // backend 0's sessions end
  EXPECT_EQ(set.at(0).active(), 0u);
  auto l = set.acquire(backend_role::primary);
  ASSERT_TRUE(l);
  EXPECT_EQ(l->index(), 0u);
  auto m = set.acquire(backend_role::primary);
  ASSERT_TRUE(m);
  EXPECT_EQ(m->index(), 0u);  // still 1 against 2
}

TEST(mysql_backends, UnhealthyBackendsAreSkipped) {
  const std::array configs{at_port(1), at_port(2)};
  backend_set set(configs);
  EXPECT_TRUE(set.mark(0, false));
  std::vector<backend_lease> held;
  EXPECT_EQ(spread(set, 3, held), (std::vector<unsigned>{0, 3}));
  EXPECT_TRUE(set.mark(1, false));
  EXPECT_EQ(set.acquire(backend_role::primary).error(), backend_set::refusal::none_healthy);
}

TEST(mysql_backends, ConnectionLimitIsHeld) {
  const std::array configs{at_port(1, 1, 2)};
  backend_set set(configs);
  std::vector<backend_lease> held;
  spread(set, 2, held);
  EXPECT_EQ(set.acquire(backend_role::primary).error(), backend_set::refusal::all_full);
  held.pop_back();
  EXPECT_EQ(set.at(0).active(), 1u);
  EXPECT_TRUE(set.acquire(backend_role::primary));
}

TEST(mysql_backends, FullBackendLeavesTheRestToOthers) {
  const std::array configs{at_port(1, 10, 1), at_port(2, 1)};
  backend_set set(configs);
  std::vector<backend_lease> held;
  EXPECT_EQ(spread(set, 4, held), (std::vector<unsigned>{1, 3}));
}

TEST(mysql_backends, ExcludedAndOtherRolesAreNotChosen) {
  const std::array configs{at_port(1), at_port(2, 1, 0, backend_role::replica), at_port(3)};
  backend_set set(configs);
  const std::array<std::size_t, 1> tried{0};
  auto l = set.acquire(backend_role::primary, tried);
  ASSERT_TRUE(l);
  EXPECT_EQ(l->index(), 2u);
  const std::array<std::size_t, 2> both{0, 2};
  EXPECT_EQ(set.acquire(backend_role::primary, both).error(), backend_set::refusal::none_healthy);
  auto r = set.acquire(backend_role::replica);
  ASSERT_TRUE(r);
  EXPECT_EQ(r->index(), 1u);
}

TEST(mysql_backends, MarkingDownIsSeenByLeasesTakenBefore) {
  const std::array configs{at_port(1)};
  backend_set set(configs);
  auto l = set.acquire(backend_role::primary);
  ASSERT_TRUE(l);
  EXPECT_FALSE(l->went_down());
  EXPECT_FALSE(set.mark(0, true));  // already up: no change
  EXPECT_TRUE(set.mark(0, false));
  EXPECT_FALSE(set.mark(0, false));
  EXPECT_TRUE(l->went_down());
  EXPECT_TRUE(set.mark(0, true));
  EXPECT_TRUE(l->went_down());  // a later recovery does not revive it
  auto fresh = set.acquire(backend_role::primary);
  ASSERT_TRUE(fresh);
  EXPECT_FALSE(fresh->went_down());
}

TEST(mysql_backends, LeasesReleaseTheirConnection) {
  const std::array configs{at_port(1)};
  backend_set set(configs);
  {
    auto a = set.acquire(backend_role::primary);
    std::optional<backend_lease> b(std::move(*set.acquire(backend_role::primary)));
    EXPECT_EQ(set.at(0).active(), 2u);
    b.reset();
    EXPECT_EQ(set.at(0).active(), 1u);
  }
  EXPECT_EQ(set.at(0).active(), 0u);
  EXPECT_EQ(set.at(0).sessions(), 2u);
}

TEST(mysql_backends, FormatsOneLine) {
  const std::array configs{at_port(3306)};
  backend_set set(configs);
  set.at(0).count_connect_failure();
  set.mark(0, false);
  EXPECT_EQ(format_backend(set.at(0)), "127.0.0.1:3306 primary down active=0 sessions=0 connect_failures=1");
}

}  // namespace
}  // namespace affine_mysql
