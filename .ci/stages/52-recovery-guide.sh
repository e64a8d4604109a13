#!/usr/bin/env bash
# The recovery guide's figures: docs/recovery.md prints the table of the
# deterministic simulation in core/examples/recovery.rs (a ManualClock, no
# threads, no randomness). Run it and fail if the docs' table differs, so
# the guide stays in step with the code.
set -euo pipefail
source .ci/lib.sh
mkdir -p target
cargo run --release -q -p tripword --features recovery --example recovery | tee target/ci-recovery.log
got=$(grep '^| ' target/ci-recovery.log)
want=$(grep '^| ' docs/recovery.md | head -n "$(echo "$got" | wc -l)")
if [ "$got" != "$want" ]; then
  echo "docs/recovery.md's table is not what the simulation prints:" >&2
  diff <(echo "$want") <(echo "$got") >&2 || true
  exit 1
fi
rows=$(echo "$got" | tail -n +2 | wc -l)
note "recovery simulation: $rows policies, the table in docs/recovery.md matches"
