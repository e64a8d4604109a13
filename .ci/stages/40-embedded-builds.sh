#!/usr/bin/env bash
# The core for the three embedded targets, at both word widths: the library
# alone (no warnings, clippy clean), then verification/widths-check, whose non-generic functions make the
# compiler generate the W32 and W64 breakers' machine code for each target.
# Targets without CAS get the backend a firmware binary would pick (the
# library never picks it), through portable-atomic's cfg.
set -euo pipefail
source .ci/lib.sh
ensure_targets thumbv6m-none-eabi thumbv7em-none-eabihf riscv32imc-unknown-none-elf
root=$(pwd)
for target in thumbv6m-none-eabi thumbv7em-none-eabihf riscv32imc-unknown-none-elf; do
  case "$target" in
    thumbv6m-*|riscv32imc-*) flags="--cfg portable_atomic_unsafe_assume_single_core" ;;
    *) flags="" ;;
  esac
  # Warnings are errors here too: code that only the 64-bit targets use
  # must be gated, not left dead on the MCUs.
  RUSTFLAGS="$flags -D warnings" CARGO_TARGET_DIR="$root/target/embedded" \
    cargo build --release -p tripword --target "$target"
  # The clock adapters (features embassy-time, fugit) build for each target
  # too, with no embassy time driver and no tick rate picked by the library.
  RUSTFLAGS="$flags -D warnings" CARGO_TARGET_DIR="$root/target/embedded" \
    cargo build --release -p tripword --features embassy-time,fugit --target "$target"
  RUSTFLAGS="$flags" CARGO_TARGET_DIR="$root/target/embedded-clippy" \
    cargo clippy --release -p tripword --target "$target" -- -D warnings
  # The recovery states (feature recovery: several probes, the ramp), built
  # warning-free and clippy-clean for each target too.
  RUSTFLAGS="$flags -D warnings" CARGO_TARGET_DIR="$root/target/embedded" \
    cargo build --release -p tripword --features recovery --target "$target"
  RUSTFLAGS="$flags" CARGO_TARGET_DIR="$root/target/embedded-clippy" \
    cargo clippy --release -p tripword --features recovery --target "$target" -- -D warnings
  (cd verification/widths-check && RUSTFLAGS="$flags" CARGO_TARGET_DIR="$root/target/embedded" \
    cargo build --release --target "$target")
  (cd verification/widths-check && RUSTFLAGS="$flags" CARGO_TARGET_DIR="$root/target/embedded" \
    cargo build --release --target "$target" --features tripword/recovery)
done
# The clock adapters' doctests and host tests (embassy-time's mock driver is
# a dev-dependency), and clippy with the features on the host.
cargo test -p tripword --features embassy-time,fugit 2>&1 | tee target/ci-clock-features.log
cargo clippy -p tripword --all-targets --features embassy-time,fugit -- -D warnings
features=$(grep -Eo '^test result: ok\. [0-9]+ passed' target/ci-clock-features.log | awk '{s+=$4} END {print s+0}')
note "tripword (W32 + W64 instantiated) built, warning-free and clippy-clean, with feature recovery built warning-free and clippy-clean (and instantiated), and with features embassy-time,fugit built warning-free, for thumbv6m, thumbv7em, riscv32imc; $features tests with the clock features on the host"
