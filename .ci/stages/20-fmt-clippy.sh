#!/usr/bin/env bash
set -euo pipefail
source .ci/lib.sh
cargo fmt --all -- --check
cargo clippy --workspace --all-targets -- -D warnings
note "fmt clean, clippy -D warnings clean"
