#pragma once
// The userspace TCP/IP stack on one port (DESIGN.md section 2): the port's
// RX pollers hand packets to receive() on their core (the RX path: never
// blocks, never runs user code); fibers use the socket API (backend()); each
// core sends on its own TX queue and runs a timer fiber for the sockets
// homed on it.
//
// Create and destroy a stack from a fiber of the runtime it runs on.

#include <array>
#include <atomic>
#include <cstdint>
#include <expected>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "affine/fiber.hh"
#include "drivers/net_backend.hh"
#include "affine/runtime.hh"
#include "affine/sync.hh"
#include "affine/topology.hh"
#include "drivers/attach.hh"
#include "drivers/port.hh"
#include "reactor/policy/busy_poll.hh"
#include "stack/counters.hh"
#include "stack/rps.hh"
#include "stack/flow_table.hh"
#include "stack/port_table.hh"
#include "stack/ip/arp_cache.hh"
#include "stack/ip/ipv6_interface.hh"
#include "stack/ip/neighbor_cache.hh"
#include "stack/ip/reassembly.hh"
#include "stack/ip/route.hh"
#include "stack/wire/icmp.hh"
#include "stack/listen_socket.hh"
#include "stack/rss_ports.hh"
#include "stack/tcp/config.hh"
#include "stack/tcp/isn.hh"
#include "stack/tcp_socket.hh"
#include "stack/tcp/challenge_budget.hh"
#include "stack/tcp/syn_cookie.hh"
#include "stack/udp_socket.hh"
#include "stack/wire/udp.hh"
#include "stack/wire/ipv4.hh"
#include "stack/wire/icmpv6.hh"
#include "stack/wire/ipv6.hh"
#include "stack/wire/ndp.hh"

namespace affine::stack {

struct stack_config {
  std::uint32_t address = 0;  // host order
  std::uint8_t prefix_length = 24;
  std::optional<std::uint32_t> gateway;
  tcp::connection_config tcp;  // defaults of every connection
  std::size_t max_connections = 65536;
  tcp::syn_cookie_mode syn_cookies = tcp::syn_cookie_mode::automatic;  // every listener's
  std::uint32_t challenge_acks_per_s = 1000;  // RFC 5961 7 over all connections; 0: no such bound
  // Connections in TIME-WAIT at once; past it a connection that would enter
  // TIME-WAIT ends at once (counted: drop tcp_time_wait_full), as Linux's
  // tcp_max_tw_buckets.
  std::size_t max_time_wait = 32768;
  arp_config arp;
  reassembly_config reassembly;
  bool rx_interrupts = true;
  // RX queue q's steering ([[port.rxq]] rps; seed 003); missing: off.
  std::vector<policy::rps_mode> rps;
  // RX queue q's busy-poll budget in microseconds ([[port.rxq]]
  // busy_poll_budget_us; seed 001); missing or -1: busy_poll.budget_us.
  std::vector<std::int64_t> busy_poll_budget_us;

  // IPv6 (issue 21). The port's addresses besides its link-local one,
  // which is derived from the MAC (RFC 4291 2.5.1, modified EUI-64) or as
  // a stable identifier (RFC 7217), or not at all; with no address and no
  // link-local one the port has no IPv6 (the default here: the file's
  // default is a stable link-local address).
  std::vector<ipv6_prefix_address> ipv6;
  enum class link_local_mode : std::uint8_t { off, eui64, stable };
  link_local_mode link_local = link_local_mode::off;
  std::array<std::uint8_t, 16> stable_secret{};  // RFC 7217's secret_key
  std::optional<ipv6_bytes> gateway6;
  bool accept_router_advertisements = true;
  std::uint32_t dad_transmits = 1;          // RFC 4862 5.1
  std::uint32_t icmpv6_errors_per_s = 1000;  // RFC 4443 2.4(f), over the port; 0: no bound
  neighbor_config neighbors;
};

class stack final : public drivers::packet_sink {
 public:
  // Attaches to `port` (one RX poller per reactor, `plan` giving the RX
  // queues their cores). Errors: a bad address, a plan or port the runtime
  // cannot use.
  static std::expected<std::unique_ptr<stack>, std::string> create(runtime& rt, drivers::port& port,
                                                                   const stack_config& cfg,
                                                                   std::span<const rxq_assignment> plan);
  ~stack() override;
  stack(const stack&) = delete;
  stack& operator=(const stack&) = delete;

  // The socket API on this stack (net::detail::set_backend, or directly).
  // Made with the stack, so fibers on any core may ask for it at once.
  net::detail::backend& backend() { return *backend_; }

  // The RX path (drivers::packet_sink): on reactor `core`, a batch
  // from RX queue `queue`, steered to other cores where its RPS mode says.
  void receive(unsigned core, unsigned queue, std::span<rte_mbuf*> pkts) override;

  const core_counters& counters(unsigned core) const;
  unsigned cores() const { return unsigned(cores_.size()); }
  std::uint32_t address() const { return routes_.address(); }
  std::size_t connections() const { return flows_.size(); }
  // Connections in SYN-RECEIVED over every listener: what their SYN queues
  // hold (each bounded by its backlog). Takes the listeners' locks.
  std::size_t syn_received();
  // One line per connection (tcp::connection::describe), for stats and for
  // tests that must say why a transfer stalled.
  std::vector<std::string> describe_connections() const;
  // Core `core`'s TCP timers (timer_fiber.cc): wakeups of its timer fiber,
  // wheel entries that fired, entries armed.
  struct timer_counts {
    std::uint64_t wakeups = 0, fired = 0, armed = 0;
  };
  timer_counts timers(unsigned core) const;
  const arp_cache::counters& arp_counts() const { return arp_.counts(); }
  // The port's IPv6 addresses with their DAD state (the link-local one
  // first), and the interface's counters; none without IPv6.
  std::vector<ipv6_interface::address_entry> ipv6_addresses();
  ipv6_interface::counters ipv6_counts();
  const rss_steering& steering() const { return steering_; }
  drivers::port& port() { return port_; }
  // Packets the core's TX queue dropped (the port's ring was full).
  std::uint64_t tx_dropped(unsigned core) const { return attachment_->tx(core).dropped(); }

  // --- for the socket layer (stack/socket_api.cc) ---
  std::expected<socket_ref, std::error_code> connect(net::endpoint to, const net::stream_options& opts);
  std::expected<listen_socket*, std::error_code> listen(const net::listen_options& opts);
  void close_listener(listen_socket* l);
  // After a change to s.conn (lock held): send what is due on the calling
  // core, wake waiters, publish the deadline. Returns what to do once the
  // lock is released (finish()).
  struct settled {
    bool poke_timer = false;
    bool rearm = false;  // the deadline moved before what the home wheel is armed for
    bool closed = false;
  };
  settled settle(tcp_socket& s, std::uint64_t now_ns);
  void finish(tcp_socket& s, settled what);
  // A connection's settings: the file's, `opts`, and the MSS its family's
  // headers leave of the MTU.
  tcp::connection_config connection_config(const net::stream_options& opts, const flow_tuple& t) const;
  // UDP ports (udp_socket.cc): bound with a reference for the caller;
  // close_udp unbinds and wakes the readers (the caller then unrefs).
  std::expected<udp_socket*, std::error_code> bind_udp(const net::udp_options& opts);
  void close_udp(udp_socket* u);
  // Precondition: in a fiber of the runtime. Errors: invalid_argument (port
  // or address 0), message_size (more than one frame carries),
  // network_unreachable (no route).
  std::expected<void, std::error_code> send_udp(std::uint16_t local_port, net::endpoint to,
                                                std::span<const std::byte> datagram);
  // Seed 001: a reader that found no data polls the RX queues that carry its
  // flow, in its own fiber, until data arrives, the busy_poll budget ends or
  // (yield_when_runnable) another fiber is runnable on its core. Returns why
  // it stopped (policy::poll_exit). Precondition: in a fiber, no lock held.
  policy::poll_exit busy_poll(tcp_socket& s);
  // The budget for busy polling `s`: its RX queue's, else the runtime's.
  std::uint64_t busy_poll_budget_ns(const tcp_socket& s) const;
  // The socket's reader runs on the calling core (RFS for per-queue RPS,
  // seed 003). Precondition: s.lock held, on a reactor.
  void note_reader(const tcp_socket& s);

 private:
  struct per_core;

  stack(runtime& rt, drivers::port& port, const stack_config& cfg, route_table routes);

  // rx_frames.cc: Ethernet, ARP, IPv4, ICMP on the RX path.
  void process(unsigned core, std::span<rte_mbuf*> pkts, int queue = -1) { process(core, pkts, queue, now_ns()); }
  void process(unsigned core, std::span<rte_mbuf*> pkts, int queue, std::uint64_t now);
  void frame_in(per_core& pc, rte_mbuf* m, std::uint64_t now);
  // An Ethernet multicast address of an IPv6 group the port joined (RFC
  // 2464 7): all-nodes, and each address's solicited-node group.
  bool ipv6_group_mac(const mac_address& mac);
  void arp_in(per_core& pc, std::span<const std::byte> bytes, std::uint64_t now);
  void ipv4_in(per_core& pc, rte_mbuf* m, std::span<const std::byte> bytes, std::uint64_t now);
  void transport_in(per_core& pc, const ipv4_header& ip, std::span<const std::byte> payload, bool l4_checked,
                    std::uint64_t now);
  void icmp_in(per_core& pc, const ipv4_header& ip, std::span<const std::byte> bytes, std::uint64_t now);
  reassembly_result reassemble(per_core& pc, const fragment_key& key, std::uint32_t offset, bool more,
                               std::span<const std::byte> payload, std::span<const std::byte> packet,
                               std::uint64_t now);
  void reassembly_expired(per_core& pc, const fragment_key& key, std::span<const std::byte> first_fragment,
                          std::uint64_t now);
  // A destination unreachable whose quote is ours (rx_icmp.cc): true when
  // it named a live connection and a sequence number in flight.
  bool icmp_error_in(per_core& pc, const icmp_view& v, const ipv4_quote& q, std::uint64_t now);
  bool icmpv6_error_in(per_core& pc, const icmpv6_view& v, const ipv6_quote& q, std::uint64_t now);
  bool icmp_to_tcp(per_core& pc, const flow_tuple& t, seq32 seq, tcp::icmp_error error, std::uint32_t mtu,
                   std::uint64_t now);
  // A "fragmentation needed" or Packet Too Big for `dst`, to the path-MTU
  // cache (under pmtu_lock_).
  void lower_path_mtu(const flow_address& dst, std::uint32_t mtu, std::uint64_t now);
  // A "fragmentation needed" or Packet Too Big quoting a datagram one of
  // our UDP sockets sent from `src` to `dst` (rx_icmp.cc).
  bool udp_too_big_in(per_core& pc, const flow_address& src, const flow_address& dst,
                      std::span<const std::byte> transport, std::uint32_t mtu, std::uint64_t now);
  // The largest IP packet to send `dst` now: the link's MTU, or less where
  // the path-MTU cache knows less.
  std::uint32_t path_mtu_to(const flow_address& dst, std::uint64_t now);
  void count_time_wait(per_core& pc, tcp_socket& s);
  // A new connection to `dst` keeps within the path MTU known for it.
  void apply_path_mtu(tcp::connection& c, const flow_tuple& t, std::uint64_t now);
  void udp_in(per_core& pc, const ipv4_header& ip, std::span<const std::byte> bytes, bool l4_checked,
              std::uint64_t now);
  // A datagram for `local` from `remote`, its header checked: to the socket
  // bound for it (true), or to none (false: the caller answers).
  bool udp_deliver(per_core& pc, const flow_address& local, const flow_address& remote, const udp_view& u);

  // rx_ipv6.cc: IPv6, ICMPv6 and Neighbor Discovery on the RX path.
  void ipv6_in(per_core& pc, std::span<const std::byte> bytes, std::uint64_t now);
  void icmpv6_in(per_core& pc, const ipv6_header& ip, std::span<const std::byte> bytes, ipv6_interface::match to,
                 std::uint64_t now);
  void solicitation_in(per_core& pc, const ipv6_header& ip, const icmpv6_view& v, std::uint64_t now);
  void advertisement_in(per_core& pc, const ipv6_header& ip, const icmpv6_view& v, std::uint64_t now);
  void router_advertisement_in(per_core& pc, const ipv6_header& ip, const icmpv6_view& v, std::uint64_t now);
  void redirect_in(per_core& pc, const ipv6_header& ip, const icmpv6_view& v, std::uint64_t now);
  void upper_in(per_core& pc, const ipv6_header& h, std::uint8_t protocol, std::size_t protocol_field,
                std::span<const std::byte> payload, std::span<const std::byte> packet, ipv6_interface::match to,
                std::uint64_t now);
  void udp6_in(per_core& pc, const ipv6_header& ip, std::span<const std::byte> bytes, std::span<const std::byte> packet,
               ipv6_interface::match to, std::uint64_t now);

  // neighbors.cc: the neighbor cache (RFC 4861 7.2, 7.3) as the stack
  // uses it, and the IPv6 interface's timers (DAD, routers) on core 0.
  // `from_router`: the message says `addr` is a router (IsRouter, RFC 4861 6.3.4, 8.3).
  void learn_neighbor(per_core& pc, const ipv6_bytes& addr, const mac_address& mac, std::uint64_t now,
                      bool from_router = false);
  void advertised_neighbor(per_core& pc, const neighbor_advertisement& na, std::uint64_t now);
  void transmit_ipv6(per_core& pc, rte_mbuf* m, const ipv6_bytes& next_hop, std::uint64_t now);
  std::uint64_t ipv6_deadline();  // core 0's timer fiber
  void ipv6_timers(per_core& pc, std::uint64_t now);
  void start_ipv6(per_core& pc, std::uint64_t now);

  // rx_tcp_demux.cc: segments to sockets and listeners.
  // The addresses come by value: a header struct just built a field at a
  // time and loaded two fields at once stalls on store forwarding.
  // `local` and `remote` as flow.hh writes them, `ph` the segment's
  // checksum pseudo-header.
  // `ecn`: the IP header's ECN field (RFC 3168 5).
  void tcp_in(per_core& pc, const flow_address& local, const flow_address& remote, const pseudo_header& ph,
              std::span<const std::byte> bytes, bool l4_checked, ip_ecn ecn, std::uint64_t now);
  // `reopen_iss`: the SYN ended a connection's TIME-WAIT (tcp::listener::input).
  void listen_in(per_core& pc, listen_socket& l, const flow_tuple& t, const tcp_segment& seg, std::uint64_t now,
                 std::optional<seq32> reopen_iss = std::nullopt);
  // The listener that takes segments for `t` (addressed to `local`), with
  // a reference; null when none does.
  listen_socket* listener_for(per_core& pc, const flow_tuple& t, const flow_address& local);
  // A SYN for `s` (locked) in TIME-WAIT that opens the next incarnation
  // (RFC 6191): ends TIME-WAIT, unlocks `s`, hands the SYN to the listener
  // and returns true. False, `s` still locked, when it may not.
  bool reopen_time_wait(per_core& pc, tcp_socket& s, const flow_tuple& t, const flow_address& local,
                        const tcp_segment& seg, std::uint64_t now);
  void child_settled(tcp_socket& s, tcp::event_set ev);

  // tx_frames.cc: frames out on the calling core's TX queue.
  using l4_writer = tcp::function_ref<std::size_t(std::span<std::byte> out, bool offload)>;
  // `ecn`: the ECN field of the TOS byte (RFC 3168 5); the DSCP is 0.
  void send_ipv4(per_core& pc, std::uint32_t dst, ip_protocol proto, std::size_t l4_bytes, l4_writer write,
                 std::uint64_t now, ip_ecn ecn = ip_ecn::not_ect);
  // Whether a datagram to `dst` goes with DF: always, but to a path that
  // reported an MTU under the cache's floor (path_mtu_cache::may_fragment).
  bool dont_fragment(per_core& pc, std::uint32_t dst, std::uint64_t now);
  void send_tcp(per_core& pc, const flow_tuple& t, const tcp_segment& seg, std::uint64_t now);
  void send_arp(per_core& pc, bool reply, const mac_address& dst_mac, std::uint32_t target_ip);
  void icmp_error(per_core& pc, icmp_type type, std::uint8_t code, std::span<const std::byte> datagram,
                  std::uint32_t to, std::uint64_t now);
  void transmit(per_core& pc, rte_mbuf* m, std::uint32_t next_hop, std::uint64_t now);

  // tx_ipv6.cc: IPv6 out. `dst_mac` given: sent there, no next hop looked
  // up (multicast, or an answer to a solicitation that named its sender's).
  rte_mbuf* ipv6_frame(per_core& pc, const ipv6_header& h, std::size_t l4_bytes, l4_writer write);
  void send_ipv6(per_core& pc, const ipv6_header& h, std::size_t l4_bytes, l4_writer write, std::uint64_t now,
                 std::optional<mac_address> dst_mac = {});
  void send_icmpv6(per_core& pc, const ipv6_bytes& src, const ipv6_bytes& dst, std::uint8_t hop_limit,
                   std::size_t bytes, l4_writer write, std::uint64_t now, std::optional<mac_address> dst_mac = {});
  void echo6_reply(per_core& pc, const ipv6_header& ip, const icmpv6_view& v, std::uint64_t now);
  void icmpv6_error(per_core& pc, icmpv6_type type, std::uint8_t code, std::uint32_t pointer,
                    std::span<const std::byte> packet, std::uint64_t now);
  void send_advertisement(per_core& pc, const neighbor_advertisement& na, const ipv6_bytes& dst,
                          std::optional<mac_address> dst_mac, std::uint64_t now);
  void send_solicitation(per_core& pc, const ipv6_bytes& target, std::optional<mac_address> unicast_to, bool dad,
                         std::uint64_t now);
  void send_mld_report(per_core& pc);
  per_core& here();
  tcp_socket* lock_flow(per_core& pc, const flow_tuple& t);
  void forget_flow(per_core& pc);
  // A flow's segments in one RX batch are settled once, after the batch
  // (rx_tcp_demux.cc): settle_later takes the locked socket (and unlocks it),
  // settle_batch settles what waits.
  void settle_later(per_core& pc, tcp_socket& s, std::uint64_t now);
  void settle_batch(per_core& pc, std::uint64_t now);

  // timer_fiber.cc: one fiber per core.
  void timer_loop(per_core& pc);
  void poke_timer(per_core& pc);
  void home(tcp_socket* s);
  void queue_rearm(tcp_socket& s);
  void drain_rearms(per_core& pc);
  void arm_homed(per_core& pc, tcp_socket& s);
  void unhome(per_core& pc, tcp_socket& s);
  void wheel_fired(tcp_socket& s);
  void release_timers(per_core& pc);
  friend void on_wheel_entry(timer& entry, void* socket);

  // `t` with its local port left to pick.
  std::optional<std::uint16_t> pick_local_port(flow_tuple t, unsigned core);
  udp_socket* find_udp(std::uint16_t port, const flow_address& dst);  // with a reference
  // Whether `a` is an address of this port (IPv6: a preferred or tentative one).
  bool is_ours(const flow_address& a);
  // The source for a packet to `dst`: the IPv4 address, or one of the
  // IPv6 addresses (RFC 6724); nullopt when the port has none of its family.
  std::optional<flow_address> source_for(const flow_address& dst);
  // A packet of `proto` for the transport layer, from t.local_addr to
  // t.remote_addr, over IPv4 or IPv6 (with the flow's label).
  void send_ip(per_core& pc, const flow_tuple& t, std::uint8_t proto, std::size_t l4_bytes, l4_writer write,
               std::uint64_t now, ip_ecn ecn = ip_ecn::not_ect);
  // The IPv6 flow label of a transport flow (RFC 6437): one per flow, the
  // same on all its packets, not 0.
  std::uint32_t flow_label(const flow_tuple& t, std::uint8_t proto) const;

  runtime& rt_;
  drivers::port& port_;
  stack_config cfg_;
  route_table routes_;
  mac_address mac_;
  bool tx_ip_offload_ = false;
  bool tx_l4_offload_ = false;
  tcp::isn_generator isn_;
  tcp::syn_cookies cookies_;
  tcp::siphash_key flow_label_key_;
  mutable tcp::challenge_budget challenge_budget_;  // every connection's (connection_config())
  flow_table flows_;
  std::atomic<std::size_t> time_wait_count_{0};  // sockets with in_time_wait set
  spinlock arp_lock_;
  arp_cache arp_;  // under arp_lock_
  // IPv6 (issue 21): the interface's addresses and routers and the
  // neighbor cache, one lock for both; empty v6_: the port has no IPv6.
  spinlock v6_lock_;
  std::optional<ipv6_interface> v6_;  // under v6_lock_
  neighbor_cache nd_;                 // under v6_lock_
  // Changes to v6_ (addresses, routers, their lifetimes), counted under
  // v6_lock_: a core's copy of what v6_ answered (send_ipv6's next hop,
  // ipv6_in's last destination) is good while it stays.
  std::atomic<std::uint64_t> v6_changes_{0};
  tcp::challenge_budget icmpv6_errors_;  // RFC 4443 2.4(f)
  spinlock pmtu_lock_;
  path_mtu_cache pmtu_;    // under pmtu_lock_: RFC 1191 estimates per destination
  path_mtu_cache6 pmtu6_;  // under pmtu_lock_: RFC 8201's
  // Whether either cache ever lowered a path's estimate (false: path_mtu_to
  // is the link's MTU without a look); how many times an IPv4 path was
  // reported narrower than pmtu_'s floor (0: never, and every datagram goes
  // with DF without a look at pmtu_).
  std::atomic<bool> paths_lowered_{false};
  std::atomic<std::uint32_t> narrow_paths_{0};
  spinlock listeners_lock_;              // serializes listen() and close_listener()
  port_table<listen_socket> listeners_;   // IPv4's: RX lookups take no lock; a reference each
  port_table<listen_socket> listeners6_;  // IPv6's: a dual-stack listener is in both
  spinlock udp_lock_;
  std::vector<std::pair<std::uint16_t, udp_socket*>> udp_ports_;  // under udp_lock_; a reference each
  std::atomic<std::uint32_t> next_port_;
  rss_steering steering_;  // set once in create()
  std::vector<std::unique_ptr<per_core>> cores_;
  std::unique_ptr<drivers::port_attachment> attachment_;
  std::unique_ptr<rps> rps_;  // when a queue steers
  std::unique_ptr<net::detail::backend> backend_;  // set in the constructor, never replaced

  std::unique_ptr<net::detail::backend> make_backend();  // socket_api.cc
};

}  // namespace affine::stack
