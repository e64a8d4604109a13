#!/usr/bin/env bash
# The README's two Quick start commands: the tests (doctests included), then
# the demo.
set -euo pipefail
source .ci/lib.sh
mkdir -p target
${README_TEST_COMMAND:-cargo test --workspace} 2>&1 | tee target/ci-test.log
passed=$(grep -Eo '^test result: ok\. [0-9]+ passed' target/ci-test.log | awk '{s+=$4} END {print s+0}')
note "$passed tests passed;"
${README_DEMO_COMMAND:-cargo run --release -p tripword-std --example flaky_service} 2>&1 | tee target/ci-demo.log
probe=$(grep -Eo 'admitted as probe: [0-9]+, rejected: [0-9]+' target/ci-demo.log)
note "demo ran: $probe"
