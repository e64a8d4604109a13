#!/usr/bin/env bash
# The full contention sweep for a 16-core machine, in one command:
#
#   bash lab/sweep-16.sh              # from the repository root
#   bash lab/sweep-16.sh --repeats 5  # any lab option is passed on
#
# Builds the lab in release mode, then runs the built-in implementations
# (12: the registry one needs a workload with keys) on every scheduler (5) with 1, 2, 4, 8, 12 and 16 workers, for the
# three built-in workloads and a flaky one (5% failures in bursts of 16, 1%
# slow calls of 20 µs): 44 implementation × workload pairs × 6 worker
# counts × 5 schedulers = 1320 cells, each 300 ms after a 60 ms warm-up,
# 3 repeats: 1320 × 3 × 0.36 s ≈ 24 minutes of cells, about 25 minutes in
# all on an idle machine (plus the build, a few minutes). Run nothing else
# meanwhile. The results go to target/lab/sweep16-<host>-<time>/ (never
# overwritten): report.html to read, results.json to compare against
# another run (`tripword-lab compare A/results.json B/results.json`).
set -euo pipefail
cd "$(dirname "$0")/.."
cpus=$(nproc)
if [ "$cpus" -lt 16 ]; then
  echo "note: $cpus CPUs here; the 12- and 16-worker cells will measure the OS scheduler as much as the breakers" >&2
fi
cargo build --release -p tripword-lab
exec target/release/tripword-lab \
  --workers 1,2,4,8,12,16 \
  --workload closed --workload failure_storm --workload half_open_storm \
  --workload 'flaky:fail=0.05,burst=16,slow=0.01,slow_us=20' \
  --name "sweep16-$(hostname)-$(date -u +%Y%m%d-%H%M%S)" \
  "$@"
