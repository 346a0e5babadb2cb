#!/usr/bin/python3
"""Runs attnlab and PyTorch on the same workloads, interleaved, and prints their ratio.

    scripts/bench                         # every workload, 3 rounds, table + JSON
    scripts/bench -w W3 --rounds 5 --threads 1
    scripts/bench -w W4,W4d               # several workloads, interleaved in each round
    scripts/bench --probe-torch -w W2     # which PyTorch thread setting is fastest here

Each round runs attnlab, then PyTorch (A B A B ...), each in a fresh process, so slow minutes
on a shared machine hit both sides alike. Per case the reported time is the median over rounds
of each round's median step time; ratio = attnlab / PyTorch (below 1: attnlab is faster).
Only these interleaved ratios are meaningful on a noisy machine, not the absolute times.
"""
import argparse
import datetime
import json
import os
import statistics
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TORCH_SCRIPT = os.path.join(ROOT, "bench", "torch_reference.py")
# PyTorch's fastest setting on the idle 2-core reference machine, for every workload (probed
# with --probe-torch; docs/performance.md, "PyTorch's thread settings").
DEFAULT_TORCH = (1, 2)  # (intra-op threads, OpenBLAS threads)
WORKLOADS = ["W1", "W2", "W2r", "W3", "W4", "W4d", "W5", "W6", "W11"]


def run_json(cmd):
    p = subprocess.run(cmd, capture_output=True, text=True)
    if p.returncode != 0:
        return None, p.stderr.strip()
    return json.loads(p.stdout), ""


def attnlab_cmd(args, w):
    return [args.bin, "--workload", w, "--threads", str(args.threads), "--steps",
            str(args.steps), "--warmup", str(args.warmup), "--json"] + (
                ["--filter", args.filter] if args.filter else [])


def torch_cmd(args, w, intra, blas):
    return ["/usr/bin/python3", TORCH_SCRIPT, "--workload", w, "--intra", str(intra), "--blas",
            str(blas), "--steps", str(args.steps), "--warmup", str(args.warmup), "--json"] + (
                ["--filter", args.filter] if args.filter else [])


def medians(runs):
    """{(workload, name): median over rounds of the per-round median_ms, the best single step
    of any round (min_ms), and the per-round medians in round order}."""
    by_case = {}
    for doc in runs:
        for r in doc["results"]:
            by_case.setdefault((r["workload"], r["name"]), []).append(r)
    return {k: {"median_ms": statistics.median(x["median_ms"] for x in v),
                "min_ms": min(x["min_ms"] for x in v),
                "round_ms": [x["median_ms"] for x in v],
                "gflops": statistics.median(x["gflops"] for x in v),
                "peak_mib": max(x.get("peak_tensor_mib", x.get("peak_rss_mib", 0)) for x in v),
                "rounds": len(v)} for k, v in by_case.items()}


def round_ratio_range(x, y):
    """(lowest, highest) of the per-round ratios, pairing each round's attnlab run with the
    PyTorch run that followed it."""
    pairs = [a / b for a, b in zip(x["round_ms"], y["round_ms"]) if b > 0]
    return (min(pairs), max(pairs)) if pairs else (float("nan"), float("nan"))


def probe_torch(args, workloads):
    settings = [(1, 1), (1, 2), (2, 1), (2, 2)]
    runs = {s: [] for s in settings}
    for _ in range(args.rounds):
        for s in settings:
            for w in workloads:
                doc, err = run_json(torch_cmd(args, w, *s))
                if doc:
                    runs[s].append(doc)
                else:
                    print(f"torch {s}: {err}", file=sys.stderr)
    table = {s: medians(r) for s, r in runs.items()}
    cases = sorted(set().union(*[t.keys() for t in table.values()]))
    print(f"{'case':<42}" + "".join(f"  intra {i} blas {b}" for i, b in settings))
    totals = {s: 0.0 for s in settings}
    for c in cases:
        row = f"{c[0] + ' ' + c[1]:<42}"
        for s in settings:
            ms = table[s].get(c, {}).get("median_ms", float("nan"))
            totals[s] += ms
            row += f"  {ms:>12.3f}ms"
        print(row)
    best = min(settings, key=lambda s: totals[s])
    print(f"fastest overall: intra-op {best[0]}, OpenBLAS {best[1]} (sum of medians)")
    return 0


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--bin", required=True, help="attn_bench_cli executable")
    p.add_argument("--workload", "-w", default="all")
    p.add_argument("--filter", default="")
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--steps", type=int, default=20)
    p.add_argument("--warmup", type=int, default=3)
    p.add_argument("--threads", type=int, default=2, help="attnlab threads")
    p.add_argument("--torch-intra", type=int, default=DEFAULT_TORCH[0])
    p.add_argument("--torch-blas", type=int, default=DEFAULT_TORCH[1])
    p.add_argument("--probe-torch", action="store_true", help="compare PyTorch thread settings")
    p.add_argument("--out", default=os.path.join(ROOT, "build", "bench", "latest.json"))
    args = p.parse_args()
    workloads = WORKLOADS if args.workload.lower() == "all" else args.workload.split(",")
    if args.probe_torch:
        return probe_torch(args, workloads)

    a_runs, t_runs, skipped = [], [], {}
    for rnd in range(args.rounds):
        for w in workloads:
            if w in skipped:
                continue
            doc, err = run_json(attnlab_cmd(args, w))
            if doc is None:
                skipped[w] = err
                continue
            a_runs.append(doc)
            doc, err = run_json(torch_cmd(args, w, args.torch_intra, args.torch_blas))
            if doc is None:
                print(f"torch {w}: {err}", file=sys.stderr)
                continue
            t_runs.append(doc)
        print(f"round {rnd + 1}/{args.rounds} done", file=sys.stderr, flush=True)
    for w, err in skipped.items():
        print(f"skipped {w}: {err}", file=sys.stderr)

    a, t = medians(a_runs), medians(t_runs)
    print(f"attnlab {args.threads} threads vs torch intra-op {args.torch_intra} / OpenBLAS "
          f"{args.torch_blas}; median over {args.rounds} interleaved rounds of "
          f"{args.steps}-step medians")
    print("ratio: of the medians; per round: its lowest and highest; best: best step against "
          "best step")
    print(f"{'id':<4} {'case':<36} {'attnlab ms':>11} {'torch ms':>10} {'ratio':>7} "
          f"{'per round':>11} {'best':>6} {'attn GF/s':>9} {'torch GF/s':>10} {'attn MiB':>9}")
    rows = []
    nan = float("nan")
    for key in sorted(a, key=lambda k: (k[0], list(a).index(k))):
        x, y = a[key], t.get(key)
        ratio = x["median_ms"] / y["median_ms"] if y else None
        best = x["min_ms"] / y["min_ms"] if y and y["min_ms"] > 0 else None
        low, high = round_ratio_range(x, y) if y else (nan, nan)
        rows.append({"workload": key[0], "name": key[1], "attnlab_ms": x["median_ms"],
                     "torch_ms": y["median_ms"] if y else None, "ratio": ratio,
                     "round_ratio_low": low if y else None, "round_ratio_high": high if y else None,
                     "attnlab_best_ms": x["min_ms"], "torch_best_ms": y["min_ms"] if y else None,
                     "best_ratio": best, "attnlab_gflops": x["gflops"],
                     "torch_gflops": y["gflops"] if y else None,
                     "attnlab_peak_tensor_mib": x["peak_mib"]})
        print(f"{key[0]:<4} {key[1]:<36} {x['median_ms']:>11.3f} "
              f"{(y['median_ms'] if y else nan):>10.3f} {(ratio if ratio else nan):>7.2f} "
              f"{low:>5.2f}-{high:<5.2f} {(best if best else nan):>6.2f} {x['gflops']:>9.1f} "
              f"{(y['gflops'] if y else nan):>10.1f} {x['peak_mib']:>9.1f}")
    os.makedirs(os.path.dirname(args.out), exist_ok=True)
    with open(args.out, "w") as f:
        json.dump({"date": datetime.datetime.utcnow().isoformat(timespec="seconds") + "Z",
                   "attnlab_threads": args.threads, "torch_intra": args.torch_intra,
                   "torch_blas": args.torch_blas, "rounds": args.rounds, "steps": args.steps,
                   "rows": rows, "attnlab_runs": a_runs, "torch_runs": t_runs}, f, indent=2)
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
