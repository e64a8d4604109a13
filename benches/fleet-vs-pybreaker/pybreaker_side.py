"""pybreaker's half of run.sh: its Redis storage (CircuitRedisStorage), the
same four measurements as redis-adapter/examples/side_by_side.rs, against
the same redis-server, one thread each unless said otherwise. Prints
key=value lines."""

import sys
import threading
import time

import pybreaker
import redis

WINDOW = 2.0
ROUNDS = 10


def url_arg():
    args = sys.argv[1:]
    return args[args.index("--url") + 1] if "--url" in args else "redis://127.0.0.1:6379/"


def breaker(url, name, fail_max, reset_timeout=60):
    # decode_responses off: pybreaker's storage reads bytes.
    con = redis.Redis.from_url(url)
    storage = pybreaker.CircuitRedisStorage(pybreaker.STATE_CLOSED, con, namespace=name)
    return pybreaker.CircuitBreaker(fail_max=fail_max, reset_timeout=reset_timeout, state_storage=storage)


def commandstats(con):
    stats = con.info("commandstats")
    return {k[len("cmdstat_"):]: v["calls"] for k, v in stats.items() if k.startswith("cmdstat_")}


def delta(before, after):
    return sum(after[k] - before.get(k, 0) for k in after if k != "info")


def ok():
    return 1


class Down(Exception):
    pass


def down():
    raise Down()


def closed(url, con):
    b = breaker(url, "sbs:closed", 5)
    before = commandstats(con)
    t = time.perf_counter()
    calls = 0
    while time.perf_counter() - t < WINDOW:
        b.call(ok)
        calls += 1
    per_s = calls / (time.perf_counter() - t)
    commands = delta(before, commandstats(con))
    print(f"closed_per_s={per_s:.0f}")
    print(f"closed_commands_per_call={commands / calls:.6f}")
    # No scripts: every command is its own round trip.
    print(f"closed_round_trips={commands}")


def failing(url, con):
    # Out of reach in the window: every failure is counted, none trips.
    b = breaker(url, "sbs:failing", 10**9)
    before = commandstats(con)
    t = time.perf_counter()
    calls = 0
    while time.perf_counter() - t < WINDOW:
        try:
            b.call(down)
        except Down:
            pass
        calls += 1
    per_s = calls / (time.perf_counter() - t)
    assert b.current_state == pybreaker.STATE_CLOSED
    n = delta(before, commandstats(con)) / calls
    print(f"failing_per_s={per_s:.0f}")
    # No scripts: every command is its own round trip.
    print(f"failing_round_trips_per_call={n:.2f}")
    print("failing_scripts_per_call=0.00")
    print(f"failing_commands_per_call={n:.2f}")


def probes(url):
    instances = [breaker(url, "sbs:probes", 1, reset_timeout=0.3) for _ in range(2)]
    counts = []
    for _ in range(ROUNDS):
        instances[0].close()
        try:
            instances[0].call(down)  # trips the fleet
        except (Down, pybreaker.CircuitBreakerError):
            pass
        tripped = time.perf_counter()
        while any(b.current_state == pybreaker.STATE_CLOSED for b in instances):
            time.sleep(0.001)
        time.sleep(max(0.0, 0.35 - (time.perf_counter() - tripped)))
        go = threading.Barrier(8)
        state = {"done": False, "entered": 0}
        lock = threading.Lock()

        def recovering():
            with lock:
                if not state["done"]:
                    state["entered"] += 1
            # The recovering dependency answers in 20 ms.
            time.sleep(0.02)
            state["done"] = True
            return 1

        def racer(b):
            go.wait()
            try:
                b.call(recovering)
            except pybreaker.CircuitBreakerError:
                pass

        racers = [threading.Thread(target=racer, args=(instances[i % 2],)) for i in range(8)]
        for r in racers:
            r.start()
        for r in racers:
            r.join()
        counts.append(state["entered"])
    print(f"probes_per_recovery={sum(counts) / len(counts):.2f}")
    print(f"probes_max={max(counts)}")
    print(f"probe_rounds={ROUNDS}")


def main():
    url = url_arg()
    con = redis.Redis.from_url(url)
    closed(url, con)
    failing(url, con)
    probes(url)


if __name__ == "__main__":
    main()
