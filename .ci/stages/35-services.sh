#!/usr/bin/env bash
# tripword-std with its optional features (http, tower, tokio), which stage
# 30's `cargo test --workspace` leaves out: every target in test mode (unit
# and integration tests, tokio tasks aborted mid-probe, the tower layer in
# front of hyper's client against a hyper server on 127.0.0.1, the services
# bench run once), the doctests (docs/services.md's and docs/registry.md's included), clippy with
# every feature, and the http_service demo in release (it exits non-zero on
# anything unexpected), and the custom_breaker example (the kit used from
# outside the library). Debug builds share stage 30's dependencies, the demo
# shares the release ones its README demo built.
set -euo pipefail
source .ci/lib.sh
mkdir -p target
cargo test -p tripword-std --all-features --all-targets 2>&1 | tee target/ci-services-test.log
cargo test -p tripword-std --all-features --doc 2>&1 | tee -a target/ci-services-test.log
passed=$(grep -Eo '^test result: ok\. [0-9]+ passed' target/ci-services-test.log | awk '{s+=$4} END {print s+0}')
note "$passed tripword-std tests passed with --all-features;"
cargo clippy -p tripword-std --all-targets --all-features -- -D warnings
note "clippy --all-features clean;"
cargo run --release -p tripword-std --example http_service --features tower,tokio 2>&1 \
  | tee target/ci-services-demo.log
demo=$(grep -Eo '^http_service: .*' target/ci-services-demo.log)
note "$demo"
# The kit's proof: a breaker defined outside the library crates, driven by
# cell::update/update_async, through call, call_async, BreakerLayer and a
# registry. It exits non-zero if any of its checks fails.
cargo run --release -p tripword-std --example custom_breaker --features tower,tokio 2>&1 \
  | tee target/ci-custom-breaker.log
checks=$(grep -c '^ok:' target/ci-custom-breaker.log)
note "custom_breaker: $checks checks ok;"
# A breaker with a state machine of its own (no core word), implementing
# only kit::LocalBreaker, through the same four; non-zero exit on a failed check.
cargo run --release -p tripword-std --example own_state_machine --features tower,tokio 2>&1 \
  | tee target/ci-own-state-machine.log
checks=$(grep -c '^ok:' target/ci-own-state-machine.log)
note "own_state_machine: $checks checks ok;"
