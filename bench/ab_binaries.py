#!/usr/bin/python3
"""Before/after timing of attnlab builds: two or more attn_bench_cli binaries, interleaved.

    cp build/release/attn_bench_cli /tmp/bench-before      # before the change
    ... change, rebuild ...
    bench/ab_binaries.py -w W4 --rounds 2 --steps 4 before=/tmp/bench-before after=build/release/attn_bench_cli
    bench/ab_binaries.py -w W4,W4d --threads 1 old=/tmp/bench-before new=build/release/attn_bench_cli torch=torch

Each round runs every binary once per workload in a fresh process, alternating the order of the
binaries between rounds (A B, B A, ...) so a load that drifts during the session hits every
binary alike. Per case it prints the median over rounds of each binary's median step time, and
each binary's ratio to the first one (below 1 means faster). The path `torch` runs PyTorch's twin
(bench/torch_reference.py) with 1 intra-op thread and --threads OpenBLAS threads, the setting
scripts/bench uses. With W4 and W4d both given, it also prints each binary's W4d / W4, dropout's
cost. On a shared machine read only the ratios.
"""
import os
import argparse
import json
import statistics
import subprocess
import sys

TORCH_SCRIPT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "torch_reference.py")


def command(path, workload, args):
    if path == "torch":
        return ["/usr/bin/python3", TORCH_SCRIPT, "--workload", workload, "--intra", "1", "--blas",
                str(args.threads), "--steps", str(args.steps), "--warmup", str(args.warmup),
                "--json"]
    return [path, "--workload", workload, "--threads", str(args.threads), "--steps",
            str(args.steps), "--warmup", str(args.warmup), "--json"]


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--workload", "-w", default="W3", help="one or several, comma-separated")
    p.add_argument("--filter", default="")
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--steps", type=int, default=10)
    p.add_argument("--warmup", type=int, default=2)
    p.add_argument("--threads", type=int, default=1)
    p.add_argument("bins", nargs="+", help="label=path/to/attn_bench_cli")
    args = p.parse_args()
    bins = [b.split("=", 1) for b in args.bins]
    if any(len(b) != 2 for b in bins):
        p.error("each binary is given as label=path")
    times = {}  # (workload, case) -> label -> [median_ms per round]
    for rnd in range(args.rounds):
        for workload in args.workload.split(","):
            for label, path in bins if rnd % 2 == 0 else bins[::-1]:
                cmd = command(path, workload, args)
                if args.filter:
                    cmd += ["--filter", args.filter]
                out = subprocess.run(cmd, capture_output=True, text=True)
                if out.returncode != 0:
                    sys.exit(f"{label} failed: {out.stderr.strip()}")
                for case in json.loads(out.stdout)["results"]:
                    key = (case.get("workload", workload), case["name"])
                    times.setdefault(key, {}).setdefault(label, []).append(case["median_ms"])
    labels = [label for label, _ in bins]
    print(f"{'case':<40}" + "".join(f"{l:>12}" for l in labels) +
          "".join(f"{l + '/' + labels[0]:>16}" for l in labels[1:]))
    med = {key: {l: statistics.median(by_label[l]) for l in labels}
           for key, by_label in times.items()}
    for (workload, name), m in med.items():
        print(f"{workload + ' ' + name:<40}" + "".join(f"{m[l]:>12.3f}" for l in labels) +
              "".join(f"{m[l] / m[labels[0]]:>16.3f}" for l in labels[1:]))
    plain = [m for (w, _), m in med.items() if w == "W4"]
    dropped = [m for (w, _), m in med.items() if w == "W4d"]
    if len(plain) == 1 and len(dropped) == 1:
        print(f"{'W4d / W4 (dropout cost)':<40}" +
              "".join(f"{dropped[0][l] / plain[0][l]:>12.3f}" for l in labels))


if __name__ == "__main__":
    main()
