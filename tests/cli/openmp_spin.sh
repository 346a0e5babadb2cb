#!/usr/bin/env bash
# attnlab bounds libgomp's idle spinning by starting itself again with GOMP_SPINCOUNT set
# (experiments/cli/openmp_spin.h), and only when a command is about to compute: a refused option,
# --help, list and --version start once. Counted with the dynamic loader's own log
# (LD_DEBUG=files prints one "transferring control" line per program start); strace would not
# do, since attnlab skips the exec when a tracer is attached. config.json records the setting.
#   tests/cli/openmp_spin.sh BUILD_DIR
set -uo pipefail
source "$(dirname "$0")/lib/checks.sh" "$@"
unset GOMP_SPINCOUNT OMP_WAIT_POLICY ATTN_OPENMP_SPIN
bin=$(realpath "$bin")  # the commands run in $tmp

# starts N ARGS...: `attnlab ARGS` starts the program N times (its exit code is not judged here).
starts() {
  local want=$1; shift
  local got
  got=$(cd "$tmp" && LD_DEBUG=files "$bin" "$@" 2>&1 </dev/null | grep -c 'transferring control: .*attnlab')
  if [[ "$got" == "$want" ]]; then pass "attnlab $* starts $want time(s)"
  else fail "attnlab $* started $got time(s), expected $want"; fi
}

starts 1 --version
starts 1 list
starts 1 run reversal --help
starts 1 run reversal --d-model abc --out "$tmp/refused"
starts 1 train reversal --steps abc --out "$tmp/refused"
starts 2 run worked-example --quick --out "$tmp/run"
starts 2 train reversal --steps 2 --warmup 0 --out "$tmp/train"
GOMP_SPINCOUNT=5 starts 1 run worked-example --quick --out "$tmp/user-set"
ATTN_OPENMP_SPIN=1 starts 1 run worked-example --quick --out "$tmp/default-wait"

# wait_is DIR TEXT: config.json's openmp_wait field.
wait_is() {
  if grep -qF "\"openmp_wait\": \"$2\"" "$1/config.json" 2>/dev/null; then pass "$1 records '$2'"
  else fail "$1/config.json does not record openmp_wait '$2'"; fi
}
wait_is "$tmp/run" "GOMP_SPINCOUNT=100000"
wait_is "$tmp/user-set" "GOMP_SPINCOUNT=5"
wait_is "$tmp/default-wait" "libgomp's default"
[[ -e "$tmp/refused" ]] && fail "a refused command created its --out folder"
finish
