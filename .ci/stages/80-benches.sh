#!/usr/bin/env bash
# The benchmarks, checked but never judged: criterion benches in test mode
# (each benchmark body runs once, nothing is timed) and the contention sweep
# in --quick mode (60 ms cells on five schedulers: about 30 s on 2 cores). The goals it prints
# are reported in the summary line for information only; timings on a shared
# CI machine never fail the build. The sweep is built with the `bench`
# profile so it reuses what `cargo bench` just compiled.
set -euo pipefail
source .ci/lib.sh
mkdir -p target
cargo bench -p tripword-benches -- --test 2>&1 | tee target/ci-bench.log
benches=$(grep -c '^Success$' target/ci-bench.log || true)
cargo run --profile bench -p tripword-benches --bin contention -- --quick --out target/contention \
  | tee target/ci-contention.log
goals=$(sed -n 's/^GOALS: //p' target/ci-contention.log)
note "$benches criterion benches ran once (--test); sweep --quick wrote target/contention/; goals (informational): ${goals:-none}"
