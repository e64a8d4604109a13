#!/usr/bin/env bash
# Miri, on x86_64 and on 32-bit i686 (the two run side by side, one core
# each): the core's unit tests (and, on x86_64, its doctests and the
# verification crate's single-threaded tests: the reference model's unit
# tests and the mutant killers; MIRI_MODEL_CHECK=1 adds a few proptest
# model-checking sequences per word width, PROPTEST_CASES default 2,
# MIRI_PROPTEST_CASES overrides it). Not under Miri: loom (stage 55), the
# exhaustive search and the linearizability histories (millions of steps or
# real threads: hours under Miri; stage 30 runs them natively).
#
# Miri's default 80% spurious-failure rate for compare_exchange_weak stays
# on: it drives the breaker's CAS retry loop as LL/SC hardware would.
# Isolation stays on: proptest's regression-file reads fail softly, and only
# PROPTEST_CASES is forwarded to the interpreted program.
set -euo pipefail
source .ci/lib.sh
if ! rustup +nightly component add miri rust-src; then
  note "SKIPPED: no nightly toolchain with miri on this machine"
  exit 0
fi
export MIRIFLAGS="-Zmiri-env-forward=PROPTEST_CASES -Zmiri-isolation-error=warn-nobacktrace"
mkdir -p target

run_target() { # target, proptest cases, extra args for the core's tests, verification too?
  local target=$1 cases=$2 core_args=$3 verification=$4 log=target/ci-miri-$1.log
  export CARGO_TARGET_DIR=target/miri-$target PROPTEST_CASES=${MIRI_PROPTEST_CASES:-$cases}
  {
    cargo +nightly miri setup --target "$target"
    # shellcheck disable=SC2086 # core_args is a word list
    cargo +nightly miri test --target "$target" -p tripword $core_args
    if [ "$verification" = yes ]; then
      extra=()
      [ "${MIRI_MODEL_CHECK:-0}" = 1 ] && extra=(--test model_check)
      cargo +nightly miri test --target "$target" -p tripword-verification --lib --test mutant_killers "${extra[@]}"
    fi
  } > "$log" 2>&1
}

start=$(date +%s)
# i686 runs the core's unit tests: what a 32-bit pointer width changes is in
# the core (tickets, the 64-bit word on a 32-bit target). The verification
# crate's model runs both word widths on x86_64.
run_target x86_64-unknown-linux-gnu 2 "" yes & x86=$!
run_target i686-unknown-linux-gnu 1 "--lib" no & i686=$!
status=0
wait "$x86" || status=1
wait "$i686" || status=1
for t in x86_64-unknown-linux-gnu i686-unknown-linux-gnu; do
  echo "== Miri, $t"; cat "target/ci-miri-$t.log"
done
[ "$status" = 0 ] || { echo "Miri failed" >&2; exit 1; }
passed=$(cat target/ci-miri-*.log | grep -Eo '^test result: ok\. [0-9]+ passed' | awk '{s+=$4} END {print s+0}')
note "$passed tests passed under Miri on x86_64 + i686 ($(( $(date +%s) - start ))s)"
