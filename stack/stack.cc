#include "stack/stack.hh"

#include <rte_mbuf.h>

#include <unistd.h>

#include <algorithm>
#include <random>

#include <fmt/format.h>

#include "affine/log.hh"
#include "reactor/here.hh"
#include "stack/family.hh"
#include "stack/ip/link_local.hh"
#include "stack/per_core.hh"

namespace affine::stack {

std::expected<std::unique_ptr<stack>, std::string> stack::create(runtime& rt, drivers::port& port,
                                                                 const stack_config& cfg,
                                                                 std::span<const rxq_assignment> plan) {
  // Address 0: no IPv4 on the port (issue 21), when it has IPv6 instead.
  const bool ipv6_only = cfg.address == 0 && (!cfg.ipv6.empty() || cfg.link_local != stack_config::link_local_mode::off);
  auto routes = ipv6_only ? route_table::none() : route_table::make({cfg.address, cfg.prefix_length, cfg.gateway});
  if (!routes)
    return std::unexpected(fmt::format("stack on {}: address {}/{}: {}", port.name(),
                                       net::ipv4_address{cfg.address}.to_string(), cfg.prefix_length,
                                       to_string(routes.error())));
  std::unique_ptr<stack> st(new stack(rt, port, cfg, std::move(*routes)));
  // Polling starts once the stack is whole (below): receive() needs cores_.
  auto att = drivers::attach(rt, port, plan, *st, {.rx_interrupts = cfg.rx_interrupts, .start_polling = false});
  if (!att) return std::unexpected(att.error());
  st->attachment_ = std::move(*att);
  std::vector<unsigned> core_of_queue(port.rx_queue_count(), 0);
  for (const rxq_assignment& a : plan)
    for (unsigned r = 0; r < rt.cores(); ++r)
      if (rt.topology_core(r) == a.core && a.queue < core_of_queue.size()) core_of_queue[a.queue] = r;
  st->steering_ = rss_steering(port.caps().rss_key, port.rss_table(), std::move(core_of_queue));
  for (unsigned c = 0; c < rt.cores(); ++c) {
    rte_mempool* mp = port.pool(rt.topo().core(rt.topology_core(c)).node);
    st->cores_.push_back(std::make_unique<per_core>(c, cfg.reassembly, st->attachment_->tx(c), mp));
  }
  if (std::ranges::any_of(cfg.rps, [](policy::rps_mode m) { return m != policy::rps_mode::off; })) {
    std::vector<core_counters*> counters;
    for (auto& pc : st->cores_) counters.push_back(&pc->counters);
    st->rps_ = std::make_unique<rps>(
        rt, cfg.rps, [s = st.get()](unsigned core, std::span<rte_mbuf*> pkts) { s->process(core, pkts); },
        std::move(counters));
  }
  for (auto& pc : st->cores_) {
    // The stack's own fibers follow no stop token: they end with the stack.
    // Stack code from end to end, short each time: never preempted.
    auto f = spawn([s = st.get(), p = pc.get()] { s->timer_loop(*p); },
                   {.core = pc->index, .pinned = true, .stop = std::stop_token{}, .preemptible = false});
    if (!f) return std::unexpected(fmt::format("stack on {}: timer fiber: {}", port.name(), f.error().message()));
    pc->timer_fiber = std::move(*f);
  }
  st->attachment_->start();
  st->start_ipv6(st->here(), now_ns());
  return st;
}

namespace {

// Linux's tcp_mem high mark by default: 3/32 of the machine's memory.
std::size_t default_buffer_memory() {
  const long pages = ::sysconf(_SC_PHYS_PAGES), page = ::sysconf(_SC_PAGESIZE);
  if (pages <= 0 || page <= 0) return std::size_t(1) << 30;
  return std::size_t(pages) * std::size_t(page) / 32 * 3;
}

}  // namespace

stack::stack(runtime& rt, drivers::port& port, const stack_config& cfg, route_table routes)
    : rt_(rt),
      port_(port),
      cfg_(cfg),
      routes_(std::move(routes)),
      mac_(port.mac()),
      tx_ip_offload_(port.caps().tx_ipv4_checksum),
      tx_l4_offload_(port.caps().tx_l4_checksum && port.caps().tx_ipv4_checksum),
      isn_(tcp::isn_generator::from_random_device()),
      cookies_(tcp::syn_cookies::from_random_device()),
      flow_label_key_(tcp::random_siphash_key()),
      challenge_budget_(cfg.challenge_acks_per_s, std::random_device{}()),
      flows_(cfg.max_connections),
      arp_(cfg.arp),
      nd_(cfg.neighbors),
      icmpv6_errors_(cfg.icmpv6_errors_per_s, std::random_device{}()),
      pmtu_(path_mtu_config{.interface_mtu = port.caps().mtu}),
      pmtu6_(ipv6_path_mtu_config(port.caps().mtu)),
      listeners_(rt.cores()),
      listeners6_(rt.cores()),
      next_port_(49152 + std::uint32_t(now_ns() % 16384)) {
  if (cfg_.tcp.buffer_memory_limit == 0) cfg_.tcp.buffer_memory_limit = default_buffer_memory();
  ipv6_interface_config v6{.addresses = cfg.ipv6,
                           .gateway = cfg.gateway6,
                           .accept_router_advertisements = cfg.accept_router_advertisements && !cfg.gateway6,
                           .dad_transmits = cfg.dad_transmits};
  if (cfg.link_local != stack_config::link_local_mode::off) {
    // RFC 4291 2.5.1, RFC 7217 5 (its net_iface: the port's name).
    const ipv6_bytes ll = cfg.link_local == stack_config::link_local_mode::eui64
                              ? eui64_link_local(mac_)
                              : stable_address(link_local_prefix, port.name(), cfg.stable_secret);
    v6.addresses.insert(v6.addresses.begin(), ipv6_prefix_address{ll, 64});
  }
  if (!v6.addresses.empty()) v6_.emplace(std::move(v6));
  backend_ = make_backend();
}

stack::~stack() {
  for (auto& pc : cores_) {
    pc->timer_lock.lock();
    pc->stopping = true;
    pc->timer_wait.notify_all();
    pc->timer_lock.unlock();
    if (pc->timer_fiber.joinable()) pc->timer_fiber.join(stop_mode::ignore);
  }
  attachment_.reset();  // no more RX: the pollers are off the reactors
  rps_.reset();         // nor backlogs
  for (auto& pc : cores_) forget_flow(*pc);
  for (port_table<listen_socket>* table : {&listeners_, &listeners6_}) {
    std::vector<std::pair<std::uint16_t, listen_socket*>> ls;
    table->for_each([&](std::uint16_t port, listen_socket* l) { ls.emplace_back(port, l); });
    for (auto [port, l] : ls)
      if (table->remove(port, l)) l->unref();
  }
  {
    std::lock_guard g(udp_lock_);
    for (auto& [port, u] : udp_ports_) u->unref();
    udp_ports_.clear();
  }
  for (auto& pc : cores_) release_timers(*pc);
  {
    std::lock_guard g(v6_lock_);
    for (rte_mbuf* m : nd_.clear()) rte_pktmbuf_free(m);
  }
  std::lock_guard g(arp_lock_);
  for (rte_mbuf* m : arp_.clear()) rte_pktmbuf_free(m);
}

std::vector<std::string> stack::describe_connections() const {
  std::vector<std::string> out;
  const std::uint64_t now = now_ns();
  flows_.for_each([&](const flow_tuple& t, tcp_socket& s) {
    std::lock_guard g(s.lock);  // lock order: shard, then socket (nothing takes a shard under a socket lock)
    out.push_back(fmt::format("{} > {} {}", endpoint_of(t.local_addr, t.local_port).to_string(),
                              endpoint_of(t.remote_addr, t.remote_port).to_string(), s.conn.describe(now)));
  });
  return out;
}

bool stack::is_ours(const flow_address& a) {
  if (is_v4(a)) return routes_.address() != 0 && v4_address(a) == routes_.address();
  std::lock_guard g(v6_lock_);
  if (!v6_) return false;
  const auto m = v6_->classify(a);
  return m == ipv6_interface::match::unicast || m == ipv6_interface::match::tentative;
}

std::optional<flow_address> stack::source_for(const flow_address& dst) {
  if (is_v4(dst)) {
    if (routes_.address() == 0) return std::nullopt;
    return v4_flow(routes_.address());
  }
  std::lock_guard g(v6_lock_);
  if (!v6_) return std::nullopt;
  return v6_->source_for(dst);
}

const core_counters& stack::counters(unsigned core) const { return cores_[core]->counters; }

void stack::note_reader(const tcp_socket& s) {
  if (!rps_) return;
  const flow_tuple& t = s.conn.tuple();
  rps_->note_reader(flow_hash(fold32(t.local_addr), t.local_port, fold32(t.remote_addr), t.remote_port),
                    detail::here::core());
}

stack::per_core& stack::here() { return *cores_[detail::here::core()]; }

tcp::connection_config stack::connection_config(const net::stream_options& opts, const flow_tuple& t) const {
  tcp::connection_config c = cfg_.tcp;
  c.mss = std::uint16_t(port_.caps().mtu - ip_header_bytes(t) - 20);
  c.global_challenge_budget = &challenge_budget_;
  c.no_delay = opts.no_delay;
  c.keepalive.enabled = opts.keepalive;
  const auto ns = [](auto d) { return std::uint64_t(std::chrono::nanoseconds(d).count()); };
  if (opts.keepalive_idle.count() > 0) c.keepalive.idle_ns = ns(opts.keepalive_idle);
  if (opts.keepalive_interval.count() > 0) c.keepalive.interval_ns = ns(opts.keepalive_interval);
  if (opts.keepalive_count > 0) c.keepalive.count = opts.keepalive_count;
  if (opts.user_timeout.count() > 0) c.user_timeout_ns = ns(opts.user_timeout);
  switch (opts.congestion) {
    case net::congestion_control::configured: break;
    case net::congestion_control::cubic: c.congestion = tcp::congestion_algorithm::cubic; break;
    case net::congestion_control::newreno: c.congestion = tcp::congestion_algorithm::new_reno; break;
  }
  // Sized by the application: not tuned (Linux's SOCK_SNDBUF_LOCK, SOCK_RCVBUF_LOCK).
  if (opts.send_buffer != 0) {
    c.send_buffer = opts.send_buffer;
    c.send_buffer_max = 0;
  }
  if (opts.receive_buffer != 0) {
    c.recv_buffer = opts.receive_buffer;
    c.recv_buffer_max = 0;
  }
  if (opts.linger)
    c.linger_ns = std::uint64_t(std::max<std::int64_t>(0, std::chrono::nanoseconds(*opts.linger).count()));
  return c;
}

stack::settled stack::settle(tcp_socket& s, std::uint64_t now) {
  per_core& pc = here();
  s.conn.output(now, [&](const tcp_segment& seg) { send_tcp(pc, s.conn.tuple(), seg, now); });
  count_time_wait(pc, s);
  const tcp::event_set ev = s.conn.take_events();
  using tcp::event;
  if (ev.has(event::counted)) fold_tcp_totals(s.conn.stats(), s.folded, pc.counters.tcp_counted);
  if (ev.has(event::closed)) bump(pc.counters.tcp_ended[std::size_t(s.conn.end())]);
  // The kernel wakes socket readers and writers with sync wakeups
  // (sock_def_readable, sk_stream_write_space); so does the RX path here.
  // Whether the hint counts is the placement policy's decision: by default
  // it does not for the RX path (sched.rx_wakeup_sync, seed 000). A fiber
  // that settles a socket goes on running: its wakeups are not sync.
  const bool sync = !detail::here::in_fiber();
  if (ev.has(event::readable) || ev.has(event::closed)) s.readers.notify_all(sync);
  if (ev.has(event::writable) || ev.has(event::connected) || ev.has(event::closed)) s.writers.notify_all(sync);
  if (s.parent != nullptr && (ev.has(event::connected) || ev.has(event::closed))) child_settled(s, ev);
  settled out;
  const std::uint64_t d = s.conn.next_deadline();
  // Unchanged (most segments of a busy flow): the store that set it already
  // met the timer fiber's handshake (timer_fiber.cc); a locked store less.
  if (s.deadline.load(std::memory_order_relaxed) != d) s.deadline.store(d, std::memory_order_seq_cst);
  // Earlier than the home wheel's entry: the timer fiber must move it. Later
  // costs nothing: the entry fires, finds the later deadline, moves itself.
  out.rearm = d < s.armed_for.load(std::memory_order_seq_cst);
  out.poke_timer = out.rearm && d < cores_[s.home_core()]->wake_at.load(std::memory_order_seq_cst);
  if (s.conn.state() == tcp::tcp_state::closed && s.in_table) {
    s.in_table = false;
    out.closed = true;
  }
  return out;
}

// TIME-WAIT is bounded (stack_config::max_time_wait): a connection entering
// it past the bound ends at once instead, as Linux does past
// tcp_max_tw_buckets; the ones in it are counted until they leave.
void stack::count_time_wait(per_core& pc, tcp_socket& s) {
  const bool waiting = s.conn.state() == tcp::tcp_state::time_wait;
  if (waiting == s.in_time_wait) return;
  if (!waiting) {
    s.in_time_wait = false;
    time_wait_count_.fetch_sub(1, std::memory_order_relaxed);
    return;
  }
  if (time_wait_count_.fetch_add(1, std::memory_order_relaxed) >= cfg_.max_time_wait) {
    time_wait_count_.fetch_sub(1, std::memory_order_relaxed);
    pc.counters.count(drop::tcp_time_wait_full);
    s.conn.end_time_wait();
    return;
  }
  s.in_time_wait = true;
}

void stack::finish(tcp_socket& s, settled what) {
  if (what.closed) {
    flows_.erase(s.conn.tuple(), &s);  // the tuple is fixed: no lock needed to read it
    s.retired.store(true, std::memory_order_seq_cst);
    queue_rearm(s);  // the home core's timer fiber lets go of it
    poke_timer(*cores_[s.home_core()]);
    if (per_core& pc = here(); pc.last_flow == &s) forget_flow(pc);  // last: may drop the last reference
    return;
  }
  if (what.rearm) queue_rearm(s);
  if (what.poke_timer) poke_timer(*cores_[s.home_core()]);
}

// A child of a listener reached ESTABLISHED (into the accept queue) or died
// before it was accepted. Lock order: socket, then listener.
// One reset right after its handshake, in the same batch, is still handed
// out (its reads then fail), as Linux's accept queue does.
void stack::child_settled(tcp_socket& s, tcp::event_set ev) {
  listen_socket* l = s.parent;
  s.parent = nullptr;
  s.conn.set_admission(nullptr);
  const bool admitted = ev.has(tcp::event::connected);
  l->lock.lock();
  if (admitted && !l->closed) {
    s.ref();
    l->ready.push_back(&s);
    l->acceptors.notify_one();
  } else if (!l->closed) {
    l->queue.child_gone(false);  // died in SYN-RECEIVED
  } else if (!ev.has(tcp::event::closed)) {
    s.conn.abort();  // the listener closed while the handshake ran (its counts are done with)
  }
  l->lock.unlock();
  l->unref();
}

}  // namespace affine::stack
