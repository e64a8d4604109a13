#!/usr/bin/env bash
# tripword-redis side by side with pybreaker's Redis storage: one
# redis-server on a free port, both measured against it in one run, on one
# machine, one thread each (the probe race: 8 threads over 2 instances).
# Prints a Markdown table whose last column is the ratio.
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
target/release/examples/side_by_side --url "$url" >"$dir/tripword"
python3 "$here/pybreaker_side.py" --url "$url" >"$dir/pybreaker"
versions="redis-server $(redis-server --version | grep -Eo 'v=[0-9.]+' | cut -c3-), $(python3 -c 'import pybreaker, redis; print(f"pybreaker {pybreaker.__version__}, redis-py {redis.__version__}")')"
python3 - "$dir/tripword" "$dir/pybreaker" "$versions" "$(nproc)" <<'PY'
import sys
def read(p):
    return dict(l.strip().split("=", 1) for l in open(p) if "=" in l)
t, p = read(sys.argv[1]), read(sys.argv[2])
def num(d, k):
    return float(d[k])
def rate(x):
    return f"{x / 1e6:.1f} M" if x >= 1e6 else f"{x / 1e3:.1f} k"
def commands(d):
    scripts, all_ = num(d, "failing_scripts_per_call"), num(d, "failing_commands_per_call")
    if scripts == 0:
        return f"{all_:.0f}"
    return f"{scripts:.0f} script call ({all_ - scripts:.0f} commands inside it)"
def ratio(a, b):
    if b == 0:
        return "n/a"
    r = a / b
    return f"{r:,.0f}×" if r >= 10 else f"{r:.1f}×"
rows = [
    ("closed calls per second, one thread", rate(num(t, "closed_per_s")), rate(num(p, "closed_per_s")),
     ratio(num(t, "closed_per_s"), num(p, "closed_per_s"))),
    ("Redis commands per closed call", f'{num(t, "closed_commands_per_call"):.0f}', f'{num(p, "closed_commands_per_call"):.0f}',
     f'{num(t, "closed_commands_per_call"):.0f} against {num(p, "closed_commands_per_call"):.0f}'),
    ("failing calls per second, one thread", rate(num(t, "failing_per_s")), rate(num(p, "failing_per_s")),
     ratio(num(t, "failing_per_s"), num(p, "failing_per_s"))),
    ("round trips per failing call", t["failing_round_trips_per_call"], p["failing_round_trips_per_call"],
     ratio(num(p, "failing_round_trips_per_call"), num(t, "failing_round_trips_per_call")) + " fewer"),
    ("Redis commands per failing call", commands(t), commands(p), ""),
    (f'probes per recovery, 8 racers over 2 instances (mean of {t["probe_rounds"]}; max)',
     f'{t["probes_per_recovery"]} (max {t["probes_max"]})', f'{p["probes_per_recovery"]} (max {p["probes_max"]})',
     ratio(num(p, "probes_per_recovery"), num(t, "probes_per_recovery")) + " fewer"),
]
print(f"{sys.argv[3]}, {sys.argv[4]} CPUs, one run\n")
print("| | tripword-redis | pybreaker (CircuitRedisStorage) | ratio |")
print("|---|---:|---:|---:|")
for r in rows:
    print("| " + " | ".join(r) + " |")
PY
