#!/usr/bin/env bash
# The bad-input table: every flag of `attnlab train`, `run`, `parity` and `bench` given bad
# values, and every class of damaged file given to `train --resume` and `parity --weights`.
# Every experiment's fields: a field of each type per experiment here, every field in-process
# by tests/experiments/field_sweep_test.cpp (the same values; see experiment_fields below).
#
#   tests/cli/bad_inputs.sh build/release                          check every case
#   tests/cli/bad_inputs.sh build/release --table docs/reliability.md   ... and write the table
#
# Each case must: exit 2 (bad usage) or 1 (a run that failed), never crash (exit >= 128) or
# succeed; print a message naming the problem (the flag, the field or the file: a pattern per
# case); and write or change nothing. Cases run with a sandbox folder as the working directory
# (so default run folders would land inside it) that holds every input file and an existing
# run folder; a fingerprint of the whole sandbox (paths, sizes, ctimes) before and after each
# case must be equal. With --table the results replace the part of the given markdown file
# between "<!-- bad-inputs:begin -->" and "<!-- bad-inputs:end -->".
#
# The cases run in groups (a section, or one experiment's fields), $(nproc) groups at a time
# (BAD_INPUTS_JOBS=N to change it), each group in its own copy of the sandbox; their output
# and table rows are put back together in the order below, so a run prints the same lines as
# one case after another would. (Most cases are a 0.1 s process: one at a time left a core idle.)
set -uo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
bin="$(cd "${1:?usage: bad_inputs.sh BUILD_DIR [--table FILE]}" && pwd)/attnlab"
table_file=""
[[ "${2:-}" == --table ]] && table_file=$(realpath "${3:?--table needs a file}")
py=/usr/bin/python3
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
export ATTN_THREADS=1
sb="$tmp/sandbox"
mkdir -p "$sb/files"
cd "$sb" || exit 1

# ---- fixtures ---------------------------------------------------------------------------------
small=(--d-model 8 --nhead 2 --num-layers 1 --dim-ff 16 --batch-size 4 --max-len 4
       --eval-min-len 2 --eval-max-len 4 --eval-size 4 --schedule constant --progress off)
if ! "$bin" train reversal "${small[@]}" --steps 2 --out existing-run >"$tmp/fixture.log" 2>&1; then
  cat "$tmp/fixture.log"; echo "bad_inputs: could not make the fixture checkpoint"; exit 1
fi
"$py" "$root/tests/cli/lib/corrupt_files.py" existing-run/checkpoint.safetensors files/ckpt
"$py" - <<'PYEOF'
import json, struct
def st(tensors):  # name -> (shape, values): a float32 safetensors file
    hdr, body = {}, b""
    for name, (shape, vals) in tensors.items():
        raw = struct.pack("<%df" % len(vals), *vals)
        hdr[name] = {"dtype": "F32", "shape": shape, "data_offsets": [len(body), len(body) + len(raw)]}
        body += raw
    h = json.dumps(hdr).encode(); h += b" " * ((8 - len(h) % 8) % 8)
    return struct.pack("<Q", len(h)) + h + body
open("files/linear-weights.safetensors", "wb").write(
    st({"weight": ([3, 4], [0.1 * i for i in range(12)]), "bias": ([3], [0.0, 0.5, -0.5])}))
open("files/linear-inputs.safetensors", "wb").write(
    st({"x": ([2, 4], [0.2 * i for i in range(8)]), "gy": ([2, 3], [1.0] * 6)}))
open("files/wrong-shape-weights.safetensors", "wb").write(
    st({"weight": ([4, 4], [0.0] * 16), "bias": ([3], [0.0] * 3)}))
open("files/not-utf8.txt", "wb").write(b"caf\xe9 au lait\n")
open("files/empty.txt", "wb").write(b"")
PYEOF
cp files/linear-weights.safetensors files/ckpt/not-a-checkpoint.safetensors
mkdir -p files/a-directory
echo "I am a file" >files/a-file
"$py" "$root/tests/cli/lib/corrupt_files.py" files/linear-weights.safetensors files/weights

# The run-folder lock (.attnlab.lock, holding the pid of the last process that locked the
# folder) is left out: taking the lock is how a command starts, before it can refuse.
# A file's status-change time (ctime) moves on every write, truncation, rename onto it or
# chmod, and no program can set it back, so path + size + ctime catch any change without
# hashing every file after every case (the hashes made this script several times slower). A
# folder is compared by its entries only: the lock file's creation touches its folder's times.
fingerprint() {
  (cd "$sb" && find . ! -name .attnlab.lock \( -type d -printf '%y %p\n' -o -printf '%y %p %s %C@\n' \) |
     LC_ALL=C sort)
}

# ---- running the groups ----------------------------------------------------------------------
# run_group FUNCTION ARGS...: runs FUNCTION ARGS in the background in a copy of the sandbox (its
# own `before`, the sandbox as every case must leave it); its output, table rows and counts go
# to $tmp/group-N.*, read back in order by collect_groups. At most $jobs groups run at once.
jobs=${BAD_INPUTS_JOBS:-$(nproc)}
groups=0
run_group() {
  local group_id=$groups  # (a group's functions set plain names such as n and f)
  groups=$((groups + 1))
  while [[ $(jobs -rp | wc -l) -ge $jobs ]]; do wait -n; done
  (
    sb="$tmp/sandbox-$group_id"
    cp -a "$tmp/sandbox" "$sb" && cd "$sb" || exit 1
    rows="$tmp/group-$group_id.rows" total=0 failures=0
    : >"$rows"
    before=$(fingerprint)
    "$@" >"$tmp/group-$group_id.out" 2>&1
    echo "$total $failures" >"$tmp/group-$group_id.count"
    cd "$tmp" && rm -rf "$sb"
  ) &
}
rows="$tmp/rows.md"
: >"$rows"
total=0 failures=0
# collect_groups: waits for every group, then prints their output and adds their rows and counts.
collect_groups() {
  wait
  local n t f
  for ((n = 0; n < groups; ++n)); do
    cat "$tmp/group-$n.out" 2>/dev/null
    cat "$tmp/group-$n.rows" >>"$rows" 2>/dev/null
    if read -r t f <"$tmp/group-$n.count" 2>/dev/null; then
      total=$((total + t)) failures=$((failures + f))
    else
      echo "FAIL group $n did not finish"; failures=$((failures + 1))
    fi
  done
}

# ---- running one case ------------------------------------------------------------------------
section() { group=$1; printf '\n| %s | exit | message |\n|---|---|---|\n' "$1" >>"$rows"; }
md() { sed 's/|/\\|/g; s/`/'"'"'/g' <<<"$1"; }

# bad CODES PATTERN ARGS...: attnlab ARGS must exit with one of CODES ("2" or "1|2"), print a
# line matching the extended regex PATTERN, and leave the sandbox unchanged.
bad() {
  local codes=$1 pattern=$2; shift 2
  local after out rc verdict=""
  out=$(timeout 30 "$bin" "$@" 2>&1 </dev/null); rc=$?
  after=$(fingerprint)
  [[ "|$codes|" == *"|$rc|"* ]] || verdict="exit $rc, expected $codes"
  [[ -n "$verdict" ]] || grep -qE -- "$pattern" <<<"$out" || verdict="message does not match /$pattern/"
  if [[ "$before" != "$after" ]]; then
    [[ -n "$verdict" ]] ||
      verdict="changed the folder: $(diff <(echo "$before") <(echo "$after") | grep '^[<>]' | head -3 | tr '\n' ' ')"
    rm -rf new-run runs out.safetensors files/*.tmp*  # keep later cases independent
    before=$(fingerprint)
  fi
  total=$((total + 1))
  local msg
  msg=$(grep -av '^\s*$' <<<"$out" | head -2 | tr '\n' ' ' | cut -c1-160)
  if [[ -n "${known:-}" ]]; then  # a known defect: reported in the table, must still fail
    if [[ -n "$verdict" ]]; then
      echo "KNOWN attnlab $*: $verdict ($known)"
      msg="**known defect ($known): $verdict** $msg"
      verdict=""
    else
      verdict="the known defect '$known' is fixed: remove its known= marker"
    fi
  fi
  if [[ -n "$verdict" ]]; then
    failures=$((failures + 1))
    echo "FAIL attnlab $*: $verdict"
    echo "     output: $msg"
    msg="**FAIL: $verdict** $msg"
  fi
  local cmd="$*"
  cmd=${cmd/"${small[*]}"/"[small]"}  # the small-model flags every train case shares
  [[ ${quiet:-0} -eq 1 ]] || printf '| `attnlab %s` | %s | %s |\n' "$(md "$cmd")" "$rc" "$(md "$msg")" >>"$rows"
}

# The key with '-' or '_' (messages spell it with '_').
key_re() { sed 's/[-_]/[-_]/g' <<<"$1"; }

# Zero, -1 and a huge number are bad for some fields and valid for others (a seed of 0, no
# warm-up, a window of 0 for "none"). in_range ARGS... asks attnlab itself without running
# anything: `ARGS --help` parses and range-checks every value first (exit 2 when one is out of
# range, 0 when all are in), and reads or writes no file. A refused value is then checked as a
# bad input (exit 2, the field named, nothing written); an accepted one is listed in the table
# as in range.
in_range() { "$bin" "$@" --help >/dev/null 2>&1 </dev/null; }

# ok_or_refused ARGS...: a value its field's range accepts, run for real (lists only: their
# length and order are checked by the experiment, after the range): it must run (exit 0; its
# folder is removed) or refuse as a bad input does: exit 1 or 2, nothing written. Never a crash.
ok_or_refused() {
  local out rc verdict=""
  out=$(timeout 300 "$bin" "$@" 2>&1 </dev/null); rc=$?
  if [[ $rc -eq 0 ]]; then
    rm -rf new-run
  elif [[ $rc -ne 1 && $rc -ne 2 ]]; then
    verdict="exit $rc (a crash or a hang)"
  elif [[ "$before" != "$(fingerprint)" ]]; then
    verdict="exit $rc but it changed the folder"
    rm -rf new-run runs
  fi
  before=$(fingerprint)
  total=$((total + 1))
  if [[ -n "$verdict" ]]; then
    failures=$((failures + 1))
    echo "FAIL attnlab $*: $verdict"
    echo "     output: $(grep -av '^\s*$' <<<"$out" | head -2 | tr '\n' ' ' | cut -c1-160)"
  fi
}

# ---- attnlab train: every option from --help, bad values by the type of its default ---------
tr=(train reversal "${small[@]}" --steps 2 --out new-run)
train_flags() {
  section "attnlab train: flags"
  train_in_range=()
  bad 2 "needs a value|--out" train reversal --out
  bad 2 "unknown|did you mean" train reversal --stepz 5
  bad 2 "unexpected argument|extra" train reversal copy
  bad 2 "threads" "${tr[@]}" --threads abc
  bad 2 "threads" "${tr[@]}" --threads -2
  bad 2 "threads" "${tr[@]}" --threads 100000
  # Every field `train --help` lists (`  --name <type>  help (default ...)`), bad values by its type.
  while read -r key type rest; do
    k=${key#--}
    re=$(key_re "$k")
    case "$k" in
      out | save | resume | text_file | task | model) continue ;;  # files, names: below
    esac
    case "$type" in
      "<real>") for v in abc -3 nan 1e999 ""; do bad 2 "$re" "${tr[@]}" "--$k" "$v"; done ;;&
      "<int>") for v in abc 2.5 -7 99999999999999999999; do bad 2 "$re" "${tr[@]}" "--$k" "$v"; done ;;&
      "<int>" | "<real>")  # zero: bad only where the range says so
        if in_range "${tr[@]}" "--$k" 0; then train_in_range+=("--$k 0")
        else bad 2 "$re" "${tr[@]}" "--$k" 0; fi ;;
      "<bool>") bad 2 "$re" "${tr[@]}" "--$k" maybe ;;
      *)
        if [[ "$k" == alphabet ]]; then
          bad 2 "$re" "${tr[@]}" "--$k" ""
          bad 2 "$re" "${tr[@]}" "--$k" $'\xff\xfe'
        else  # a choice
          bad 2 "$re" "${tr[@]}" "--$k" bogus
        fi ;;
    esac
  done < <("$bin" train --help | grep -E '^  --[a-z_]+ <')
  printf '| `attnlab train [small] --<int or real flag> 0` | 0 | in range, not a bad value (not run): %s |\n' \
    "$(md "${train_in_range[*]:-none}")" >>"$rows"
  bad 2 "task|did you mean" "${tr[@]}" --task bogus
  bad 2 "tape-dot.*does not exist" "${tr[@]}" --tape-dot files/missing-dir/graph.dot
  bad 2 "model|did you mean" "${tr[@]}" --model bogus
  bad 2 "n_kv_heads.*nhead" "${tr[@]}" --n-kv-heads 3
  bad 2 "nhead.*d_model|d_model.*nhead|divide" "${tr[@]}" --d-model 10 --nhead 3
  bad 2 "eval_max_len|eval_min_len" "${tr[@]}" --eval-min-len 9 --eval-max-len 4
}

train_files() {
  section "attnlab train: files"
  bad 1\|2 "new-run/sub|a-file" "${tr[@]}" --out files/a-file/sub
  bad 1\|2 "a-file" "${tr[@]}" --out files/a-file
  bad 1\|2 "existing-run" train reversal "${small[@]}" --steps 2 --out existing-run
  bad 1\|2 "missing\.safetensors" train reversal "${small[@]}" --steps 9 --resume files/missing.safetensors
  bad 2 "a-file.*not a folder" "${tr[@]}" --save files/a-file/ckpt.safetensors
  bad 2 "missing-dir.*does not exist" "${tr[@]}" --save files/missing-dir/ckpt.safetensors
  bad 2 "save.*is a folder" "${tr[@]}" --save files/a-directory
  bad 1\|2 "missing\.txt" train charlm --model gpt "${small[@]}" --block-len 8 --steps 2 --out new-run --text-file files/missing.txt
  bad 1\|2 "a-directory" train charlm --model gpt "${small[@]}" --block-len 8 --steps 2 --out new-run --text-file files/a-directory
  bad 1\|2 "not-utf8\.txt.*byte|UTF-8" train charlm --model gpt "${small[@]}" --block-len 8 --steps 2 --out new-run --text-file files/not-utf8.txt
  bad 1\|2 "empty\.txt" train charlm --model gpt "${small[@]}" --block-len 8 --steps 2 --out new-run --text-file files/empty.txt
  bad 1\|2 "step 2|--steps" train reversal "${small[@]}" --steps 2 --resume existing-run/checkpoint.safetensors
  bad 1\|2 "d_model|checkpoint" train reversal "${small[@]}" --d-model 16 --steps 9 --resume existing-run/checkpoint.safetensors
}

train_damaged_checkpoints() {
  section "attnlab train --resume: damaged checkpoints"
  for f in files/ckpt/*.safetensors; do
    name=$(basename "$f")
    bad 1\|2 "${name//./\\.}" train reversal "${small[@]}" --steps 9 --resume "$f"
  done
}

# ---- attnlab run: the run options, then every field of every experiment ----------------------
run_options() {
  section "attnlab run: options"
  bad 2 "which experiment" run
  bad 2 "bogus|Valid names" run bogus
  bad 2 "needs a value" run worked-example --out
  bad 2 "threads" run worked-example --threads abc --out new-run
  bad 2 "threads" run worked-example --threads -1 --out new-run
  bad 2 "unexpected argument" run worked-example stray --out new-run
  bad 2 "unknown field|Did you mean" run worked-example --bogus 1 --out new-run
  bad 1\|2 "a-file" run worked-example --out files/a-file/sub
  bad 1\|2 "a-file" run worked-example --out files/a-file
  bad 1\|2 "existing-run" run worked-example --out existing-run
  bad 2 "seed" run worked-example --seed -1 --out new-run
  bad 2 "d_model" run reversal --d-model 0 --out new-run
  bad 2 "nhead 5 must divide --d_model 64" run reversal --nhead 5 --out new-run
  bad 2 "nhead 5 must divide --d_model" run mha-heads --nhead 5 --out new-run
  bad 2 "nhead 3 must divide --d_model" run reversal-no-positions --nhead 3 --out new-run
  bad 2 "nhead 5 must divide --hidden" run vanishing-gradient --nhead 5 --out new-run
}

# experiment_fields NAME: one experiment's fields end to end, one row for all its cases. Every
# field of every experiment is given these values in-process by tests/experiments/
# field_sweep_test.cpp (the unit suite), through the same resolve_config the command line uses;
# here the whole command runs (exit 2, the field named, nothing written) for the first field of
# each type, and every list field's in-range 0 and -1 run for real: an experiment checks a list's
# length and order itself, after the range.
experiment_fields() {
  local e=$1 before_total=$total before_fail=$failures n f key type rest k re v vals ranged
  local seen_types=" "
  quiet=1
  accepted=()
  while read -r key type rest; do
    k=${key#--}
    re=$(key_re "$k")
    local first_of_type=0
    [[ "$seen_types" == *" $type "* ]] || { first_of_type=1; seen_types+="$type "; }
    # Always bad: not a number, a fraction for an int, past 64 bits or double, an empty or
    # half-numeric list, a word for a bool, a name outside a choice. Bad by the field's range
    # (asked with in_range): zero, -1, 1e308.
    case "$type" in
      "<int>") vals=(abc 2.5 99999999999999999999) ranged=(0 -1) ;;
      "<real>") vals=(abc 1e999) ranged=(0 -1 1e308) ;;
      "<bool>") vals=(maybe) ranged=() ;;
      "<ints>" | "<reals>") vals=("1,abc" "") ranged=(0 -1) ;;
      *) vals=() ranged=()  # strings: any text may be valid, except outside a list of choices
         [[ "$rest" == *"; one of "* ]] && vals=(no-such-choice) ;;
    esac
    local is_list=0
    [[ "$type" == "<ints>" || "$type" == "<reals>" ]] && is_list=1
    [[ $first_of_type -eq 1 || $is_list -eq 1 ]] || continue
    if [[ $first_of_type -eq 1 ]]; then
      for v in "${vals[@]}"; do bad 2 "$re" run "$e" "--$k" "$v" --out new-run; done
    fi
    for v in "${ranged[@]}"; do
      if ! in_range run "$e" "--$k" "$v"; then
        [[ $first_of_type -eq 1 ]] && bad 2 "$re" run "$e" "--$k" "$v" --out new-run
      else
        accepted+=("--$k $v")
        [[ $is_list -eq 1 ]] && ok_or_refused run "$e" --quick --threads 1 "--$k" "$v" --out new-run
      fi
    done
  done < <("$bin" run "$e" --help | grep -E '^  --[a-z_]+ <')
  quiet=0
  n=$((total - before_total)) f=$((failures - before_fail))
  printf '| `attnlab run %s --<a field of each type> <bad value>` | 2 | %d cases, %s%s |\n' "$e" "$n" \
    "$([[ $f -eq 0 ]] && echo "each names its field or runs" || echo "**$f FAILED**")" \
    "$([[ ${#accepted[@]} -gt 0 ]] && echo "; in range: $(md "${accepted[*]}")")" >>"$rows"
}

# ---- --plugin ----------------------------------------------------------------------------------
# The plugins that need a compiler (no registration symbol, another attnlab's stamp, a taken
# name, a throw while loading, registering or building, a wrong gradient) are tests/cli/plugin.sh's,
# which checks the same three things for each: exit code, message, no run folder.
plugin_cases() {
  section "attnlab --plugin"
  for cmd in "list" "run worked-example --out new-run" "train reversal ${small[*]} --steps 2 --out new-run"; do
    read -ra c <<<"$cmd"
    bad 2 "--plugin files/missing\.so: no such file" "${c[@]}" --plugin files/missing.so
    bad 2 "--plugin files/a-file: not a shared library" "${c[@]}" --plugin files/a-file
    bad 2 "--plugin files/a-directory: no such file" "${c[@]}" --plugin files/a-directory
    bad 2 "--plugin needs a file" "${c[@]}" --plugin
    bad 2 "--plugin needs a file" "${c[@]}" --plugin=
    bad 2 "--plugin needs a file" "${c[@]}" --plugin --threads 1
  done
}

# ---- attnlab parity ----------------------------------------------------------------------------
parity_cases() {
  section "attnlab parity"
  pw=(--weights files/linear-weights.safetensors --inputs files/linear-inputs.safetensors)
  bad 2 "bogus" parity bogus "${pw[@]}" --out out.safetensors
  bad 2 "weights|required" parity linear --inputs files/linear-inputs.safetensors --out out.safetensors
  bad 2 "out|required" parity linear "${pw[@]}"
  bad 2 "key=value" parity linear --config in_features "${pw[@]}" --out out.safetensors
  bad 2 "in_features" parity linear --config in_features=abc "${pw[@]}" --out out.safetensors
  bad 2 "in_features" parity linear --config in_features=-4 "${pw[@]}" --out out.safetensors
  bad 2 "bogus" parity linear --config bogus=1 "${pw[@]}" --out out.safetensors
  bad 2 "weight" parity linear --weights files/wrong-shape-weights.safetensors --inputs files/linear-inputs.safetensors --out out.safetensors
  bad 1\|2 "gy|x" parity linear --weights files/linear-weights.safetensors --inputs files/linear-weights.safetensors --out out.safetensors
  bad 1\|2 "missing\.safetensors" parity linear --weights files/missing.safetensors --inputs files/linear-inputs.safetensors --out out.safetensors
  bad 1\|2 "missing\.safetensors" parity linear --weights files/linear-weights.safetensors --inputs files/missing.safetensors --out out.safetensors
  bad 1\|2 "a-directory" parity linear "${pw[@]}" --out files/a-directory
  bad 1\|2 "new-run" parity linear "${pw[@]}" --out new-run/o.safetensors
  bad 1\|2 "a-file" parity linear "${pw[@]}" --out files/a-file/o.safetensors
}

parity_damaged_weights() {
  section "attnlab parity --weights: damaged files"
  for f in files/weights/*.safetensors; do
    name=$(basename "$f")
    [[ $name == flipped-byte.* ]] && continue  # a plain safetensors file has no checksum
    bad 1\|2 "${name//./\\.}" parity linear --weights "$f" --inputs files/linear-inputs.safetensors --out out.safetensors
  done
}

# ---- attnlab bench -----------------------------------------------------------------------------
bench_cases() {
  if "$bin" bench --help >/dev/null 2>&1; then
    section "attnlab bench"
    bad 2 "W99|workload" bench --workload W99
    bad 2 "threads" bench --threads abc
    bad 2 "threads" bench --threads -3
    bad 2 "steps" bench --steps abc
    bad 2 "steps" bench --steps -1
    bad 2 "steps" bench --steps 0
    bad 2 "warmup" bench --warmup -1
    bad 2 "warmup" bench --warmup xyz
    bad 2 "workload" bench --workload
    bad 2 "bogus" bench --bogus
    bad 2 "zzz|filter" bench --workload W1 --filter zzz-no-such-case
  fi
}

# ---- the groups, in the table's order --------------------------------------------------------
run_group train_flags
run_group train_files
run_group train_damaged_checkpoints
run_group run_options
run_group section "attnlab run: fields of every experiment (a field of each type; all of them in field_sweep_test.cpp)"
for e in $("$bin" list | awk '/^  [a-z]/ && $1 != "experiment" {print $1}'); do
  run_group experiment_fields "$e"
done
run_group plugin_cases
run_group parity_cases
run_group parity_damaged_weights
run_group bench_cases
collect_groups

echo "bad_inputs: $total cases, $failures failed"
if [[ -n "$table_file" ]]; then
  "$py" - "$table_file" "$rows" "$total" "$failures" "${small[*]}" <<'PYEOF' || exit 1
import sys
path, total, failures = sys.argv[1], sys.argv[3], sys.argv[4]
rows = open(sys.argv[2], encoding="utf-8", errors="replace").read()  # bad values may be bad UTF-8
text = open(path).read()
begin, end = "<!-- bad-inputs:begin -->", "<!-- bad-inputs:end -->"
if begin not in text or end not in text:
    sys.exit(f"{path}: no {begin} ... {end} markers")
head, rest = text.split(begin, 1)
_, tail = rest.split(end, 1)
body = (f"\n_Generated by `tests/cli/bad_inputs.sh build/release --table docs/reliability.md`: "
        f"{total} cases, {failures} failed. `[small]` stands for the small-model flags every "
        f"train case shares (`{sys.argv[5]}`)._\n" + rows + "\n")
open(path, "w").write(head + begin + body + end + tail)
PYEOF
  echo "bad_inputs: table written to $table_file"
fi
[[ $failures -eq 0 ]] && echo "tests/cli/bad_inputs.sh: PASS" || { echo "tests/cli/bad_inputs.sh: FAIL ($failures)"; exit 1; }
