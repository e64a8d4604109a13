//! tripword-redis's half of `benches/fleet-vs-pybreaker/run.sh`: the same
//! four measurements as its Python half, against a redis-server the script
//! started (`--url`), one thread each unless said otherwise:
//!
//! 1. closed calls per second on one instance (`call(|| Ok)`), and the
//!    Redis commands per call (`INFO commandstats` deltas);
//! 2. failing calls per second (every failure reported, the threshold out
//!    of reach), with the round trips and commands per call;
//! 3. probes per recovery: 8 racers over 2 instances each make one call
//!    once the open time has passed; a probe is a call that reaches the
//!    recovering dependency before the first one to succeed has returned.
//!
//! Prints `key=value` lines for the script's table.
//!
//! ```sh
//! cargo run --release -p tripword-redis --example side_by_side -- --url redis://127.0.0.1:6379/
//! ```

use std::collections::HashMap;
use std::hint::black_box;
use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use std::sync::{Arc, Barrier};
use std::time::{Duration, Instant};
use tripword::Status;
use tripword_redis::RedisBreaker;
use tripword_std::{BreakerExt, Settings};

const WINDOW: Duration = Duration::from_secs(2);
const ROUNDS: u32 = 10;

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let url = args
        .iter()
        .position(|a| a == "--url")
        .map(|i| args[i + 1].clone())
        .unwrap_or_else(|| "redis://127.0.0.1:6379/".into());
    let mut con = redis::Client::open(url.as_str())
        .and_then(|c| c.get_connection())
        .expect("connect to the script's redis-server");
    closed(&url, &mut con);
    failing(&url, &mut con);
    probes(&url);
}

/// Calls per command name, from `INFO commandstats`.
fn commandstats(con: &mut redis::Connection) -> HashMap<String, u64> {
    let info: String = redis::cmd("INFO")
        .arg("commandstats")
        .query(con)
        .expect("INFO");
    info.lines()
        .filter_map(|l| {
            let (name, rest) = l.strip_prefix("cmdstat_")?.split_once(':')?;
            let calls = rest.split(',').find_map(|f| f.strip_prefix("calls="))?;
            Some((name.to_owned(), calls.parse().ok()?))
        })
        .collect()
}

/// Commands in all and script calls between two snapshots, `INFO` itself
/// left out.
fn delta(before: &HashMap<String, u64>, after: &HashMap<String, u64>) -> (u64, u64) {
    let d = |k: &str| after.get(k).unwrap_or(&0) - before.get(k).unwrap_or(&0);
    let all: u64 = after.keys().filter(|k| *k != "info").map(|k| d(k)).sum();
    let scripts = ["evalsha", "eval", "evalsha_ro", "eval_ro"]
        .iter()
        .map(|k| d(k))
        .sum();
    (all, scripts)
}

fn breaker(url: &str, key: &str, settings: &Settings) -> RedisBreaker {
    RedisBreaker::builder(url, key)
        .settings(settings)
        .op_timeout(Duration::from_secs(2))
        .build()
        .expect("build")
}

fn closed(url: &str, con: &mut redis::Connection) {
    let b = breaker(url, "sbs:closed", &Settings::new().failure_threshold(5));
    let before = commandstats(con);
    let t = Instant::now();
    let mut calls = 0u64;
    while t.elapsed() < WINDOW {
        for _ in 0..4096 {
            let _ = black_box(black_box(&b).call(|| Ok::<_, ()>(black_box(1))));
        }
        calls += 4096;
    }
    let per_s = calls as f64 / t.elapsed().as_secs_f64();
    let (all, _) = delta(&before, &commandstats(con));
    println!("closed_per_s={per_s:.0}");
    println!("closed_commands_per_call={:.6}", all as f64 / calls as f64);
    println!("closed_round_trips={}", b.stats().call_round_trips);
}

fn failing(url: &str, con: &mut redis::Connection) {
    // Out of reach in the window: every failure is reported, none trips.
    let b = breaker(
        url,
        "sbs:failing",
        &Settings::new().failure_threshold(60_000),
    );
    b.force_close().expect("a fresh failure run"); // an earlier round's
    let trips0 = b.stats().call_round_trips;
    let before = commandstats(con);
    let t = Instant::now();
    let mut calls = 0u64;
    while t.elapsed() < WINDOW && calls < 50_000 {
        let _ = black_box(b.call(|| Err::<(), _>("down")));
        calls += 1;
    }
    let per_s = calls as f64 / t.elapsed().as_secs_f64();
    let (all, scripts) = delta(&before, &commandstats(con));
    assert_eq!(
        b.status(),
        Status::Closed,
        "the threshold stayed out of reach"
    );
    println!("failing_per_s={per_s:.0}");
    println!(
        "failing_round_trips_per_call={:.2}",
        (b.stats().call_round_trips - trips0) as f64 / calls as f64
    );
    println!(
        "failing_scripts_per_call={:.2}",
        scripts as f64 / calls as f64
    );
    println!("failing_commands_per_call={:.2}", all as f64 / calls as f64);
}

fn probes(url: &str) {
    let settings = Settings::new()
        .failure_threshold(1)
        .open_for(Duration::from_millis(300))
        .probe_timeout(Duration::from_secs(5));
    let instances: Vec<Arc<RedisBreaker>> = (0..2)
        .map(|_| Arc::new(breaker(url, "sbs:probes", &settings)))
        .collect();
    let mut counts = Vec::new();
    for _ in 0..ROUNDS {
        instances[0].force_close().expect("close");
        let _ = instances[0].call(|| Err::<(), _>("down")); // trips the fleet
        let tripped = Instant::now();
        while instances.iter().any(|b| b.status() == Status::Closed) {
            std::thread::sleep(Duration::from_millis(1));
        }
        std::thread::sleep(Duration::from_millis(350).saturating_sub(tripped.elapsed()));
        let go = Arc::new(Barrier::new(8));
        let done = Arc::new(AtomicBool::new(false));
        let entered = Arc::new(AtomicU32::new(0));
        let racers: Vec<_> = (0..8)
            .map(|i| {
                let b = instances[i % 2].clone();
                let (go, done, entered) = (go.clone(), done.clone(), entered.clone());
                std::thread::spawn(move || {
                    go.wait();
                    let _ = b.call(|| {
                        if !done.load(Ordering::SeqCst) {
                            entered.fetch_add(1, Ordering::SeqCst);
                        }
                        // The recovering dependency answers in 20 ms.
                        std::thread::sleep(Duration::from_millis(20));
                        done.store(true, Ordering::SeqCst);
                        Ok::<_, ()>(())
                    });
                })
            })
            .collect();
        for r in racers {
            r.join().unwrap();
        }
        counts.push(entered.load(Ordering::SeqCst));
    }
    let mean = counts.iter().sum::<u32>() as f64 / counts.len() as f64;
    println!("probes_per_recovery={mean:.2}");
    println!("probes_max={}", counts.iter().max().unwrap());
    println!("probe_rounds={ROUNDS}");
}
