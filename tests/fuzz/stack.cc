// One whole stack (stack::create on the in-process wire's end a, a runtime
// of one reactor, the socket API as its backend) at virtual time: the
// process clock is manual (reactor/clock.hh), so every timer of the stack
// and of the runtime fires when the input says and nowhere else. The input
// decodes into frames the peer on end b writes (TCP segments from 16 peers
// near their sequence state, fragmented or not, over IPv4 or IPv6; ICMP
// and ICMPv6 errors quoting what the stack sent; UDP datagrams; raw bytes
// behind an Ethernet or IPv4 header; IPv6 to the address the stack holds
// beside its IPv4 one, tests/fuzz/ipv6_frames.hh),
// time advances, and socket calls (accept, read, write, their zero-copy
// forms, shutdown, close, abort, connect, UDP send and receive, the
// listener closed and made again). After each step the reactor runs until
// nothing is left to do at that time: the frames reach the RX path through
// the poller, its batch settles, the timer fiber and every woken fiber run,
// and what the stack sent is read off end b (its ARP requests answered).
//
// Invariants: no sanitizer report; every frame the stack sends parses
// (Ethernet, ARP or IPv4, then TCP, UDP or ICMP, checksums checked; or
// IPv6 as ipv6_frames.hh checks it); no
// step makes it send without bound; every frame the peer sent reached the
// RX path (rx_packets counts it); what the application reads of a peer is
// the peer's bytes in sequence order (s mod 256 at sequence number s) unless
// a changed frame reached that peer's connection; the SYN queue keeps to the
// backlog and the flow table to max_connections; with every socket closed,
// thirty virtual minutes leave no connection; at the end every connection,
// ring buffer, UDP socket and mbuf is back.
//
// The input: 4 bytes of settings, then steps.
//   [0] bit 0: SACK, 1: timestamps, 2: window scaling, 3: no_delay,
//       4: NewReno (else CUBIC), 5: keepalive, 6-7: SYN cookies
//       (automatic, always, never, automatic)
//   [1] the stack's MSS: 88 + 6 * b
//   [2] low nibble: send buffer, high: receive buffer (1 KiB << n % 9)
//   [3] bits 0-2: listen backlog - 1, 3-5: max_connections 4 << n,
//       6: the peer's IP link MTU is 576, 1280 for IPv6 (else 1500),
//       7: the odd peers (the active one too) speak TCP over IPv6, from
//       fd99::2, and the listener is on [::], serving both families
// A step is an opcode byte, op % 8:
//   0-2: a TCP segment (tests/fuzz/tcp_steps.hh, 7 bytes; then 2 more
//        when it asks for a changed byte, 1 when it asks for fragments)
//   3:   time: (b % 64) << (4 * (b / 64)) ms, in slices (1 byte)
//   4,5: the application: a peer (b % 16) and a call (b / 16), an amount
//        (2 bytes); a UDP send goes to the peer over its family
//   6:   ICMP destination unreachable quoting the last datagram the stack
//        sent a peer: peer; code (bits 0-2), a 40-byte longer quote (3),
//        from the router (4); the MTU in 8-byte units; a quote change
//        (4 bytes); with code bit 5 the quote is of the last UDP
//        datagram the stack sent over the peer's family instead. To a
//        peer over IPv6, ICMPv6: code 4 is Packet Too Big, any other
//        Destination Unreachable with that code
//   7:   UDP, raw or IPv6: kind, length, then that many bytes (kind % 4:
//        0 UDP, 1 raw IPv4, 2 raw Ethernet, 3 IPv6 with mode kind >> 2)

#include <rte_mbuf.h>
#include <rte_mempool.h>

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "affine/fiber.hh"
#include "affine/net.hh"
#include "affine/runtime.hh"
#include "affine/topology.hh"
#include "drivers/dpdk/eal.hh"
#include "drivers/net_backend.hh"
#include "drivers/wire/wire.hh"
#include "reactor/clock.hh"
#include "reactor/policy/config.hh"
#include "stack/stack.hh"
#include "stack/tcp/connection.hh"
#include "stack/tcp/ring_buffer.hh"
#include "stack/udp_socket.hh"
#include "stack/wire/arp.hh"
#include "stack/wire/checksum.hh"
#include "stack/wire/ethernet.hh"
#include "stack/wire/icmp.hh"
#include "stack/wire/ipv4.hh"
#include "stack/wire/tcp.hh"
#include "stack/wire/udp.hh"
#include "tests/fuzz/check.hh"
#include "tests/fuzz/ipv6_frames.hh"
#include "tests/fuzz/tcp_steps.hh"

namespace {

using namespace affine::stack;
using affine::core_id, affine::fiber_handle, affine::now_ns, affine::runtime, affine::runtime_options, affine::rxq_assignment, affine::spawn,
    affine::stop_mode, affine::topology;
namespace detail = affine::detail;
namespace drivers = affine::drivers;
namespace net = affine::net;
namespace policy = affine::policy;
namespace this_fiber = affine::this_fiber;
using affine_fuzz::require;

constexpr std::uint64_t ms = 1'000'000;
constexpr std::uint32_t stack_ip = 0x0a630001;   // 10.99.0.1
constexpr std::uint32_t peer_ip = 0x0a630002;    // 10.99.0.2
constexpr std::uint32_t router_ip = 0x0a6300fe;  // 10.99.0.254: sends ICMP errors
const affine::stack::ipv6_bytes router_v6 = net::ipv6_address::parse("fd99::fe").value().bytes;
constexpr mac_address stack_mac{0x02, 0, 0, 0, 0, 0x01};
constexpr mac_address peer_mac{0x02, 0, 0, 0, 0, 0x02};
constexpr std::uint16_t listen_port = 80;
constexpr std::uint16_t udp_port = 53;
constexpr std::uint16_t first_peer_port = 40000;
// The IPv6 ends: the stack's fd99::1/64 beside its IPv4 address.
const affine_fuzz::ipv6_ends v6_ends{.stack = net::ipv6_address::parse("fd99::1").value().bytes,
                                     .peer = net::ipv6_address::parse("fd99::2").value().bytes,
                                     .peer_link = net::ipv6_address::parse("fe80::2").value().bytes,
                                     .stack_mac = stack_mac,
                                     .peer_mac = peer_mac,
                                     .bound_port = udp_port};
constexpr std::uint16_t active_port = 9000;  // peer 15: the connection the stack opens
constexpr unsigned peers = 16;
constexpr unsigned active = peers - 1;
constexpr std::size_t max_sent_per_step = 1 << 16;
constexpr unsigned pool_mbufs = 8191;

using affine_fuzz::peer_sequence;
using affine_fuzz::reader;

// What lives for the whole process: the EAL, a runtime of one reactor at
// virtual time, the wire's two packet pools.
struct world {
  std::unique_ptr<topology> topo;
  std::unique_ptr<runtime> rt;
  std::array<rte_mempool*, 2> pools{};
};
world* the_world = nullptr;

struct peer_state : peer_sequence {
  bool tainted = false;  // a changed frame reached it: its bytes may be anything
  net::tcp_stream app;
  std::optional<std::byte> last_read{};
  std::vector<std::byte> last_datagram;  // the last IP packet the stack sent it, for ICMP quotes
};

class driver {
 public:
  driver(world& w, std::span<const std::uint8_t> input) : w_(w), in_{input} {}

  void run() {
    const std::uint8_t flags = in_.next();
    stack_config sc;
    sc.address = stack_ip;
    sc.ipv6 = {{v6_ends.stack, 64}};
    sc.dad_transmits = 0;
    sc.tcp.sack = flags & 1;
    sc.tcp.timestamps = flags & 2;
    timestamps_ = sc.tcp.timestamps;
    sc.tcp.window_scaling = flags & 4;
    accepted_.no_delay = flags & 8;
    accepted_.congestion = flags & 16 ? net::congestion_control::newreno : net::congestion_control::cubic;
    accepted_.keepalive = flags & 32;
    sc.tcp.keepalive.idle_ns = 1'000 * ms;
    sc.tcp.keepalive.interval_ns = 1'000 * ms;
    sc.syn_cookies = std::array{tcp::syn_cookie_mode::automatic, tcp::syn_cookie_mode::always,
                                tcp::syn_cookie_mode::never, tcp::syn_cookie_mode::automatic}[flags >> 6];
    sc.tcp.mss = std::uint16_t(88 + 6 * in_.next());
    const std::uint8_t buffers = in_.next();
    accepted_.send_buffer = std::size_t(1024) << ((buffers & 15) % 9);
    accepted_.receive_buffer = std::size_t(1024) << ((buffers >> 4) % 9);
    const std::uint8_t l = in_.next();
    backlog_ = 1 + (l & 7);
    sc.max_connections = std::size_t(4) << ((l >> 3) & 7);
    peer_mtu_ = l & 64 ? 576 : 1500;
    v6_peers_ = l & 128;

    drivers::wire::link_config lc;
    lc.clock = drivers::wire::clock_kind::manual;
    lc.a.pool = w_.pools[0];
    lc.b.pool = w_.pools[1];
    auto link = drivers::wire::link::create(lc);
    require(link.has_value(), "the wire cannot be made");
    link_ = std::move(*link);
    link_->advance_to(now_ns());
    {
      auto st = affine::stack::stack::create(*w_.rt, link_->a(), sc, std::vector<rxq_assignment>{{0, core_id{0}}});
      require(st.has_value(), "the stack cannot be made");
      st_ = std::move(*st);
    }
    max_connections_ = sc.max_connections;
    net::detail::set_backend(&st_->backend());
    open_listener();
    // [::] without v6_only: the port serves the peer over both families.
    auto u = net::bind_udp({.local = {net::any_address_v6, udp_port}, .receive_queue = 8});
    require(u.has_value(), "the UDP port cannot be bound");
    udp_ = std::move(*u);
    establish();

    while (!in_.empty()) {
      const std::uint8_t op = in_.next();
      switch (op % 8) {
        case 0: case 1: case 2: segment_step(); break;
        case 3: time_step(); break;
        case 4: case 5: app_step(); break;
        case 6: icmp_step(); break;
        default: other_step(); break;
      }
      settle();
    }
    teardown();
  }

 private:
  std::uint16_t port_of(unsigned peer) const {
    return peer == active ? active_port : std::uint16_t(first_peer_port + peer);
  }
  // The stack's port a peer's segments go to.
  std::uint16_t stack_port_of(unsigned peer) const {
    return peer == active ? (active_local_port_ ? active_local_port_ : listen_port + 1) : listen_port;
  }
  // Whether a peer speaks IPv6 (settings [3] bit 7: the odd ones).
  bool v6(unsigned peer) const { return v6_peers_ && peer % 2 == 1; }
  // The peer's link carries IP packets of at most this many bytes.
  std::uint32_t link_mtu(bool over_v6) const { return over_v6 ? std::max(peer_mtu_, 1280u) : peer_mtu_; }
  std::optional<unsigned> peer_of(std::uint16_t port) const {
    if (port == active_port) return active;
    if (port >= first_peer_port && port < first_peer_port + active) return port - first_peer_port;
    return std::nullopt;
  }

  void open_listener() {
    const net::address any = v6_peers_ ? net::address(net::any_address_v6) : net::address(net::any_address);
    auto l = net::listen({.local = {any, listen_port}, .backlog = backlog_, .accepted = accepted_});
    require(l.has_value(), "the stack cannot listen");
    listener_ = std::move(*l);
  }

  // Peer 0's handshake, as a Linux client makes it.
  void establish() {
    peer_state& p = peers_[0];
    tcp_segment syn{.src_port = port_of(0), .dst_port = listen_port, .control = tcp_control::syn, .seq = seq32(5000),
                    .window = 65535};
    syn.options = {.mss = 1460, .window_scale = 7, .sack_permitted = true, .timestamps = tcp_timestamps{1, 0}};
    p.snd_nxt = seq32(5001);
    p.synced = true;
    send_segment(0, syn, {});
    settle();
    tcp_segment ack{.src_port = port_of(0), .dst_port = listen_port, .seq = p.snd_nxt, .ack = p.host_nxt,
                    .window = 65535};
    if (p.ts_recent != 0) ack.options.timestamps = tcp_timestamps{2, p.ts_recent};
    send_segment(0, ack, {});
    settle();
    accept_all();
    require(p.app.is_open(), "a Linux client's handshake made no connection to accept");
  }

  struct frame_mods {
    std::optional<std::pair<std::size_t, std::uint8_t>> change{};  // a byte of the frame XORed
    std::uint64_t rx_flags = 0;                                      // as the NIC would mark it
    std::uint8_t fragments = 0;  // bits 0-3: the first fragment's 8-byte units; 4: overlap; 5: reversed
  };

  // tcp_steps.hh's segment; option bit 6's changed byte comes marked by
  // the "NIC" (checked, bad or neither), bit 7 asks for fragments (1 byte).
  void segment_step() {
    const unsigned peer = in_.next() % peers;
    peer_state& p = peers_[peer];
    auto step = affine_fuzz::read_segment(
        in_, p, {.new_connection = peer != active && (!p.synced || !p.app.is_open()), .timestamps = timestamps_,
                 .ts_value = std::uint32_t(now_ns() / ms) + 17, .syn_acks = peer == active},
        payload_);
    step.seg.src_port = port_of(peer);
    step.seg.dst_port = stack_port_of(peer);
    frame_mods mods;
    if (step.change) {
      const std::uint8_t x = step.change->second;
      mods.change = step.change;
      mods.rx_flags = x & 1 ? RTE_MBUF_F_RX_IP_CKSUM_GOOD | RTE_MBUF_F_RX_L4_CKSUM_GOOD
                            : (x & 2 ? RTE_MBUF_F_RX_L4_CKSUM_BAD : 0);
      p.tainted = true;
    }
    if (step.opts & 128) mods.fragments = std::uint8_t(in_.next() | 1);
    send_segment(peer, step.seg, mods);
  }

  void send_segment(unsigned peer, const tcp_segment& s, const frame_mods& mods) {
    l4_.resize(60 + s.payload.size());
    if (v6(peer)) {
      const auto n = emit_tcp(s, ipv6_pseudo(v6_ends.peer, v6_ends.stack, next_header::tcp), l4_, checksum_mode::software);
      if (n) send_ipv6(next_header::tcp, std::span(l4_).first(*n), mods);
      return;
    }
    const auto n = emit_tcp(s, peer_ip, stack_ip, l4_, checksum_mode::software);
    if (!n) return;  // options that do not fit
    send_ipv4(peer_ip, ip_protocol::tcp, std::span(l4_).first(*n), mods);
  }

  // Where two fragments split `size` bytes (mods.fragments): the first's
  // length (a multiple of 8), and where the second starts (8 sooner where
  // they overlap, which RFC 5722 drops).
  static std::pair<std::size_t, std::size_t> split(std::size_t size, std::uint8_t fragments) {
    std::size_t first = std::min<std::size_t>(std::size_t(fragments & 15) * 8, (size - 1) / 8 * 8);
    if (first == 0) first = 8;
    return {first, fragments & 16 && first > 8 ? first - 8 : first};
  }

  // An IPv6 packet from the peer to the stack, whole or in two fragments;
  // the change and the NIC's marks go to the second (or only) one.
  void send_ipv6(std::uint8_t next, std::span<const std::byte> l4, const frame_mods& mods) {
    std::vector<std::vector<std::byte>> frames;
    if (mods.fragments == 0 || l4.size() <= 8) {
      frames.push_back(affine_fuzz::ipv6_frame(v6_ends, v6_ends.peer, v6_ends.stack, next, 64, l4));
    } else {
      const auto [first, second_at] = split(l4.size(), mods.fragments);
      frames = affine_fuzz::ipv6_fragments(v6_ends, next, l4, first, second_at, ++ip_id_);
    }
    const std::size_t marked = frames.size() - 1;
    if (mods.change) frames[marked][mods.change->first % frames[marked].size()] ^= std::byte(mods.change->second);
    const bool reversed = mods.fragments & 32;
    for (std::size_t k = 0; k < frames.size(); ++k) {
      const std::size_t i = reversed ? frames.size() - 1 - k : k;
      send_frame(frames[i], i == marked ? mods.rx_flags : 0);
    }
  }

  // An IPv4 datagram from `src` to the stack, whole or in two fragments.
  void send_ipv4(std::uint32_t src, ip_protocol proto, std::span<const std::byte> l4, const frame_mods& mods) {
    ipv4_header h{.src = src, .dst = stack_ip, .protocol = proto, .id = ++ip_id_};
    if (mods.fragments == 0 || l4.size() <= 8) {
      send_datagram(h, l4, mods);
      return;
    }
    const auto [first, second_at] = split(l4.size(), mods.fragments);
    ipv4_header a = h, b = h;
    a.more_fragments = true;
    b.fragment_offset = std::uint16_t(second_at);
    frame_mods plain = mods;
    plain.change.reset();
    if (mods.fragments & 32) {
      send_datagram(b, l4.subspan(second_at), mods);
      send_datagram(a, l4.first(first), plain);
    } else {
      send_datagram(a, l4.first(first), plain);
      send_datagram(b, l4.subspan(second_at), mods);
    }
  }

  void send_datagram(ipv4_header h, std::span<const std::byte> l4, const frame_mods& mods) {
    h.payload_length = std::uint16_t(l4.size());
    frame_.assign(14 + 20 + l4.size(), std::byte{0});
    (void)emit_ethernet({.dst = stack_mac, .src = peer_mac, .type = ether_type::ipv4}, frame_);
    (void)emit_ipv4(h, std::span(frame_).subspan(14), checksum_mode::software);
    if (!l4.empty()) std::memcpy(frame_.data() + 34, l4.data(), l4.size());
    if (mods.change) frame_[mods.change->first % frame_.size()] ^= std::byte(mods.change->second);
    send_frame(frame_, mods.rx_flags);
  }

  void send_frame(std::span<const std::byte> f, std::uint64_t rx_flags = 0) {
    const bool over_v6 = f.size() >= 14 && f[12] == std::byte{0x86} && f[13] == std::byte{0xdd};
    if (f.size() > link_mtu(over_v6) + 14u) return;  // the peer's link carries no more
    rte_mbuf* m = rte_pktmbuf_alloc(w_.pools[1]);
    require(m != nullptr, "the peer's pool ran out");
    char* to = rte_pktmbuf_append(m, std::uint16_t(f.size()));
    require(to != nullptr || f.empty(), "a frame does not fit an mbuf");
    if (!f.empty()) std::memcpy(to, f.data(), f.size());
    m->ol_flags = rx_flags;
    require(link_->b().tx_burst(0, &m, 1) == 1, "the wire refused a frame");
    ++frames_sent_;
  }

  void time_step() {
    const std::uint8_t b = in_.next();
    advance((std::uint64_t(b % 64) << (4 * (b / 64))) * ms);
  }

  // Time moves in up to 16 slices, each settled: what is due in a slice
  // fires at its end, what it sends meets the peer before the next slice.
  // (Moving from each reactor timer to the next is exact but slow: the
  // stack's timers tick every 10 ms while any connection lives.)
  void advance(std::uint64_t ns) { advance(ns, std::max<std::uint64_t>(ns / 16, ms)); }
  void advance(std::uint64_t ns, std::uint64_t slice) {
    for (std::uint64_t done = 0; done < ns;) {
      const std::uint64_t d = std::min(slice, ns - done);
      done += d;
      detail::set_manual_clock(now_ns() + d);
      link_->advance_to(now_ns());
      settle();
      ++jumps_;
    }
  }

  void app_step() {
    const std::uint8_t b = in_.next();
    const std::size_t amount = std::size_t(in_.next()) << (in_.next() % 12);
    peer_state& p = peers_[b % peers];
    const unsigned call = b / 16;
    const std::uint64_t now = now_ns();
    if (call == 0) {
      accept_all();
    } else if (call == 15) {
      listener_.close();  // what was never accepted is reset
      open_listener();
    } else if (call == 14 && b % peers == active) {
      connect();
    } else if (call == 13) {
      udp_call(b % peers, amount);
    } else if (!p.app.is_open()) {
      return;
    } else if (call < 5) {
      buffer_.resize(amount);
      if (auto r = p.app.read(buffer_, now)) check_read(p, std::span(buffer_).first(*r));
    } else if (call == 5) {
      if (auto v = p.app.read_view(now)) {
        const std::size_t n = std::min(amount, v->size());
        check_read(p, v->first(n));
        p.app.consume(n);
      }
    } else if (call < 8) {
      std::vector<std::byte> data(amount);
      for (std::size_t i = 0; i < amount; ++i) data[i] = std::byte('A' + (written_ + i) % 26);
      written_ += amount;
      (void)p.app.write(data, now);
    } else if (call == 8) {
      if (auto v = p.app.write_view(now)) {
        const std::size_t n = std::min(amount, v->size());
        std::memset(v->data(), 'w', n);
        (void)p.app.commit(n, now);
      }
    } else if (call < 10) {
      (void)p.app.shutdown_write();
    } else if (call < 12) {
      p.app.close();
    } else if (call == 12) {
      p.app.abort();
      p.app.close();
    } else {
      (void)p.app.set_no_delay(amount & 1);
    }
  }

  // The application reads: a peer's bytes come in sequence order.
  void check_read(peer_state& p, std::span<const std::byte> bytes) {
    for (std::byte x : bytes) {
      if (p.last_read && !p.tainted)
        require(x == std::byte(std::uint8_t(std::to_integer<std::uint8_t>(*p.last_read) + 1)),
                "the application read a byte out of sequence order");
      p.last_read = x;
      ++read_;
    }
  }

  void accept_all() {
    if (!listener_.is_open()) return;
    while (auto s = listener_.accept(now_ns())) {
      const auto peer = peer_of(s->remote().port);
      require(peer.has_value() && *peer != active && s->remote().addr == peer_address(*peer),
              "accepted a connection of no peer");
      peer_state& p = peers_[*peer];
      p.app = std::move(*s);
      p.last_read.reset();
    }
  }

  // The peer's address as the stack reports it: an IPv4 peer of a listener
  // on [::] as its IPv4-mapped address (RFC 3493 3.7).
  net::address peer_address(unsigned peer) const {
    if (v6(peer)) return peer_v6_;
    if (v6_peers_) return net::ipv6_address::v4_mapped(net::ipv4_address{peer_ip});
    return net::ipv4_address{peer_ip};
  }

  // The stack opens a connection to the peer's active_port: a fiber of its
  // own waits in connect() (a virtual second at most) while the steps go on.
  void connect() {
    if (connecting_.joinable() || peers_[active].app.is_open()) return;
    peers_[active] = {};
    active_local_port_ = 0;
    connect_finished_ = false;
    auto f = spawn([this] {
      auto s = net::connect({peer_address(active), active_port}, now_ns() + 1'000 * ms);
      if (s) connected_ = std::move(*s);
      connect_finished_ = true;
    });
    require(f.has_value(), "connect's fiber cannot be spawned");
    connecting_ = std::move(*f);
  }

  void reap_connect() {
    if (!connecting_.joinable() || !connect_finished_) return;
    (void)connecting_.join(stop_mode::ignore);
    if (connected_.is_open()) peers_[active].app = std::move(connected_);
  }

  // A receive, or a datagram to the peer over its family.
  void udp_call(unsigned peer, std::size_t amount) {
    if (amount & 1) {
      buffer_.resize(amount);
      (void)udp_.recv_from(buffer_, now_ns());
    } else {
      std::vector<std::byte> data(amount % 2048, std::byte{'u'});
      const net::address to = v6(peer) ? net::address(peer_v6_) : net::address(net::ipv4_address{peer_ip});
      (void)udp_.send_to({to, 5353}, data);
    }
  }

  // ICMP destination unreachable from the router, quoting (perhaps changed)
  // the last datagram the stack sent the peer.
  void icmp_step() {
    peer_state& p = peers_[in_.next() % peers];
    const std::uint8_t code = in_.next();
    const std::uint16_t mtu = std::uint16_t(in_.next()) * 8;
    const std::uint8_t quote_change = in_.next();
    const bool over_v6 = v6(unsigned(&p - peers_.data()));
    const std::vector<std::byte>& last = code & 32 ? last_udp_[over_v6] : p.last_datagram;
    if (last.empty()) return;
    std::vector<std::byte> quote(last.begin(),
                                 last.begin() + std::min<std::size_t>(last.size(), (over_v6 ? 40 : 20) + 8 + (code & 8 ? 40 : 0)));
    if (quote_change & 1) quote[(quote_change >> 1) % quote.size()] ^= std::byte(quote_change | 1);
    if (over_v6) {
      const bool too_big = (code & 7) == 4;
      send_frame(affine_fuzz::ipv6_error_frame(
          v6_ends, code & 16 ? router_v6 : v6_ends.peer, too_big ? icmpv6_type::packet_too_big : icmpv6_type::dest_unreachable,
          too_big ? 0 : code & 7, mtu, quote));
      return;
    }
    icmp_message m{.type = icmp_type::dest_unreachable, .code = std::uint8_t(code & 7), .next_hop_mtu = mtu,
                   .data = quote};
    l4_.resize(icmp_view::header_length + quote.size());
    const auto n = emit_icmp(m, l4_);
    if (!n) return;
    send_ipv4(code & 16 ? router_ip : peer_ip, ip_protocol::icmp, std::span(l4_).first(*n), {});
  }

  // A UDP datagram to the bound port (or one nobody bound), raw bytes
  // after an Ethernet header (any type) or an IPv4 header (any protocol),
  // or IPv6 (ipv6_frames.hh).
  void other_step() {
    const std::uint8_t kind = in_.next();
    const std::size_t len = in_.next();
    raw_.resize(len);
    for (auto& x : raw_) x = std::byte(in_.next());
    if (kind % 4 == 0) {
      l4_.resize(8 + len);
      const auto n = emit_udp({.src_port = 5353, .dst_port = kind & 4 ? udp_port : std::uint16_t(udp_port + 1)}, raw_,
                              peer_ip, stack_ip, l4_, checksum_mode::software);
      if (n) send_ipv4(peer_ip, ip_protocol::udp, std::span(l4_).first(*n), {.rx_flags = 0, .fragments = std::uint8_t(kind & 8 ? kind >> 4 | 1 : 0)});
    } else if (kind % 4 == 1) {
      send_datagram({.src = peer_ip, .dst = stack_ip, .protocol = ip_protocol(kind >> 2), .id = ++ip_id_}, raw_, {});
    } else if (kind % 4 == 3) {
      for (const auto& f : affine_fuzz::ipv6_step_frames(v6_ends, std::uint8_t(kind >> 2), raw_, ++ip_id_)) send_frame(f);
    } else {
      frame_.assign(14, std::byte{0});
      const auto type = std::array{ether_type::arp, ether_type::ipv4, ether_type(0x86dd), ether_type(0x8100)}[(kind >> 2) & 3];
      (void)emit_ethernet({.dst = kind & 128 ? broadcast_mac : stack_mac, .src = peer_mac, .type = type}, frame_);
      frame_.insert(frame_.end(), raw_.begin(), raw_.end());
      send_frame(frame_);
    }
  }

  // The reactor runs until nothing is left to do at this time; what the
  // stack sent is read off the wire, ARP requests answered.
  void settle() {
    std::size_t sent = 0;
    for (unsigned round = 0; round < 256; ++round) {
      this_fiber::yield();  // one turn of the reactor's loop: poll, inbox, timers, a fiber
      while (this_fiber::maybe_yield()) {
      }
      const std::size_t got = take_sent();
      sent += got;
      require(sent <= max_sent_per_step, "one step made the stack send without end");
      if (got == 0 && link_->in_flight(drivers::wire::side::b) == 0 && link_->in_flight(drivers::wire::side::a) == 0)
        break;
    }
    reap_connect();
    const core_counters& c = st_->counters(0);
    require(c.rx_packets.load() == frames_sent_, "a frame the peer sent never reached the RX path");
    require(st_->connections() <= max_connections_, "the flow table outgrew max_connections");
    require(st_->syn_received() <= backlog_, "the SYN queue outgrew the backlog");
  }

  // Frames off end b: every one parses; segments update the peers' state.
  std::size_t take_sent() {
    std::array<rte_mbuf*, 32> got;
    std::size_t total = 0;
    for (;;) {
      const auto n = link_->b().rx_burst(0, got.data(), got.size());
      for (unsigned i = 0; i < n; ++i) {
        const auto* data = rte_pktmbuf_mtod(got[i], const std::byte*);
        out_.assign(data, data + got[i]->data_len);
        rte_pktmbuf_free(got[i]);
        sent_frame(out_);
      }
      total += n;
      if (n < got.size()) return total;
    }
  }

  void sent_frame(std::span<const std::byte> f) {
    auto eth = ethernet_view::parse(f);
    require(eth.has_value(), "the stack sent a frame with no Ethernet header");
    if (eth->type() == ether_type::arp) {
      auto a = arp_view::parse(eth->payload());
      require(a.has_value(), "the stack sent an ARP packet that does not parse");
      if (a->op() == arp_op::request && (a->target_ip() == peer_ip || a->target_ip() == router_ip)) {
        std::vector<std::byte> reply(60);
        (void)emit_ethernet({.dst = stack_mac, .src = peer_mac, .type = ether_type::arp}, reply);
        (void)emit_arp({arp_op::reply, peer_mac, a->target_ip(), stack_mac, stack_ip}, std::span(reply).subspan(14));
        send_frame(reply);
      }
      return;
    }
    if (eth->type() == ether_type::ipv6) {
      const auto sent = affine_fuzz::check_sent_ipv6(v6_ends, eth->payload());
      if (sent.answer) send_frame(*sent.answer);
      if (sent.tcp) sent_segment(*sent.tcp, sent.packet, true);
      if (sent.udp) last_udp_[1].assign(sent.packet.begin(), sent.packet.end());
      return;
    }
    require(eth->type() == ether_type::ipv4, "the stack sent a frame neither ARP, IPv4 nor IPv6");
    auto ip = ipv4_view::parse(eth->payload());
    require(ip.has_value(), "the stack sent an IPv4 header that does not parse");
    require(!ip->is_fragment(), "the stack sent a fragment");
    const ipv4_header h = ip->header();
    require(h.src == stack_ip, "the stack sent from another address");
    if (h.protocol == ip_protocol::udp) {
      require(udp_view::parse(ip->payload(), h.src, h.dst).has_value(), "the stack sent a UDP datagram that does not parse");
      last_udp_[0].assign(ip->packet().begin(), ip->packet().end());
      return;
    }
    if (h.protocol == ip_protocol::icmp) {
      // An echo reply, or an error quoting what came (all of it when that
      // is under 8 bytes past its header: icmp_view wants 8 to match a quote).
      const auto m = ip->payload();
      checksum_accumulator sum;
      sum.add(m);
      require(m.size() >= icmp_view::header_length && sum.verifies(), "the stack sent an ICMP message that does not parse");
      // Time exceeded: a datagram whose reassembly timed out, code 1,
      // quoting its first fragment.
      const auto type = icmp_type(std::to_integer<std::uint8_t>(m[0]));
      const auto code = std::to_integer<std::uint8_t>(m[1]);
      require(type == icmp_type::echo_reply || type == icmp_type::dest_unreachable ||
                  (type == icmp_type::time_exceeded && code == std::uint8_t(time_exceeded_code::reassembly)),
              "the stack sent an unexpected ICMP type");
      if (type != icmp_type::echo_reply)
        require(m.size() >= icmp_view::header_length + ipv4_view::min_header_length,
                "the stack's ICMP error quotes less than an IPv4 header");
      return;
    }
    require(h.protocol == ip_protocol::tcp, "the stack sent an unknown protocol");
    auto t = tcp_view::parse(ip->payload(), h.src, h.dst);
    require(t.has_value(), "the stack sent a TCP segment that does not parse");
    sent_segment(t->segment(), ip->packet(), false);
  }

  // The stack sent `out` in `packet`: the peer it is for takes it, if it
  // speaks that family.
  void sent_segment(const tcp_segment& out, std::span<const std::byte> packet, bool over_v6) {
    if (out.dst_port == active_port && out.control == tcp_control::syn && !out.ack) active_local_port_ = out.src_port;
    const auto peer = peer_of(out.dst_port);
    if (!peer || v6(*peer) != over_v6) return;
    peer_state& p = peers_[*peer];
    p.last_datagram.assign(packet.begin(), packet.end());
    // Past a narrower link (settings [3] bit 6) the datagram is lost on the
    // path; the router's ICMP error (an icmp step) may quote it.
    if (packet.size() > link_mtu(over_v6)) return;
    p.sent(out);
    if (*peer == active && out.control == tcp_control::syn && !out.ack) {
      p.snd_nxt = seq32(777000);  // the SYN,ACK the peer may send: ISN 777000 - 1
      p.synced = true;
    }
  }

  // Every socket closed, the peer silent: within thirty virtual minutes no
  // connection is left (each ends by its own timers), then the stack goes.
  void teardown() {
    if (std::getenv("AFFINE_FUZZ_TRACE") != nullptr) trace();
    jumps_ = 0;
    const std::uint64_t teardown_start = now_ns();
    for (peer_state& p : peers_) p.app.close();
    listener_.close();
    udp_.close();
    // Slices of a second, growing by an eighth of the time gone up to 10 s
    // (the retransmission and persist timers back off as fast, to 60 s),
    // until the last connection is gone or thirty minutes have passed: 15
    // retransmissions at the RTO's 60 s bound (RFC 1122 R2) take 15, each
    // fired up to a slice late.
    const std::uint64_t limit = 30 * 60'000 * ms;
    while (now_ns() - teardown_start < limit && (st_->connections() != 0 || connecting_.joinable())) {
      advance(std::clamp<std::uint64_t>((now_ns() - teardown_start) / 8, 1'000 * ms, 10'000 * ms), ~0ULL);
      if (connecting_.joinable() && connect_finished_) {
        (void)connecting_.join(stop_mode::ignore);
        connected_.close();
      }
    }
    if (std::getenv("AFFINE_FUZZ_TRACE") != nullptr) {
      std::fprintf(stderr, "teardown: %llu clock moves, now +%llu ms\n", (unsigned long long)jumps_,
                   (unsigned long long)((now_ns() - teardown_start) / ms));
      if (st_->connections() != 0) trace();
    }
    require(st_->connections() == 0, "a connection outlived thirty silent minutes after every socket closed");
    net::detail::set_backend(nullptr);
    st_.reset();
    link_.reset();
  }

  // AFFINE_FUZZ_TRACE=1: what an input did, on stderr (to check a seed).
  void trace() const {
    const core_counters& c = st_->counters(0);
    unsigned open = 0;
    for (const peer_state& p : peers_) open += p.app.is_open();
    std::fprintf(stderr, "frames in %llu out %llu; tcp in %llu out %llu; read %zu bytes; %u streams open%s; %zu connections\n",
                 (unsigned long long)c.rx_packets.load(), (unsigned long long)c.tx_packets.load(),
                 (unsigned long long)c.tcp_segments_in.load(), (unsigned long long)c.tcp_segments_out.load(), read_,
                 open, peers_[active].app.is_open() ? " (the active one too)" : "", st_->connections());
    for (const std::string& line : st_->describe_connections()) std::fprintf(stderr, "  %s\n", line.c_str());
    for (const auto& [name, n] : c.nonzero()) std::fprintf(stderr, "  drop %s: %llu\n", name.c_str(), (unsigned long long)n);
  }

  world& w_;
  reader in_;
  std::unique_ptr<drivers::wire::link> link_;
  std::unique_ptr<affine::stack::stack> st_;
  net::stream_options accepted_;
  unsigned backlog_ = 1;
  bool timestamps_ = false;
  std::size_t max_connections_ = 0;
  std::uint32_t peer_mtu_ = 1500;
  bool v6_peers_ = false;
  std::array<std::vector<std::byte>, 2> last_udp_;  // the last UDP datagram the stack sent over IPv4, IPv6
  const net::ipv6_address peer_v6_ = net::ipv6_address::parse("fd99::2").value();
  net::tcp_listener listener_;
  net::udp_socket udp_;
  std::array<peer_state, peers> peers_{};
  std::uint16_t active_local_port_ = 0;
  fiber_handle connecting_;
  net::tcp_stream connected_;
  bool connect_finished_ = false;
  std::uint16_t ip_id_ = 0;
  std::uint64_t frames_sent_ = 0;
  std::size_t written_ = 0;
  std::size_t read_ = 0;
  std::uint64_t jumps_ = 0;  // clock moves
  std::vector<std::byte> payload_, l4_, frame_, raw_, out_, buffer_;
};

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  // Virtual time from the first read on: before the EAL or anything else reads the clock.
  require(detail::start_manual_clock(1'000'000 * ms), "the process clock was read before it could be made manual");
  auto eal = drivers::dpdk::init_eal_for_tests();
  require(eal.has_value(), "the DPDK EAL cannot start");
  auto* w = new world;
  auto topo = topology::from_system();
  require(topo.has_value(), "no topology");
  w->topo = std::make_unique<topology>(std::move(*topo));
  runtime_options o;
  o.cores = {core_id{0}};
  o.pin_threads = false;
  o.spin_us = 0;         // time stands still: a spin bounded by it would never end
  o.task_quota_us = 0;   // one fiber a turn: every yield passes the poll and timer rungs
  o.balance_interval_us = 0;
  o.on_reactor_start = drivers::dpdk::register_reactor;
  policy::policy_config pc;
  pc.busy_poll_budget_ns = 0;  // as spin_us
  auto rt = runtime::start(*w->topo, o, &pc);
  require(rt.has_value(), "the runtime cannot start");
  w->rt = std::move(*rt);
  for (unsigned i = 0; i < 2; ++i) {
    const std::string name = "fuzz_stack_" + std::to_string(i);
    w->pools[i] = rte_pktmbuf_pool_create(name.c_str(), pool_mbufs, 0, 0, RTE_MBUF_DEFAULT_BUF_SIZE, SOCKET_ID_ANY);
    require(w->pools[i] != nullptr, "no packet pool");
  }
  the_world = w;
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size < 4) return 0;
  world& w = *the_world;
  w.rt->run([&] { driver(w, std::span(data, size)).run(); });
  require(tcp::connection::live_count() == 0, "a connection outlived the stack");
  require(tcp::ring_buffer::live_bytes() == 0, "a ring buffer outlived its connection");
  require(udp_socket::live_count() == 0, "a UDP socket outlived the stack");
  for (rte_mempool* p : w.pools) require(rte_mempool_in_use_count(p) == 0, "an mbuf outlived the stack");
  return 0;
}
