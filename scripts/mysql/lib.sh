# shellcheck shell=bash
# scripts/mysql/lib.sh: sourced by scripts/demo, tests/e2e and bench/proxy.
# MariaDB, sysbench and affine-mysql-proxy inside a network namespace this
# shell creates (DESIGN.md section 8): every process it starts runs in that
# namespace, every file lives in one scratch directory, and mysql_cleanup
# (on EXIT, INT and TERM) stops the processes, deletes the namespace, the
# scratch directory and DPDK's runtime directories. Nothing here waits
# without a bound.
#
#   mysql_setup NAME                   root check, scratch dir, namespace, traps
#   mysql_db_start NAME PORT           MariaDB on 0.0.0.0:PORT in the namespace,
#                                      database and user sbtest/sbtest
#   mysql_sysbench_prepare HOST PORT   oltp_read_only tables (MYSQL_TABLES x MYSQL_TABLE_SIZE)
#   mysql_proxy_start uring|dpdk LISTEN BACKEND... [-- PROXY-ARGS...]
#                                      the proxy, serving; 1 if it does not
#   mysql_proxy_stop, mysql_proxy_stats   SIGTERM it (its exit status); its last stats line
#   mysql_sysbench_run HOST PORT THREADS SECONDS OUT   one JSON object of figures on stdout
#   mysql_query HOST PORT SQL          the mariadb client as sbtest, tab-separated rows
#   mysql_endpoints MODE               the proxy's and MariaDB's addresses in that mode
#   mysql_stop PID                     SIGTERM, 10 s, SIGKILL; returns the exit status
#
# The proxy is MYSQL_PROXY_EXE, or $AFFINE_BUILD/apps/mysql-proxy/affine-mysql-proxy.
# MYSQL_PEER_CPUS and MYSQL_RELAY_CPUS (taskset -c lists, empty: anywhere)
# keep MariaDB and sysbench on some CPUs and the proxy on others;
# bench/proxy's --peer-cpus and --relay-cpus set them.

mysql_repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
mysql_scratch=
mysql_ns=
mysql_started=()            # pids to stop on cleanup, newest last
mysql_dpdk_prefix=          # EAL --file-prefix of this shell's proxies
mysql_proxy_pid=
mysql_proxy_out=            # the proxy's stdout (stats lines) and stderr files
mysql_proxy_err=
MYSQL_TABLES=${MYSQL_TABLES:-4}
MYSQL_TABLE_SIZE=${MYSQL_TABLE_SIZE:-10000}
# The tap's two ends: the kernel side (MariaDB's address as the proxy sees
# it) and the proxy's own address on affine's stack.
MYSQL_TAP_IFACE=afp0
MYSQL_TAP_KERNEL_IP=10.88.0.1
MYSQL_TAP_PROXY_IP=10.88.0.2
# The same over IPv6 (mysql_proxy_start dpdk-ipv6): the tap's kernel side
# holds only MYSQL_TAP_KERNEL_IP6, the proxy's port both of its addresses.
MYSQL_TAP_KERNEL_IP6=fd88::1
MYSQL_TAP_PROXY_IP6=fd88::2
# What MariaDB binds: 0.0.0.0, or "0.0.0.0,::" for the IPv6 test (MariaDB
# 10.11 takes a list; its :: is IPv6 only).
MYSQL_DB_BIND=${MYSQL_DB_BIND:-0.0.0.0}
# The tap port's RX queues: unset, the library's default ("auto": one per
# reactor, which net_tap needs, as it wants as many RX queues as TX queues).
MYSQL_TAP_QUEUES=${MYSQL_TAP_QUEUES:-}

mysql_log() { echo "${mysql_name:-mysql}: $*" >&2; }
mysql_die() { mysql_log "$*"; exit 1; }

mysql_ns_exec() { ip netns exec "$mysql_ns" "$@"; }

mysql_setup() {  # name
  mysql_name=$1
  if [ "$(id -u)" -ne 0 ]; then
    mysql_log "needs root (network namespace, tap device)"
    return 77
  fi
  mysql_scratch=$(mktemp -d "/tmp/affine-$1.XXXXXX")
  mysql_ns="affine-$1-$$"
  mysql_dpdk_prefix="affine-$1-$$"
  trap mysql_cleanup EXIT
  trap 'exit 130' INT
  trap 'exit 143' TERM
  ip netns add "$mysql_ns" || mysql_die "ip netns add $mysql_ns failed"
  ip -n "$mysql_ns" link set lo up
}

mysql_stop() {  # pid: SIGTERM, 10 s to exit, then SIGKILL; the exit status
  local pid=$1 rc=0
  [ -n "$pid" ] || return 0
  kill -TERM "$pid" 2>/dev/null || true
  for _ in $(seq 100); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
  kill -KILL "$pid" 2>/dev/null || true
  wait "$pid" 2>/dev/null || rc=$?
  return "$rc"
}

mysql_cleanup() {
  local rc=$? i pid
  trap - EXIT INT TERM
  for ((i = ${#mysql_started[@]} - 1; i >= 0; i--)); do mysql_stop "${mysql_started[i]}" || true; done
  if [ -n "$mysql_ns" ]; then
    # Anything still in the namespace was started from here (a client a
    # failed step left behind): end it by pid before the namespace goes.
    for pid in $(ip netns pids "$mysql_ns" 2>/dev/null); do kill -KILL "$pid" 2>/dev/null || true; done
    ip netns del "$mysql_ns" 2>/dev/null || true
  fi
  if [ -n "$mysql_dpdk_prefix" ]; then
    rm -rf /var/run/dpdk/"$mysql_dpdk_prefix"* "${XDG_RUNTIME_DIR:-/tmp}"/dpdk/"$mysql_dpdk_prefix"*
  fi
  if [ -n "$mysql_scratch" ] && [ -z "${MYSQL_KEEP:-}" ]; then
    rm -rf "$mysql_scratch"
  elif [ -n "$mysql_scratch" ]; then
    mysql_log "kept $mysql_scratch (MYSQL_KEEP)"
  fi
  exit "$rc"
}

mysql_forget() {  # pid: no longer to stop on cleanup
  local kept=() p
  for p in "${mysql_started[@]}"; do [ "$p" = "$1" ] || kept+=("$p"); done
  mysql_started=("${kept[@]}")
}

mysql_client() {  # mariadb client args...: in the namespace, no option files
  mysql_ns_exec mariadb --no-defaults "$@"
}

mysql_db_start() {  # name port: MariaDB on a fresh datadir; sets mysql_db_pid
  local name=$1 port=$2 dir=$mysql_scratch/$1
  mkdir -p "$dir/data" "$dir/tmp"
  mariadb-install-db --no-defaults --user=root --datadir="$dir/data" --skip-test-db \
    --auth-root-authentication-method=socket >"$dir/install.log" 2>&1 ||
    mysql_die "mariadb-install-db for $name failed (see $dir/install.log): $(tail -1 "$dir/install.log")"
  # Health checks connect and close before authenticating: a high
  # max_connect_errors keeps the proxy's address from being blocked.
  ip netns exec "$mysql_ns" ${MYSQL_PEER_CPUS:+taskset -c "$MYSQL_PEER_CPUS"} mariadbd --no-defaults --user=root --datadir="$dir/data" --tmpdir="$dir/tmp" \
    --socket="$dir/sock" --pid-file="$dir/pid" --log-error="$dir/error.log" \
    --port="$port" --bind-address="$MYSQL_DB_BIND" --skip-name-resolve --skip-log-bin \
    --max-connections=1000 --max-connect-errors=1000000000 --performance-schema=OFF \
    --innodb-buffer-pool-size=128M --innodb-flush-log-at-trx-commit=2 >/dev/null 2>&1 &
  mysql_db_pid=$!
  mysql_started+=("$mysql_db_pid")
  for _ in $(seq 300); do
    mysql_ns_exec mariadb-admin --no-defaults --socket="$dir/sock" ping >/dev/null 2>&1 && break
    kill -0 "$mysql_db_pid" 2>/dev/null || mysql_die "MariaDB $name exited: $(tail -3 "$dir/error.log")"
    sleep 0.1
  done
  mysql_client --socket="$dir/sock" -uroot -e \
    "CREATE DATABASE IF NOT EXISTS sbtest;
     CREATE USER IF NOT EXISTS 'sbtest'@'%' IDENTIFIED BY 'sbtest';
     GRANT ALL ON sbtest.* TO 'sbtest'@'%';" ||
    mysql_die "MariaDB $name not ready within 30 s: $(tail -3 "$dir/error.log")"
}

mysql_sysbench_args() {  # host port
  echo --db-driver=mysql --mysql-host="$1" --mysql-port="$2" --mysql-user=sbtest --mysql-password=sbtest \
    --mysql-db=sbtest --tables="$MYSQL_TABLES" --table-size="$MYSQL_TABLE_SIZE"
}

mysql_sysbench_prepare() {  # host port
  # shellcheck disable=SC2046
  mysql_ns_exec sysbench oltp_read_only $(mysql_sysbench_args "$1" "$2") prepare \
    >"$mysql_scratch/prepare.log" 2>&1 ||
    mysql_die "sysbench prepare failed: $(grep -m1 FATAL "$mysql_scratch/prepare.log")"
}

# host port threads seconds out: sysbench oltp_read_only run, its output in
# OUT; prints one JSON object: transactions_per_s, p95_ms, errors (ignored
# errors plus threads that stopped on an error), exit_status. Returns 0.
mysql_sysbench_run() {
  local host=$1 port=$2 threads=$3 seconds=$4 out=$5 rc=0
  # shellcheck disable=SC2046
  timeout -k 5 $((seconds + 60)) ip netns exec "$mysql_ns" ${MYSQL_PEER_CPUS:+taskset -c "$MYSQL_PEER_CPUS"} \
    sysbench oltp_read_only \
    $(mysql_sysbench_args "$host" "$port") --threads="$threads" --time="$seconds" \
    --percentile=95 --report-interval=0 run >"$out" 2>&1 || rc=$?
  python3 - "$out" "$rc" <<'PY'
import json, re, sys
text, rc = open(sys.argv[1], errors="replace").read(), int(sys.argv[2])
def figure(pattern):
    m = re.search(pattern, text)
    return float(m.group(1)) if m else None
line = {"transactions_per_s": figure(r"transactions:\s+\d+\s+\(([\d.]+) per sec"),
        "p95_ms": figure(r"95th percentile:\s+([\d.]+)"),
        "transactions": int(figure(r"transactions:\s+(\d+)") or 0)}
failed = len(re.findall(r"thread_run' function failed", text))
ignored = figure(r"ignored errors:\s+(\d+)") or 0
errors = int(ignored) + failed
if rc != 0 and errors == 0:
    errors = 1
line["errors"] = errors
line["exit_status"] = rc
first = re.search(r"^FATAL: (.*)$", text, re.M)
if first:
    line["first_error"] = first.group(1)
print(json.dumps({k: v for k, v in line.items() if v is not None}, separators=(",", ":")))
PY
}

mysql_query() {  # host port sql: the mariadb client as sbtest, tab-separated rows
  mysql_client -h "$1" -P "$2" -usbtest -psbtest --connect-timeout=10 -N -B sbtest -e "$3"
}

# uring|dpdk|dpdk-ipv6: where the proxy listens in that mode and how it
# reaches MariaDB's host: sets mysql_listen (IP:PORT, "[v6]:PORT"),
# mysql_db_host (IP or "[v6]"), and mysql_host / mysql_port, the proxy's
# address as clients take it (an IPv6 address bare).
# shellcheck disable=SC2034  # set for the caller
mysql_endpoints() {
  case "$1" in
    dpdk) mysql_db_host=$MYSQL_TAP_KERNEL_IP mysql_listen=$MYSQL_TAP_PROXY_IP:3307 ;;
    dpdk-ipv6) mysql_db_host="[$MYSQL_TAP_KERNEL_IP6]" mysql_listen="[$MYSQL_TAP_PROXY_IP6]:3307" ;;
    *) mysql_db_host=127.0.0.1 mysql_listen=127.0.0.1:3307 ;;
  esac
  mysql_host=${mysql_listen%:*} mysql_port=${mysql_listen##*:}
  mysql_host=${mysql_host#[} mysql_host=${mysql_host%]}
}

mysql_proxy_exe() {  # MYSQL_PROXY_EXE, or the proxy in $AFFINE_BUILD (default build)
  echo "${MYSQL_PROXY_EXE:-${AFFINE_BUILD:-$mysql_repo/build}/apps/mysql-proxy/affine-mysql-proxy}"
}

# uring|dpdk|dpdk-ipv6 listen backend... [-- extra proxy args]: starts the
# proxy in the namespace (sets mysql_proxy_pid) and waits until it answers a
# query; if it does not, one line on stderr and status 1. For dpdk, the
# tap's kernel side gets MYSQL_TAP_KERNEL_IP once the proxy has made the
# tap; for dpdk-ipv6, MYSQL_TAP_KERNEL_IP6 only (no IPv4 on the link), and
# the proxy's port holds MYSQL_TAP_PROXY_IP6 too. A listen address may be
# "[v6]:port". MYSQL_PROXY_SETS: more affine options (--set K=V ...), split
# on spaces.
mysql_proxy_start() {
  local mode=$1 listen=$2 exe config=() args=() i
  shift 2
  exe=$(mysql_proxy_exe)
  mysql_proxy_out=$mysql_scratch/proxy-$mode.out
  mysql_proxy_err=$mysql_scratch/proxy-$mode.err
  : >"$mysql_proxy_err"
  [ -x "$exe" ] || { mysql_log "no proxy at $exe" 2>&1 | tee "$mysql_proxy_err" >&2; return 1; }
  while [ $# -gt 0 ] && [ "$1" != -- ]; do args+=(--backend "$1"); shift; done
  [ $# -gt 0 ] && shift
  args+=("$@")
  local ips="\"$MYSQL_TAP_PROXY_IP/24\"" kernel_ip="$MYSQL_TAP_KERNEL_IP/24"
  if [ "$mode" = dpdk-ipv6 ]; then
    ips="[\"$MYSQL_TAP_PROXY_IP/24\", \"$MYSQL_TAP_PROXY_IP6/64\"]" kernel_ip="$MYSQL_TAP_KERNEL_IP6/64 nodad"
  fi
  if [ "${mode#dpdk}" != "$mode" ]; then
    cat >"$mysql_scratch/proxy-tap.toml" <<TOML
[[port]]
driver = "dpdk"
eal = ["--no-huge", "--no-pci", "--no-shconf", "--no-telemetry", "-m", "512",
       "--file-prefix=$mysql_dpdk_prefix", "--vdev=net_tap0,iface=$MYSQL_TAP_IFACE"]
${MYSQL_TAP_QUEUES:+queues = $MYSQL_TAP_QUEUES}
ip = $ips
TOML
    config=(--config "$mysql_scratch/proxy-tap.toml")
  fi
  # shellcheck disable=SC2086
  ip netns exec "$mysql_ns" ${MYSQL_RELAY_CPUS:+taskset -c "$MYSQL_RELAY_CPUS"} "$exe" "${config[@]}" --set 'log.level="warn"' ${MYSQL_PROXY_SETS:-} \
    --listen "$listen" "${args[@]}" >"$mysql_proxy_out" 2>"$mysql_proxy_err" &
  mysql_proxy_pid=$!
  mysql_started+=("$mysql_proxy_pid")
  if [ "${mode#dpdk}" != "$mode" ]; then
    for i in $(seq 200); do
      ip -n "$mysql_ns" link show "$MYSQL_TAP_IFACE" >/dev/null 2>&1 && break
      kill -0 "$mysql_proxy_pid" 2>/dev/null || break
      sleep 0.05
    done
    # shellcheck disable=SC2086
    if ! { ip -n "$mysql_ns" addr add $kernel_ip dev "$MYSQL_TAP_IFACE" &&
      ip -n "$mysql_ns" link set "$MYSQL_TAP_IFACE" up; } 2>/dev/null; then
      mysql_log "proxy (dpdk): no tap $MYSQL_TAP_IFACE: $(head -3 "$mysql_proxy_err")"
      return 1
    fi
  fi
  local host=${listen%:*} port=${listen##*:}
  host=${host#[} host=${host%]}
  for i in $(seq 60); do
    [ "$(mysql_query "$host" "$port" 'SELECT 1' 2>/dev/null)" = 1 ] && return 0
    if ! kill -0 "$mysql_proxy_pid" 2>/dev/null; then
      mysql_log "proxy ($mode) exited: $(head -3 "$mysql_proxy_err")"
      return 1
    fi
    sleep 0.5
  done
  mysql_log "proxy ($mode) on $listen answers no query after 30 s: $(mysql_query "$host" "$port" 'SELECT 1' 2>&1 | head -1)"
  return 1
}

mysql_proxy_stop() {  # SIGTERM the proxy; its exit status
  local rc=0
  mysql_stop "$mysql_proxy_pid" || rc=$?
  mysql_forget "$mysql_proxy_pid"
  mysql_proxy_pid=
  return "$rc"
}

mysql_proxy_stats() {  # the proxy's last stats line
  grep -v 'listening on' "$mysql_proxy_out" | tail -1
}
