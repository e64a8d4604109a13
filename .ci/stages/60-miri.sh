#!/usr/bin/env bash
# Miri, on x86_64 and on 32-bit i686: the core's unit tests and doctests, and
# the verification crate's single-threaded tests (the reference model's unit
# tests and a few proptest model-checking sequences). Not under Miri: loom
# (its own stage), the exhaustive search and the linearizability histories
# (millions of steps and real threads: hours under Miri).
#
# Miri's default 80% spurious-failure rate for compare_exchange_weak stays
# on: it drives the breaker's CAS retry loop as LL/SC hardware would.
set -euo pipefail
source .ci/lib.sh
if ! rustup +nightly component add miri rust-src; then
  note "SKIPPED: no nightly toolchain with miri on this machine"
  exit 0
fi
export CARGO_TARGET_DIR=target/miri
export PROPTEST_CASES="${MIRI_PROPTEST_CASES:-2}"
# Isolation stays on; proptest's regression file reads fail softly, and
# PROPTEST_CASES reaches the interpreted program.
export MIRIFLAGS="-Zmiri-env-forward=PROPTEST_CASES -Zmiri-isolation-error=warn-nobacktrace"
mkdir -p target && : > target/ci-miri.log
for target in x86_64-unknown-linux-gnu i686-unknown-linux-gnu; do
  cargo +nightly miri setup --target "$target"
  cargo +nightly miri test --target "$target" -p tripword 2>&1 | tee -a target/ci-miri.log
  cargo +nightly miri test --target "$target" -p tripword-verification --lib --test model_check \
    2>&1 | tee -a target/ci-miri.log
done
passed=$(grep -Eo '^test result: ok\. [0-9]+ passed' target/ci-miri.log | awk '{s+=$4} END {print s+0}')
note "$passed tests passed under Miri (x86_64 + i686), PROPTEST_CASES=$PROPTEST_CASES"
