#include "tests/stack/tcp/harness.hh"

#include <algorithm>
#include <vector>

#include "stack/tcp/ring_buffer.hh"

namespace affine::stack::tcp::testing {

namespace {

constexpr siphash_key test_secret{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16};
// RFC 6528 3: the ISN clock ticks every 4 us; 2^32 ticks is one full turn.
constexpr std::uint64_t isn_tick_ns = 4'000;
constexpr std::uint64_t isn_turn_ns = isn_tick_ns << 32;

std::span<const std::byte> as_bytes(const std::string& s) {
  return {reinterpret_cast<const std::byte*>(s.data()), s.size()};
}

const char* control_name(tcp_control c) {
  switch (c) {
    case tcp_control::none: return "ACK";
    case tcp_control::syn: return "SYN";
    case tcp_control::fin: return "FIN";
    case tcp_control::rst: return "RST";
  }
  return "?";
}

}  // namespace

void PrintTo(const seg& s, std::ostream* os) {
  *os << control_name(s.control) << (s.psh ? "+PSH" : "") << " seq=" << s.seq.raw();
  if (s.ack) *os << " ack=" << s.ack->raw();
  if (s.window) *os << " win=" << *s.window;
  const tcp_options& o = s.options;
  if (o.mss) *os << " mss=" << *o.mss;
  if (o.window_scale) *os << " ws=" << int(*o.window_scale);
  if (o.timestamps) *os << " ts=" << o.timestamps->value << "/" << o.timestamps->echo;
  if (o.sack_permitted) *os << " sackok";
  if (!s.payload.empty()) *os << " len=" << s.payload.size() << " \"" << s.payload.substr(0, 32) << "\"";
  if (s.peer) *os << " peer=" << s.peer;
  if (s.ece) *os << " ECE";
  if (s.cwr) *os << " CWR";
  if (s.ecn != ip_ecn::not_ect) *os << " ecn=" << int(s.ecn);
}

void PrintTo(const seq_variant& v, std::ostream* os) {
  *os << v.name << " (ISS " << v.iss << ", remote ISN " << v.remote_isn << ")";
}

std::string variant_name(const ::testing::TestParamInfo<seq_variant>& info) { return info.param.name; }

harness::harness() : host_(test_secret, 0x0a000001, 0x0a000002, local_port) {
  use(normal_space);
  config.mss = 1000;
  config.send_buffer = 64000;
  config.recv_buffer = 64000;
  config.window_scaling = false;
  config.timestamps = false;
  config.sack = false;
  // The RFC 5681 / RFC 6582 scenarios' figures are NewReno's; cubic_test.cc
  // runs the default.
  config.congestion = congestion_algorithm::new_reno;
}

harness::~harness() = default;

void harness::use(const seq_variant& v) {
  iss = seq32(v.iss);
  rn = seq32(v.remote_isn);
}

void harness::TearDown() {
  for (const seg& s : emitted_) ADD_FAILURE() << "segment emitted but not expected: " << ::testing::PrintToString(s);
  host_.clear();
  EXPECT_EQ(connection::live_count(), 0u) << "connections leaked";
  EXPECT_EQ(ring_buffer::live_bytes(), 0u) << "ring buffers leaked";
}

void harness::open() {
  now = 10'000 * ms;
  ts_offset = 7777;
  host_.open(remote_port, iss, ts_offset, config, now);
  run_output();
}

void harness::establish_sack(bool peer_sack, std::uint64_t rtt_ms) {
  open();
  expect({.control = syn, .seq = iss, .options = {.mss = config.mss, .sack_permitted = true}});
  advance(rtt_ms);
  send({.control = syn, .seq = rn, .ack = iss + 1, .options = {.mss = config.mss, .sack_permitted = peer_sack}});
  expect({.seq = iss + 1, .ack = rn + 1});
  ASSERT_EQ(conn().sack_enabled(), peer_sack);
}

void harness::sack_flight_out(std::uint32_t segments, std::uint64_t rtt_ms) {
  establish_sack(true, rtt_ms);
  write_segments(segments);
  advance(rtt_ms);
}

drop_reason harness::ack_data(std::uint32_t acked, std::initializer_list<std::pair<std::uint32_t, std::uint32_t>> blocks,
                              std::source_location loc) {
  seg s{.seq = rn + 1, .ack = iss + 1 + acked};
  for (auto [from, to] : blocks) s.options.sack[s.options.sack_count++] = {iss + 1 + from, iss + 1 + to};
  return send(s, loc);
}

void harness::expect_data(std::uint32_t offset, std::uint32_t len, bool psh, std::source_location loc) {
  expect({.seq = iss + 1 + offset, .ack = rn + 1, .payload = pattern(offset, len), .psh = psh}, loc);
}

std::vector<std::uint32_t> harness::sent_offsets() {
  std::vector<std::uint32_t> out;
  for (const seg& s : take_emitted())
    if (!s.payload.empty()) out.push_back(std::uint32_t(s.seq - (iss + 1)));
  return out;
}

void harness::listen() {
  // Choose the clock so that ISN = M + F lands on `iss` (RFC 6528 3).
  const std::uint32_t f = host_.isn().next(tuple_for(0), 0).raw();
  now = isn_turn_ns + std::uint64_t(std::uint32_t(iss.raw() - f)) * isn_tick_ns;
  const flow_tuple t = tuple_for(0);
  ts_offset = host_.isn().next(flow_tuple{t.remote_addr, t.local_addr, t.remote_port, t.local_port}, 0).raw();
  host_.listen(listen_config);
}

void harness::establish() {
  open();
  expect({.control = syn, .seq = iss, .options = {.mss = config.mss}});
  send({.control = syn, .seq = rn, .ack = iss + 1, .options = {.mss = config.mss}});
  expect({.seq = iss + 1, .ack = rn + 1});
  ASSERT_EQ(conn().state(), tcp_state::established);
  conn().take_events();
}

void harness::establish_passive() {
  listen();
  send({.control = syn, .seq = rn, .options = {.mss = 1000}});
  expect({.control = syn, .seq = iss, .ack = rn + 1, .options = {.mss = 1000}});
  send({.seq = rn + 1, .ack = iss + 1});
  ASSERT_EQ(conn().state(), tcp_state::established);
  ASSERT_EQ(accept(), &conn());
  conn().take_events();
}

tcp_segment harness::to_segment(const seg& s) const {
  tcp_segment t;
  t.src_port = s.peer ? s.peer : remote_port;
  t.dst_port = local_port;
  t.control = s.control;
  t.psh = s.psh;
  t.seq = s.seq;
  t.ack = s.ack;
  t.window = s.window.value_or(65535);
  t.options = s.options;
  t.payload = as_bytes(s.payload);
  t.ece = s.ece;
  t.cwr = s.cwr;
  t.ecn = s.ecn;
  return t;
}

drop_reason harness::send(const seg& s, std::source_location loc) {
  const ::testing::ScopedTrace trace(loc.file_name(), int(loc.line()), "send");
  const tcp_segment t = to_segment(s);
  if (!host_.has(t.src_port) && !host_.listening()) {
    ADD_FAILURE() << "no connection or listener for peer port " << t.src_port;
    return drop_reason::none;
  }
  return host_.input(t, config, now, [this](const tcp_segment& out) { deliver(out); }).drop;
}

void harness::send_burst(std::initializer_list<seg> segs, std::source_location loc) {
  const ::testing::ScopedTrace trace(loc.file_name(), int(loc.line()), "send_burst");
  std::vector<tcp_segment> burst;
  for (const seg& s : segs) burst.push_back(to_segment(s));
  if (burst.empty() || !host_.has(burst.front().src_port) ||
      conn(burst.front().src_port).state() != tcp_state::established) {
    ADD_FAILURE() << "a burst is for an established connection's flow";
    return;
  }
  host_.input_burst(burst, now, [this](const tcp_segment& out) { deliver(out); });
}

void harness::deliver(const tcp_segment& t) {
  seg s;
  s.control = t.control;
  s.psh = t.psh;
  s.seq = t.seq;
  s.ack = t.ack;
  s.window = t.window;
  s.options = t.options;
  s.payload.assign(reinterpret_cast<const char*>(t.payload.data()), t.payload.size());
  s.ece = t.ece;
  s.cwr = t.cwr;
  s.ecn = t.ecn;
  EXPECT_EQ(t.src_port, local_port);
  s.peer = t.dst_port == remote_port ? 0 : t.dst_port;
  emitted_.push_back(std::move(s));
}

void harness::run_output() {
  host_.output(now, [this](const tcp_segment& t) { deliver(t); });
}

void harness::expect(const seg& want, std::source_location loc) {
  const ::testing::ScopedTrace trace(loc.file_name(), int(loc.line()), "expect");
  if (emitted_.empty()) {
    ADD_FAILURE() << "expected " << ::testing::PrintToString(want) << ", nothing was emitted";
    return;
  }
  seg w = want;
  const seg& got = emitted_.front();
  // A RST carries window 0 unless a test says otherwise.
  if (!w.window) w.window = w.control == rst ? 0 : default_window();
  EXPECT_EQ(got, w);
  emitted_.pop_front();
}

void harness::expect_nothing(std::source_location loc) {
  const ::testing::ScopedTrace trace(loc.file_name(), int(loc.line()), "expect_nothing");
  if (!emitted_.empty()) ADD_FAILURE() << "expected nothing, got " << ::testing::PrintToString(emitted_.front());
  emitted_.clear();
}

void harness::advance(std::uint64_t ms_count) { advance_ns(ms_count * ms); }

void harness::advance_ns(std::uint64_t ns) {
  now = host_.advance(now, now + ns, [this](const tcp_segment& t) { deliver(t); });
}

std::size_t harness::app_write(std::size_t n) {
  const std::string data = pattern(written_, n);
  const std::size_t taken = app_write(std::string_view(data));
  return taken;
}

std::size_t harness::app_write(std::string_view text) {
  auto r = conn().send({reinterpret_cast<const std::byte*>(text.data()), text.size()});
  const std::size_t taken = r.value_or(0);
  written_ += taken;
  run_output();
  return taken;
}

std::string harness::app_read(std::size_t n) {
  std::vector<std::byte> buf(std::min(n, conn().readable()));
  auto r = conn().recv(buf);
  run_output();
  if (!r) return {};
  return std::string(reinterpret_cast<const char*>(buf.data()), *r);
}

void harness::write_segments(std::uint32_t count) {
  app_write(std::size_t(count) * 1000);
  for (std::uint32_t k = 0; k < count; ++k)
    expect({.seq = iss + 1 + 1000 * k, .ack = rn + 1, .payload = pattern(1000 * k, 1000), .psh = k + 1 == count});
}

void harness::stream_acked(std::uint64_t bytes, std::uint64_t rtt_ns) {
  const std::size_t capacity = conn().writable();  // nothing outstanding
  const std::vector<std::byte> zeros(capacity);
  std::optional<seq32> end, acked;  // past the last byte sent, and acknowledged
  const auto sent = [&](const tcp_segment& t) {
    if (!t.payload.empty()) end = t.seq + std::uint32_t(t.payload.size());
  };
  // As a bulk sender: the send buffer filled, what the windows let out
  // sent, all of it acknowledged a round trip later, until every byte is.
  while (bytes > 0 || conn().writable() < capacity) {
    const std::size_t room = std::min<std::uint64_t>(bytes, conn().writable());
    if (room > 0) {
      const auto taken = conn().send({zeros.data(), room});
      ASSERT_TRUE(taken && *taken == room) << "the send buffer took " << taken.value_or(0) << " of " << room;
      bytes -= room;
      written_ += room;
    }
    host_.output(now, sent);  // what the last ACK did not already let out
    ASSERT_TRUE(end && end != acked) << "nothing sent with " << capacity - conn().writable() << " bytes queued";
    acked = end;
    advance_ns(rtt_ns);
    tcp_segment ack;
    ack.src_port = remote_port;
    ack.dst_port = local_port;
    ack.seq = rn + 1;
    ack.ack = *end;
    ack.window = 65535;
    ASSERT_EQ(host_.input(ack, config, now, sent).drop, drop_reason::none);
  }
  ASSERT_TRUE(emitted_.empty()) << "the stream drew " << ::testing::PrintToString(emitted_.front());
}

void harness::app_close() {
  conn().close(now);
  run_output();
}

void harness::app_shutdown() {
  conn().shutdown_write();
  run_output();
}

void harness::app_abort() {
  conn().abort();
  run_output();
}

connection& harness::conn(std::uint16_t peer) { return host_.conn(peer ? peer : remote_port); }

bool harness::has_conn(std::uint16_t peer) const { return host_.has(peer ? peer : remote_port); }

std::uint16_t harness::default_window() const {
  return std::uint16_t(std::min<std::size_t>(config.recv_buffer, 0xffff));
}

std::uint32_t harness::tsval() const { return std::uint32_t(now / ms) + ts_offset; }

}  // namespace affine::stack::tcp::testing
