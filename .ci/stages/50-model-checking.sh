#!/usr/bin/env bash
# Model checking: the proptest state machine against the reference model
# (10,000 sequences by default), the exhaustive search of the pure transition
# function, and the linearizability checker; with them the sparse-caller
# scenarios (tests/sparse_callers.rs).
#
# All three are ordinary tests of `tripword-verification`, so stage 30's
# `cargo test --workspace` already runs them; each leaves its counts in
# target/tmp/verification-counts/. This stage reports those counts when they
# are current (stage 30 ran after the last change to core/ or verification/),
# and otherwise (a stage run alone, or counts missing) runs the three suites
# itself, in release. VERIFICATION_RERUN=1 forces the rerun.
set -euo pipefail
source .ci/lib.sh
rm -f target/ci-notes/50-model-checking  # this stage's note, from an earlier run

counts=target/tmp/verification-counts
files=(proptest-w64 proptest-w32 exhaustive-W64 exhaustive-W32 linearizability)

current() {
  [ "${VERIFICATION_RERUN:-0}" = 1 ] && return 1
  [ -f target/ci-test.log ] || return 1
  grep -q 'Running tests/model_check.rs' target/ci-test.log || return 1
  ! grep -q 'test result: FAILED' target/ci-test.log || return 1
  # Anything changed since stage 30 logged its run?
  [ -z "$(find core verification Cargo.toml Cargo.lock -newer target/ci-test.log \
            \( -name '*.rs' -o -name '*.toml' -o -name '*.lock' -o -name '*.txt' \) \
            -not -path '*/target*' -print -quit)" ] || return 1
  for f in "${files[@]}"; do
    [ -f "$counts/$f.txt" ] && [ "$counts/$f.txt" -ot target/ci-test.log ] || return 1
  done
}

if current; then
  echo "model checking ran in stage 30 (cargo test --workspace); reporting its counts"
  source_note="(run in stage 30)"
else
  echo "running the model-checking suites in release"
  rm -rf "$counts"
  cargo test --release -p tripword-verification \
    --test model_check --test exhaustive --test linearizability --test sparse_callers -- --nocapture
  source_note="(run here, release)"
fi

for f in "${files[@]}"; do
  [ -f "$counts/$f.txt" ] || { echo "missing counts: $counts/$f.txt" >&2; exit 1; }
  cat "$counts/$f.txt"
done

seq64=$(grep -Eo '^proptest W64: [0-9]+' "$counts/proptest-w64.txt" | grep -Eo '[0-9]+$')
seq32=$(grep -Eo '^proptest W32: [0-9]+' "$counts/proptest-w32.txt" | grep -Eo '[0-9]+$')
states=0; edges=0
for w in W64 W32; do
  s=$(grep -Eo '[0-9]+ states' "$counts/exhaustive-$w.txt" | grep -Eo '^[0-9]+')
  e=$(grep -Eo '[0-9]+ transitions' "$counts/exhaustive-$w.txt" | grep -Eo '^[0-9]+')
  states=$((states + s)); edges=$((edges + e))
done
hist=$(grep -Eo '^linearizability: [0-9]+ histories' "$counts/linearizability.txt" | grep -Eo '[0-9]+')
note "$((seq64 + seq32)) proptest sequences vs the model; $states states / $edges transitions explored exhaustively; $hist histories linearizable $source_note"
# The fleet protocol's model (stateright, tests/fleet_model/; its default
# checks ran in stage 30, the parts around the word included: quorum,
# replicas, forces, config follower, a slot's move): the larger check, two
# losses of the key, about 20 s of CPU (1785379 unique states). `--workspace`
# resolves features as stage 30 did, so its build is reused (with `-p` the
# verification crate is built again).
cargo test --workspace --test fleet_model -- --ignored --nocapture two_losses \
  2>&1 | tee target/ci-fleet-model.log
fleet=$(grep -Eo '^two losses: [0-9]+ states \([0-9]+ unique\)' target/ci-fleet-model.log | grep -Eo '\([0-9]+' | tr -d '(')
grep -q '^test result: ok. 1 passed' target/ci-fleet-model.log
note "fleet model, two losses of the key: ${fleet:-?} unique states, every property holds (the quorum, replicas, forces, config and slot-move checks: stage 30)"
# Every 32-bit word against the model (tests/every_word.rs; the full run is
# the every_word binary, docs/verification.md "Every 32-bit word"): a shard
# of 2^14 of the 2^32 words under one config, both picked from the commit
# hash so that successive commits cover other words; about 3 s on 2 cores.
# `--workspace` reuses stage 30's build, as above.
ew_hash=$((0x$(git rev-parse --short=8 HEAD)))
ew_configs=(default jitter-equal jitter-full long ticks trial ramp)
ew_config=${ew_configs[$((ew_hash % ${#ew_configs[@]}))]}
ew_shard="$(((ew_hash / ${#ew_configs[@]}) % 262144))/262144"
EVERY_WORD_CONFIG=$ew_config EVERY_WORD_SHARD=$ew_shard \
  cargo test --workspace --test every_word -- --ignored --nocapture every_w32_word \
  2>&1 | tee target/ci-every-word.log
grep -q '^test result: ok. 1 passed' target/ci-every-word.log
note "$(grep -Eo '^every_word [a-z-]+: W32 shard [0-9/]+.*disagreements' target/ci-every-word.log)"
