#!/usr/bin/env bash
# tripword-redis side by side with pybreaker's Redis storage: one
# redis-server on a free port, both measured against it in one run, on one
# machine, one thread each (the probe race: 8 threads over 2 instances).
# Prints a Markdown table with the ratios, medians over alternating rounds.
#
#   pip install pybreaker redis
#   benches/fleet-vs-pybreaker/run.sh
set -euo pipefail
cd "$(dirname "$0")/../.."
here=benches/fleet-vs-pybreaker
command -v redis-server >/dev/null || { echo "redis-server is not on PATH (apt-get install redis-server)" >&2; exit 2; }
python3 -c 'import pybreaker, redis' 2>/dev/null || { echo "pybreaker and redis are not importable (pip install pybreaker redis)" >&2; exit 2; }
cargo build --release -q -p tripword-redis --example side_by_side
port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
dir=$(mktemp -d)
redis-server --port "$port" --bind 127.0.0.1 --save '' --appendonly no --dir "$dir" >"$dir/log" 2>&1 &
server=$!
trap 'kill "$server" 2>/dev/null; wait "$server" 2>/dev/null; rm -rf "$dir"' EXIT
for _ in $(seq 200); do redis-cli -p "$port" ping >/dev/null 2>&1 && break; sleep 0.05; done
url="redis://127.0.0.1:$port/"
# Rounds alternate the two sides, so that a change in the machine's load
# falls on both; each ratio is the median of the rounds' ratios.
rounds=${ROUNDS:-5}
for r in $(seq "$rounds"); do
  target/release/examples/side_by_side --url "$url" >"$dir/tripword.$r"
  python3 "$here/pybreaker_side.py" --url "$url" >"$dir/pybreaker.$r"
done
versions="redis-server $(redis-server --version | grep -Eo 'v=[0-9.]+' | cut -c3-), $(python3 -c 'from importlib.metadata import version as v; print("pybreaker", v("pybreaker") + ", redis-py", v("redis"))')"
python3 - "$dir" "$rounds" "$versions" "$(nproc)" <<'PY'
import statistics
import sys
d, rounds = sys.argv[1], int(sys.argv[2])
def read(p):
    return {k: float(v) for k, v in (l.strip().split("=", 1) for l in open(p) if "=" in l)}
T = [read(f"{d}/tripword.{r}") for r in range(1, rounds + 1)]
P = [read(f"{d}/pybreaker.{r}") for r in range(1, rounds + 1)]
def med(runs, k):
    return statistics.median(x[k] for x in runs)
def rate(x):
    return f"{x / 1e6:.1f} M" if x >= 1e6 else f"{x / 1e3:.1f} k"
def times(r):
    return f"{r:,.0f}×" if r >= 10 else f"{r:.1f}×"
def ratios(num, den):
    rs = sorted(num[i] / den[i] for i in range(rounds))
    return times(statistics.median(rs)), f"{times(rs[0])} to {times(rs[-1])}"
def faster(k):
    return ratios([t[k] for t in T], [p[k] for p in P])
def fewer(k):
    return ratios([p[k] for p in P], [t[k] for t in T])
def commands(runs):
    scripts, all_ = med(runs, "failing_scripts_per_call"), med(runs, "failing_commands_per_call")
    if scripts == 0:
        return f"{all_:.0f}"
    return f"{scripts:.0f} script call ({all_ - scripts:.0f} commands inside it)"
probes = lambda runs: f'{med(runs, "probes_per_recovery"):.2f} (max {max(x["probes_max"] for x in runs):.0f})'
rows = [
    ("closed calls per second, one thread", rate(med(T, "closed_per_s")), rate(med(P, "closed_per_s")), *faster("closed_per_s")),
    ("Redis commands per closed call", f'{med(T, "closed_commands_per_call"):.0f}', f'{med(P, "closed_commands_per_call"):.0f}', "", ""),
    ("failing calls per second, one thread", rate(med(T, "failing_per_s")), rate(med(P, "failing_per_s")), *faster("failing_per_s")),
    ("round trips per failing call", f'{med(T, "failing_round_trips_per_call"):.2f}', f'{med(P, "failing_round_trips_per_call"):.2f}',
     *(f"{x} fewer" for x in fewer("failing_round_trips_per_call"))),
    ("Redis commands per failing call", commands(T), commands(P), "", ""),
    (f'probes per recovery, 8 racers over 2 instances (mean of {T[0]["probe_rounds"]:.0f} recoveries; max)', probes(T), probes(P),
     *(f"{x} fewer" for x in fewer("probes_per_recovery"))),
]
print(f"{sys.argv[3]}, {sys.argv[4]} CPUs, one run of {rounds} rounds (medians; the ratio is the median of the rounds' ratios)\n")
print("| | tripword-redis | pybreaker (CircuitRedisStorage) | ratio | rounds' range |")
print("|---|---:|---:|---:|---:|")
for r in rows:
    print("| " + " | ".join(r) + " |")
PY
