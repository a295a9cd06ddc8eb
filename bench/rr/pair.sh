# bench/rr/pair.sh: sourced by bench/rr/run, bench/bulk/run and
# bench/lossy/run. One affine-rr server (core 0) and one client (core 1) per
# measured run; rr and bulk run them on one of two variants:
#   kernel-loopback  no [[port]]: kernel sockets through io_uring, 127.0.0.1
#   affine-memif     one dpdk [[port]] each, joined by net_memif: affine's
#                    stack on both sides, 10.77.1.1 (server) and .2 (client)
#   affine-memif-spin  affine-memif with reactor.idle = "spin" on both: the
#                    hand-tuned setting beside the defaults (issue 23)
#   affine-memif-ipv6  affine-memif over IPv6: the same ports and
#                    configuration (both hold fd77:1::1 and ::2 too, no DAD),
#                    the client connecting to [fd77:1::1] (issue 21)
#   *-zero-copy      either of the two with affine-rr --zero-copy on both
#                    sides: messages read and written where the stack holds
#                    them (tcp_stream::read_view / write_view)
# A run prints the client's JSON line, or one with "error" (the first line
# the failing process wrote on stderr) and no figures; nothing here waits
# without a bound.

pair_variants="kernel-loopback affine-memif affine-memif-zero-copy affine-memif-ipv6"
pair_exe=
pair_raw_exe=
pair_dir=
pair_server=
pair_client=
pair_sets=()  # --set K=V for both processes, from the command line
pair_server_wrap=()  # what the server and the client run under (e.g. ip netns exec NS); nothing by default
pair_client_wrap=()
pair_server_args=()  # options after the server's "server" (the client's come with each run)

pair_stop() {  # pid: SIGTERM, 5 s to exit, then SIGKILL
  local pid=$1
  [ -n "$pid" ] || return 0
  kill -TERM "$pid" 2>/dev/null || true
  for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
  kill -KILL "$pid" 2>/dev/null || true
  wait "$pid" 2>/dev/null || true
}

pair_cleanup() {
  pair_stop "$pair_client"
  pair_stop "$pair_server"
  rm -rf "$pair_dir"
  # EAL's runtime directories (empty with --no-shconf, but left behind)
  rm -rf /var/run/dpdk/affine-rr-$$-* "${XDG_RUNTIME_DIR:-/tmp}"/dpdk/affine-rr-$$-*
}

pair_write_config() {  # name ip [vdev [ipv6]]: $pair_dir/NAME.toml, one dpdk [[port]] on vdev (default: the memif, role NAME), an IPv6 address besides
  local vdev=${3:-net_memif0,role=$1,socket=$pair_dir/memif.sock}
  local ip="\"$2/24\""
  [ -n "${4:-}" ] && ip="[\"$2/24\", \"$4/64\"]"
  cat >"$pair_dir/$1.toml" <<TOML
[[port]]
driver = "dpdk"
eal = ["--no-huge", "--no-pci", "--no-shconf", "--no-telemetry", "-m", "256", "--file-prefix=affine-rr-$$-$1",
       "--vdev=$vdev"]
queues = 1
ip = $ip
dad_transmits = 0
TOML
}

pair_init() {  # [target...]: build affine-rr (the stall probe, the raw ping-pong, the targets given), make the temporary directory and the memif configurations
  local targets=(apps/rr/affine-rr bench/stall/stall_probe "$@")
  case " $pair_variants " in *" raw-memif "*) targets+=(bench/driver/driver_pingpong) ;; esac
  ninja -C "$AFFINE_BUILD" "${targets[@]}" >/dev/null
  pair_exe="$AFFINE_BUILD/apps/rr/affine-rr"
  pair_raw_exe="$AFFINE_BUILD/bench/driver/driver_pingpong"
  pair_dir=$(mktemp -d /tmp/affine-bench-rr.XXXXXX)
  trap pair_cleanup EXIT
  pair_write_config server 10.77.1.1 "" fd77:1::1
  pair_write_config client 10.77.1.2 "" fd77:1::2
}

pair_stalls() {  # [--rr-per-s R]...: after the measured runs, the stalls of the CPUs the pair ran on, one JSON line each (and the floors asked for)
  "$AFFINE_BUILD/bench/stall/stall_probe" --seconds 3 --cpu 0 --cpu 1 "$@" || true  # its lines say what failed
}

pair_error() {  # bench variant message: one JSON line
  python3 -c 'import json, sys; print(json.dumps({"bench": sys.argv[1], "variant": sys.argv[2], "error": sys.argv[3]}, separators=(",", ":")))' "$@"
}

pair_first_line() {  # file: its first non-empty line, or the second argument
  local l
  l=$(grep -m1 -v '^[[:space:]]*$' "$1" 2>/dev/null || true)
  echo "${l:-$2}"
}

# bench variant limit_s client-args...: one JSON line on stdout. The client
# is killed after limit_s seconds.
pair_run() {
  local bench=$1 variant=$2 limit=$3
  shift 3
  local server_config="" client_config="" host=127.0.0.1
  case "$variant" in
    affine-memif|affine-memif-zero-copy|affine-memif-preempt|affine-memif-spin)
      server_config=$pair_dir/server.toml client_config=$pair_dir/client.toml host=10.77.1.1 ;;
    affine-memif-ipv6)
      server_config=$pair_dir/server.toml client_config=$pair_dir/client.toml host="[fd77:1::1]" ;;
  esac
  rm -f "$pair_dir/memif.sock"
  pair_run_between "$bench" "$variant" "$limit" "$server_config" "$client_config" "$host" "$@"
}

# bench variant limit_s server-config client-config server-ip client-args...:
# pair_run with each side's configuration (empty: none, kernel sockets) and
# the server's address given; the server runs under pair_server_wrap, the
# client under pair_client_wrap. A client argument "@ports@" becomes the
# ports the server listens on, from its first line ("ports":[P,...]), comma
# separated. The server's output stays in $pair_dir/server.out until the
# next run.
pair_run_between() {
  local bench=$1 variant=$2 limit=$3 server_config=$4 client_config=$5 host=$6
  shift 6
  local config=() client_core=1 port line rc=0 zero_copy=()
  [ "$(nproc)" -ge 2 ] || client_core=0
  local preempt=()
  case "$variant" in
    *-zero-copy) zero_copy=(--zero-copy) ;;
    *-preempt) preempt=(--set 'reactor.preempt="on"') ;;  # both processes: the cost of the ticks alone
    *-spin) preempt=(--set 'reactor.idle="spin"') ;;  # both processes: the hand-tuned latency setting, a core each
  esac
  [ -n "$server_config" ] && config=(--config "$server_config")
  local quiet=(--set 'log.level="warn"' "${pair_sets[@]}" "${preempt[@]}")
  : >"$pair_dir/server.out"  # before the server's own redirection, which its fork does later
  "${pair_server_wrap[@]}" "$pair_exe" "${config[@]}" "${quiet[@]}" --set 'reactor.cores="0"' server "${zero_copy[@]}" "${pair_server_args[@]}" \
    >"$pair_dir/server.out" 2>"$pair_dir/server.err" &
  pair_server=$!
  for _ in $(seq 200); do  # its first line says it listens, and on which port
    port=$(sed -n '1s/.*"port":\([0-9]*\).*/\1/p' "$pair_dir/server.out")
    [ -n "$port" ] && break
    kill -0 "$pair_server" 2>/dev/null || break
    sleep 0.05
  done
  if [ -z "$port" ]; then
    pair_stop "$pair_server"
    pair_server=
    pair_error "$bench" "$variant" "server: $(pair_first_line "$pair_dir/server.err" "no port line within 10 s")"
    return
  fi
  local ports args=()
  ports=$(sed -n '1s/.*"ports":\[\([0-9,]*\)\].*/\1/p' "$pair_dir/server.out")
  for a in "$@"; do [ "$a" = @ports@ ] && args+=("${ports:-$port}") || args+=("$a"); done
  set -- "${args[@]}"
  config=()
  [ -n "$client_config" ] && config=(--config "$client_config")
  timeout -k 5 "$limit" "${pair_client_wrap[@]}" "$pair_exe" "${config[@]}" "${quiet[@]}" --set "reactor.cores=\"$client_core\"" client \
    --to "$host:$port" --variant "$variant" "${zero_copy[@]}" "$@" >"$pair_dir/client.out" 2>"$pair_dir/client.err" &
  pair_client=$!
  wait "$pair_client" || rc=$?
  pair_client=
  pair_stop "$pair_server"
  pair_server=
  line=$(grep -m1 '^{"bench"' "$pair_dir/client.out" || true)
  if [ "$rc" -eq 0 ] && [ -n "$line" ]; then
    echo "$line"
  elif [ -n "$line" ]; then  # every flow failed: its first error
    pair_error "$bench" "$variant" "client: $(python3 -c 'import json, sys; print(json.loads(sys.argv[1]).get("first_error", "exit status '"$rc"'"))' "$line")"
  elif [ "$rc" -eq 124 ] || [ "$rc" -eq 137 ]; then
    pair_error "$bench" "$variant" "client: still running after $limit s, killed"
  else
    pair_error "$bench" "$variant" "client: $(pair_first_line "$pair_dir/client.err" "exit status $rc, no output")"
  fi
}

# limit_s: one "rr" JSON line for raw-memif, the floor under affine-memif:
# bench/driver's raw DPDK ping-pong of one 64-byte frame, server on core 0,
# client on core 1, over a memif socket of its own.
pair_raw_memif() {
  local limit=$1 sock="$pair_dir/raw.sock" client_core=1 rc=0 line
  [ "$(nproc)" -ge 2 ] || client_core=0
  rm -f "$sock"
  "$pair_raw_exe" --role server --variant raw-dpdk --socket "$sock" --core 0 \
    >/dev/null 2>"$pair_dir/raw-server.err" &
  pair_server=$!
  for _ in $(seq 100); do [ -S "$sock" ] && break; sleep 0.05; done
  timeout -k 5 "$limit" "$pair_raw_exe" --role client --variant raw-dpdk --socket "$sock" --core "$client_core" \
    --round-trips 1000000 --warmup 100000 >"$pair_dir/raw.out" 2>"$pair_dir/raw-client.err" || rc=$?
  pair_stop "$pair_server"
  pair_server=
  line=$(grep -m1 '^{"bench"' "$pair_dir/raw.out" || true)
  if [ "$rc" -ne 0 ] || [ -z "$line" ]; then
    pair_error rr raw-memif "$(pair_first_line "$pair_dir/raw-client.err" "exit status $rc, no output")"
    return
  fi
  python3 -c 'import json, sys
r = json.loads(sys.argv[1])
print(json.dumps({"bench": "rr", "variant": "raw-memif", "transactions_per_s": r["round_trips_per_s"],
                  "p50_us": r["rtt_p50_us"], "p99_us": r["rtt_p99_us"], "p999_us": r["rtt_p999_us"], "errors": 0},
                 separators=(",", ":")))' "$line"
}

# runs-file bench rounds params-json figure...: one line per
# variant, each figure the median over the rounds that measured it. A
# variant with failed rounds says how many and the first error; one with no
# good round has no figures.
pair_summary() {
  python3 - "$@" <<'PY'
import json, statistics, sys
path, bench, rounds, params, figures = sys.argv[1], sys.argv[2], int(sys.argv[3]), json.loads(sys.argv[4]), sys.argv[5:]
runs = [json.loads(l) for l in open(path) if l.strip()]
lines = {}
order = ["raw-memif", "kernel-loopback", "kernel-loopback-zero-copy", "affine-memif", "affine-memif-ipv6",
         "affine-memif-zero-copy"]
for variant in order + sorted({r["variant"] for r in runs} - set(order)):
    mine = [r for r in runs if r["variant"] == variant]
    if not mine:
        continue
    good, errors = [], []
    for r in mine:
        missing = [f for f in figures if f not in r]
        if "error" in r:
            errors.append(r["error"])
        elif missing:
            errors.append("no transaction completed in the measured window")
        else:
            good.append(r)
    line = {"bench": bench, "variant": variant, **params, "rounds": rounds}
    for f in figures if good else ():
        m = statistics.median(r[f] for r in good)
        line[f] = round(m) if f.endswith("_per_s") else round(m, 2)
    if good:
        line["errors"] = sum(r["errors"] for r in good)
    if errors:
        line["failed_rounds"] = len(errors)
        line["error"] = errors[0]
    lines[variant] = line
# The comparisons this run makes, as ratios: affine over the kernel on the
# first figure (RR/s or bytes/s), and what the stack adds to raw memif's p50;
# a zero-copy variant over its copying twin.
kernel, raw = lines.get("kernel-loopback", {}), lines.get("raw-memif", {})
first = figures[0]
for name in ("affine-memif", "affine-memif-zero-copy", "affine-memif-ipv6"):
    affine = lines.get(name, {})
    if first in affine and kernel.get(first):
        affine["vs_kernel"] = round(affine[first] / kernel[first], 2)
    if "p50_us" in affine and "p50_us" in raw:
        affine["p50_over_raw_us"] = round(affine["p50_us"] - raw["p50_us"], 2)
# IPv6 over IPv4 on the same ports and configuration (issue 21: within 5 %).
v4, v6 = lines.get("affine-memif", {}), lines.get("affine-memif-ipv6", {})
if first in v6 and v4.get(first):
    v6["vs_ipv4"] = round(v6[first] / v4[first], 3)
if "p50_us" in v6 and v4.get("p50_us"):
    v6["p50_vs_ipv4"] = round(v6["p50_us"] / v4["p50_us"], 3)
for name, line in lines.items():
    twin = lines.get(name.removesuffix("-zero-copy"), {}) if name.endswith("-zero-copy") else {}
    if first in line and twin.get(first):
        line["vs_copying"] = round(line[first] / twin[first], 2)
for line in lines.values():
    print(json.dumps(line, separators=(",", ":")))
PY
}
