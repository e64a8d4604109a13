#!/usr/bin/env bash
# The benchmarks, checked but never judged: the criterion benches in test
# mode (`cargo test --benches`: each benchmark body runs once, nothing is
# timed) and the contention lab (`tripword-lab`, every built-in
# implementation) in --quick mode with 10 ms cells and 2 repeats on five
# schedulers. Both are built with the test profile, whose dependencies
# stage 30 already compiled: this stage checks that every benchmark and the
# lab run, not how fast (an unoptimised build on a shared CI machine
# measures nothing). The figures in docs/performance come from the release
# commands written next to them.
set -euo pipefail
source .ci/lib.sh
mkdir -p target
cargo test -p tripword-benches --benches 2>&1 | tee target/ci-bench.log
benches=$(grep -c '^Success$' target/ci-bench.log || true)
# Built with tripword-benches selected too, so that its dependencies keep the
# features the benches were just built with: nothing is compiled again.
cargo build -p tripword-lab -p tripword-benches --bin tripword-lab
"${CARGO_TARGET_DIR:-target}/debug/tripword-lab" --quick --repeats 2 --millis 10 \
  --out target/lab --name ci | tee target/ci-lab.log
run=$(sed -n 's|^wrote \(.*\)/ (.*|\1|p' target/ci-lab.log)
files=$(find "$run" -type f | wc -l)
note "$benches criterion benches ran once (test mode); lab --quick (unoptimised, not judged) wrote $files files to $run/"
