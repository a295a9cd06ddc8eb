# busy.py CLIENT_JSON STAMPED_SERVER_STDERR FROM TO: the client's JSON line
# with core<N>_busy_pct added for each server core, from the server's stats
# lines ("stats cN ... idle_ms=I ...", reactor/stats.cc) stamped between FROM
# and TO (seconds since the epoch): 100 x (1 - idle time / wall time) between
# the first and the last of them.
import json
import re
import sys

line, path, t_from, t_to = json.loads(sys.argv[1]), sys.argv[2], float(sys.argv[3]), float(sys.argv[4])
stats = re.compile(r"^(\d+\.\d+) .* stats c(\d+) .*\bidle_ms=(\d+)\b")
seen = {}  # core -> [(time, idle_ms)]
for raw in open(path, errors="replace"):
    m = stats.match(raw)
    if m and t_from <= float(m.group(1)) <= t_to:
        seen.setdefault(int(m.group(2)), []).append((float(m.group(1)), int(m.group(3))))
for core, points in sorted(seen.items()):
    (t0, i0), (t1, i1) = points[0], points[-1]
    if t1 - t0 > 0.1:
        line[f"core{core}_busy_pct"] = round(max(0.0, 100.0 * (1 - (i1 - i0) / 1000.0 / (t1 - t0))), 1)
print(json.dumps(line, separators=(",", ":")))
