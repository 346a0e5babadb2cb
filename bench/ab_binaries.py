#!/usr/bin/python3
"""Before/after timing of attnlab builds: two or more attn_bench_cli binaries, interleaved.

    cp build/release/attn_bench_cli /tmp/bench-before      # before the change
    ... change, rebuild ...
    bench/ab_binaries.py -w W4 --rounds 2 --steps 4 before=/tmp/bench-before after=build/release/attn_bench_cli

Each round runs every binary once in a fresh process, alternating the order between rounds
(A B, B A, ...) so a load that drifts during the session hits every binary alike. Per case it
prints the median over rounds of each binary's median step time, and each binary's ratio to the
first one (below 1 means faster). On a shared machine read only the ratios.
"""
import argparse
import json
import statistics
import subprocess
import sys


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--workload", "-w", default="W3")
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
    times = {}  # case -> label -> [median_ms per round]
    for rnd in range(args.rounds):
        for label, path in bins if rnd % 2 == 0 else bins[::-1]:
            cmd = [path, "--workload", args.workload, "--threads", str(args.threads), "--steps",
                   str(args.steps), "--warmup", str(args.warmup), "--json"]
            if args.filter:
                cmd += ["--filter", args.filter]
            out = subprocess.run(cmd, capture_output=True, text=True)
            if out.returncode != 0:
                sys.exit(f"{label} failed: {out.stderr.strip()}")
            for case in json.loads(out.stdout)["results"]:
                times.setdefault(case["name"], {}).setdefault(label, []).append(case["median_ms"])
    labels = [label for label, _ in bins]
    print(f"{'case':<40}" + "".join(f"{l:>12}" for l in labels) +
          "".join(f"{l + '/' + labels[0]:>16}" for l in labels[1:]))
    for name, by_label in times.items():
        med = {l: statistics.median(by_label[l]) for l in labels}
        print(f"{name:<40}" + "".join(f"{med[l]:>12.3f}" for l in labels) +
              "".join(f"{med[l] / med[labels[0]]:>16.3f}" for l in labels[1:]))


if __name__ == "__main__":
    main()
