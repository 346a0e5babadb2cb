#!/usr/bin/env bash
# Data-parallel training under OpenMPI (docs/distributed.md): `mpirun -np N attnlab train`
# ends with the weights of the one-process run (within the float bound below), N ranks run twice
# give bit-identical weights, a run resumes with a different N, rank 0 alone writes the run
# folder, and the fault cases (ranks started with different options, a rank that dies, a rank
# that never arrives) end every rank with a clear message and no hang.
#   tests/cli/distributed.sh BUILD_DIR
# Every mpirun is guarded by `timeout` (300 s: generous, so that only a hang ends a run on a
# loaded machine); the whole script takes a few tens of seconds on idle cores.
set -uo pipefail
source "$(dirname "$0")/lib/checks.sh" "$@"
bin="$(cd "$(dirname "$bin")" && pwd)/attnlab"
cd "$tmp" || exit 1

if ! command -v mpirun >/dev/null; then
  echo "SKIP tests/cli/distributed.sh: mpirun not found (scripts/setup --test installs OpenMPI)"
  exit 0
fi
# Root may run mpirun (CI containers run as root); 4 ranks on 2 cores is fine here; no
# single-copy shared memory (CMA needs ptrace rights that containers often lack).
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export OMPI_MCA_rmaps_base_oversubscribe=1 OMPI_MCA_btl_vader_single_copy_mechanism=none
export OMPI_MCA_hwloc_base_binding_policy=none
mpi=(timeout 300 mpirun)
# Under scripts/sanitize (ASan with leak detection): OpenMPI's own libraries keep allocations
# until exit by design; they are not attnlab's leaks.
printf 'leak:%s\n' libmpi libopen-pal libopen-rte libpmix libhwloc libevent >"$tmp/lsan.supp"
export LSAN_OPTIONS="suppressions=$tmp/lsan.supp${LSAN_OPTIONS:+:$LSAN_OPTIONS}"

# A tiny reversal model, 100 steps, a schedule whose length may grow on resume, no early stop.
tiny=(train reversal --d_model 16 --nhead 2 --num_layers 1 --dim_ff 32 --batch_size 16
      --eval_size 40 --eval_every 0 --min_len 1 --max_len 8 --eval_min_len 1 --eval_max_len 3
      --schedule warmup --warmup 10 --lr 0.003 --target 0 --checkpoint_every 0 --progress off
      --threads 1)

# Built without MPI: a launched run of two ranks is refused, saying why; nothing else to test.
out=$("${mpi[@]}" -np 2 "$bin" "${tiny[@]}" --steps 2 --out "$tmp/nompi" 2>&1)
if grep -q "built without MPI" <<<"$out"; then
  [[ ! -e "$tmp/nompi" ]] && pass "built without MPI: mpirun -np 2 is refused, naming the cause" ||
    fail "built without MPI: the refused run made its folder"
  echo "SKIP the data-parallel checks: this attnlab was built without MPI"
  finish
  exit 0
fi

run() {  # run LABEL ARGS...: runs ARGS, failing the test with the log when it fails
  local label=$1; shift
  local rc=0
  "$@" >"$tmp/$label.log" 2>&1 || rc=$?
  if [[ $rc -ne 0 ]]; then fail "$label exited $rc$([[ $rc -eq 124 ]] && echo ' (timeout)'):"; tail -20 "$tmp/$label.log"; return 1; fi
}
run one "$bin" "${tiny[@]}" --steps 100 --out "$tmp/one"
run np1 "${mpi[@]}" -np 1 "$bin" "${tiny[@]}" --steps 100 --out "$tmp/np1"
run np2 "${mpi[@]}" -np 2 "$bin" "${tiny[@]}" --steps 100 --out "$tmp/np2"
run np2-again "${mpi[@]}" -np 2 "$bin" "${tiny[@]}" --steps 100 --out "$tmp/np2-again"
run np4 "${mpi[@]}" -np 4 "$bin" "${tiny[@]}" --steps 100 --out "$tmp/np4"
# A time limit: rank 0's clock decides for both ranks, which stop after the same step (the
# run's final check compares every rank's weights).
run timed "${mpi[@]}" -np 2 "$bin" "${tiny[@]}" --steps 100000 --max_seconds 2 --out "$tmp/timed"
# Resume with another N: 50 steps on 2 ranks, then 50 more on one process and on 4 ranks.
run half2 "${mpi[@]}" -np 2 "$bin" "${tiny[@]}" --steps 50 --out "$tmp/half2"
cp -r "$tmp/half2" "$tmp/half2-b"
run resume1 "$bin" "${tiny[@]}" --steps 100 --resume "$tmp/half2/checkpoint.safetensors"
run resume4 "${mpi[@]}" -np 4 "$bin" "${tiny[@]}" --steps 100 \
  --resume "$tmp/half2-b/checkpoint.safetensors"

if "$py" - "$tmp" <<'PYEOF'
import json, struct, sys
import numpy as np
d = sys.argv[1]

def weights(run):
    raw = open(f"{d}/{run}/checkpoint.safetensors", "rb").read()
    n = struct.unpack("<Q", raw[:8])[0]
    head = json.loads(raw[8:8 + n])
    out = {}
    for k, v in head.items():
        if k.startswith("model."):
            a, b = v["data_offsets"]
            out[k] = np.frombuffer(raw[8 + n + a:8 + n + b], dtype=np.float32)
    return out

one = weights("one")
def diff(run):
    w = weights(run)
    assert w.keys() == one.keys(), run
    return max(float(np.max(np.abs(w[k].astype(np.float64) - one[k]))) for k in one)

def identical(a, b):
    wa, wb = weights(a), weights(b)
    return all(np.array_equal(wa[k].view(np.uint32), wb[k].view(np.uint32)) for k in wa)

scale = max(float(np.max(np.abs(v))) for v in one.values())
# The bound (docs/distributed.md). A weight whose gradient is well above rounding level: the
# N-rank gradient is the one-process gradient up to the order of its float additions (bounded
# per step in tests/train/distributed/data_parallel_test.cpp), and Adam turns a rounding-level
# change of such a gradient into a rounding-level change of its update, so the weights drift
# apart by a few ulps per step at most: 4 ulps of the largest weight per step over 100 steps is
# tol = 100 * 4 * 2^-23 * max|w| ~ 5e-5 max|w|. Measured here: ~2e-7 (2 ulps).
# Weights whose gradient is itself at rounding level are exempt: Adam divides a gradient by its
# own root mean square, so rounding decides the direction of their updates (steps of up to lr).
# The attention key biases (the middle third of every in_proj_bias) are such weights on every
# machine: their exact gradient is 0 (a constant added to every key of a row leaves its softmax
# unchanged). A weight whose gradient cancels to ~1e-8 can be one on another CPU, so up to 0.5%
# of the other weights may exceed tol too. The function is checked instead: the held-out loss
# must agree to 1e-5. A wrong weighting of the ranks' gradients changes nearly every update by
# ~lr/N and fails both checks.
tol = 4 * 100 * 2.0**-23 * scale
def diff(run):
    w = weights(run)
    assert w.keys() == one.keys(), run
    parts = []
    for k in sorted(one):
        d = np.abs(w[k].astype(np.float64) - one[k])
        if k.endswith("in_proj_bias"):  # drop the key biases
            third = d.size // 3
            d = np.concatenate([d[:third], d[2 * third:]])
        parts.append(d)
    d = np.concatenate(parts)
    return float(np.quantile(d, 0.995)), float(np.mean(d > tol))
ok = True
def check(cond, text):
    global ok
    print(("PASS " if cond else "FAIL ") + text)
    ok = ok and cond
check(identical("one", "np1"), "mpirun -np 1: bit-identical to the plain run")
for run in ["np2", "np4", "half2", "half2-b"]:  # half2*: resumed to step 100 in place
    q, beyond = diff(run)
    check(beyond <= 0.005, f"{run}: |w - w_one| <= {tol:.1e} for all but {100 * beyond:.2f}% "
          f"(<= 0.5%) of the weights (key biases aside); 99.5% are <= {q:.1e}")
check(identical("np2", "np2-again"), "mpirun -np 2 twice: bit-identical weights")
c2 = json.load(open(f"{d}/np2/config.json"))
r2 = json.load(open(f"{d}/np2/results.json"))
r1 = json.load(open(f"{d}/one/results.json"))
check(c2["ranks"] == 2 and r2["ranks"] == 2, "config.json and results.json record 2 ranks")
for run in ["np2", "np4"]:
    rn = json.load(open(f"{d}/{run}/results.json"))
    l1, ln = r1["final_eval"]["loss"], rn["final_eval"]["loss"]
    check(abs(l1 - ln) <= 1e-5 * l1, f"{run}: held-out loss (split over the ranks) {ln:.7f} vs {l1:.7f}")
    check(rn["final_eval"]["exact_match"] == r1["final_eval"]["exact_match"],
          f"{run}: the same held-out exact match {r1['final_eval']['exact_match']:.3f}")
rt = json.load(open(f"{d}/timed/results.json"))
check(rt["stop_reason"] == "time limit", f"--max_seconds 2 on 2 ranks: stopped together at step {rt['last_step']}")
rows = [l for l in open(f"{d}/np2/metrics.csv")]
check(len(rows) == len(open(f"{d}/one/metrics.csv").readlines()), "one metrics.csv, one row per log")
sys.exit(0 if ok else 1)
PYEOF
then pass "data-parallel runs equal the one-process run"; else fail "data-parallel equality"; fi
# Rank 0 alone writes: no other run folder appeared in the working directory.
[[ ! -e runs ]] && pass "ranks > 0 wrote no run folder" || fail "a rank > 0 made runs/: $(ls runs)"
grep -q "resuming at step 50" "$tmp/resume4.log" && grep -q "written with 2 ranks" "$tmp/resume4.log" &&
  pass "resume on 4 ranks from a 2-rank checkpoint (noted)" || fail "resume4 log: $(cat "$tmp/resume4.log")"

# ---- faults: a clear error on every rank, no hang ----
# A bad option on every rank: each rank says so and they end together (exit 2, no MPI_Abort).
out=$("${mpi[@]}" -np 2 "$bin" "${tiny[@]}" --steps 5 --warmup 10 --schedule cosine \
      --out "$tmp/f0" 2>&1); rc=$?
if [[ $rc -ne 124 ]] && grep -q "rank 0 of 2: train: --schedule cosine needs --steps (5) > --warmup (10) (on all 2 ranks)" <<<"$out" &&
   grep -q "rank 1 of 2: train: --schedule cosine" <<<"$out" && ! grep -q MPI_ABORT <<<"$out" &&
   [[ ! -e "$tmp/f0" ]]; then
  pass "a bad option: refused on both ranks together (exit $rc), no folder"
else fail "a bad option on both ranks (exit $rc): $out"; fi
# Ranks started with different options.
out=$("${mpi[@]}" -np 1 "$bin" "${tiny[@]}" --steps 20 --out "$tmp/f1" : \
      -np 1 "$bin" "${tiny[@]}" --steps 30 --out "$tmp/f1" 2>&1); rc=$?
if [[ $rc -ne 124 ]] && grep -q "rank 0 of 2: the 2 ranks were started with different options" <<<"$out" &&
   grep -q "rank 1 of 2: the 2 ranks were started with different options" <<<"$out" &&
   grep -q "rank 1: --steps is 30 but 20 on rank 0" <<<"$out" && [[ ! -e "$tmp/f1" ]]; then
  pass "different options: refused on both ranks (exit $rc), naming the option; no folder"
else fail "different options (exit $rc): $out"; fi

# The two mid-run faults strike at a known point of the run, whatever the machine's speed: a
# wrapper starts rank 1, waits until rank 0's metrics.csv holds its first logged row (step 50 of
# the tiny run, so both ranks are past MPI_Init and training), then signals rank 1. Bounded:
# if no row appears within 240 s it says so and kills rank 1, and the case fails naming that.
cat >"$tmp/fault_after_log.sh" <<'SHEOF'
#!/usr/bin/env bash
# fault_after_log.sh SIGNAL METRICS_CSV COMMAND...: runs COMMAND, sends it SIGNAL once
# METRICS_CSV has a header and one row, and waits for it.
sig=$1 csv=$2; shift 2
"$@" & p=$!
for ((i = 0; i < 2400; ++i)); do
  [[ -f $csv && $(wc -l <"$csv") -ge 2 ]] && break
  kill -0 "$p" 2>/dev/null || { wait "$p"; exit; }
  sleep 0.1
done
if [[ ! -f $csv || $(wc -l <"$csv") -lt 2 ]]; then
  echo "fault_after_log.sh: $csv had no logged row after 240 s; the fault was not injected" >&2
  kill -KILL "$p"; wait "$p"; exit 99
fi
echo "fault_after_log.sh: SIG$sig sent after the first logged row" >&2
kill "-$sig" "$p"
wait "$p"
SHEOF
chmod +x "$tmp/fault_after_log.sh"

# A rank that dies mid-run (killed after the first logged step): the job ends, the survivor
# says why, no partial files.
out=$("${mpi[@]}" -np 1 "$bin" "${tiny[@]}" --steps 100000 --checkpoint_every 20 --out "$tmp/f2" : \
      -np 1 "$tmp/fault_after_log.sh" KILL "$tmp/f2/metrics.csv" \
      "$bin" "${tiny[@]}" --steps 100000 --checkpoint_every 20 --out "$tmp/f2" 2>&1); rc=$?
if [[ $rc -ne 0 && $rc -ne 124 ]] && grep -Eq "rank 0 of 2: (stopped by the launcher|error: .*no answer)" <<<"$out" &&
   grep -q "SIGKILL sent after the first logged row" <<<"$out" && [[ -z "$(find "$tmp/f2" -name '*.tmp*')" ]]; then
  pass "a rank killed mid-run: the job stops (exit $rc), rank 0 says why, no temporaries"
else fail "a rank killed mid-run (exit $rc): $out"; fi

# A rank that hangs mid-run (stopped after the first logged step): the other gives up after
# ATTN_DIST_TIMEOUT seconds, naming the step it waited in, and the job ends. Where the stopped
# rank froze decides which exchange the other waits in (the step's token count or its
# gradients, an evaluation, the time-limit vote): any of them is the right answer. 10 s, so a
# healthy step on a loaded machine is not taken for a hang; MPI_Init, which a loaded machine may
# take tens of seconds to finish, gets its own limit (ATTN_DIST_INIT_TIMEOUT).
out=$(ATTN_DIST_INIT_TIMEOUT=240 ATTN_DIST_TIMEOUT=10 "${mpi[@]}" -np 1 "$bin" "${tiny[@]}" --steps 100000 --out "$tmp/f4" : \
      -np 1 "$tmp/fault_after_log.sh" STOP "$tmp/f4/metrics.csv" \
      "$bin" "${tiny[@]}" --steps 100000 --out "$tmp/f4" 2>&1); rc=$?
if [[ $rc -ne 0 && $rc -ne 124 ]] &&
   grep -q "SIGSTOP sent after the first logged row" <<<"$out" &&
   grep -Eq "rank 0 of 2: error: no answer from the other ranks for 10 s during (step [0-9]+ \((token count|gradients)\)|the evaluation|the time-limit decision)" <<<"$out"; then
  pass "a rank hangs mid-run: rank 0 times out naming the step, the job ends (exit $rc)"
else fail "a rank hangs mid-run (exit $rc): $out"; fi

# A rank that never arrives (another program in its place): rank 0 gives up after
# ATTN_DIST_TIMEOUT seconds in MPI_Init, which meets every rank, saying so.
out=$(ATTN_DIST_TIMEOUT=3 "${mpi[@]}" -np 1 "$bin" "${tiny[@]}" --steps 20 --out "$tmp/f3" : \
      -np 1 sleep 30 2>&1); rc=$?
if [[ $rc -ne 0 && $rc -ne 124 ]] && grep -q "rank 0: error: MPI_Init did not finish within 3 s: a rank of the job has not started" <<<"$out"; then
  pass "a missing rank: rank 0 times out with a clear error (exit $rc)"
else fail "a missing rank (exit $rc): $out"; fi

finish
