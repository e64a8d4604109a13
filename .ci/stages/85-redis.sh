#!/usr/bin/env bash
# tripword-redis against real servers. Its tests (shared word, multi-process
# probe election and histories, time skew, faults: unreachable, slow,
# SIGSTOP/SIGCONT, restarted empty, corrupt values; partition, Sentinel
# failover, Cluster, quorum) ran in stage 30 with the README's test command,
# each starting and stopping its own servers on free ports, with
# TRIPWORD_REDIS_REQUIRE set (.ci/lib.sh) so that a missing redis-server
# fails them (without it they are reported ignored). Here: their count from stage 30's
# log, then the three fleet examples, each exiting non-zero unless what it
# shows holds: the fleet demo (the fleet trips once and elects one probe),
# fleet_service (tokio services with a breaker per host behind the per-key
# tower layer; one probe per recovery, and calls to healthy hosts that do
# not stall while Redis is paused by SIGSTOP) and fleet_registry_layer (the
# docs' fleet snippet, run), whose marked lines must be the snippet of
# docs/services.md and docs/distributed.md word for word.
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
# The test profile: stage 30 built it (the examples check what happens, not
# how fast; a release build of the redis and tokio trees would add minutes,
# and fleet_service's stall check holds in either profile: a closed call is
# microseconds there too, a call that waited on Redis 200 ms).
cargo run -p tripword-redis --example fleet 2>&1 | tee target/ci-fleet.log
fleet=$(sed -n 's/^FLEET: //p' target/ci-fleet.log)
cargo run -p tripword-redis --example fleet_service 2>&1 | tee target/ci-fleet-service.log
service=$(sed -n 's/^FLEET-SERVICE: //p' target/ci-fleet-service.log)
cargo run -p tripword-redis --example fleet_registry_layer 2>&1 | tee target/ci-fleet-registry-layer.log
grep -q '^FLEET-REGISTRY-LAYER: .* ok$' target/ci-fleet-registry-layer.log
# The docs' fleet snippet is the example's marked lines (dedented, regions
# joined by a blank line), word for word.
fleet_snippet() {
  awk '/--8<-- \[start:fleet\]/ { on = 1; if (n++) print ""; next }
       /--8<-- \[end:fleet\]/ { on = 0; next }
       on { sub(/^    /, ""); print }' redis-adapter/examples/fleet_registry_layer.rs
}
doc_snippet() {
  awk '/<!-- snippet: fleet_registry_layer/ { on = 1; next }
       on && /^```/ { if (block) exit; block = 1; next }
       on && block { print }' "$1"
}
for doc in docs/services.md docs/distributed.md; do
  if ! diff -u <(fleet_snippet) <(doc_snippet "$doc"); then
    echo "$doc: the fleet snippet is not redis-adapter/examples/fleet_registry_layer.rs's marked lines" >&2
    exit 1
  fi
done
version=$(redis-server --version | grep -Eo 'v=[0-9.]+' || true)
note "redis-server ${version#v=}: $passed tripword-redis tests passed (stage 30); fleet demo: $fleet; fleet_service (test profile): $service; fleet_registry_layer: ok, the docs' snippet in step"
