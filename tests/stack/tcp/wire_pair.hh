#pragma once
// Two connections through an in-memory wire at virtual time: A opens to
// B's listener (tcp::listener, as stack::listen_in runs it), writes a
// stream of `total` bytes of pattern() and closes; B reads at its pace and
// closes at EOF. What the wire does with each segment (lose it, delay it,
// carry it twice) is a wire_model's choice: a seeded one in pair_test.cc,
// the fuzzer's in tests/fuzz/tcp_pair.cc. No gtest here.

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "stack/tcp/connection.hh"
#include "stack/tcp/function_ref.hh"
#include "stack/tcp/isn.hh"
#include "stack/tcp/listener.hh"
#include "tests/stack/tcp/pattern.hh"

namespace affine::stack::tcp::testing {

class wire_model {
 public:
  // Called for each segment sent at `now` (to B, or to A): `arrive(at)`
  // once for each copy the wire delivers, at time `at` (>= now); never for
  // a segment it loses. It may mark the segment as a router would (its
  // ECN field: CE for an ECT one, RFC 3168 5).
  virtual void carry(bool to_b, tcp_segment& seg, std::uint64_t now, function_ref<void(std::uint64_t)> arrive) = 0;

 protected:
  ~wire_model() = default;
};

struct pair_config {
  connection_config a{};  // the active opener, the writer
  connection_config b{};  // the listener's connection, the reader
  std::size_t total = 1 << 20;
  std::size_t read_chunk = SIZE_MAX;  // bytes B reads per read_interval (SIZE_MAX: all, whenever it runs)
  std::uint64_t read_interval_ns = 1'000'000;
  std::uint64_t time_limit_ns = 600'000'000'000;
};

enum class pair_outcome {
  done,        // B read to EOF and both sides closed (or are in TIME-WAIT)
  error,       // a side reports an error (error()): the transfer ends there
  stalled,     // no error, and nothing will ever happen again
  time_limit,  // pair_config::time_limit_ns ran out first
};

class wire_pair {
 public:
  wire_pair(const pair_config& cfg, wire_model& wire)
      : cfg_(cfg), wire_(wire), isn_(siphash_key{9, 8, 7}), listener_(listener_config{}, isn_) {
    a_ = std::make_unique<connection>(open_params{a_tuple, seq32(0xfffff000), 1}, cfg_.a, now_);
  }

  // Runs until both sides are done, a side reports an error, nothing will
  // ever happen again or the time limit.
  pair_outcome run() {
    const std::uint64_t limit = now_ + cfg_.time_limit_ns;
    while (now_ < limit) {
      application();
      flush();
      if (done()) return pair_outcome::done;
      if (a_->error() || (b_ && b_->error())) return pair_outcome::error;
      std::uint64_t next = std::min(a_->next_deadline(), b_ ? b_->next_deadline() : no_deadline);
      if (!in_flight_.empty()) next = std::min(next, in_flight_.begin()->first);
      // A slow reader wakes for data it has, not for reads of nothing.
      if (b_ && !b_eof_ && cfg_.read_chunk != SIZE_MAX && b_->readable() > 0) next = std::min(next, next_read_);
      if (next == no_deadline) return pair_outcome::stalled;
      now_ = std::max(now_, next);
      deliver_due();
      if (a_->next_deadline() <= now_) a_->on_timer(now_);
      if (b_ && b_->next_deadline() <= now_) b_->on_timer(now_);
    }
    return pair_outcome::time_limit;
  }

  // What B read, in order.
  const std::vector<std::byte>& received() const { return received_; }
  // What A's send() took.
  std::size_t sent() const { return sent_; }
  connection& a() { return *a_; }
  connection& b() { return *b_; }
  bool has_b() const { return b_ != nullptr; }
  std::uint64_t now() const { return now_; }
  std::size_t in_flight() const { return in_flight_.size(); }

 private:
  static constexpr flow_tuple a_tuple{v4_flow(0x0a000001), v4_flow(0x0a000002), 40000, 80};
  static constexpr flow_tuple b_tuple{v4_flow(0x0a000002), v4_flow(0x0a000001), 80, 40000};

  struct packet {
    bool to_b;
    tcp_segment seg;
    std::vector<std::byte> bytes;
  };

  bool done() const {
    const auto finished = [](const connection& c) {
      return c.state() == tcp_state::closed || c.state() == tcp_state::time_wait;
    };
    return b_ && b_eof_ && finished(*a_) && finished(*b_);
  }

  void application() {
    // A writes the stream once connected (the socket API's connect()
    // returns then: a close() in SYN-SENT deletes the TCB, RFC 9293 3.10.4,
    // queued data and all), then closes; B reads at its pace, closes at EOF.
    if (a_->state() != tcp_state::syn_sent) write();
    read();
  }

  void write() {
    while (sent_ < cfg_.total && a_->writable() > 0) {
      const std::string chunk = pattern(sent_, std::min<std::size_t>(a_->writable(), cfg_.total - sent_));
      sent_ += a_->send({reinterpret_cast<const std::byte*>(chunk.data()), chunk.size()}).value_or(0);
    }
    if (sent_ == cfg_.total && !a_closed_) {
      a_->close(now_);
      a_closed_ = true;
    }
  }

  void read() {
    if (!b_ || b_eof_) return;
    if (cfg_.read_chunk != SIZE_MAX && now_ < next_read_) return;
    next_read_ = now_ + cfg_.read_interval_ns;
    std::vector<std::byte> buf(std::min(cfg_.read_chunk, b_->readable()));
    const std::size_t n = b_->recv(buf).value_or(0);
    received_.insert(received_.end(), buf.begin(), buf.begin() + std::ptrdiff_t(n));
    if (b_->eof()) {
      b_eof_ = true;
      b_->close(now_);
    }
  }

  void flush() {
    a_->output(now_, [this](const tcp_segment& s) { transmit(true, s); });
    if (b_) b_->output(now_, [this](const tcp_segment& s) { transmit(false, s); });
  }

  void transmit(bool to_b, const tcp_segment& sent) {
    tcp_segment s = sent;
    wire_.carry(to_b, s, now_, [&](std::uint64_t at) {
      in_flight_.emplace(std::max(at, now_), packet{to_b, s, {s.payload.begin(), s.payload.end()}});
    });
  }

  void deliver_due() {
    while (!in_flight_.empty() && in_flight_.begin()->first <= now_) {
      packet p = std::move(in_flight_.begin()->second);
      in_flight_.erase(in_flight_.begin());
      p.seg.payload = p.bytes;
      // A reply goes back the way the segment came.
      std::optional<tcp_segment> reply;
      if (!p.to_b) {
        reply = a_->input(p.seg, now_).reply;
      } else if (b_) {
        reply = b_->input(p.seg, now_).reply;
      } else {
        listener::verdict v = listener_.input(b_tuple, p.seg, now_, cfg_.b);
        reply = v.reply;
        if (v.open) b_ = std::make_unique<connection>(*v.open, cfg_.b, p.seg, now_);
      }
      if (reply) transmit(!p.to_b, *reply);
      flush();
    }
  }

  pair_config cfg_;
  wire_model& wire_;
  isn_generator isn_;
  listener listener_;
  std::uint64_t now_ = 1'000'000'000;
  std::unique_ptr<connection> a_;
  std::unique_ptr<connection> b_;
  std::multimap<std::uint64_t, packet> in_flight_;
  std::size_t sent_ = 0;
  bool a_closed_ = false;
  bool b_eof_ = false;
  std::uint64_t next_read_ = 0;
  std::vector<std::byte> received_;
};

}  // namespace affine::stack::tcp::testing
