#include "apps/mysql-proxy/session.hh"

#include <algorithm>
#include <array>
#include <cctype>
#include <optional>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "affine/fiber.hh"
#include "apps/mysql-proxy/command.hh"
#include "apps/mysql-proxy/generic.hh"
#include "apps/mysql-proxy/handshake.hh"
#include "apps/mysql-proxy/packet_io.hh"

namespace affine_mysql {

namespace {

using affine::no_deadline;
using affine::now_ns;

// The error codes the proxy answers with (mysqld_error.h). Never a client
// library's own codes (errmsg.h, 2000-2999): libmariadb reports such a code
// from the server as "2027 Received malformed packet" instead of the message.
constexpr std::uint16_t er_con_count_error = 1040;
constexpr std::uint16_t er_handshake_error = 1043;
constexpr std::uint16_t er_unknown_com_error = 1047;
constexpr std::uint16_t er_server_shutdown = 1053;
constexpr std::uint16_t er_net_packet_too_large = 1153;
constexpr std::uint16_t er_net_read_error = 1158;                  // the backend connection broke
constexpr std::uint16_t er_net_read_interrupted = 1159;            // the backend took too long
constexpr std::uint16_t er_connect_to_foreign_data_source = 1429;  // no backend to connect to
constexpr std::uint16_t er_malformed_packet = 1835;
constexpr std::string_view state_general = "HY000";
constexpr std::string_view state_connection = "08S01";
constexpr std::byte com_quit{0x01};

// An ERR the proxy sends on its way out waits at most this long for a
// client that does not read.
constexpr std::uint64_t farewell_timeout_ns = 1'000'000'000;

enum class side : std::uint8_t { client, server };

std::string lower_first(std::string s) {
  if (!s.empty()) s[0] = char(std::tolower(static_cast<unsigned char>(s[0])));
  return s;
}

// The last packets of a session: sent also after a stop (which would end
// the write at once), within farewell_timeout_ns.
void farewell(packet_io& io) {
  affine::this_fiber::stop_scope last_words{std::stop_token{}};
  (void)io.flush(now_ns() + farewell_timeout_ns);
}

class session {
 public:
  session(affine::net::tcp_stream client, proxy_context& ctx)
      : ctx_(ctx), client_(std::move(client), ctx.options.max_packet), started_ns_(now_ns()) {}

  close_reason run() {
    handshake_deadline_ = started_ns_ + ctx_.options.handshake_timeout_ns;
    if (auto r = connect_backend()) return *r;
    if (auto r = relay_greeting_and_answer()) return *r;
    return relay_commands();
  }

 private:
  std::optional<close_reason> connect_backend();
  std::optional<close_reason> relay_greeting_and_answer();
  close_reason relay_commands();
  std::optional<close_reason> relay_from_client();
  std::optional<close_reason> relay_from_server();
  void command_ended(outcome o);

  std::expected<packet_view, close_reason> next_packet(side from, std::uint8_t seq, std::uint64_t deadline_ns);
  // A stop of the proxy or its backend marked down: the session ends,
  // telling the client.
  std::optional<close_reason> told_to_end();
  close_reason shut_down();  // tells the client (1053)
  // told_to_end(), or the client gone while the backend works for it.
  std::optional<close_reason> interrupted(side waiting_on);
  close_reason read_failed(side from, const read_error& e);
  std::optional<close_reason> write_failed(side to, std::error_code e);
  std::optional<close_reason> flush_all();
  bool idle() const { return tracker_ && tracker_->next() == turn::client_command; }

  // An ERR to the client in the place of the server's next packet.
  void tell_client(std::uint16_t code, std::string_view state, std::string_view message,
                   std::optional<std::uint8_t> seq = std::nullopt);
  std::string backend_name() const { return lease_->get().config().address.to_string(); }

  proxy_context& ctx_;
  packet_io client_;
  std::optional<backend_lease> lease_;
  std::optional<packet_io> server_;
  std::optional<command_tracker> tracker_;
  bool greeting_sent_ = false;
  std::uint64_t started_ns_;
  std::uint64_t handshake_deadline_ = 0;
  std::uint64_t command_started_ns_ = 0;
};

std::optional<close_reason> session::connect_backend() {
  std::vector<std::size_t> tried;
  std::string last_failure;
  for (;;) {
    auto lease = ctx_.backends.acquire(backend_role::primary, tried);
    if (!lease) {
      if (!last_failure.empty()) {
        tell_client(er_connect_to_foreign_data_source, state_general, last_failure);
        return close_reason::backend_unreachable;
      }
      if (lease.error() == backend_set::refusal::all_full)
        tell_client(er_con_count_error, state_general, "Too many connections: every healthy backend is at its limit");
      else
        tell_client(er_connect_to_foreign_data_source, state_general, "Can't connect to a backend: none is healthy");
      return close_reason::no_backend;
    }
    backend& b = lease->get();
    const auto deadline = std::min(now_ns() + ctx_.options.connect_timeout_ns, handshake_deadline_);
    auto s = affine::net::connect(b.config().address, deadline, {.no_delay = true});
    if (!s && s.error() == std::errc::operation_canceled) return shut_down();
    if (s) {
      lease_.emplace(std::move(*lease));
      server_.emplace(std::move(*s), ctx_.options.max_packet);
      return std::nullopt;
    }
    b.count_connect_failure();
    last_failure = fmt::format("Can't connect to backend {}: {}", b.config().address.to_string(),
                               lower_first(s.error().message()));
    tried.push_back(lease->index());
  }
}

std::optional<close_reason> session::relay_greeting_and_answer() {
  auto g = next_packet(side::server, 0, handshake_deadline_);
  if (!g) return g.error();
  if (header_of(g->payload) == err_header) {
    client_.queue(*g);
    farewell(client_);
    return close_reason::backend_refused;
  }
  auto greeting = parse_greeting(g->payload);
  auto rewritten = rewrite_greeting(g->payload);
  if (!greeting || !rewritten) {
    tell_client(er_malformed_packet, state_general,
                fmt::format("Malformed greeting from backend {}: {}", backend_name(), to_string(greeting.error())));
    return close_reason::server_protocol_error;
  }
  const capabilities server_caps = offered(*greeting);
  client_.queue(g->seq, *rewritten);
  greeting_sent_ = true;

  auto a = next_packet(side::client, g->next_seq, handshake_deadline_);
  if (!a) return a.error();
  auto answer = parse_handshake_response(a->payload);
  if (!answer) {
    // A client that asked for TLS waits for a TLS handshake, not for an ERR.
    if (answer.error() == handshake_error::ssl_request) return close_reason::client_wants_tls;
    tell_client(er_handshake_error, state_connection, "Bad handshake", a->next_seq);
    return close_reason::client_protocol_error;
  }
  server_->queue(a->seq, *rewrite_handshake_response(a->payload));
  tracker_.emplace(negotiate(server_caps, requested(*answer)), a->next_seq);
  return std::nullopt;
}

close_reason session::relay_commands() {
  for (;;) {
    std::optional<close_reason> r;
    switch (tracker_->next()) {
      case turn::closed:
        // COM_QUIT on its way to the server, or a refused login's ERR to the client.
        (void)flush_all();
        return tracker_->current() == command_kind::quit ? close_reason::client_quit : close_reason::auth_failed;
      case turn::client_command:
      case turn::client: r = relay_from_client(); break;
      case turn::server: r = relay_from_server(); break;
    }
    if (r == close_reason::client_closed) {
      // Between commands: say goodbye for the client, so the server sees a
      // clean end rather than a broken connection.
      server_->queue(0, std::array{com_quit});
      farewell(*server_);
    }
    if (r) return *r;
  }
}

std::optional<close_reason> session::relay_from_client() {
  const bool starts_command = idle();
  const bool authenticating = tracker_->current() == command_kind::handshake;
  const std::uint64_t deadline = starts_command   ? no_deadline
                                 : authenticating ? handshake_deadline_
                                                  : now_ns() + ctx_.options.exchange_timeout_ns;
  // Between commands, a busy session too sees a stop or a backend gone
  // down: its reads may never wait long enough to look.
  if (starts_command)
    if (auto r = told_to_end()) return r;
  auto p = next_packet(side::client, tracker_->expected_seq(), deadline);
  if (!p) return p.error();
  auto o = tracker_->on_client(*p);
  if (!o) {
    if (o.error() != track_error::unknown_command) return close_reason::client_protocol_error;
    tell_client(er_unknown_com_error, state_connection, "Unknown command", p->next_seq);
    return close_reason::unknown_command;
  }
  if (starts_command) command_started_ns_ = now_ns();
  server_->queue(*p);
  if (*o != outcome::more) command_ended(*o);
  return std::nullopt;
}

std::optional<close_reason> session::relay_from_server() {
  const bool authenticating = tracker_->current() == command_kind::handshake;
  auto p = next_packet(side::server, tracker_->expected_seq(), authenticating ? handshake_deadline_ : no_deadline);
  if (!p) return p.error();
  auto o = tracker_->on_server(*p);
  if (!o) {
    tell_client(er_malformed_packet, state_general,
                fmt::format("Malformed packet from backend {}: {}", backend_name(), to_string(o.error())));
    return close_reason::server_protocol_error;
  }
  client_.queue(*p);
  if (*o != outcome::more) command_ended(*o);
  if (client_.queued() < packet_io::flush_threshold_bytes) return std::nullopt;
  auto w = client_.flush(now_ns() + ctx_.options.exchange_timeout_ns);
  return w ? std::nullopt : write_failed(side::client, w.error());
}

void session::command_ended(outcome o) {
  const command_kind k = tracker_->current();
  const std::uint64_t from = k == command_kind::handshake ? started_ns_ : command_started_ns_;
  ctx_.stats.command_done(k, o == outcome::done, now_ns() - from);
}

std::expected<packet_view, close_reason> session::next_packet(side from, std::uint8_t seq, std::uint64_t deadline_ns) {
  packet_io& io = from == side::client ? client_ : *server_;
  // Nothing waits in a queue while the session waits.
  if (!io.packet_ready())
    if (auto r = flush_all()) return std::unexpected(*r);
  for (;;) {
    auto p = io.read(seq, std::min(deadline_ns, now_ns() + ctx_.options.check_interval_ns));
    if (p) return *p;
    if (p.error().code == std::errc::operation_canceled)  // the proxy stops: its read ended at once
      if (auto r = told_to_end()) return std::unexpected(*r);
    if (p.error().what != read_error::kind::timed_out) return std::unexpected(read_failed(from, p.error()));
    if (now_ns() >= deadline_ns) {
      if (from == side::server)
        tell_client(er_net_read_interrupted, state_connection,
                    fmt::format("Lost connection to backend {}: timed out", backend_name()));
      return std::unexpected(close_reason::timeout);
    }
    if (auto r = interrupted(from)) return std::unexpected(*r);
  }
}

close_reason session::shut_down() {
  tell_client(er_server_shutdown, state_connection, "Server shutdown in progress");
  return close_reason::shutdown;
}

std::optional<close_reason> session::told_to_end() {
  if (ctx_.stopping()) return shut_down();
  if (lease_->went_down()) {
    tell_client(er_net_read_error, state_connection,
                fmt::format("Lost connection to backend {}: the health check marked it down", backend_name()));
    return close_reason::backend_down;
  }
  return std::nullopt;
}

std::optional<close_reason> session::interrupted(side waiting_on) {
  if (auto r = told_to_end()) return r;
  // The backend works for a client that has gone: stop, and let the
  // closed connection end the backend's work.
  if (waiting_on == side::server && greeting_sent_ && !client_.peer_open())
    return close_reason::client_gone_mid_command;
  return std::nullopt;
}

close_reason session::read_failed(side from, const read_error& e) {
  const bool too_large = e.what == read_error::kind::protocol && e.packet == packet_error::too_large;
  if (from == side::client) {
    if (too_large) {
      tell_client(er_net_packet_too_large, state_connection, "Got a packet bigger than the proxy's limit");
      return close_reason::packet_too_large;
    }
    if (e.what == read_error::kind::protocol) return close_reason::client_protocol_error;
    if (e.what == read_error::kind::failed) return close_reason::io_error;
    return !tracker_ || idle() ? close_reason::client_closed : close_reason::client_gone_mid_command;
  }
  const std::string name = backend_name();
  switch (e.what) {
    case read_error::kind::closed:
      tell_client(er_net_read_error, state_connection, fmt::format("Lost connection to backend {}", name));
      return close_reason::backend_closed;
    case read_error::kind::failed:
      tell_client(er_net_read_error, state_connection,
                  fmt::format("Lost connection to backend {}: {}", name, lower_first(e.code.message())));
      return close_reason::backend_closed;
    case read_error::kind::protocol:
      tell_client(er_malformed_packet, state_general,
                  fmt::format("Malformed packet from backend {}: {}", name, to_string(e.packet)));
      return too_large ? close_reason::packet_too_large : close_reason::server_protocol_error;
    case read_error::kind::timed_out: break;
  }
  return close_reason::timeout;
}

std::optional<close_reason> session::write_failed(side to, std::error_code e) {
  if (e == std::errc::timed_out) return close_reason::timeout;
  if (e == std::errc::operation_canceled)
    if (auto r = told_to_end()) return r;
  if (to == side::server) {
    tell_client(er_net_read_error, state_connection,
                fmt::format("Lost connection to backend {}: {}", backend_name(), lower_first(e.message())));
    return close_reason::backend_closed;
  }
  return !tracker_ || idle() ? close_reason::client_closed : close_reason::client_gone_mid_command;
}

std::optional<close_reason> session::flush_all() {
  const std::uint64_t deadline = now_ns() + ctx_.options.exchange_timeout_ns;
  if (server_)
    if (auto w = server_->flush(deadline); !w) return write_failed(side::server, w.error());
  if (auto w = client_.flush(deadline); !w) return write_failed(side::client, w.error());
  return std::nullopt;
}

void session::tell_client(std::uint16_t code, std::string_view state, std::string_view message,
                          std::optional<std::uint8_t> seq) {
  if (!seq) {
    // Unasked (idle) and before the greeting: 0. Waiting for the client's
    // answer to the greeting: 2, the server's next. Otherwise the next in
    // the exchange, as the server would send it.
    seq = !greeting_sent_ ? 0 : !tracker_ ? 2 : idle() ? 0 : tracker_->expected_seq();
  }
  client_.queue(*seq, err_payload(code, greeting_sent_ ? state : std::string_view{}, message));
  farewell(client_);
}

}  // namespace

close_reason run_session(affine::net::tcp_stream client, proxy_context& ctx) {
  ctx.stats.session_opened();
  const close_reason r = session(std::move(client), ctx).run();
  ctx.stats.session_closed(r);
  return r;
}

}  // namespace affine_mysql
