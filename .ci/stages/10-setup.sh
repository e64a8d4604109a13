#!/usr/bin/env bash
# Toolchain pieces every later stage needs.
set -euo pipefail
source .ci/lib.sh
rm -rf target/ci-notes
rustup component add rustfmt clippy
ensure_targets thumbv6m-none-eabi thumbv7em-none-eabihf riscv32imc-unknown-none-elf thumbv7m-none-eabi
note "$(rustc --version)"
