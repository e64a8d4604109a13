#!/usr/bin/env bash
# Instructions per call, single thread, for every implementation in the
# time-independent scenarios (closed, failure_storm), counted by valgrind's
# cachegrind: exact and independent of how busy the machine is, unlike wall
# time. It does not weigh instructions (an atomic read-modify-write counts as
# one), so read it next to the criterion times, not instead of them.
#
#   benches/per-call.sh [CALLS]        (default 100000)
#   IMPLS="tripword_w64_call tripword_w64_call_async" benches/per-call.sh
#   IMPLS="loop_atomic_load_pair loop_tripword_w64" benches/per-call.sh   (the hot loops)
#
# Prints a Markdown table. Needs valgrind; builds the per-call binary in
# release mode (set CARGO_TARGET_DIR to reuse a build).
set -euo pipefail
cd "$(dirname "$0")/.."
calls="${1:-100000}"
target="${CARGO_TARGET_DIR:-target}"
cargo build --release -q -p tripword-benches --bin per-call
bin="$target/release/per-call"
irefs() {
  valgrind --tool=cachegrind --cache-sim=no --cachegrind-out-file=/dev/null "$bin" "$@" 2>&1 \
    | awk '/I *refs/ {gsub(",", "", $NF); print $NF}'
}
impls="${IMPLS:-atomic_load_pair by_hand_two_atomics tripword_w64 tripword_w32 tripword_w64_call tripword_w64_call_async tripword_w64_tower mutex_breaker failsafe recloser seatbelt tower_resilience loop_atomic_load_pair loop_atomic_load_pair_black_box loop_tripword_w64 loop_tripword_w64_permit loop_tripword_w64_opaque loop_tripword_w32 loop_by_hand_two_atomics}"
echo "| implementation | closed | failure_storm |"
echo "|---|---:|---:|"
for impl in $impls; do
  row="| $impl |"
  for scenario in closed failure_storm; do
    if "$bin" "$impl" "$scenario" 0 | grep -q "does not run"; then
      row="$row – |"
      continue
    fi
    base=$(irefs "$impl" "$scenario" 0)
    full=$(irefs "$impl" "$scenario" "$calls")
    row="$row $(awk -v a="$base" -v b="$full" -v n="$calls" 'BEGIN { printf "%.1f", (b - a) / n }') |"
  done
  echo "$row"
done
