#!/usr/bin/env bash
# Installs the libraries into a fresh prefix, builds examples/embed against it with find_package(switchboard), and runs
# it against the demo server. Arguments: SOURCE_DIR BUILD_DIR DEMO_SERVER.
set -euo pipefail
src=$1 build=$2 demo=$3
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cmake --install "$build" --prefix "$work/prefix" >/dev/null
test -f "$work/prefix/lib/cmake/switchboard/switchboardConfig.cmake"
test -f "$work/prefix/include/switchboard/host/pool.hpp"
launcher=()
command -v ccache >/dev/null 2>&1 && launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
cmake -S "$src/examples/embed" -B "$work/embed" -G Ninja -DCMAKE_BUILD_TYPE=Release \
  -DCMAKE_PREFIX_PATH="$work/prefix" "${launcher[@]}" >/dev/null
cmake --build "$work/embed" >/dev/null
printf '{"mcpServers": {"demo": {"command": "%s"}}}\n' "$demo" >"$work/config.json"
out=$("$work/embed/embed" "$work/config.json" add '{"a": 2, "b": 3}')
if [[ $out != 5 ]]; then
  echo "expected 5 from the embedded call, got: $out" >&2
  exit 1
fi
if "$work/embed/embed" "$work/config.json" no_such_tool 2>"$work/err"; then
  echo "a call to an unknown tool succeeded" >&2
  exit 1
fi
grep -q 'no tool "no_such_tool"' "$work/err"
echo "embed: built against the installed package and called demo add → $out"
