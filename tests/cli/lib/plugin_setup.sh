# Shared by tests/cli/plugin.sh and tests/cli/plugin_kinds.sh (sourced after lib/checks.sh,
# never run alone): the plugin header files as an installation lays them out, a copy of
# examples/coursework configured against them, and the helpers
#   plugin_cxx OUT SOURCES... [-D...]     compile a plugin as attnlab::plugin would (headers only)
#   coursework_plugin TARGET SOURCE...    build one of examples/coursework's plugins
#   plugin_listed FILE REGEX WHAT         `attnlab list --plugin FILE` shows a matching line
#   bad NAME VERSION BODY                 a small plugin from BODY, stamped with VERSION
#   refused CODE PATTERN FILE             list, run and train refuse FILE and write nothing
# Arguments (the script's): BUILD_DIR [--from-source]. Without --from-source attnlab is installed
# to a temporary prefix and $bin becomes the installed attnlab; with it (scripts/sanitize:
# build/fuzz, a tree that built only attnlab), BUILD_DIR/attnlab loads plugins compiled from the
# source tree's headers. Plugins are compiled by the tree's own C++ compiler (the ABI stamp holds
# the compiler's ABI version) with $ATTN_PLUGIN_FLAGS added.
build=$(cd "$1" && pwd)
root=$(cd "$(dirname "$0")/../.." && pwd)
from_source=0
[[ "${2:-}" == --from-source ]] && from_source=1
cxx=$(sed -n 's/^CMAKE_CXX_COMPILER:[A-Z]*=//p' "$build/CMakeCache.txt")
[[ -n "$cxx" ]] || cxx=g++
read -ra plugin_flags <<<"${ATTN_PLUGIN_FLAGS:-}"
prefix="$tmp/prefix"

if [[ $from_source -eq 1 ]]; then
  mkdir -p "$prefix/include"
  ln -s "$root" "$prefix/include/attnlab"  # <attnlab/nn/...> as installed; autograd/... too
  config_version="$build/attnlabConfigVersion.cmake"
else
  if ! cmake --install "$build" --prefix "$prefix" >"$tmp/install.log" 2>&1; then
    fail "cmake --install failed:"; tail -n 20 "$tmp/install.log"; finish
  fi
  bin="$prefix/bin/attnlab"  # the installed attnlab loads the plugins from here on
  config_version="$prefix/lib/cmake/attnlab/attnlabConfigVersion.cmake"
fi
version=$(sed -n 's/^set(PACKAGE_VERSION "\(.*\)")$/\1/p' "$config_version")
[[ -n "$version" ]] || { fail "no PACKAGE_VERSION in $config_version"; finish; }

# plugin_cxx OUT SOURCES... [-DNAME=...]: a plugin compiled as attnlab::plugin would (headers only).
plugin_cxx() {
  local out=$1; shift
  "$cxx" -std=c++20 -O1 -g -shared -fPIC "${plugin_flags[@]}" -I"$prefix/include/attnlab" \
    -I"$prefix/include" "$@" -o "$out"
}

# examples/coursework, copied and configured as a student would: find_package(attnlab).
cp -r "$root/examples/coursework" "$tmp/coursework"
cw="$tmp/coursework"
if [[ $from_source -eq 1 ]]; then
  mkdir -p "$cw/build"
elif ! cmake -S "$cw" -B "$cw/build" -DCMAKE_PREFIX_PATH="$prefix" >"$tmp/cw_config.log" 2>&1; then
  fail "examples/coursework does not configure against the installed attnlab:"
  tail -n 30 "$tmp/cw_config.log"; finish
fi

# coursework_plugin TARGET SOURCE...: examples/coursework's MODULE target TARGET, built as a
# student would (from the SOURCEs straight with the tree's compiler under --from-source).
coursework_plugin() {
  local target=$1; shift
  if [[ $from_source -eq 1 ]]; then
    plugin_cxx "$cw/build/lib$target.so" "-DATTN_PLUGIN_VERSION=\"$version\"" "${@/#/$cw/}" \
      >"$tmp/cw_$target.log" 2>&1
  else
    cmake --build "$cw/build" -j2 --target "$target" >"$tmp/cw_$target.log" 2>&1
  fi && pass "examples/coursework's $target plugin builds" ||
    { fail "the $target plugin did not build:"; tail -n 30 "$tmp/cw_$target.log"; finish; }
}

# plugin_listed FILE REGEX WHAT: `attnlab list --plugin FILE` prints a line matching REGEX.
plugin_listed() {
  local file=$1 regex=$2 what=$3 out
  out=$("$bin" list --plugin "$file" 2>&1) || { fail "attnlab list --plugin $file failed: $out"; return; }
  grep -qE "$regex" <<<"$out" && pass "attnlab list --plugin shows $what" ||
    fail "attnlab list --plugin does not show $what: $out"
}

# ---- bad plugins ---------------------------------------------------------------------------
# bad NAME VERSION BODY: a plugin built straight with the tree's compiler against the headers.
bad() {
  local name=$1 stamp=$2 body=$3
  printf '%s\n' '#include <attnlab/nn/mixer/plugin.h>' '#include <attnlab/autograd/functional.h>' \
    '#include <stdexcept>' "$body" >"$tmp/$name.cpp"
  plugin_cxx "$tmp/$name.so" "-DATTN_PLUGIN_VERSION=\"$stamp\"" "$tmp/$name.cpp" 2>"$tmp/$name.log" ||
    { fail "could not build the test plugin $name: $(head -5 "$tmp/$name.log")"; }
}
# refused CODE PATTERN FILE: list, run and train all refuse FILE, and write nothing.
refused() {
  local code=$1 pattern=$2 file=$3 n=$((++refusals))
  expect "$code" "$pattern" list --plugin "$file"
  expect "$code" "$pattern" run attention-zoo --quick --plugin "$file" --out "$tmp/refused$n"
  expect "$code" "$pattern" train copy --model mixer --mixer softmax --steps 5 \
    --plugin "$file" --out "$tmp/refused_train$n"
  [[ -e "$tmp/refused$n" || -e "$tmp/refused_train$n" ]] &&
    fail "a refused plugin ($file) left a run folder" || pass "nothing written for $file"
}
refusals=0
