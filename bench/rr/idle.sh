# bench/rr/idle.sh: sourced by bench/rr/run for --idle-connections (see
# there). Uses bench/rr/run's settings ($idle, $variants, $rounds, ...) and
# bench/rr/pair.sh.

idle_maps_restore=

idle_cleanup() {
  pair_cleanup
  [ -z "$idle_maps_restore" ] || sysctl -qw vm.max_map_count="$idle_maps_restore" || true
}

idle_run() {
  local max=0 n listeners limit line
  for n in $idle; do [ "$n" -gt "$max" ] && max=$n; done
  listeners=$(( (max + 14999) / 15000 ))
  [ "$listeners" -ge 1 ] || listeners=1
  # A descriptor per kernel socket, on each side (the uring variant); where
  # the hard limit is lower (a container's), kernel sockets run only the
  # counts that fit, and say so. affine's stack needs no descriptors.
  local fds
  ulimit -n $(( max + 65536 )) 2>/dev/null || ulimit -n "$(ulimit -Hn)"
  fds=$(ulimit -n)
  # A fiber per connection on the server, each stack guarded by a page of
  # its own: two mappings per fiber, which the reactor keeps within 3/8 of
  # vm.max_map_count (reactor/stack_pool.cc). Raised for the run where it
  # is too low (Debian's 65530 holds 24,573 fibers), and put back after.
  local maps need
  maps=$(cat /proc/sys/vm/max_map_count)
  need=$(( (max + 4096) * 2 * 8 / 3 ))
  if [ "$maps" -lt "$need" ]; then
    if sysctl -qw vm.max_map_count="$need" 2>/dev/null; then
      echo "bench/run rr: vm.max_map_count raised from $maps to $need for this run" >&2
      idle_maps_restore=$maps
    else
      echo "bench/run rr: vm.max_map_count is $maps, too low for $max fibers, and cannot be raised here" >&2
    fi
  fi
  pair_variants=$variants
  pair_sets+=(--set "tcp.max_connections=$(( max + 65536 ))")
  pair_server_args=(--listeners "$listeners" --keepalive)
  pair_init
  trap 'idle_cleanup' EXIT
  for _ in $(seq "$rounds"); do
    for n in $idle; do
      # about 10 us of setup per connection here; 1 ms allowed
      limit=$(python3 -c "import math; print(math.ceil($warmup + $duration) + 60 + $n // 1000)")
      for variant in $pair_variants; do
        if [ "${variant#kernel}" != "$variant" ] && [ "$n" -gt $(( fds - 1024 )) ]; then
          pair_error rr "$variant" "$n kernel sockets need more descriptors than this machine's open-file limit ($fds) allows" |
            python3 -c 'import json, sys; l = json.loads(sys.stdin.read()); l["idle_connections"] = int(sys.argv[1]); print(json.dumps(l, separators=(",", ":")))' "$n"
          continue
        fi
        line=$(pair_run rr "$variant" "$limit" --flows "$flows" --request-size "$size" --response-size "$size" \
          --duration-s "$duration" --warmup-s "$warmup" --timeout-ms 10000 \
          --idle-connections "$n" --idle-ports @ports@)
        python3 - "$line" "$n" "$pair_dir/server.out" <<'PY'
import json, sys
line, n, server_out = json.loads(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
line["idle_connections"] = n
server = [json.loads(l) for l in open(server_out) if l.startswith("{")]
start = next((s["rss_bytes"] for s in server if "rss_bytes" in s), None)
peak = next((s["rss_peak_bytes"] for s in server if "rss_peak_bytes" in s), None)
if start and peak:
    line["server_rss_growth_bytes"] = peak - start
print(json.dumps(line, separators=(",", ":")))
PY
      done
    done
  done >"$pair_dir/runs.jsonl"
  python3 "$here/idle_summary.py" "$pair_dir/runs.jsonl" "$rounds" \
    "{\"flows\":$flows,\"request_bytes\":$size,\"response_bytes\":$size,\"duration_s\":$duration}"
}
