#!/usr/bin/env bash
# loom: every interleaving of 2-4 threads racing on one breaker
# (verification/tests/loom.rs). Release build, in its own target dir, because
# RUSTFLAGS="--cfg tripword_loom" rebuilds everything. The cfg is the core's
# own (not `loom`), so a downstream crate's `--cfg loom` never swaps the
# core's atomics. Two-thread models run unbounded; the others carry the
# preemption bound written in their doc. Clippy runs on the core's and the
# verification crate's targets under --cfg tripword_loom too.
set -euo pipefail
source .ci/lib.sh
export RUSTFLAGS="--cfg tripword_loom"
export CARGO_TARGET_DIR=target/loom
cargo clippy -p tripword -p tripword-verification --all-targets -- -D warnings
cargo test -p tripword-verification --test loom --release -- --nocapture --test-threads=2 \
  2>&1 | tee target/ci-loom.log
executions=$(grep -Eo '[0-9]+ executions' target/ci-loom.log | awk '{s+=$1} END {print s+0}')
passed=$(grep -Eo '^test result: ok\. [0-9]+ passed' target/ci-loom.log | awk '{print $4}')
note "${passed:-0} loom models passed, ${executions} executions explored"
