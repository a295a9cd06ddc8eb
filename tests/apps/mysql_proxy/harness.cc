#include "tests/apps/mysql_proxy/harness.hh"

#include <gtest/gtest.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include <array>
#include <chrono>
#include <vector>

#include "affine/affine.hh"
#include "apps/mysql-proxy/handshake.hh"
#include "tests/apps/mysql_proxy/bytes.hh"

namespace affine_mysql_test {

using namespace affine;
using namespace affine_mysql;

namespace {

constexpr std::uint64_t accept_step_ns = 20'000'000;

}  // namespace

void in_runtime(std::function<void()> body) {
  const char* argv[] = {"mysql_proxy_session_test", "--set", "reactor.cores=2"};
  const int code = affine::run(3, argv, [&](std::span<const std::string>) {
    body();
    return 0;
  });
  ASSERT_EQ(code, 0);
}

void peer::send(std::uint8_t seq, std::span<const std::byte> payload) {
  ASSERT_TRUE(s_);
  auto w = s_->write(framed(seq, payload), now_ns() + peer_timeout_ns);
  EXPECT_TRUE(w) << w.error().message();
}

std::optional<packet> peer::receive(std::uint64_t timeout_ns) {
  if (!s_) return std::nullopt;
  const std::uint64_t deadline = now_ns() + timeout_ns;
  packet p;
  std::array<std::byte, 4> header;
  std::size_t length = 0;
  // Frames of 0xffffff bytes continue the packet.
  do {
    if (!s_->read_exactly(header, deadline)) return std::nullopt;
    length = std::size_t(header[0]) | std::size_t(header[1]) << 8 | std::size_t(header[2]) << 16;
    if (p.payload.empty()) p.seq = std::uint8_t(header[3]);
    const std::size_t at = p.payload.size();
    p.payload.resize(at + length);
    if (length > 0 && !s_->read_exactly(std::span(p.payload).subspan(at), deadline)) return std::nullopt;
  } while (length == max_frame_payload);
  return p;
}

bool peer::closed_within(std::uint64_t timeout_ns) {
  const std::uint64_t deadline = now_ns() + timeout_ns;
  std::array<std::byte, 4096> sink;
  for (;;) {
    if (!s_) return false;
    auto n = s_->read(sink, deadline);
    if (!n) return n.error() != std::errc::timed_out;  // a reset is a close too
    if (*n == 0) return true;
  }
}

fake_backend::fake_backend() {
  auto l = net::listen({.local = {net::loopback, 0}});
  EXPECT_TRUE(l) << l.error().message();
  if (l) listener_.emplace(std::move(*l));
}

peer fake_backend::accept() {
  auto s = listener_->accept(now_ns() + peer_timeout_ns);
  EXPECT_TRUE(s) << s.error().message();
  return peer(s ? std::optional(std::move(*s)) : std::nullopt);
}

// A kernel socket bound to a loopback port that never listens: a connect
// to it is refused, and the port stays taken for the life of the test
// process. (A listener closed at once freed the port for the next bind;
// the proxy's own listener once took it, and the "refused" backend then
// answered: NextHealthyBackendServesWhenTheFirstRefuses failed.)
net::endpoint refusing_address() {
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof a;
  if (fd < 0 || ::bind(fd, reinterpret_cast<const sockaddr*>(&a), sizeof a) != 0 ||
      ::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len) != 0) {
    ADD_FAILURE() << "no loopback port to refuse connections on";
    return {};
  }
  static std::vector<int> held;  // never closed: the port must not come back
  held.push_back(fd);
  return {net::loopback, ntohs(a.sin_port)};
}

session_options proxy_under_test::test_options() {
  session_options o;
  o.connect_timeout_ns = 1'000'000'000;
  o.handshake_timeout_ns = 3'000'000'000;
  o.exchange_timeout_ns = 3'000'000'000;
  o.check_interval_ns = 20'000'000;
  return o;
}

proxy_under_test::proxy_under_test(std::vector<backend_config> configs, session_options o)
    : backends(configs), ctx_{backends, stats, o, [this] { return stopping_.load(); }} {
  auto l = net::listen({.local = {net::loopback, 0}});
  EXPECT_TRUE(l);
  if (l) listener_.emplace(std::move(*l));
  acceptor_ = spawn([this] {
    while (!closing_.load()) {
      auto s = listener_->accept(now_ns() + accept_step_ns);
      if (!s) continue;
      live_.fetch_add(1);
      spawn([this, c = std::move(*s)]() mutable {
        ends_.send(run_session(std::move(c), ctx_));
        live_.fetch_sub(1);
      }).value().detach();
    }
  }).value();
}

proxy_under_test::~proxy_under_test() {
  closing_.store(true);
  acceptor_.join();
  while (live_.load() > 0) this_fiber::sleep_for(std::chrono::milliseconds(5));
  listener_->close();
}

peer proxy_under_test::connect() {
  auto s = net::connect(listener_->local(), now_ns() + peer_timeout_ns);
  EXPECT_TRUE(s) << s.error().message();
  return peer(s ? std::optional(std::move(*s)) : std::nullopt);
}

close_reason proxy_under_test::next_end() {
  auto r = ends_.recv(now_ns() + peer_timeout_ns);
  EXPECT_TRUE(r) << "no session ended";
  return r.value_or(close_reason::count_);
}

namespace {

using rewrite_fn = std::expected<std::vector<std::byte>, handshake_error> (*)(std::span<const std::byte>);

// Sends `mine`'s packets of `session` from `me` and checks that the other
// side's arrive as captured, packet `rewritten` as `rewrite` makes it.
void play(peer& me, std::span<const captured_packet> session, char mine, std::size_t rewritten, rewrite_fn rewrite) {
  for (std::size_t i = 0; i < session.size(); ++i) {
    const auto payload = from_hex(session[i].hex);
    if (session[i].from == mine) {
      me.send(session[i].seq, payload);
      continue;
    }
    auto got = me.receive();
    EXPECT_TRUE(got) << mine << " side, packet " << i;
    if (!got) return;
    EXPECT_EQ(got->seq, session[i].seq) << "packet " << i;
    EXPECT_EQ(got->payload, i == rewritten ? *rewrite(payload) : payload) << "packet " << i;
  }
}

}  // namespace

std::unique_ptr<stats_snapshot> replay_through_proxy(std::span<const captured_packet> session) {
  fake_backend backend;
  proxy_under_test proxy({{.address = backend.address()}});
  auto server_side = spawn([&] {
    peer server = backend.accept();
    play(server, session, 'S', 1, rewrite_handshake_response);
    EXPECT_TRUE(server.closed_within(peer_timeout_ns));
  }).value();
  peer client = proxy.connect();
  play(client, session, 'C', 0, rewrite_greeting);
  client.close();
  server_side.join();
  const bool quit = session.back().from == 'C' && session.back().hex == "01";
  EXPECT_EQ(proxy.next_end(), quit ? close_reason::client_quit : close_reason::client_closed);
  return proxy.stats.snapshot();
}

void log_in(peer& client, peer& server) {
  const auto greeting = from_hex(mariadb_session[0].hex);
  server.send(0, greeting);
  auto g = client.receive();
  ASSERT_TRUE(g);
  client.send(1, from_hex(mariadb_session[1].hex));
  ASSERT_TRUE(server.receive());
  server.send(2, from_hex(mariadb_session[2].hex));
  auto ok = client.receive();
  ASSERT_TRUE(ok);
  ASSERT_EQ(ok->seq, 2);
}

logged_in::logged_in(session_options o)
    : proxy({{.address = backend.address()}}, o), client(proxy.connect()), server(backend.accept()) {
  log_in(client, server);
}

}  // namespace affine_mysql_test
