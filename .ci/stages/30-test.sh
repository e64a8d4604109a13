#!/usr/bin/env bash
# The README's test command, doctests included.
set -euo pipefail
source .ci/lib.sh
mkdir -p target
${README_TEST_COMMAND:-cargo test --workspace} 2>&1 | tee target/ci-test.log
passed=$(grep -Eo '^test result: ok\. [0-9]+ passed' target/ci-test.log | awk '{s+=$4} END {print s+0}')
note "$passed tests passed"
