#!/usr/bin/env bash
# tripword-redis against a real redis-server: the crate's tests (shared word,
# multi-process probe election, time skew, faults: unreachable, slow,
# SIGSTOP/SIGCONT, restarted empty, corrupt values), then the fleet demo,
# which exits non-zero unless the fleet trips once and elects one probe.
# The tests start and stop their own servers on free ports; here a missing
# redis-server fails them instead of skipping them (TRIPWORD_REDIS_REQUIRE).
set -euo pipefail
source .ci/lib.sh
mkdir -p target
if ! command -v redis-server >/dev/null 2>&1; then
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq redis-server >/dev/null
fi
export TRIPWORD_REDIS_REQUIRE=1
cargo test -p tripword-redis 2>&1 | tee target/ci-redis-test.log
passed=$(grep -Eo '^test result: ok\. [0-9]+ passed' target/ci-redis-test.log | awk '{s+=$4} END {print s+0}')
cargo run --release -p tripword-redis --example fleet 2>&1 | tee target/ci-fleet.log
fleet=$(sed -n 's/^FLEET: //p' target/ci-fleet.log)
version=$(redis-server --version | grep -Eo 'v=[0-9.]+' || true)
note "redis-server ${version#v=}: $passed tests passed; fleet demo: $fleet"
