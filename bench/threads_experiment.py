#!/usr/bin/python3
"""How should OpenBLAS's threads and our OpenMP loops share the cores? Measures it.

    /usr/bin/python3 bench/threads_experiment.py BUILD_DIR [--rounds 3]

Runs attn_microbench (sgemm 512, a softmax-heavy forward+backward, one attention head mixing
GEMMs and softmax) under each configuration, interleaved round by round, each in a fresh
process, and prints the median per configuration:
  omp-2       OpenMP build of OpenBLAS (what attnlab links) + our OpenMP, 2 threads: one pool
  pthread-2+2 pthread OpenBLAS (LD_LIBRARY_PATH swap, same binary) 2 threads + OpenMP 2 threads
  omp-1       everything on 1 thread
  omp-2-passive  omp-2 with OMP_WAIT_POLICY=passive (idle workers sleep instead of spinning)
"""
import json
import os
import statistics
import subprocess
import sys

PTHREAD = "/usr/lib/x86_64-linux-gnu/openblas-pthread"
CONFIGS = {
    "omp-2": {"ATTN_THREADS": "2"},
    "pthread-2+2": {"ATTN_THREADS": "2", "LD_LIBRARY_PATH": PTHREAD, "OPENBLAS_NUM_THREADS": "2"},
    "omp-1": {"ATTN_THREADS": "1"},
    "omp-2-passive": {"ATTN_THREADS": "2", "OMP_WAIT_POLICY": "passive"},
}
FILTER = "sgemm_raw/512|softmax_fwd_bwd/4096/512|attention_head_fwd_bwd/(128|512)"


def run(build, env):
    e = dict(os.environ, **env)
    out = subprocess.run([os.path.join(build, "attn_microbench"), f"--benchmark_filter={FILTER}",
                          "--benchmark_min_time=0.2", "--benchmark_format=json"],
                         env=e, capture_output=True, text=True, check=True).stdout
    # Wall time for every config (1 thread included), so they compare like for like.
    return {b["name"].replace("/real_time", ""): b["real_time"] for b in json.loads(out)["benchmarks"]}


def main():
    build = sys.argv[1]
    rounds = int(sys.argv[3]) if len(sys.argv) > 3 and sys.argv[2] == "--rounds" else 3
    times = {c: {} for c in CONFIGS}
    for r in range(rounds):
        for c, env in CONFIGS.items():
            for name, t in run(build, env).items():
                times[c].setdefault(name, []).append(t)
        print(f"round {r + 1}/{rounds}", file=sys.stderr, flush=True)
    names = sorted(times["omp-2"])
    print(f"{'case (median us)':<32}" + "".join(f"{c:>15}" for c in CONFIGS))
    for n in names:
        print(f"{n:<32}" + "".join(f"{statistics.median(times[c][n]):>15.0f}" for c in CONFIGS))


if __name__ == "__main__":
    main()
