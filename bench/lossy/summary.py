#!/usr/bin/env python3
"""bench/lossy/summary.py RUNS PARAMS_JSON: the JSON lines of `bench/run lossy`.

RUNS holds one tab-separated record per measurement: round, variant, profile,
test (bulk, rr64, rr16k or bridge) and the JSON line it printed. Out comes
one line per variant and profile, each figure the median over the rounds
that measured it, then one line of the ratios affine / linux per profile.
"""
import json
import statistics
import sys

runs_path, params = sys.argv[1], json.loads(sys.argv[2])
profiles = params.pop("profiles")  # name -> {"loss_pct": ..., maybe "burst": ...}
variants = params.pop("variants")

records = {}  # (variant, profile, test) -> [parsed lines]
for raw in open(runs_path):
    if not raw.strip():
        continue
    _, variant, profile, test, line = raw.rstrip("\n").split("\t", 4)
    try:
        parsed = json.loads(line)
    except ValueError:
        parsed = {"error": f"not a JSON line: {line[:200]}"}
    records.setdefault((variant, profile, test), []).append(parsed)

# test -> (the client's figure, the name it has here)
FIGURES = {
    "bulk": [("bytes_per_s", "goodput_bytes_per_s")],
    "rr64": [("p50_us", "rr64_p50_us"), ("p99_us", "rr64_p99_us"), ("p999_us", "rr64_p999_us"),
             ("transactions_per_s", "rr64_per_s")],
    "rr16k": [("p50_us", "rr16k_p50_us"), ("p99_us", "rr16k_p99_us"), ("p999_us", "rr16k_p999_us"),
              ("transactions_per_s", "rr16k_per_s")],
}
LOST = ("loss", "burst_loss")
CONGESTION = ("queue_full", "rate_limit", "no_mbuf", "oversize", "tx_full")


def link_figures(lines):
    """What the bridge did over all rounds: the share of frames the impairment
    lost, and the frames dropped for want of room (queue, rate limit, rings)."""
    received = lost = other = marked = 0
    for b in lines:
        for way in ("a_to_b", "b_to_a"):
            d = b.get(way)
            if not d:
                continue
            received += d["received"]
            lost += sum(d["dropped"][r] for r in LOST)
            other += sum(d["dropped"][r] for r in CONGESTION) + d["rx_missed"]
            marked += d.get("ce_marked", 0)
    if received == 0:
        return {}
    return {"link_frames": received, "link_lost_pct": round(100 * lost / received, 3), "link_congestion_drops": other,
            "link_ce_marked": marked}


out = {}
for variant in variants:
    for profile in profiles:
        line = {"bench": "lossy", "variant": variant, "profile": profile, **profiles[profile], **params}
        errors = []
        for test, figures in FIGURES.items():
            got = records.get((variant, profile, test), [])
            good = [r for r in got if "error" not in r and all(f in r for f, _ in figures)]
            errors += [r.get("error", "no transaction completed in the measured window") for r in got if r not in good]
            for f, name in figures if good else ():
                m = statistics.median(r[f] for r in good)
                line[name] = round(m) if f.endswith("_per_s") else round(m, 1)
        line.update(link_figures([b for b in records.get((variant, profile, "bridge"), []) if "error" not in b]))
        errors += [b["error"] for b in records.get((variant, profile, "bridge"), []) if "error" in b]
        if errors:
            line["failed_runs"] = len(errors)
            line["error"] = errors[0]
        out[(variant, profile)] = line

# retained_pct: goodput at this profile over goodput at no loss, same variant
for (variant, profile), line in out.items():
    base = out.get((variant, "loss-0"), {}).get("goodput_bytes_per_s")
    if base and "goodput_bytes_per_s" in line:
        line["retained_pct"] = round(100 * line["goodput_bytes_per_s"] / base, 1)
for line in out.values():
    print(json.dumps(line, separators=(",", ":")))

for num, den in (("affine", "linux"), ("affine", "affine-fixed"), ("affine-paced", "linux"), ("affine-paced", "affine")):
    if num not in variants or den not in variants:
        continue
    ratios = {}
    for profile in profiles:
        a, k = out[(num, profile)], out[(den, profile)]
        r = {}
        for f in ("goodput_bytes_per_s", "retained_pct", "rr64_p50_us", "rr64_p99_us", "rr64_p999_us",
                  "rr16k_p50_us", "rr16k_p99_us", "rr16k_p999_us"):
            if a.get(f) is not None and k.get(f):
                r[f.removesuffix("_bytes_per_s").removesuffix("_us")] = round(a[f] / k[f], 2)
        ratios[profile] = r
    print(json.dumps({"bench": "lossy", "variant": f"{num}/{den}", "ratios": ratios}, separators=(",", ":")))
