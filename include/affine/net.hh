#pragma once
// The fiber socket API (DESIGN.md section 5). Blocking-style calls that
// suspend only the calling fiber; every call takes a deadline (time.hh: a
// duration such as 100ms, a steady_clock time point or now_ns() nanoseconds;
// none by default) and reports errors as std::error_code
// (ECONNRESET, ETIMEDOUT, ECONNREFUSED, ...), never by throwing or crashing.
//
// The same API runs on affine's userspace stack (a `dpdk` port) or on kernel
// sockets through io_uring (a `uring` port): the configuration picks the
// backend, the program does not change.

#include <chrono>
#include <compare>
#include <cstddef>
#include <cstdint>
#include <expected>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <system_error>

#include "affine/address.hh"
#include "affine/sync.hh"

namespace affine::net {

// A stream's congestion control: what the configuration says (the
// userspace stack's [tcp] congestion; the kernel's default on kernel
// sockets), or a choice. CUBIC (RFC 9438) with HyStart++ (RFC 9406), or
// NewReno (RFC 5681, RFC 6582; the kernel's "reno").
enum class congestion_control : std::uint8_t { configured, cubic, newreno };

struct stream_options {
  bool no_delay = false;   // disable Nagle
  bool keepalive = false;
  // Keepalive's timing (RFC 1122 4.2.3.6; Linux's TCP_KEEPIDLE,
  // TCP_KEEPINTVL, TCP_KEEPCNT): the silence before the first probe, the
  // wait between unanswered probes, and how many go unanswered before the
  // connection ends with ETIMEDOUT. Zero: the backend's default (the
  // userspace stack's [tcp] keys, 2 hours, 75 s and 9 probes unless set;
  // the kernel's sysctls). Taken as Linux takes them: idle and interval 1
  // to 32767 s, count 1 to 127; a value outside fails connect() and
  // listen() with invalid_argument.
  std::chrono::seconds keepalive_idle{0};
  std::chrono::seconds keepalive_interval{0};
  unsigned keepalive_count = 0;
  // The user timeout (RFC 9293 3.10.8; Linux's TCP_USER_TIMEOUT): the
  // connection ends with ETIMEDOUT once sent data has waited this long for
  // an acknowledgment that moves on, once queued data has waited this long
  // before a shut window, or, with keepalive, once a probe went out and
  // nothing came for this long. It replaces the retransmission count (15,
  // minutes) and keepalive_count. Zero: the backend's default (the stack's
  // [tcp] user_timeout_ms, none unless set). At most INT_MAX ms.
  std::chrono::milliseconds user_timeout{0};
  congestion_control congestion = congestion_control::configured;
  // SO_SNDBUF, SO_RCVBUF: a buffer of this many bytes that stays so; 0 =
  // the backend's default, which grows with the path (the stack's [tcp]
  // *_buffer_kb to *_buffer_max_kb; Linux's tcp_wmem, tcp_rmem).
  std::size_t send_buffer = 0;
  std::size_t receive_buffer = 0;
  // SO_LINGER. Unset: the connection finishes in the background after
  // close(). Zero: close() sends RST and drops unsent data. Longer: the
  // stack resets a connection not finished that long after close(); kernel
  // sockets (uring) get SO_LINGER in whole seconds, rounded up, and the
  // kernel's wait runs on an io_uring worker. close() never blocks on it.
  std::optional<std::chrono::milliseconds> linger{};
};

struct listen_options {
  endpoint local;               // addr any_address (0.0.0.0): every IPv4 address of the port; :: every address
  unsigned backlog = 128;       // bounded accept queue
  stream_options accepted{};    // options for accepted streams
  // For a listener on an IPv6 address: IPv6 connections only (IPV6_V6ONLY).
  // Unset, a listener on :: also accepts IPv4, its peers reported as
  // IPv4-mapped addresses.
  bool v6_only = false;
};

namespace detail {
class stream_impl;
class listener_impl;
class udp_impl;
struct handle_access;
}  // namespace detail

class tcp_stream {
 public:
  tcp_stream();
  explicit tcp_stream(std::unique_ptr<detail::stream_impl> impl);
  tcp_stream(tcp_stream&&) noexcept;
  tcp_stream& operator=(tcp_stream&&) noexcept;
  ~tcp_stream();  // close()

  bool is_open() const { return impl_ != nullptr; }
  // Up to buf.size() bytes; 0 means the peer closed its side (end of stream).
  std::expected<std::size_t, std::error_code> read(std::span<std::byte> buf,
                                                   deadline until = {});
  // Exactly buf.size() bytes; an end of stream before that is the error
  // std::errc::connection_reset (the peer went away mid-message).
  std::expected<void, std::error_code> read_exactly(std::span<std::byte> buf,
                                                    deadline until = {});
  // All of `data`, or an error.
  std::expected<void, std::error_code> write(std::span<const std::byte> data,
                                             deadline until = {});
  // Zero-copy reads. read_view waits as read() does, then lends the bytes
  // already received, where they lie: on the userspace stack the receive
  // ring itself (no copy after the RX path's), on kernel sockets a buffer
  // of the stream's own (one recv). An empty view is the end of the stream.
  // It may hold less than all that has come (up to the ring's wrap point).
  // The view stays valid until consume() or the next read, read_view or
  // close; consume(n) gives the first n bytes back (at most the view's size;
  // their room goes back into the receive window) and a read() after
  // read_view starts at the first byte not consumed. One reader at a time.
  std::expected<std::span<const std::byte>, std::error_code> read_view(deadline until = {});
  void consume(std::size_t n);
  // Zero-copy writes. write_view waits until there is room to send (as
  // write() waits), then lends it: on the userspace stack the free space
  // of the send ring, where the bytes are sent from, on kernel sockets a
  // buffer of the stream's own (one send). commit(n) sends its first n
  // bytes (at most the view's size: else invalid_argument) as write()
  // would; the view is gone after commit. One writer at a time.
  std::expected<std::span<std::byte>, std::error_code> write_view(deadline until = {});
  std::expected<void, std::error_code> commit(std::size_t n, deadline until = {});
  // No more writes from this side (FIN); reads go on.
  std::expected<void, std::error_code> shutdown_write();
  // Orderly close. Idempotent.
  void close();
  // Reset the connection (RST) and drop unsent data.
  void abort();

  std::expected<void, std::error_code> set_no_delay(bool on);
  std::expected<void, std::error_code> set_keepalive(bool on);
  endpoint local() const;
  endpoint remote() const;

 private:
  friend struct detail::handle_access;  // wait_any's backends reach the socket
  std::unique_ptr<detail::stream_impl> impl_;
};

class tcp_listener {
 public:
  tcp_listener();
  explicit tcp_listener(std::unique_ptr<detail::listener_impl> impl);
  tcp_listener(tcp_listener&&) noexcept;
  tcp_listener& operator=(tcp_listener&&) noexcept;
  ~tcp_listener();

  bool is_open() const { return impl_ != nullptr; }
  std::expected<tcp_stream, std::error_code> accept(deadline until = {});
  endpoint local() const;  // the bound port, also when 0 was asked for
  void close();

 private:
  friend struct detail::handle_access;  // wait_any's backends reach the socket
  std::unique_ptr<detail::listener_impl> impl_;
};

struct udp_options {
  endpoint local{};  // addr any_address: every IPv4 address of the port, :: every address; port 0: an ephemeral one
  bool v6_only = false;  // as listen_options::v6_only
  // Datagrams waiting for recv_from; more are dropped (and counted). Kernel
  // sockets (uring) bound their queue in bytes instead (SO_RCVBUF).
  std::size_t receive_queue = 256;
};

// A bound UDP socket (RFC 768), unconnected: any number of fibers may send
// and receive on it at once. Datagrams are never fragmented on send (DF
// set); one larger than the path allows is EMSGSIZE.
class udp_socket {
 public:
  udp_socket();  // closed; out of line, where udp_impl is complete
  explicit udp_socket(std::unique_ptr<detail::udp_impl> impl);
  udp_socket(udp_socket&&) noexcept;
  udp_socket& operator=(udp_socket&&) noexcept;
  ~udp_socket();  // close()

  bool is_open() const { return impl_ != nullptr; }
  // One datagram; it is sent or dropped on its way, never waits for a peer.
  // Never fragmented by this host (IP_PMTUDISC_DO on kernel sockets):
  // past the link's MTU, or the path MTU an ICMP "too big" made known, it
  // is message_size.
  // Errors: message_size, invalid_argument (port 0), network_unreachable.
  std::expected<void, std::error_code> send_to(endpoint to, std::span<const std::byte> datagram);

  struct datagram_info {
    std::size_t size = 0;    // bytes placed in the buffer
    endpoint from{};
    bool truncated = false;  // the datagram was longer than the buffer: the rest is gone
  };
  // The oldest datagram received. A timeout is std::errc::timed_out; a
  // close() from another fiber meanwhile, std::errc::operation_canceled.
  std::expected<datagram_info, std::error_code> recv_from(std::span<std::byte> buf,
                                                          deadline until = {});
  endpoint local() const;  // the bound port, also when 0 was asked for
  // Idempotent; datagrams still queued are dropped.
  void close();

 private:
  friend struct detail::handle_access;  // wait_any's backends reach the socket
  std::unique_ptr<detail::udp_impl> impl_;
};

// On the backend the runtime was configured with. Precondition: in a fiber.
std::expected<tcp_listener, std::error_code> listen(const listen_options& opts);
std::expected<tcp_stream, std::error_code> connect(endpoint to, deadline until = {},
                                                   const stream_options& opts = {});
// Errors: address_in_use, address_not_available (not an address of the
// port), invalid_argument (a receive_queue of 0).
std::expected<udp_socket, std::error_code> bind_udp(const udp_options& opts);

// What a socket is ready for (a bit set), as wait_any asks and answers.
enum class readiness : std::uint8_t {
  none = 0,
  // A stream's read() would not wait: data, the end of the stream, or an
  // error to report. A listener's accept() would not wait. A UDP socket's
  // recv_from() would not wait.
  readable = 1u << 0,
  // A stream's write() of one byte would not wait: room in the send
  // buffer, or an error to report. Streams only.
  writable = 1u << 1,
  // Answer only: the handle is closed, before the call or by another fiber
  // during it (as poll's POLLNVAL). Such an entry counts as ready.
  closed = 1u << 2,
};
constexpr readiness operator|(readiness a, readiness b) { return readiness(std::uint8_t(a) | std::uint8_t(b)); }
constexpr readiness operator&(readiness a, readiness b) { return readiness(std::uint8_t(a) & std::uint8_t(b)); }
constexpr bool has(readiness set, readiness bit) { return (set & bit) != readiness::none; }

// One socket of a wait_any call. The handle is not owned: it must outlive
// the call and stay where it is (not moved from) until the call returns.
struct wait_entry {
  wait_entry(tcp_stream& s, readiness want) : stream(&s), interest(want) {}
  explicit wait_entry(tcp_listener& l) : listener(&l), interest(readiness::readable) {}
  explicit wait_entry(udp_socket& u) : udp(&u), interest(readiness::readable) {}

  tcp_stream* stream = nullptr;  // exactly one of the three is set
  tcp_listener* listener = nullptr;
  udp_socket* udp = nullptr;
  readiness interest = readiness::none;  // readable, writable (streams) or both
  readiness ready = readiness::none;     // out: what of `interest` holds, or closed
};

// The most entries one wait_any takes: its bookkeeping is bounded.
inline constexpr std::size_t max_wait_entries = 1024;

// Suspends the calling fiber until at least one entry is ready or the
// deadline passes, and sets every entry's `ready` (level-triggered, as
// poll(2): what holds when the call returns; a reader that got there first
// may have taken it by the time the caller acts). Returns how many entries
// are ready; a deadline already passed only looks (a poll without waiting).
// Errors: timed_out (none ready by the deadline); invalid_argument (no
// entries or more than max_wait_entries, an empty interest, writable asked
// of a listener or a UDP socket, sockets of two kinds of backend:
// userspace stack and uring); operation_not_supported (a backend that has
// no such wait); device_or_resource_busy (uring: the ring could take no
// more operations, and none was ready). Another fiber may read, write, accept or close the
// sockets meanwhile; a close ends the wait with `closed`.
// Precondition: in a fiber.
std::expected<std::size_t, std::error_code> wait_any(std::span<wait_entry> entries,
                                                     deadline until = {});

}  // namespace affine::net
