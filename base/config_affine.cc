// affine's configuration schema: every key the runtime reads, declared once.
// docs/configuration.md and config/affine.toml are generated from this.

#include <charconv>

#include "affine/address.hh"
#include "affine/config.hh"

namespace affine {

namespace {

using namespace config;

// 0..255, decimal, without leading zeros (which some parsers read as octal).
bool is_octet(std::string_view s) {
  unsigned n = 0;
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), n);
  return !s.empty() && s.size() <= 3 && (s.size() == 1 || s[0] != '0') && ec == std::errc{} &&
         end == s.data() + s.size() && n <= 255;
}

bool is_ipv4(std::string_view s) {
  for (int i = 0; i < 3; ++i) {
    const std::size_t dot = s.find('.');
    if (dot == std::string_view::npos || !is_octet(s.substr(0, dot))) return false;
    s.remove_prefix(dot + 1);
  }
  return is_octet(s);
}

// A prefix length 0..max, decimal, without leading zeros.
bool is_prefix_length(std::string_view p, unsigned max) {
  unsigned n = 0;
  const auto [end, ec] = std::from_chars(p.data(), p.data() + p.size(), n);
  return !p.empty() && p.size() <= 3 && (p.size() == 1 || p[0] != '0') && ec == std::errc{} &&
         end == p.data() + p.size() && n <= max;
}

bool is_ipv4_cidr(std::string_view s) {
  const std::size_t slash = s.find('/');
  return slash != std::string_view::npos && is_ipv4(s.substr(0, slash)) && is_prefix_length(s.substr(slash + 1), 32);
}

// An IPv6 address (RFC 4291 2.2, no zone) and a prefix length 0..128.
bool is_ipv6_cidr(std::string_view s) {
  const std::size_t slash = s.find('/');
  if (slash == std::string_view::npos) return false;
  const auto a = net::ipv6_address::parse(s.substr(0, slash));
  return a.has_value() && a->scope_id == 0 && is_prefix_length(s.substr(slash + 1), 128);
}

const string_format cidr_or_none{
    .valid = [](std::string_view s) { return s.empty() || is_ipv4_cidr(s) || is_ipv6_cidr(s); },
    .noun = "an IPv4 or IPv6 address with prefix length",
    .allowed = "like \"10.77.0.2/24\" or \"fd77::2/64\", or \"\"",
};

const string_format address_or_none{
    .valid = [](std::string_view s) {
      if (s.empty() || is_ipv4(s)) return true;
      auto a = net::ipv6_address::parse(s);
      return a.has_value() && a->scope_id == 0;
    },
    .noun = "an IPv4 or IPv6 address",
    .allowed = "like \"10.77.0.1\" or \"fe80::1\", or \"\"",
};

// RFC 7217's secret_key: 128 bits as 32 hex digits.
const string_format secret_or_none{
    .valid = [](std::string_view s) {
      return s.empty() || (s.size() == 32 && s.find_first_not_of("0123456789abcdefABCDEF") == std::string_view::npos);
    },
    .noun = "a 128-bit secret",
    .allowed = "32 hex digits, or \"\" for one derived from /etc/machine-id",
};

// [reactor]: DESIGN.md section 2.
table_spec reactor() {
  return section(
      "reactor", "One reactor thread per core: which cores, and how a reactor spends its time (DESIGN.md section 2).",
      {
          cores("cores", core_list{},
                "Cores that run a reactor, one thread each: \"auto\" for every core this process may use less "
                "one for each CPU other processes kept busy over the last minute (the 1-minute load average, "
                "rounded; at least one: docs/tuning.md, \"Adaptive polling\"), \"all\" for every core, a list "
                "of core numbers as affine-topo shows them, or how many."),
          enumeration("idle", {"adaptive", "sleep", "spin"}, "adaptive",
                      "What a reactor with no work does: \"adaptive\" polls up to spin_us while polling pays "
                      "(the wait it covers is shorter than a sleep and wake, measured at start and while "
                      "running) and no other task waits for its CPU, then sleeps; \"sleep\" polls spin_us every "
                      "time, then sleeps; \"spin\" never sleeps (a core of its own). Idle reactors must sleep on "
                      "a small machine (docs/tuning.md, \"Adaptive polling\")."),
          integer("spin_us", {0, 1'000'000}, 50,
                  "How long a reactor with no work polls at most before it sleeps, in microseconds."),
          integer("stack_kib", {16, 8192}, 64,
                  "Stack size of each fiber, in KiB; a guard page below each stack catches overflows."),
          integer("task_quota_us", {10, 1'000'000}, 500,
                  "How long a reactor runs fibers before it polls its RX queues again, in microseconds; "
                  "this_fiber::maybe_yield() gives the core up after it."),
          enumeration("preempt", {"off", "on"}, "off",
                      "Preempt a fiber that runs past its quantum (quantum_us) while other fibers, timers or "
                      "RX queues wait on its core: \"off\" leaves fibers cooperative (docs/reactor.md, "
                      "\"Preemption\")."),
          integer("quantum_us", {10, 1'000'000}, 2000,
                  "With preempt = \"on\": how long a fiber runs before it is preempted, in microseconds. A "
                  "running reactor takes a timer signal about once per quantum: shorter means sooner "
                  "preemption and more signals (docs/reactor.md, \"Preemption\")."),
          integer("rx_interrupt_us", {0, 1'000'000}, 0,
                  "With preempt = \"on\": how soon a fiber that keeps a core with RX queues or backlog rings "
                  "is interrupted for one turn of the poll rung, as a NIC interrupt preempts a task, in "
                  "microseconds; it then resumes before anything the packets woke, its quantum going on. 0: "
                  "packets wait for the quantum (each interrupt costs a signal and two switches: "
                  "docs/reactor.md, \"Preemption\")."),
          integer("stall_report_ms", {0, 60'000}, 100,
                  "Report a fiber that keeps its core this long without yielding, with a backtrace, once per "
                  "stall (also with preempt = \"off\"); 0: no reports."),
          enumeration("rxq_placement", {"local", "spread"}, "local",
                      "Which cores poll the RX queues: cores of the NIC's NUMA node (local), or cores spread over "
                      "all nodes."),
      });
}

// [sched] and [busy_poll]: the policies of DESIGN.md section 1.
table_spec sched() {
  return section(
      "sched", "Where a woken fiber runs, and how idle cores take work (DESIGN.md section 1: P1, P4).",
      {
          boolean("rx_wakeup_sync", false,
                  "Whether a wakeup from the RX path is a sync wakeup, which lets wake-affine pull the fiber onto "
                  "the NIC's node; false keeps the load spread over the nodes (P1, seed 000)."),
          enumeration("wake_affine", {"off", "task-only", "always"}, "task-only",
                      "Who may use wake-affine's shortcut to a waker's core that runs one fiber: nobody, fiber "
                      "wakers only, or also the RX path and timers as the kernel did (P4, seed 004)."),
          integer("balance_interval_us", {0, 10'000'000}, 1000,
                  "How often each reactor runs the load balancer, in microseconds; 0 = no periodic balance."),
          boolean("steal", true,
                  "Let a reactor with no work steal runnable fibers from busier cores, nearest scheduling domain "
                  "first."),
      });
}

table_spec busy_poll() {
  return section(
      "busy_poll", "A fiber waiting for data may poll its RX queue instead of sleeping (P2, seed 001).",
      {
          integer("budget_us", {0, 100'000}, 50,
                  "How long a fiber may busy-poll for data at most before it sleeps, in microseconds; 0 = off "
                  "(P2, seed 001)."),
          enumeration("mode", {"adaptive", "fixed"}, "adaptive",
                      "\"adaptive\": a poll lasts as long as polling pays, up to budget_us, and not at all while "
                      "another task (a thread or process) waits for the CPU; \"fixed\": every poll may use "
                      "budget_us (docs/tuning.md, \"Adaptive polling\")."),
          boolean("yield_when_runnable", true,
                  "Stop busy-polling as soon as another fiber is runnable on the core (P2, seed 001)."),
      });
}

// [log] and [stats]: DESIGN.md section 7.
table_spec logging() {
  return section(
      "log", "Log lines on stderr, each prefixed with its core ([c3], [--] off the reactors) and level.",
      {
          enumeration("level", {"trace", "debug", "info", "warn", "error"}, "info", "The least severe level printed."),
          integer("ratelimit_per_s", {1, 100'000}, 10,
                  "Lines per second that each rate-limited call site (data-path warnings) may print; the next line "
                  "it prints says how many it held back."),
      });
}

table_spec stats() {
  return section(
      "stats", "Per-core counters: decisions, steals, RPS handoffs, busy-poll exits, drops (DESIGN.md section 7).",
      {
          integer("interval_ms", {0, 3'600'000}, 0, "How often a stats line is logged, in milliseconds; 0 = off."),
          integer("prometheus_port", {0, 65535}, 0, "TCP port of the Prometheus text endpoint; 0 = off."),
      });
}

// [tcp]: every connection's defaults (stack/tcp/config.hh); the socket
// API's stream_options override them per connection or listener.
table_spec tcp() {
  return section(
      "tcp", "TCP on the userspace stack: every connection's defaults; stream_options override them per connection.",
      {
          enumeration("congestion", {"cubic", "newreno"}, "cubic",
                      "Congestion control: CUBIC with HyStart++ slow start (RFC 9438, RFC 9406; Linux's default), "
                      "or NewReno (RFC 5681, RFC 6582)."),
          boolean("sack", true,
                  "Offer SACK (RFC 2018) on SYNs and report SACK blocks when the peer offered it too."),
          boolean("pacing", false,
                  "Pace data: a window leaves over the round trip at twice (slow start) or 1.2 times (after) the "
                  "window per smoothed RTT, in bursts of about a millisecond of that rate, as Linux's internal "
                  "pacing or its fq qdisc spread it; false sends it as fast as ACKs release it. Spares a shallow "
                  "queue on a long path the tail drops of a whole window at line rate; on a LAN a window is less "
                  "than a millisecond of its rate and nothing waits. Counted: tcp.pacing_holds."),
          enumeration("ecn", {"passive", "on", "off"}, "passive",
                      "Explicit Congestion Notification (RFC 3168): taken when a peer's SYN asks for it (passive, "
                      "Linux's default), asked for on connect too (on), or never (off). Where both sides took it, "
                      "new data goes as ECT(0), a CE mark is echoed until the sender says it reduced, and an echo "
                      "reduces the window once a round trip, as a loss would, with nothing resent."),
          enumeration("syn_cookies", {"auto", "always", "never"}, "auto",
                      "SYN cookies (RFC 4987): answer a SYN with one when the listener's SYN-RECEIVED queue is "
                      "full (auto), answer every SYN so (always), or drop the SYN when it is full (never)."),
          integer("challenge_acks_per_s", {0, 1'000'000}, 1000,
                  "Challenge ACKs (RFC 5961) a second over all connections, beside each connection's own 10 in "
                  "5 s; each second's budget is drawn between half and one and a half times this, so that no "
                  "shared count tells one connection what another drew (CVE-2016-5696). 0 = no such bound."),
          integer("max_time_wait", {0, 16'777'216}, 32768,
                  "Connections in TIME-WAIT at once; past it a connection ends at once instead of entering it "
                  "(counted: drop.tcp_time_wait_full), as Linux's tcp_max_tw_buckets."),
          integer("max_connections", {1, 16'777'216}, 65536,
                  "TCP connections the stack keeps at once, every state counted (TIME-WAIT too); a SYN or "
                  "connect past it is refused and counted. An idle connection costs about 13 KB of memory "
                  "(bench/run rr --idle-connections; docs/stack.md)."),
          integer("retransmissions", {1, 255}, 15,
                  "Retransmissions of unacknowledged data before a connection gives up with ETIMEDOUT (RFC 1122 "
                  "4.2.3.5 R2; Linux's tcp_retries2): from a 200 ms RTO backing off to 60 s, 15 take 522 s. "
                  "Also the bound on unanswered zero-window probes. Counted: tcp.ended.retransmissions."),
          integer("syn_retransmissions", {1, 127}, 6,
                  "Retransmissions of a SYN before a connect gives up with ETIMEDOUT (Linux's tcp_syn_retries): "
                  "6 take 127 s from the 1 s initial RTO."),
          integer("synack_retransmissions", {1, 255}, 5,
                  "Retransmissions of a SYN-ACK before a half-open connection is dropped (Linux's "
                  "tcp_synack_retries). Counted: tcp.ended.handshake_failed."),
          integer("orphan_probes", {1, 255}, 8,
                  "Zero-window probes, answered or not, before an orphan (a connection the application closed "
                  "with data still queued) resets its peer (Linux's tcp_orphan_retries). Counted: "
                  "tcp.ended.orphan_probes."),
          integer("fin_timeout_s", {1, 3600}, 60,
                  "How long a connection the application closed waits in FIN-WAIT-2 for the peer's FIN (Linux's "
                  "tcp_fin_timeout). Counted: tcp.ended.fin_wait_2."),
          integer("keepalive_idle_s", {1, 32767}, 7200,
                  "Keepalive (RFC 1122 4.2.3.6), for streams that turn it on: the silence before the first "
                  "probe, in seconds (Linux's tcp_keepalive_time); stream_options::keepalive_idle overrides it."),
          integer("keepalive_interval_s", {1, 32767}, 75,
                  "Keepalive: the wait between unanswered probes, in seconds (Linux's tcp_keepalive_intvl); "
                  "stream_options::keepalive_interval overrides it."),
          integer("keepalive_count", {1, 127}, 9,
                  "Keepalive: unanswered probes before the connection is reset with ETIMEDOUT (Linux's "
                  "tcp_keepalive_probes); stream_options::keepalive_count overrides it. Counted: "
                  "tcp.ended.keepalive."),
          integer("user_timeout_ms", {0, 2'147'483'647}, 0,
                  "The user timeout (RFC 9293 3.10.8; Linux's TCP_USER_TIMEOUT): a connection ends with ETIMEDOUT "
                  "once sent data has waited this long for an acknowledgment that moves on, once queued data has "
                  "waited this long before a shut window, or, with keepalive, once a probe went out and nothing "
                  "came for this long; it replaces retransmissions and keepalive_count. 0 = none; "
                  "stream_options::user_timeout overrides it. Counted: tcp.ended.user_timeout."),
          integer("receive_buffer_kb", {4, 1'048'576}, 256,
                  "Each connection's receive buffer to start with, in KiB; stream_options::receive_buffer sets "
                  "one that stays as it is (SO_RCVBUF)."),
          integer("receive_buffer_max_kb", {0, 1'048'576}, 6144,
                  "Receive buffer auto-tuning (Linux's tcp_moderate_rcvbuf and tcp_rmem[2]): a buffer grows up "
                  "to this many KiB while the application reads more each round trip than the window let in, "
                  "so that one connection can fill a long fat path; at or below receive_buffer_kb it stays "
                  "fixed. The window scale is chosen for it."),
          integer("send_buffer_kb", {4, 1'048'576}, 256,
                  "Each connection's send buffer to start with, in KiB; stream_options::send_buffer sets one "
                  "that stays as it is (SO_SNDBUF)."),
          integer("send_buffer_max_kb", {0, 1'048'576}, 4096,
                  "Send buffer auto-tuning (Linux's tcp_sndbuf_expand and tcp_wmem[2]): a buffer grows up to "
                  "this many KiB, to twice the congestion window, while it is what limits sending (full, all "
                  "of it sent, room in both windows); at or below send_buffer_kb it stays fixed."),
          integer("buffer_memory_mb", {0, 16'777'216}, 0,
                  "No connection's buffer grows while the process's connection buffers hold this many MiB "
                  "(Linux's tcp_mem); 0 = 3/32 of the machine's memory, as Linux's default."),
      });
}

// [[port.rxq]]: per-queue RPS is what seed 003's review asked for.
table_spec rxq() {
  return array_of_tables(
      "rxq", "Settings of one RX queue of the [[port]] above; a queue without a table has the defaults (P3, seed 003).",
      {
          integer("queue", {0, 1023}, required, "The RX queue these settings are for."),
          enumeration("rps", {"off", "hash", "flow", "idle"}, "off",
                      "Hand received batches to another core: no (off), by flow hash as kernel RPS does (hash), to "
                      "the consuming fiber's core (flow), or to an idle core sharing its LLC, else as flow (idle) "
                      "(P3, seed 003)."),
          integer("busy_poll_budget_us", {-1, 100'000}, -1,
                  "Busy-poll budget of fibers polling this queue, in microseconds; -1 = busy_poll.budget_us."),
      });
}

table_spec port() {
  return array_of_tables(
      "port", "A network port, one [[port]] table each.",
      {
          enumeration("driver", {"dpdk", "uring"}, "dpdk",
                      "What drives the port: a DPDK poll-mode driver, or kernel sockets through io_uring (the "
                      "fallback, and the baseline for benchmarks)."),
          string_array("eal", {},
                       "DPDK EAL arguments, like [\"--no-huge\", \"--no-pci\", \"--vdev=net_tap0,iface=affine0\"]."),
          count("queues", {1, 1024},
                "RX queues; RSS spreads flows over them. \"auto\": one per reactor, as far as the device has them "
                "(fewer than reactors: the placement and rps of each queue share the work out, docs/stack.md). "
                "Every reactor has its own TX queue besides."),
          enumeration("rss", {"symmetric", "default", "off"}, "symmetric",
                      "RSS hash key: symmetric (both directions of a flow on one queue), the driver's default, or "
                      "no RSS."),
          string_list("ip", {},
                      "The port's addresses with their prefix lengths (IPv4 /0 to /32, IPv6 /0 to /128, no zone), "
                      "one or a list: [\"10.77.0.2/24\", \"fd77::2/64\"]. The stack needs one IPv4 address and "
                      "serves one; IPv6 ones up to 8, besides the link-local address (link_local). None: the uring "
                      "driver uses the kernel's addresses.",
                      &cidr_or_none),
          string_list("gateway", {},
                      "The default gateway of each family, one or a list: [\"10.77.0.1\", \"fe80::1\"]. The IPv4 "
                      "one on the port's subnet; the IPv6 one link-local (as routers are addressed, RFC 4861 4.2) "
                      "or inside one of the port's IPv6 prefixes. None: no IPv4 default route, and the IPv6 "
                      "default router from router advertisements (router_advertisements).",
                      &address_or_none),
          enumeration("link_local", {"stable", "eui64", "off"}, "stable",
                      "The port's IPv6 link-local address in fe80::/64 (RFC 4291 2.5.6): \"stable\", an opaque "
                      "interface identifier hashed from the port's name and stable_secret (RFC 7217, as RFC 8064 "
                      "recommends: the same on every start, telling nothing of the hardware); \"eui64\", the MAC "
                      "as a modified EUI-64 (RFC 4291 2.5.1: 52:54:00:12:34:56 gives fe80::5054:ff:fe12:3456); "
                      "\"off\", none (IPv6 then runs only on the addresses in ip)."),
          string("stable_secret", "",
                 "RFC 7217's secret_key for link_local = \"stable\", 128 bits as 32 hex digits, one per machine "
                 "(two with one secret and one port name on a link pick the same address, which DAD then "
                 "refuses). \"\" = a key hashed from /etc/machine-id (the same address on every start of this "
                 "machine; random, and logged, where the file is missing).",
                 &secret_or_none),
          boolean("router_advertisements", true,
                  "Take a default IPv6 router from router advertisements (RFC 4861 6.3.4) when gateway names no "
                  "IPv6 one; false: IPv6 leaves the link only through gateway's IPv6 one, if any."),
          integer("dad_transmits", {0, 10}, 1,
                  "Duplicate Address Detection probes sent for each IPv6 address, a second apart, before it is "
                  "used (RFC 4862 5.1 DupAddrDetectTransmits); 0 = no DAD, every address used at once."),
          integer("mtu", {68, 9216}, 1500,
                  "MTU in bytes. Each packet buffer is sized for a whole frame: over 2026, mtu + 22 bytes apiece, times "
                  "mbufs."),
          string("pci", "", "PCI address of the NIC, like \"0000:03:00.0\"; \"\" = a virtual device named in eal."),
          integer("numa_node", {-1, 1023}, -1, "NUMA node of the NIC; -1 = ask hwloc."),
          integer("mbufs", {1023, 1'048'575}, 8191,
                  "Packet buffers in the port's pool; 2^n - 1 suits DPDK's mempool best."),
      },
      {rxq()});
}

}  // namespace

std::vector<config::table_spec> config_tables() { return {reactor(), sched(), busy_poll(), logging(), stats(), tcp(), port()}; }

const config::schema& config_schema() {
  static const config::schema s("affine", {}, config_tables());
  return s;
}

}  // namespace affine
