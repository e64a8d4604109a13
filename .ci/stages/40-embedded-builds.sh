#!/usr/bin/env bash
# The core for the three embedded targets. Targets without CAS get the
# backend a firmware binary would pick (the library never picks it), via
# portable-atomic's cfg, in a separate target dir so RUSTFLAGS do not
# invalidate the host build.
set -euo pipefail
source .ci/lib.sh
for target in thumbv6m-none-eabi thumbv7em-none-eabihf riscv32imc-unknown-none-elf; do
  case "$target" in
    thumbv6m-*|riscv32imc-*) flags="--cfg portable_atomic_unsafe_assume_single_core" ;;
    *) flags="" ;;
  esac
  RUSTFLAGS="$flags" CARGO_TARGET_DIR=target/embedded cargo build --release -p tripword --target "$target"
done
note "tripword built for thumbv6m, thumbv7em, riscv32imc"
