#!/usr/bin/env bash
# Instructions per call of an earlier commit's core and this tree's, side by
# side, through one harness: the per-call binary of the earlier commit (its
# benches crate, unchanged), built twice, once with its own core and
# adapters, once with this tree's `core/`, `std-adapter/` and `macros/`
# copied over them. The same harness, the same cachegrind count (exact,
# whatever the machine's load), so the difference is the library's.
#
#   bash benches/per-call-vs.sh BASE [CALLS]     (default CALLS 100000)
#   IMPLS="tripword_w64 tripword_w64_tower" bash benches/per-call-vs.sh BASE
#
# Needs valgrind, and BASE's API to be this tree's (the harness must build
# against it). Work trees and builds go under target/per-call-vs/.
set -euo pipefail
cd "$(dirname "$0")/.."
base=${1:?usage: per-call-vs.sh BASE [CALLS]}
calls=${2:-100000}
root=$(pwd)
out="$root/target/per-call-vs"
mkdir -p "$out"
for side in base this; do
  tree="$out/$side-tree"
  rm -rf "$tree"
  git worktree prune
  git worktree add -f -q --detach "$tree" "$base"
  if [ "$side" = this ]; then
    rm -rf "$tree/core" "$tree/std-adapter" "$tree/macros"
    git ls-files -z core std-adapter macros | tar --null -T - -cf - | tar -xf - -C "$tree"
  fi
  (cd "$tree" && CARGO_TARGET_DIR="$out/$side-target" cargo build --release -q -p tripword-benches --bin per-call)
done
irefs() {
  valgrind --tool=cachegrind --cache-sim=no --cachegrind-out-file=/dev/null "$@" 2>&1 \
    | awk '/I *refs/ {gsub(",", "", $NF); print $NF}'
}
impls="${IMPLS:-atomic_load_pair tripword_w64 tripword_w32 tripword_w64_call tripword_w64_call_async tripword_w64_tower loop_tripword_w64 loop_tripword_w32}"
echo "| implementation | scenario | $base | this tree |"
echo "|---|---|---:|---:|"
for impl in $impls; do
  for scenario in closed failure_storm; do
    row="| $impl | $scenario |"
    skip=1
    for side in base this; do
      bin="$out/$side-target/release/per-call"
      if "$bin" "$impl" "$scenario" 0 | grep -q "does not run"; then
        row="$row – |"
        continue
      fi
      skip=0
      a=$(irefs "$bin" "$impl" "$scenario" 0)
      b=$(irefs "$bin" "$impl" "$scenario" "$calls")
      row="$row $(awk -v a="$a" -v b="$b" -v n="$calls" 'BEGIN { printf "%.1f", (b - a) / n }') |"
    done
    [ "$skip" = 1 ] || echo "$row"
  done
done
for side in base this; do git worktree remove --force "$out/$side-tree"; done
