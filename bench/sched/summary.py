# summary.py RUNS BENCH ROUNDS PARAMS_JSON VARIANT...: one JSON line per
# variant, in the order given, each figure the median over the rounds that
# measured it; per_session_transactions_per_s is transactions_per_s over the
# flows. A variant with failed rounds says how many and the first error.
import json
import statistics
import sys

path, bench, rounds, params, variants = sys.argv[1], sys.argv[2], int(sys.argv[3]), json.loads(sys.argv[4]), sys.argv[5:]
figures = ("transactions_per_s", "p50_us", "p98_us", "p99_us", "p995_us", "p999_us", "p9999_us", "over_20us_pct",
           "least_flow_share", "core0_busy_pct", "core1_busy_pct")
runs = [json.loads(l) for l in open(path) if l.strip()]
for variant in variants:
    mine = [r for r in runs if r.get("variant") == variant]
    good = [r for r in mine if "error" not in r and "transactions_per_s" in r]
    errors = [r.get("error", "no transaction completed in the measured window") for r in mine if r not in good]
    out = {"bench": bench, "variant": variant, **params, "rounds": rounds}
    for f in figures:
        values = [r[f] for r in good if f in r]
        if values:
            m = statistics.median(values)
            out[f] = round(m) if f.endswith("_per_s") else round(m, 3 if f in ("least_flow_share", "over_20us_pct") else 2)
    if "transactions_per_s" in out:
        out["per_session_transactions_per_s"] = round(out["transactions_per_s"] / params["flows"])
    if good:
        out["errors"] = sum(r.get("errors", 0) for r in good)
    if errors:
        out["failed_rounds"] = len(errors)
        out["error"] = errors[0]
    print(json.dumps(out, separators=(",", ":")))
