"""bench/rr/run --idle-connections: one JSON line per variant and count of
idle connections, from the runs' lines (bench/rr/idle.sh). Figures are
medians over the rounds; vs_no_idle is RR/s over the same variant's with
the fewest idle connections, and server_bytes_per_idle_connection the
server's peak resident growth over that run's, per idle connection."""
import json
import statistics
import sys

path, rounds, params = sys.argv[1], int(sys.argv[2]), json.loads(sys.argv[3])
runs = [json.loads(l) for l in open(path) if l.strip()]
figures = ["transactions_per_s", "p50_us", "p99_us", "p999_us", "rss_bytes_per_idle_connection",
           "kernel_slab_bytes_per_idle_connection", "idle_setup_s", "server_rss_growth_bytes"]
groups = {}
for r in runs:
    groups.setdefault((r["variant"], r["idle_connections"]), []).append(r)

lines = {}
for (variant, n), mine in groups.items():
    good = [r for r in mine if "error" not in r and "transactions_per_s" in r and "p50_us" in r]
    errors = [r.get("error", r.get("first_error", "no transaction completed in the measured window"))
              for r in mine if r not in good]
    line = {"bench": "rr", "variant": variant, "idle_connections": n, **params, "rounds": rounds}
    for f in figures:
        values = [r[f] for r in good if f in r]
        if values:
            m = statistics.median(values)
            line[f] = round(m) if f.endswith(("_per_s", "_bytes", "_connection")) else round(m, 2)
    if good:
        line["errors"] = sum(r["errors"] for r in good)
    if errors:
        line["failed_rounds"] = len(errors)
        line["error"] = errors[0]
    lines[(variant, n)] = line

for (variant, n), line in sorted(lines.items()):
    base = lines[min(k for k in lines if k[0] == variant)]
    if base is not line and base.get("transactions_per_s") and "transactions_per_s" in line:
        line["vs_no_idle"] = round(line["transactions_per_s"] / base["transactions_per_s"], 3)
    growth = line.get("server_rss_growth_bytes")
    if base is not line and n > base["idle_connections"] and growth is not None \
            and base.get("server_rss_growth_bytes") is not None:
        line["server_bytes_per_idle_connection"] = round(
            (growth - base["server_rss_growth_bytes"]) / (n - base["idle_connections"]))
for (variant, n), line in sorted(lines.items()):
    line.pop("server_rss_growth_bytes", None)
    print(json.dumps(line, separators=(",", ":")))
