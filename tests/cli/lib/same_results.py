"""Two runs' results.json, compared value for value, timings left out.

    /usr/bin/python3 tests/cli/lib/same_results.py A/results.json B/results.json [--vary REGEX]...

prints every value that differs (one line each: where, the two values) and exits 1 when one
does, 0 when every compared value is identical, 2 on bad usage or an unreadable file. From
Python (tests/cli/ scripts put tests/cli/lib on sys.path):

    from same_results import differences
    for line in differences(json.load(open(a)), json.load(open(b)), vary=[r"^crossover"]):
        print(line)

"Identical" means bit for bit: attnlab writes each double in its shortest round-trip form, so
two runs that computed the same double write the same text and Python reads back the same
float. No tolerance: a run at --threads 2 that adds in another order must still land on the
same bits (the kernels split work so that it does), and that is what this checks.

What is left out:
  - the run's wall time ("seconds" at the top);
  - a result whose name says it is a timing (TIMING_WORD below: `step_ms`, `naive_seconds`,
    `time_slope_dense`, `attention_gflops`, `load_average_before`, `process_peak_mib`): one
    word of the name, between underscores, is a timing word (or `threads`: the thread count
    the timings ran at). Also any key inside a result (a result holding an object) named so;
  - what the caller declares as varying (`--vary REGEX`, searched in each result name and each
    comparison row name, e.g. a growth exponent fitted to timings, a crossover length read off
    measured times, or everything a model trained for a wall-time budget produced). The
    experiments declare theirs in their registry entry (Experiment::varies, shown by
    `attnlab list --json`).
A comparison row left out still has to exist in both runs with the same name and document value.
"""

import json
import math
import re
import sys

# A word of a result name (split at "_") that makes it a wall-time measurement or derived from
# one: milliseconds, seconds, times, rates per second, the machine's load, the process's
# resident memory (the OS's page accounting, not our allocator's count); and the thread count
# the timings ran at (`timing_threads`), which is the setting the runs differ in.
TIMING_WORD = re.compile(
    r"(^|_)(ms|s|sec|seconds|time|times|wall|gflops|throughput|load|rss|process|threads)(_|$)")


def is_timing_name(name):
    return bool(TIMING_WORD.search(name))


def _varies(name, vary):
    return any(re.search(pattern, name) for pattern in vary)


def _first_difference(x, y, where):
    """Where x and y first differ ("results.sweep[2].loss"), or None when they are the same bit
    for bit (NaN equal to NaN; attnlab writes NaN as null, but be safe). Keys named as timings
    inside an object are skipped."""
    if isinstance(x, float) and isinstance(y, float) and math.isnan(x) and math.isnan(y):
        return None
    if type(x) is not type(y):
        return where
    if isinstance(x, dict):
        if x.keys() != y.keys():
            return where + " (keys)"
        for k in x:
            found = None if is_timing_name(k) else _first_difference(x[k], y[k], f"{where}.{k}")
            if found:
                return found
        return None
    if isinstance(x, list):
        if len(x) != len(y):
            return where + " (length)"
        for i, (a, b) in enumerate(zip(x, y)):
            found = _first_difference(a, b, f"{where}[{i}]")
            if found:
                return found
        return None
    return None if x == y else where


def _same(x, y):
    return _first_difference(x, y, "") is None


def _at(results, where):
    """The value at a path from _first_difference, read back ("results.x[1].y" in results)."""
    value = results
    for key, index in re.findall(r"\.(\w+)|\[(\d+)\]", where.split(" (")[0][len("results"):]):
        value = value[key] if key else value[int(index)]
    return value


def _short(value, limit=160):
    text = json.dumps(value)
    return text if len(text) <= limit else text[:limit] + "..."


def _compare_results(a, b, vary, out):
    for name in sorted(set(a) | set(b)):
        if name not in a or name not in b:
            out.append(f"results.{name}: only in {'the first' if name in a else 'the second'} run")
        elif is_timing_name(name) or _varies(name, vary):
            continue
        else:
            where = _first_difference(a[name], b[name], f"results.{name}")
            if where:
                out.append(f"{where}: {_short(_at(a, where))} vs {_short(_at(b, where))}")


def _compare_rows(a, b, vary, out):
    if len(a) != len(b):
        out.append(f"comparisons: {len(a)} tables vs {len(b)}")
        return
    for table_a, table_b in zip(a, b):
        title = table_a.get("title", "")
        rows_a, rows_b = table_a["entries"], table_b["entries"]
        if title != table_b.get("title", "") or len(rows_a) != len(rows_b):
            out.append(f"comparison '{title}': title or row count differ")
            continue
        for row_a, row_b in zip(rows_a, rows_b):
            where = f"comparison '{title}' row '{row_a['name']}'"
            if row_a["name"] != row_b["name"] or not _same(row_a["document"], row_b["document"]):
                out.append(f"{where}: name or document value differ ('{row_b['name']}')")
            elif not _varies(row_a["name"], vary) and not _same(row_a, row_b):
                fields = [k for k in row_a if k not in row_b or not _same(row_a[k], row_b[k])]
                out.append(f"{where}: " + ", ".join(
                    f"{k} {_short(row_a[k])} vs {_short(row_b.get(k))}" for k in fields))


def differences(a, b, vary=()):
    """Every difference between two parsed results.json, as lines; empty when the same."""
    out = []
    for key in ("experiment", "status", "differ", "not_judged", "figures"):
        if a.get(key) != b.get(key):
            out.append(f"{key}: {_short(a.get(key))} vs {_short(b.get(key))}")
    _compare_results(a.get("results", {}), b.get("results", {}), vary, out)
    _compare_rows(a.get("comparisons", []), b.get("comparisons", []), vary, out)
    return out


def main(argv):
    files, vary = [], []
    args = iter(argv)
    for arg in args:
        if arg == "--vary":
            vary.append(next(args, None))
            if vary[-1] is None:
                return usage("--vary needs a regular expression")
        elif arg.startswith("-"):
            return usage(f"unknown option {arg}")
        else:
            files.append(arg)
    if len(files) != 2:
        return usage("expected two results.json files")
    try:
        for pattern in vary:
            re.compile(pattern)
    except re.error as e:
        return usage(f"--vary {pattern!r}: {e}")
    runs = []
    for path in files:
        try:
            with open(path) as f:
                runs.append(json.load(f))
        except (OSError, ValueError) as e:
            print(f"same_results: cannot read {path}: {e}", file=sys.stderr)
            return 2
    lines = differences(runs[0], runs[1], vary)
    for line in lines:
        print(line)
    return 1 if lines else 0


def usage(message):
    print(f"same_results: {message}\n"
          "usage: same_results.py A/results.json B/results.json [--vary REGEX]...",
          file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
