#!/usr/bin/python3
"""What share of the CPU's FMA peak a workload reaches, both measured in one run (issue 30).

    bench/peak_fraction.py --build build/release                  # W4, 1 and 2 threads, 3 rounds
    bench/peak_fraction.py --build build/release -w W1,W4 --threads 1 --rounds 5
    bench/peak_fraction.py --build build/release --gemm-shapes     # the experiments' products

Each round runs attn_fma_peak (12 independent FMA chains per thread on registers: the most the
cores can do) and then each workload in attn_bench_cli, so both see the same machine. Both are
rated per second of CPU time (CLOCK_PROCESS_CPUTIME_ID), so time slices that other jobs take do
not count against either. A workload's share is its counted FLOPs per CPU second over the
widest instruction set's one-thread peak (the per-core peak: at 2 threads the CPU time of both
threads is in the denominator, so a thread waiting in a barrier counts against the share).
Reported per thread count: the median over rounds, and the lowest and highest round.

With --gemm-shapes the rounds run attn_gemm_shapes (bench/micro/gemm_shapes.cpp: the matrix
products of the chapter experiments, one thread, our kernels and OpenBLAS) instead of the
workloads, and each product's rate is read against the one-thread peak of the instruction set
our kernels run with (ATTN_ISA, or the widest).
"""
import argparse
import json
import os
import statistics
import subprocess
import sys


def run_json(cmd):
    out = subprocess.run(cmd, capture_output=True, text=True, check=True).stdout
    return json.loads(out)


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--build", required=True, help="folder with attn_bench_cli and attn_fma_peak")
    p.add_argument("--workload", "-w", default="W4")
    p.add_argument("--threads", default="1,2", help="comma-separated thread counts")
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--steps", type=int, default=10)
    p.add_argument("--warmup", type=int, default=2)
    p.add_argument("--gemm-shapes", action="store_true",
                   help="attn_gemm_shapes' products instead of the workloads")
    args = p.parse_args()
    if args.gemm_shapes:
        return gemm_shapes(args)
    bench = os.path.join(args.build, "attn_bench_cli")
    fma = os.path.join(args.build, "attn_fma_peak")
    workloads = args.workload.split(",")
    threads = [int(t) for t in args.threads.split(",")]
    peaks, shares = [], {}
    for rnd in range(args.rounds):
        peak_doc = run_json([fma, "--json"])
        isa = "avx512" if "avx512" in peak_doc else "avx2"
        if isa not in peak_doc:
            sys.exit("peak_fraction: attn_fma_peak found neither AVX2 nor AVX-512")
        peak = peak_doc[isa]["1"]
        peaks.append((isa, peak))
        for t in threads:
            for w in workloads:
                doc = run_json([bench, "-w", w, "--threads", str(t), "--steps", str(args.steps),
                                "--warmup", str(args.warmup), "--json"])
                for r in doc["results"]:
                    key = (r["workload"], r["name"], t)
                    shares.setdefault(key, []).append((r["gflops_per_cpu_s"], peak))
        print(f"round {rnd + 1}/{args.rounds}: {isa} peak {peak:.1f} GFLOP/s per core",
              file=sys.stderr, flush=True)
    isa = peaks[0][0]
    print(f"FMA peak ({isa}, one core, per CPU second): "
          + ", ".join(f"{p:.1f}" for _, p in peaks) + " GFLOP/s in the rounds")
    print(f"{'id':<4} {'case':<36} {'threads':>7} {'GFLOP/CPU-s':>12} {'share':>7} {'rounds':>13}")
    for (w, name, t), v in shares.items():
        fractions = [g / pk for g, pk in v]
        print(f"{w:<4} {name:<36} {t:>7} {statistics.median(g for g, _ in v):>12.1f} "
              f"{statistics.median(fractions):>7.1%} {min(fractions):>6.1%}-{max(fractions):<6.1%}")
    return 0


def gemm_shapes(args):
    """Each product's GFLOP/s (ours, OpenBLAS) against the FMA peak, rounds interleaved."""
    fma = os.path.join(args.build, "attn_fma_peak")
    shapes = os.path.join(args.build, "attn_gemm_shapes")
    rates, peaks, isa = {}, [], None
    for rnd in range(args.rounds):
        peak_doc = run_json([fma, "--json"])
        doc = run_json([shapes, "--json"])
        isa = doc["isa"]
        if isa not in peak_doc:
            sys.exit(f"peak_fraction: attn_fma_peak has no peak for the kernels' {isa}")
        peak = peak_doc[isa]["1"]
        peaks.append(peak)
        for r in doc["shapes"]:
            key = (r["where"], r["op"], r["m"], r["n"], r["k"])
            rates.setdefault(key, []).append((r["ours"] / peak, r["openblas"] / peak))
        print(f"round {rnd + 1}/{args.rounds}: {isa} peak {peak:.1f} GFLOP/s per core",
              file=sys.stderr, flush=True)
    print(f"FMA peak ({isa}, one core, per CPU second): "
          + ", ".join(f"{p:.1f}" for p in peaks) + " GFLOP/s in the rounds")
    print("| product | op | m | n | k | ours: share of peak | OpenBLAS: share of peak |")
    print("|---|---|--:|--:|--:|--:|--:|")
    for (where, op, m, n, k), v in rates.items():
        ours = statistics.median(o for o, _ in v)
        blas = statistics.median(b for _, b in v)
        print(f"| {where} | {op} | {m} | {n} | {k} | {ours:.0%} | {blas:.0%} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
