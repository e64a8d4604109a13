#!/usr/bin/env bash
# The cargo-fuzz targets (fuzz/, a workspace of its own, nightly): builds them
# once, runs each for FUZZ_SECONDS (default 60) from a temporary copy of its
# committed seed corpus (so the run leaves the repository clean), fails on any
# crash, and notes the executions per target. docs/verification-fuzzing.md, "Fuzzing", has the details.
set -euo pipefail
source .ci/lib.sh
seconds="${FUZZ_SECONDS:-60}"
targets=(differential word config rate)
# -a: debug assertions and overflow checks on (the release build would wrap);
# -s none: no sanitizer, the crates forbid unsafe code, and ASan would halve
# the executions per second.
flags=(-a -s none)

if ! rustup run nightly rustc --version >/dev/null 2>&1; then
  rustup toolchain install nightly --profile minimal
fi
if ! cargo fuzz --version >/dev/null 2>&1; then
  cargo install --locked cargo-fuzz
fi

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# The fuzz crate is outside the root workspace, so stage 20 does not see it.
(cd fuzz && cargo fmt --check)
(cd fuzz && cargo +nightly fuzz build "${flags[@]}")

# One target: fuzzes it from a copy of its seeds; on a crash prints the log
# and the decoded input and fails.
fuzz_one() {
  local target=$1 log="$work/$1.log"
  mkdir -p "$work/$target"
  cp fuzz/corpus/"$target"/seed-* "$work/$target/"
  if ! (cd fuzz && cargo +nightly fuzz run "${flags[@]}" "$target" "$work/$target" -- \
        -max_total_time="$seconds" -print_final_stats=1) >"$log" 2>&1; then
    tail -n 80 "$log"
    echo "fuzz target $target failed; the crashing input is in fuzz/artifacts/$target/"
    for artifact in fuzz/artifacts/"$target"/*; do
      [ -f "$artifact" ] || continue
      echo "== $artifact, decoded:"
      (cd fuzz && cargo +nightly fuzz fmt "${flags[@]}" "$target" "../$artifact") 2>&1 | tail -n 40 || true
    done
    return 1
  fi
}

# Two targets at a time (libFuzzer runs one process on one core), so the
# stage takes half the wall time at the same fuzzing time per target.
counts=()
failed=()
for ((i = 0; i < ${#targets[@]}; i += 2)); do
  pair=("${targets[@]:i:2}")
  pids=()
  for target in "${pair[@]}"; do
    echo "fuzzing $target for ${seconds}s"
    fuzz_one "$target" & pids+=($!)
  done
  for j in "${!pair[@]}"; do
    wait "${pids[$j]}" || failed+=("${pair[$j]}")
  done
done
if [ ${#failed[@]} -gt 0 ]; then
  note "fuzz: ${failed[*]} FAILED"
  exit 1
fi
for target in "${targets[@]}"; do
  execs=$(grep -Eo 'stat::number_of_executed_units: *[0-9]+' "$work/$target.log" | grep -Eo '[0-9]+$' | tail -n 1)
  echo "$target: ${execs:-?} executions in ${seconds}s, no crash"
  counts+=("$target ${execs:-?}")
done
joined=$(printf '%s, ' "${counts[@]}")
note "fuzz ${seconds}s/target, two targets at a time, executions: ${joined%, }"
