#!/usr/bin/env bash
# Toolchain pieces every later stage needs.
set -euo pipefail
source .ci/lib.sh
rm -rf target/ci-notes
rustup component add rustfmt clippy
ensure_targets thumbv6m-none-eabi thumbv7em-none-eabihf riscv32imc-unknown-none-elf thumbv7m-none-eabi
# redis-server for tripword-redis's tests (stage 30 runs them with the
# README's test command; with TRIPWORD_REDIS_REQUIRE, set in .ci/lib.sh, a
# missing binary fails them; without it they would be reported ignored),
# redis-cli for the cluster test's `--cluster create`, the openssl command
# for the TLS tests' certificates (made at test time), and valgrind for the
# closed path's no-store test and the per-call instruction counts.
if ! command -v redis-server >/dev/null 2>&1 || ! command -v redis-cli >/dev/null 2>&1 \
  || ! command -v openssl >/dev/null 2>&1 || ! command -v valgrind >/dev/null 2>&1; then
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq redis-server redis-tools openssl valgrind >/dev/null
fi
note "$(rustc --version); $(redis-server --version | grep -Eo 'v=[0-9.]+' || true)"
