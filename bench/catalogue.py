#!/usr/bin/python3
"""What each experiment of the catalogue costs: wall time, CPU time and peak memory per run.

    scripts/bench --catalogue                        # every experiment at its defaults
    scripts/bench --catalogue --quick                # every experiment with --quick
    scripts/bench --catalogue --only reversal,demo --profile
    scripts/bench --catalogue --baseline /tmp/attnlab-before --rounds 2
    scripts/bench --catalogue --write-times experiments/measured_times.cpp   # attnlab list's times

Each experiment runs in a fresh process (`attnlab run NAME --out TMP`); its wall time, its CPU
time (user + system, all threads) and its peak resident memory come from the kernel's rusage of
that process (os.wait4), so nothing is estimated. With --profile a second run goes under
`perf record -e cpu-clock` (sampling; hardware counters are not needed): the table shows the five
functions with the most samples, and a table of the whole run's CPU seconds by function follows
(each function's share of an experiment's samples times that experiment's CPU time, summed), with
the part in matrix products (GEMM_FUNCTIONS). With --baseline OLD the old and the new binary alternate per
experiment (A B, then B A in the next round) and the table gets the new/old ratio of wall and
CPU time: the before/after figure of a speed change, measured side by side on the same load.

Experiments the baseline does not have run on the new binary alone and stay out of the new/old
totals. Each run's comparison rows are kept, and the table that follows the timings lists every
row whose status differs between the two binaries (matched by the row's name; a row that only
one binary prints is counted, not matched): the check that a speed change left every claim as it
was.

The table (Markdown) goes to stdout; every number goes to build/bench/catalogue[-quick].json,
rewritten after each experiment so an interrupted run keeps what it measured.
The last column compares the wall time with the time `attnlab list` announces for the
experiment ("~2 min", "< 1 s", "~2.5 min"): `check` where the measurement lies outside
[announced / 2, announced * 2]. --write-times puts this run's times into the list
(bench/measured_times.py).
"""
import argparse
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

import measured_times


def list_experiments(binary):
    """(name, announced time text) for every experiment `attnlab list` shows."""
    out = subprocess.run([binary, "list"], capture_output=True, text=True, check=True).stdout
    rows = []
    for line in out.splitlines()[2:]:
        name = re.match(r"^  ([a-z0-9]+(?:-[a-z0-9]+)*)\s{2,}", line)
        time_text = re.search(r"\s{2,}((?:<|~)\s?[0-9.\-]+\s?(?:s|min)|not measured)\s", line)
        if name:
            rows.append((name.group(1), time_text.group(1) if time_text else "not measured"))
    return rows


def announced_seconds(text):
    """The announced time as (low, high) seconds: "< 1 s" -> (0, 1), "~2-3 min" -> (120, 180)."""
    m = re.match(r"([<~])\s?([0-9.]+)(?:-([0-9.]+))?\s?(s|min)", text)
    if not m:
        return None
    unit = 60 if m.group(4) == "min" else 1
    low, high = float(m.group(2)) * unit, float(m.group(3) or m.group(2)) * unit
    return (0.0, high) if m.group(1) == "<" else (low, high)


def row_statuses(out):
    """{row name: status} of every comparison row in a run folder's results.json ("ok",
    "differs", "not judged"; older builds wrote DIFFERS and had no outcome field)."""
    try:
        with open(os.path.join(out, "results.json")) as f:
            doc = json.load(f)
    except (OSError, ValueError):
        return {}
    rows = {}
    for table in doc.get("comparisons", []):
        for entry in table.get("entries", []):
            rows[entry.get("name", "")] = str(entry.get("status", "")).lower()
    return rows


def run_once(cmd):
    """Runs cmd to completion; returns wall s, CPU s (user + sys) and peak RSS MiB, or raises."""
    start = time.monotonic()
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.monotonic() - start
    err = proc.stderr.read().decode(errors="replace")
    proc.stderr.close()
    code = os.waitstatus_to_exitcode(status)
    if code != 0:
        raise RuntimeError(f"{' '.join(cmd)} exited {code}: {err.strip()[-400:]}")
    return {"wall_s": wall, "cpu_s": usage.ru_utime + usage.ru_stime,
            "peak_rss_mib": usage.ru_maxrss / 1024}


# What the catalogue-wide profile (--profile) counts as matrix products: our GEMM kernels
# (autograd/kernels/small_gemm.cpp, panel_gemm.cpp, pack.cpp) and OpenBLAS's (sgemm_*, with its
# packing copies and buffer calls).
GEMM_FUNCTIONS = re.compile(r"register_block|run_small_gemm|compute_rows|pack_b|pack_transposed|"
                            r"partial_block|add_to_group_sums|finish_col_sums|"
                            r"sgemm_|cblas_|blas_memory_")


def top_functions(binary, args, scratch, count=60):
    """The `count` functions with the most cpu-clock samples in one run, as (percent, name)."""
    data = os.path.join(scratch, "perf.data")
    subprocess.run(["perf", "record", "-q", "-e", "cpu-clock", "-g", "-o", data, "--", binary] + args,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
    report = subprocess.run(["perf", "report", "-i", data, "--no-children", "--stdio", "--sort",
                             "symbol", "-g", "none"], capture_output=True, text=True).stdout
    top = []
    for line in report.splitlines():
        m = re.match(r"^\s+([0-9.]+)%\s+\[[.k]\]\s+(.*)$", line)
        if m:
            top.append((float(m.group(1)), re.split(r"\s{2,}", m.group(2).strip())[0][:70]))
        if len(top) == count:
            break
    return top


def parse_args():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--bin", required=True, help="the attnlab executable to measure")
    p.add_argument("--baseline", help="an older attnlab executable, run alternately with --bin")
    p.add_argument("--quick", action="store_true", help="run every experiment with --quick")
    p.add_argument("--only", default="", help="comma-separated experiment names")
    p.add_argument("--rounds", type=int, default=1, help="runs per binary and experiment")
    p.add_argument("--threads", type=int, default=0, help="--threads for every run (0: default)")
    p.add_argument("--profile", action="store_true", help="perf record one more run of each")
    p.add_argument("--out", default="", help="JSON file (default build/bench/catalogue*.json)")
    p.add_argument("--write-times", default="", metavar="CPP",
                   help="then write the measured times (experiments/measured_times.cpp)")
    args = p.parse_args()
    if args.profile and not shutil.which("perf"):
        sys.exit("bench/catalogue.py: --profile needs perf (apt-get install linux-perf)")
    return args


def chosen_experiments(args):
    experiments = list_experiments(args.bin)
    if args.only:
        wanted = args.only.split(",")
        unknown = sorted(set(wanted) - {n for n, _ in experiments})
        if unknown:
            sys.exit(f"bench/catalogue.py: --only names unknown experiments: {', '.join(unknown)}")
        experiments = [(n, t) for n, t in experiments if n in wanted]
    return experiments


def measure_experiment(name, binaries, args, extra, scratch):
    """Runs one experiment `args.rounds` times per binary, alternating their order by round."""
    row = {}
    for rnd in range(args.rounds):
        for label, binary in binaries if rnd % 2 == 0 else binaries[::-1]:
            out = os.path.join(scratch, f"{label}-{name}")
            m = run_once([binary, "run", name, "--out", out] + extra)
            row.setdefault(f"{label}_rows", row_statuses(out))
            shutil.rmtree(out, ignore_errors=True)
            row.setdefault(label, []).append(m)
    return row


def save(path, args, results):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as f:
        json.dump({"quick": args.quick, "threads": args.threads, "rounds": args.rounds,
                   "load_average": os.getloadavg(), "experiments": results}, f, indent=1)


def main():
    args = parse_args()
    experiments = chosen_experiments(args)
    old_names = {n for n, _ in list_experiments(args.baseline)} if args.baseline else set()
    extra = (["--quick"] if args.quick else []) + (
        ["--threads", str(args.threads)] if args.threads else [])
    path = args.out or os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(args.bin))),
                                    "bench", "catalogue" + ("-quick" if args.quick else "") + ".json")
    scratch = tempfile.mkdtemp(prefix="attn-catalogue-")
    results = []
    try:
        for i, (name, announced) in enumerate(experiments, 1):
            binaries = [("new", args.bin)] + (
                [("old", args.baseline)] if name in old_names else [])
            row = {"experiment": name, "announced": announced}
            row.update(measure_experiment(name, binaries, args, extra, scratch))
            if args.profile:
                run_args = ["run", name, "--out", os.path.join(scratch, "profile")] + extra
                row["top_functions"] = top_functions(args.bin, run_args, scratch)
                shutil.rmtree(os.path.join(scratch, "profile"), ignore_errors=True)
            results.append(row)
            save(path, args, results)
            wall = statistics.median(m["wall_s"] for m in row["new"])
            print(f"[{i}/{len(experiments)}] {name}: {wall:.1f} s", file=sys.stderr, flush=True)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    print_table(results, bool(args.baseline), args.quick)
    if args.profile:
        print_profile_summary(results)
    if args.baseline:
        print_status_changes(results)
    print(f"\nnumbers: {path}", file=sys.stderr)
    if args.write_times:
        with open(path) as f:
            measured_times.write(args.write_times, json.load(f))


def print_status_changes(results):
    """Every comparison row whose status differs between the old and the new binary."""
    changed, matched, unmatched = [], 0, 0
    for row in results:
        if "old" not in row:
            continue
        new_rows, old_rows = row.get("new_rows", {}), row.get("old_rows", {})
        unmatched += len(set(new_rows) ^ set(old_rows))
        for name in sorted(set(new_rows) & set(old_rows)):
            matched += 1
            if new_rows[name] != old_rows[name]:
                changed.append((row["experiment"], name, old_rows[name], new_rows[name]))
    print(f"\nComparison rows: {matched} matched by name, {len(changed)} of them changed status;"
          f" {unmatched} printed by one binary only.\n")
    if changed:
        print("| experiment | row | old | new |\n|---|---|---|---|")
        for experiment, name, old, new in changed:
            print(f"| {experiment} | {name[:90]} | {old} | {new} |")


def print_profile_summary(results, count=25):
    """The whole run's CPU time by function: each experiment's profile shares times its CPU s."""
    by_function, total, gemm = {}, 0.0, 0.0
    for row in results:
        cpu = median_of(row, "new", "cpu_s")
        total += cpu
        for pct, fn in row.get("top_functions", []):
            seconds = cpu * pct / 100
            by_function[fn] = by_function.get(fn, 0.0) + seconds
            gemm += seconds if GEMM_FUNCTIONS.search(fn) else 0.0
    if total == 0:
        return
    print(f"\nCPU time by function over the {len(results)} experiments ({total:.0f} CPU s; each "
          f"experiment's 60 functions with the most samples): matrix products {gemm:.0f} s "
          f"({gemm / total:.0%}).\n")
    print("| function | CPU s | share |\n|---|--:|--:|")
    for fn, seconds in sorted(by_function.items(), key=lambda kv: -kv[1])[:count]:
        print(f"| {fn} | {seconds:.1f} | {seconds / total:.1%} |")


def median_of(row, label, key):
    return statistics.median(m[key] for m in row[label])


def print_table(results, with_baseline, quick):
    head = "| experiment | wall s | CPU s | peak RSS MiB |"
    rule = "|---|--:|--:|--:|"
    if with_baseline:
        head += " old wall s | new/old wall | new/old CPU |"
        rule += "--:|--:|--:|"
    head += " announced | top functions (cpu-clock samples) |"
    rule += "---|---|"
    print(head)
    print(rule)
    total = {"new": [0.0, 0.0], "old": [0.0, 0.0], "both": [0.0, 0.0]}
    for row in results:
        wall, cpu = median_of(row, "new", "wall_s"), median_of(row, "new", "cpu_s")
        total["new"][0] += wall
        total["new"][1] += cpu
        cells = [row["experiment"], f"{wall:.1f}", f"{cpu:.1f}",
                 f"{max(m['peak_rss_mib'] for m in row['new']):.0f}"]
        if with_baseline and "old" not in row:
            cells += ["(new)", "", ""]
        elif with_baseline:
            old_wall, old_cpu = median_of(row, "old", "wall_s"), median_of(row, "old", "cpu_s")
            total["old"][0] += old_wall
            total["old"][1] += old_cpu
            total["both"][0] += wall
            total["both"][1] += cpu
            cells += [f"{old_wall:.1f}", f"{wall / old_wall:.2f}", f"{cpu / old_cpu:.2f}"]
        bounds = announced_seconds(row["announced"])
        verdict = ""
        if not quick and bounds and not (bounds[0] / 2 <= wall <= max(bounds[1] * 2, 1.0)):
            verdict = " (check)"
        cells.append(row["announced"] + verdict)
        cells.append("; ".join(f"{pct:.0f}% {fn}" for pct, fn in row.get("top_functions", [])[:5]))
        print("| " + " | ".join(cells) + " |")
    line = f"| **total** | {total['new'][0]:.0f} | {total['new'][1]:.0f} | |"
    if with_baseline:
        # The ratios cover the experiments both binaries have (the new one's time for those).
        line += (f" {total['old'][0]:.0f} | {total['both'][0] / total['old'][0]:.2f} |"
                 f" {total['both'][1] / total['old'][1]:.2f} |")
    print(line + " | |")
    if with_baseline:
        print(f"| **both binaries' experiments** | {total['both'][0]:.0f} | {total['both'][1]:.0f} |"
              f" | {total['old'][0]:.0f} | | | | |")


if __name__ == "__main__":
    main()
