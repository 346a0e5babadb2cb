#!/usr/bin/env bash
# Experiments that train through train::fit run data-parallel under OpenMPI: `mpirun -np 2
# attnlab run mqa-gqa --quick` and `... ablate-block --quick` succeed, rank 0 alone writes the
# run folder (one folder, with each variant's training metrics), and the two-rank held-out
# numbers of mqa-gqa match the one-process run's within the rounding of a split gradient sum.
# An experiment whose training cannot be split (two-relation) is refused on every rank with
# exit 2, naming why, and its run folder records the failure.
#   tests/cli/experiments_fit_mpi.sh BUILD_DIR
# Every mpirun is guarded by `timeout`.
set -uo pipefail
source "$(dirname "$0")/lib/checks.sh" "$@"
bin="$(cd "$(dirname "$bin")" && pwd)/attnlab"
cd "$tmp" || exit 1

if ! command -v mpirun >/dev/null; then
  echo "SKIP tests/cli/experiments_fit_mpi.sh: mpirun not found (scripts/setup --test installs OpenMPI)"
  exit 0
fi
# As tests/cli/distributed.sh: root may run mpirun, 2 ranks on any core count, no CMA.
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export OMPI_MCA_rmaps_base_oversubscribe=1 OMPI_MCA_btl_vader_single_copy_mechanism=none
export OMPI_MCA_hwloc_base_binding_policy=none
mpi=(timeout 300 mpirun)
printf 'leak:%s\n' libmpi libopen-pal libopen-rte libpmix libhwloc libevent >"$tmp/lsan.supp"
export LSAN_OPTIONS="suppressions=$tmp/lsan.supp${LSAN_OPTIONS:+:$LSAN_OPTIONS}"

out=$("${mpi[@]}" -np 2 "$bin" run two-relation --quick --out "$tmp/nompi" 2>&1)
if grep -q "built without MPI" <<<"$out"; then
  echo "SKIP tests/cli/experiments_fit_mpi.sh: this attnlab was built without MPI"
  exit 0
fi

# A training that cannot be split: exit 2 on every rank, the reason named, no folder.
"${mpi[@]}" -np 2 "$bin" run two-relation --quick --threads 1 --out "$tmp/refused" \
  >"$tmp/refused.log" 2>&1
rc=$?
if [[ $rc -eq 2 ]] && grep -q "cannot train data-parallel on 2 ranks" "$tmp/refused.log" &&
   grep -q "loss terms of the whole batch" "$tmp/refused.log"; then
  pass "mpirun -np 2 run two-relation: refused with exit 2, naming why"
else
  fail "mpirun -np 2 run two-relation: exit $rc, expected 2 and the reason:"; tail -5 "$tmp/refused.log"
fi
# The run folder records the failure (as any run that stops with an error does), never "ok".
if "$py" -c 'import json,sys; r=json.load(open(sys.argv[1])); sys.exit(r["status"] == "ok")' \
     "$tmp/refused/results.json" 2>/dev/null; then
  pass "the refused run's results say it failed"
else fail "the refused run's results.json is missing or says ok"; fi

run() {  # run LABEL ARGS...: runs ARGS, failing the test with the log when it fails
  local label=$1; shift
  if ! "$@" >"$tmp/$label.log" 2>&1; then fail "$label exited non-zero:"; tail -20 "$tmp/$label.log"; return 1; fi
  pass "$label"
}
# The decoding timings are cut short: this test is about the trainings.
mqa=(run mqa-gqa --quick --threads 1 --prefixes 16,32 --reps 1 --budget_s 0.05)
run "mqa-gqa alone" "$bin" "${mqa[@]}" --out "$tmp/mqa1"
run "mpirun -np 2 run mqa-gqa --quick" "${mpi[@]}" -np 2 "$bin" "${mqa[@]}" --out "$tmp/mqa2"
run "mpirun -np 2 run ablate-block --quick" "${mpi[@]}" -np 2 "$bin" run ablate-block --quick \
  --threads 1 --out "$tmp/ablate2"

if "$py" - "$tmp" <<'PYEOF'
import json, os, sys
d = sys.argv[1]
one = json.load(open(f"{d}/mqa1/results.json"))
two = json.load(open(f"{d}/mqa2/results.json"))
assert two["status"] == "ok", two["status"]
# Rank 0 alone wrote the folder, with a metrics file per trained variant.
csvs = sorted(os.listdir(f"{d}/mqa2/training"))
assert len(csvs) == 3, csvs
for c in csvs:
    assert open(f"{d}/mqa2/training/{c}").readline().startswith("step,split"), c
# The same global batches, split in two and summed in rank order: the weights differ from the
# one-process run only by float rounding, compounded over the quick run's 80 steps (measured:
# at most 0.033 nats). The held-out loss must agree within the experiment's own --quality_band
# (0.1 nats), the band it uses to call two variants' losses close.
band = json.load(open(f"{d}/mqa1/config.json"))["config"]["quality_band"]
for k in ("mha", "gqa", "mqa"):
    a, b = one["results"][k + "_heldout_loss"], two["results"][k + "_heldout_loss"]
    assert abs(a - b) <= band, (k, a, b)
    print(f"{k}: held-out loss alone {a:.5f}, two ranks {b:.5f}")
a2 = json.load(open(f"{d}/ablate2/results.json"))
assert a2["status"] == "ok", a2["status"]
PYEOF
then pass "two ranks: one run folder, per-variant metrics, held-out losses of the one-process run"
else fail "two-rank results (see above)"; fi
finish
