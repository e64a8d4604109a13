#!/usr/bin/env bash
# The benchmarks, checked but never judged: the criterion benches in test
# mode (`cargo test --benches`: each benchmark body runs once, nothing is
# timed) and the contention sweep in --quick mode (60 ms cells on five
# schedulers). Both are built with the test profile, whose dependencies
# stage 30 already compiled: this stage checks that every benchmark and the
# sweep run, not how fast (an unoptimised build on a shared CI machine
# measures nothing). The figures in docs/performance come from the release
# commands written next to them.
set -euo pipefail
source .ci/lib.sh
mkdir -p target
cargo test -p tripword-benches --benches 2>&1 | tee target/ci-bench.log
benches=$(grep -c '^Success$' target/ci-bench.log || true)
cargo run -p tripword-benches --bin contention -- --quick --out target/contention \
  | tee target/ci-contention.log
cells=$(find target/contention -type f | wc -l)
note "$benches criterion benches ran once (test mode); sweep --quick (unoptimised, not judged) wrote $cells files to target/contention/"
