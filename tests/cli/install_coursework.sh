#!/usr/bin/env bash
# attnlab as an installed library: `cmake --install` into a temporary prefix, then
# examples/coursework/ (a project outside the tree) is configured against it with
# find_package(attnlab), built, and run: its gradient check and its training must pass.
#   tests/cli/install_coursework.sh BUILD_DIR
set -uo pipefail
build=$(cd "${1:?usage: install_coursework.sh BUILD_DIR}" && pwd)
root=$(cd "$(dirname "$0")/../.." && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
prefix="$tmp/prefix"
failures=0
pass() { echo "PASS $*"; }
fail() { echo "FAIL $*"; failures=$((failures + 1)); }
finish() {
  [[ $failures -eq 0 ]] && { echo "tests/cli/install_coursework.sh: PASS"; exit 0; }
  echo "tests/cli/install_coursework.sh: FAIL ($failures)"; exit 1
}

if cmake --install "$build" --prefix "$prefix" >"$tmp/install.log" 2>&1; then
  pass "cmake --install $build --prefix P"
else
  fail "cmake --install failed:"; tail -n 20 "$tmp/install.log"; finish
fi
for f in include/attnlab/autograd/functional.h include/attnlab/nn/linear.h \
    include/attnlab/train/optim/adam.h lib/libattn_autograd.a lib/libattn_autograd_f64.a \
    lib/libattn_nn.a lib/libattn_train.a lib/cmake/attnlab/attnlabConfig.cmake bin/attnlab \
    share/attnlab/gdb/attnlab.py; do
  [[ -e "$prefix/$f" ]] || fail "not installed: P/$f"
done
# Every include in an installed header resolves inside P/include/attnlab (or is a system one).
if /usr/bin/python3 - "$prefix/include/attnlab" <<'PYEOF'
import os, re, sys
top = sys.argv[1]
bad, n = [], 0
for d, _, files in os.walk(top):
    for f in files:
        n += 1
        for inc in re.findall(r'^\s*#\s*include\s+"([^"]+)"', open(os.path.join(d, f)).read(), re.M):
            if not (os.path.exists(os.path.join(top, inc)) or os.path.exists(os.path.join(d, inc))):
                bad.append(f"{os.path.relpath(os.path.join(d, f), top)}: {inc}")
assert n > 50, f"only {n} headers installed"
assert not bad, "unresolved includes:\n" + "\n".join(bad)
print(f"{n} headers, every quoted include resolves")
PYEOF
then pass "installed headers' own includes resolve"; else fail "installed headers (see above)"; fi
# The package must not point back into the source or build tree (it is copied to students).
# The checkout's path counts only as a whole path (after a quote, space, '=', ';' or '(' and
# ending there or at a '/'): in a checkout at /attnlab, "include/attnlab" is not a leak (the
# fresh-root run of scripts/fresh_debian failed here on that).
if grep -rlP "(^|[\"' ;=(])\Q$root\E(/|[\"' ;)]|\$)" "$prefix/lib/cmake" >"$tmp/leaks"; then
  fail "the package refers to the source tree: $(cat "$tmp/leaks")"
else
  pass "the package does not refer to the source tree"
fi

# The coursework project, copied out of the tree as a student would.
cp -r "$root/examples/coursework" "$tmp/coursework"
cw="$tmp/coursework"
if cmake -S "$cw" -B "$cw/build" -DCMAKE_PREFIX_PATH="$prefix" >"$tmp/cw_config.log" 2>&1 &&
    cmake --build "$cw/build" -j2 >"$tmp/cw_build.log" 2>&1; then
  pass "examples/coursework configures and builds against the installed attnlab"
else
  fail "examples/coursework did not build:"; tail -n 30 "$tmp/cw_config.log" "$tmp/cw_build.log"
  finish
fi
if "$cw/build/check_gradients" >"$tmp/check.log" 2>&1; then
  pass "coursework gradient check: $(tr '\n' ';' <"$tmp/check.log")"
else
  fail "coursework gradient check failed:"; cat "$tmp/check.log"
fi
if ATTN_THREADS=2 "$cw/build/train" >"$tmp/train.log" 2>&1; then
  pass "coursework training: $(tail -1 "$tmp/train.log")"
else
  fail "coursework training failed:"; cat "$tmp/train.log"
fi
finish
