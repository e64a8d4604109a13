#!/usr/bin/env bash
# tripword-redis against real servers. Its tests (shared word, multi-process
# probe election and histories, time skew, faults: unreachable, slow,
# SIGSTOP/SIGCONT, restarted empty, corrupt values; partition, Sentinel
# failover, Cluster, quorum) ran in stage 30 with the README's test command,
# each starting and stopping its own servers on free ports, with
# TRIPWORD_REDIS_REQUIRE set (.ci/lib.sh) so that a missing redis-server
# fails them instead of skipping them. Here: their count from stage 30's
# log, then the fleet demo, which exits non-zero unless the fleet trips once
# and elects one probe.
set -euo pipefail
source .ci/lib.sh
mkdir -p target
# The tripword-redis part of stage 30's log: from its unit tests to the next
# package's, then its doctests.
passed=$(awk '
  /Running unittests src\/lib.rs .*tripword_redis-/ { on = 1 }
  /Running unittests/ && !/tripword_redis-/ { on = 0 }
  /Doc-tests/ { on = /Doc-tests tripword_redis$/ }
  on && /^test result: ok\. [0-9]+ passed/ { s += $4 }
  END { print s + 0 }' target/ci-test.log 2>/dev/null || echo 0)
if [ "${passed:-0}" -eq 0 ]; then
  # Stage 30 did not run here (a single stage run): run the tests now.
  cargo test -p tripword-redis 2>&1 | tee target/ci-redis-test.log
  passed=$(grep -Eo '^test result: ok\. [0-9]+ passed' target/ci-redis-test.log | awk '{s+=$4} END {print s+0}')
fi
# The test profile: stage 30 built it (the demo checks what happens, not
# how fast).
cargo run -p tripword-redis --example fleet 2>&1 | tee target/ci-fleet.log
fleet=$(sed -n 's/^FLEET: //p' target/ci-fleet.log)
version=$(redis-server --version | grep -Eo 'v=[0-9.]+' || true)
note "redis-server ${version#v=}: $passed tripword-redis tests passed (stage 30); fleet demo: $fleet"
