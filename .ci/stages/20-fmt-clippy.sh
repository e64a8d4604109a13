#!/usr/bin/env bash
set -euo pipefail
source .ci/lib.sh
cargo fmt --all -- --check
cargo clippy --workspace --all-targets -- -D warnings
note "fmt clean, clippy -D warnings clean"
# Import circles between the files of each crate (docs/design.md, "Map of
# the core"; docs/design-kit.md, "Map of tripword-std";
# docs/distributed-proofs.md, "Map of tripword-redis"): no crate has one,
# and each must keep it so.
python3 -B -m unittest discover -s verification -p 'test_import_graph.py' 2>&1 | tail -n 1
python3 -B verification/import_graph.py --deny core,std-adapter,redis-adapter --summary | tee target/import-graph.txt
note "$(tail -n 1 target/import-graph.txt)"
# Every invariant of docs/spec.md and of the fleet model has a row in
# docs/requirements.md whose cited tests exist, with three techniques or a
# known gap (the check's own tests first).
python3 -B -m unittest discover -s verification -p 'test_requirements_check.py' 2>&1 | tail -n 1
python3 -B verification/requirements_check.py | tee target/requirements.txt
note "$(tail -n 1 target/requirements.txt)"
