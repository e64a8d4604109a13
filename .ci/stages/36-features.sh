#!/usr/bin/env bash
# The optional features, each alone and all together: tripword-std's
# `tracing`, `metrics`, `serde` and `macros` (their integration tests, against a
# recording subscriber layer and a recording metrics exporter, TOML and
# JSON config files), the registry's tests (no feature), and clippy for each
# feature alone; the core's `heapless` feature (the transition log's unit
# tests and doctests, clippy, and a warning-free build for each embedded
# target, with the portable-atomic backend a firmware binary would pick).
# Stage 35 runs every tripword-std target with --all-features as well.
# tripword-redis's library with no feature and with each alone.
set -euo pipefail
source .ci/lib.sh
mkdir -p target
log=target/ci-features.log
: >"$log"
for feature in tracing metrics serde macros; do
  cargo test -p tripword-std --no-default-features --features "$feature" --lib --test "$feature" --test registry 2>&1 | tee -a "$log"
  cargo clippy -p tripword-std --features "$feature" --all-targets -- -D warnings
done
cargo test -p tripword-std --features tracing,metrics,serde --lib --test tracing --test metrics --test serde --test registry 2>&1 | tee -a "$log"
cargo test -p tripword-std --features tracing,metrics,serde --doc 2>&1 | tee -a "$log"
std_passed=$(grep -Eo '^test result: ok\. [0-9]+ passed' "$log" | awk '{s+=$4} END {print s+0}')
note "tripword-std: tracing, metrics, serde, macros each alone and together, clippy clean alone ($std_passed tests);"

# tripword-redis's library with no feature and with each alone (its tests
# turn every feature on; stage 85 runs them against redis-server).
cargo clippy -p tripword-redis --lib -- -D warnings
for feature in tokio tracing metrics cluster cluster-async tls; do
  cargo clippy -p tripword-redis --lib --features "$feature" -- -D warnings
done
note "tripword-redis: no feature, tokio, tracing, metrics, cluster, cluster-async, tls each alone clippy clean;"

: >target/ci-features-core.log
cargo test -p tripword --features heapless --lib -- table log 2>&1 | tee -a target/ci-features-core.log
cargo test -p tripword --features heapless --doc 2>&1 | tee -a target/ci-features-core.log
cargo clippy -p tripword --features heapless --all-targets -- -D warnings
cargo clippy -p tripword --features jitter --all-targets -- -D warnings
cargo test -p tripword --features jitter --lib -- jitter 2>&1 | tee -a target/ci-features-core.log
# The core without the recovery states (the workspace's tests run it with
# them, which tripword-std turns on): tags 6 and 7 corrupt again, the
# cheaper rejection fold; and the recovery feature alone.
cargo test -p tripword --lib 2>&1 | tee -a target/ci-features-core.log
cargo clippy -p tripword --all-targets -- -D warnings
cargo clippy -p tripword --features recovery --all-targets -- -D warnings
cargo test -p tripword --features recovery --lib -- recovery 2>&1 | tee -a target/ci-features-core.log
ensure_targets thumbv6m-none-eabi thumbv7em-none-eabihf riscv32imc-unknown-none-elf
root=$(pwd)
for target in thumbv6m-none-eabi thumbv7em-none-eabihf riscv32imc-unknown-none-elf; do
  case "$target" in
    thumbv6m-*|riscv32imc-*) flags="--cfg portable_atomic_unsafe_assume_single_core" ;;
    *) flags="" ;;
  esac
  for feature in heapless jitter recovery; do
    RUSTFLAGS="$flags -D warnings" CARGO_TARGET_DIR="$root/target/embedded" \
      cargo build --release -p tripword --features "$feature" --target "$target"
  done
done
core_passed=$(grep -Eo '^test result: ok\. [0-9]+ passed' target/ci-features-core.log | awk '{s+=$4} END {print s+0}')
note "tripword with no feature and --features heapless / jitter / recovery: $core_passed tests, clippy clean, each built warning-free for thumbv6m, thumbv7em, riscv32imc"
