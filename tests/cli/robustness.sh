#!/usr/bin/env bash
# Bad input and misuse through the attnlab executable (issue 19's probe): crafted safetensors
# files never crash the loader, run folders are locked and never silently replaced, atomic
# writes leave no temporaries, a diverging run stops with exit 1, --detect-anomaly is accepted,
# and bad values get exit 2 with a message naming the flag. Exit codes: 2 usage, 1 runtime.
#   tests/cli/robustness.sh BUILD_DIR
set -uo pipefail
source "$(dirname "$0")/lib/checks.sh" "$@"
# Work inside the temporary folder: a run that should have been refused but was not (on an
# older binary: --threads 1000 trained a default model) writes its runs/ folder there.
bin="$(cd "$(dirname "$bin")" && pwd)/attnlab"
cd "$tmp" || exit 1

# A tiny, fast training configuration.
tiny=(--d_model 16 --nhead 2 --num_layers 1 --dim_ff 32 --batch_size 8 --eval_size 12
      --min_len 2 --max_len 5 --eval_min_len 3 --eval_max_len 6 --warmup 2 --progress off)

# crafted FILE SHAPE OFFSETS: one F32 tensor "w" with this JSON shape and offsets, no data.
crafted() {
  "$py" - "$@" <<'PYEOF'
import json, struct, sys
path, shape, offsets = sys.argv[1], sys.argv[2], sys.argv[3]
head = ('{"w":{"dtype":"F32","shape":%s,"data_offsets":%s}}' % (shape, offsets)).encode()
open(path, "wb").write(struct.pack("<Q", len(head)) + head)
PYEOF
}

# ---- 1. crafted safetensors: an error naming the file and tensor, never a crash ----
crafted "$tmp/overflow.safetensors" "[4611686018427387904]" "[0,0]"  # 2^62 F32 = 2^64 bytes
crafted "$tmp/fraction.safetensors" "[3.5,4]" "[0,0]"
echo '{}' >"$tmp/inputs.json"
expect 2 "tensor 'w': shape [4611686018427387904] of F32 needs more bytes than 64 bits" \
  parity linear --config in_features=2 out_features=2 --weights "$tmp/overflow.safetensors" \
  --inputs "$tmp/inputs.json" --out "$tmp/o.safetensors"
expect 2 "every extent must be a whole number >= 0, not 3.5" \
  parity linear --config in_features=2 out_features=2 --weights "$tmp/fraction.safetensors" \
  --inputs "$tmp/inputs.json" --out "$tmp/o.safetensors"
mkdir -p "$tmp/crafted-run"
cp "$tmp/overflow.safetensors" "$tmp/crafted-run/checkpoint.safetensors"
expect 1 "'$tmp/crafted-run/checkpoint.safetensors' rejected: tensor 'w'" \
  train reversal "${tiny[@]}" --steps 4 --resume "$tmp/crafted-run/checkpoint.safetensors"

# ---- 2. run folders ----
out="$tmp/run1"
expect 0 "written to $out" train reversal "${tiny[@]}" --steps 4 --schedule warmup --out "$out"
sum_before=$(md5sum "$out/checkpoint.safetensors" "$out/metrics.jsonl")
expect 2 "already holds a run" train reversal "${tiny[@]}" --steps 4 --out "$out"
expect 2 "--resume $out/checkpoint.safetensors" train reversal "${tiny[@]}" --steps 4 --out "$out"
[[ "$(md5sum "$out/checkpoint.safetensors" "$out/metrics.jsonl")" == "$sum_before" ]] &&
  pass "the refused re-run changed nothing" || fail "the refused re-run changed the run's files"
expect 2 "already holds a run" run worked-example --out "$out"
expect 2 "--schedule is warmup in the checkpoint but cosine now" train reversal "${tiny[@]}" \
  --steps 6 --schedule cosine --resume "$out/checkpoint.safetensors"
expect 0 "resuming at step 4" train reversal "${tiny[@]}" --steps 6 --schedule warmup \
  --resume "$out/checkpoint.safetensors"
expect 2 "--resume '$tmp/nowhere/checkpoint.safetensors': no such file" train reversal \
  "${tiny[@]}" --resume "$tmp/nowhere/checkpoint.safetensors"
[[ ! -e "$tmp/nowhere" ]] && pass "a missing --resume creates no folder" ||
  fail "a missing --resume created $tmp/nowhere"
expect 2 "--resume '$out': not a file" train reversal "${tiny[@]}" --resume "$out"

# A second process on a folder in use: exit 1 naming the folder and the holder's pid.
busy="$tmp/busy"
"$bin" train reversal "${tiny[@]}" --steps 100000 --out "$busy" >/dev/null 2>&1 &
holder=$!
# Wait (up to 120 s, so a loaded machine is no excuse) until the holder has taken its lock.
for _ in $(seq 1200); do [[ -s "$busy/.attnlab.lock" ]] && break; sleep 0.1; done
[[ -s "$busy/.attnlab.lock" ]] || fail "the holder (pid $holder) took no lock on '$busy' within 120 s"
expect 1 "the run folder '$busy' is in use by another attnlab process (pid $holder)" \
  train reversal "${tiny[@]}" --steps 4 --out "$busy"
expect 1 "(pid $holder)" run worked-example --out "$busy"
kill -9 "$holder" 2>/dev/null; wait "$holder" 2>/dev/null
# kill -9 released the lock: the run continues from its last checkpoint (if it wrote one) or
# is refused as an earlier run, never as "in use".
out_after=$("$bin" train reversal "${tiny[@]}" --steps 4 --out "$busy" 2>&1)
grep -q "in use" <<<"$out_after" && fail "the lock outlived its killed holder: $out_after" ||
  pass "a killed holder's lock is released"

# --out that cannot be a run folder.
touch "$tmp/a-file"
expect 2 "--out '$tmp/a-file' is an existing file" train reversal "${tiny[@]}" --out "$tmp/a-file"
expect 2 "--out '$tmp/a-file' is an existing file" run worked-example --out "$tmp/a-file"
expect 1 "--out '$tmp/a-file/sub': cannot create the run folder" \
  train reversal "${tiny[@]}" --out "$tmp/a-file/sub"

# ---- 3. atomic writes: parity --out an existing folder leaves no temporary ----
"$py" - "$tmp" <<'PYEOF'
import json, struct, sys
def save(path, tensors):  # name -> (shape, values): F32 safetensors
    head, data = {}, b""
    for name, (shape, values) in sorted(tensors.items()):
        raw = struct.pack("<%df" % len(values), *values)
        head[name] = {"dtype": "F32", "shape": shape, "data_offsets": [len(data), len(data) + len(raw)]}
        data += raw
    h = json.dumps(head).encode()
    open(path, "wb").write(struct.pack("<Q", len(h)) + h + data)
save(sys.argv[1] + "/w.safetensors", {"weight": ([2, 2], [1, 2, 3, 4]), "bias": ([2], [0, 1])})
save(sys.argv[1] + "/x.safetensors", {"x": ([1, 2], [1, -1]), "gy": ([1, 2], [1, 1])})
PYEOF
parity_ok=(parity linear --config in_features=2 out_features=2 --weights "$tmp/w.safetensors"
           --inputs "$tmp/x.safetensors")
expect 0 "" "${parity_ok[@]}" --out "$tmp/parity.safetensors"
mkdir -p "$tmp/outdir/inside"
expect 2 "parity --out '$tmp/outdir' is a folder" "${parity_ok[@]}" --out "$tmp/outdir"
expect 2 "the folder '$tmp/nowhere' does not exist" parity linear --config in_features=2 \
  out_features=2 --weights a --inputs b --out "$tmp/nowhere/o.safetensors"
leftover=$(find "$tmp" -name '*.tmp*')
[[ -z "$leftover" ]] && pass "no temporary file left anywhere" || fail "temporaries left: $leftover"

# ---- 4. divergence: an exploding loss is exit 1 naming the step and --detect-anomaly ----
expect 1 "training diverged" train reversal "${tiny[@]}" --steps 200 --lr 1e6 --clip 0 \
  --schedule constant --out "$tmp/diverge"
expect 1 "rerun with anomaly detection (--detect-anomaly" train reversal "${tiny[@]}" \
  --steps 200 --lr 1e6 --clip 0 --schedule constant --out "$tmp/diverge2"

# ---- 5. --detect-anomaly: accepted by train and run, recorded ----
expect 0 "written to" train reversal "${tiny[@]}" --steps 4 --detect-anomaly --out "$tmp/anomaly"
"$py" -c "import json; assert json.load(open('$tmp/anomaly/config.json'))['detect_anomaly'] is True" &&
  pass "detect_anomaly recorded in config.json" || fail "detect_anomaly not recorded"
expect 0 "done in" run worked-example --detect-anomaly --out "$tmp/anomaly-run"
expect 0 "--detect-anomaly" train --help
expect 0 "--detect-anomaly" run worked-example --help

# ---- 6. messages for bad values ----
expect 2 "--seed: -1 is out of range" train reversal --seed -1
expect 2 "--lr: 1e309 is out of range" train reversal --lr 1e309
expect 2 "--lr: 1e309 is out of range" run two-relation --lr 1e309
expect 2 "--seed: -1 is out of range" run worked-example --seed -1
expect 2 "--threads 1000 is refused: at most 64 threads" train reversal --threads 1000
expect 2 "--threads 1000 is refused" run worked-example --threads 1000
ATTN_THREADS=1000 expect 2 "ATTN_THREADS 1000 is refused" run worked-example --out "$tmp/envthreads"
# One rule for the variable everywhere: train reads it too (it once accepted up to 1024 there).
ATTN_THREADS=65 expect 2 "ATTN_THREADS 65 is refused: at most 64" train reversal --out "$tmp/envthreads2"
ATTN_THREADS=x expect 2 "ATTN_THREADS: expected a whole number" train reversal --out "$tmp/envthreads3"
# --version names the build: version, kernel target and BLAS core (timings depend on them).
expect 0 "; kernels " --version
expect 2 "--threads: expected a whole number of threads" run worked-example --threads -2

finish
