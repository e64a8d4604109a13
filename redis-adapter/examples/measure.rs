//! The figures of `docs/distributed-figures.md`, against a redis-server
//! this example starts on 127.0.0.1:
//!
//! 1. a closed call (acquire + release success) on `RedisBreaker` side by
//!    side with `tripword::Breaker`, in one run, as a ratio;
//! 2. the latency of a failure report (one compare-and-set), of the failure
//!    that trips (a `TIME` read and a compare-and-set), of a probe election
//!    (a load and a compare-and-set) and of the probe's result;
//! 3. the time from one instance's trip to every other instance rejecting,
//!    by pub/sub, and by the refresh alone (pub/sub off, refresh 100 ms).
//!
//! ```sh
//! cargo run --release -p tripword-redis --example measure            # full
//! cargo run --release -p tripword-redis --example measure -- --quick  # fewer samples
//! ```

use std::hint::black_box;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};
use tripword::{Breaker, Config, Outcome, Status};
use tripword_redis::server::RedisServer;
use tripword_redis::{LocalClock, Monotonic, RedisBreaker};

fn main() {
    let quick = std::env::args().any(|a| a == "--quick");
    let redis = RedisServer::start().expect("start redis-server (apt-get install redis-server)");
    println!(
        "redis-server {} on 127.0.0.1:{}, {} CPUs",
        version(),
        redis.port(),
        cpus()
    );
    closed_calls(&redis, quick);
    latencies(&redis, quick);
    propagation(&redis, quick, true);
    propagation(&redis, quick, false);
}

fn version() -> String {
    let out = std::process::Command::new(tripword_redis::server::binary())
        .arg("--version")
        .output()
        .map(|o| String::from_utf8_lossy(&o.stdout).into_owned())
        .unwrap_or_default();
    out.split_whitespace()
        .find_map(|w| w.strip_prefix("v="))
        .unwrap_or("?")
        .to_string()
}

fn cpus() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get())
}

fn builder(redis: &RedisServer, key: &str, config: Config) -> tripword_redis::Builder {
    RedisBreaker::builder(redis.url(), key)
        .config(config.check().unwrap())
        .op_timeout(Duration::from_secs(2))
}

fn median(v: &mut [f64]) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

fn pct(v: &mut [f64], p: f64) -> f64 {
    v.sort_by(f64::total_cmp);
    v[((v.len() - 1) as f64 * p).round() as usize]
}

fn closed_calls(redis: &RedisServer, quick: bool) {
    let config = Config::new().failure_threshold(5);
    fn now() -> u64 {
        Monotonic.micros()
    }
    let local = Breaker::new(config, now as fn() -> u64);
    let shared = builder(redis, "closed", config).build().unwrap();
    let iters = if quick { 200_000 } else { 5_000_000 };
    let rounds = if quick { 3 } else { 9 };
    let (mut l, mut s, mut ratio) = (Vec::new(), Vec::new(), Vec::new());
    for _ in 0..rounds {
        let t = Instant::now();
        for _ in 0..iters {
            let ticket = black_box(&local).acquire().unwrap();
            black_box(local.release(ticket, Outcome::Success));
        }
        let ln = t.elapsed().as_nanos() as f64 / iters as f64;
        let t = Instant::now();
        for _ in 0..iters {
            let ticket = black_box(&shared).acquire().unwrap();
            black_box(shared.release(ticket, Outcome::Success));
        }
        let sn = t.elapsed().as_nanos() as f64 / iters as f64;
        l.push(ln);
        s.push(sn);
        ratio.push(sn / ln);
    }
    let trips = shared.stats().call_round_trips;
    println!(
        "closed call (acquire + release success), median of {rounds} rounds of {iters}: \
         tripword::Breaker {:.2} ns, RedisBreaker {:.2} ns, ratio {:.2} (round trips to Redis: {trips})",
        median(&mut l),
        median(&mut s),
        median(&mut ratio)
    );
}

fn report(what: &str, us: &mut [f64]) {
    println!(
        "{what}: median {:.0} µs, p99 {:.0} µs, max {:.0} µs ({} samples)",
        median(us),
        pct(us, 0.99),
        pct(us, 1.0),
        us.len()
    );
}

fn latencies(redis: &RedisServer, quick: bool) {
    let n = if quick { 200 } else { 2_000 };
    // A failure below the threshold: one compare-and-set.
    let b = builder(redis, "failures", Config::new().failure_threshold(60_000))
        .build()
        .unwrap();
    let mut us = Vec::new();
    for i in 0..n {
        if i % 1_000 == 999 {
            let t = b.acquire().unwrap();
            b.release(t, Outcome::Success); // reset the run
        }
        let t = b.acquire().unwrap();
        let t0 = Instant::now();
        b.release(t, Outcome::Failure);
        us.push(t0.elapsed().as_secs_f64() * 1e6);
    }
    report("failure report (closed, below the threshold)", &mut us);

    // Trip, election, probe result: open for 1 µs.
    let b = builder(
        redis,
        "elections",
        Config::new()
            .failure_threshold(1)
            .open_for(1)
            .probe_timeout(60_000_000),
    )
    .build()
    .unwrap();
    let (mut trip, mut elect, mut result) = (Vec::new(), Vec::new(), Vec::new());
    for _ in 0..n {
        let t = b.acquire().unwrap();
        let t0 = Instant::now();
        b.release(t, Outcome::Failure);
        trip.push(t0.elapsed().as_secs_f64() * 1e6);
        let t0 = Instant::now();
        let probe = b.acquire().expect("elected");
        elect.push(t0.elapsed().as_secs_f64() * 1e6);
        assert!(probe.is_probe());
        let t0 = Instant::now();
        b.release(probe, Outcome::Success);
        result.push(t0.elapsed().as_secs_f64() * 1e6);
    }
    report("failure report that trips", &mut trip);
    report("probe election", &mut elect);
    report("probe result (success)", &mut result);
}

fn propagation(redis: &RedisServer, quick: bool, pubsub: bool) {
    let key = if pubsub { "spread" } else { "spread-refresh" };
    let config = Config::new().failure_threshold(1).open_for(60_000_000);
    let refresh = Duration::from_millis(100);
    let tripper = builder(redis, key, config).build().unwrap();
    let others: Vec<Arc<RedisBreaker>> = (0..3)
        .map(|_| {
            Arc::new(
                builder(redis, key, config)
                    .pubsub(pubsub)
                    .refresh(refresh)
                    .build()
                    .unwrap(),
            )
        })
        .collect();
    let rounds = match (quick, pubsub) {
        (true, true) => 20,
        (true, false) => 5,
        (false, true) => 200,
        (false, false) => 30,
    };
    let epoch = Instant::now();
    let mut worst = Vec::new();
    for _ in 0..rounds {
        tripper.force_close().unwrap();
        for b in &others {
            while b.status() != Status::Closed {
                std::thread::sleep(Duration::from_micros(50));
            }
        }
        // Each watcher thread records when its instance first rejects.
        let go = Arc::new(AtomicBool::new(false));
        let seen: Vec<Arc<AtomicU64>> =
            others.iter().map(|_| Arc::new(AtomicU64::new(0))).collect();
        let threads: Vec<_> = others
            .iter()
            .zip(&seen)
            .map(|(b, at)| {
                let (b, at, go) = (b.clone(), at.clone(), go.clone());
                std::thread::spawn(move || {
                    while !go.load(Ordering::Acquire) {
                        std::thread::yield_now();
                    }
                    loop {
                        match b.acquire() {
                            Ok(t) => {
                                b.release(t, Outcome::Ignored);
                            }
                            Err(_rejected) => {
                                at.store(epoch.elapsed().as_nanos() as u64, Ordering::Release);
                                return;
                            }
                        }
                        std::thread::yield_now();
                    }
                })
            })
            .collect();
        let t = tripper.acquire().unwrap();
        go.store(true, Ordering::Release);
        let t0 = epoch.elapsed().as_nanos() as u64;
        tripper.release(t, Outcome::Failure);
        for t in threads {
            t.join().unwrap();
        }
        let last = seen
            .iter()
            .map(|a| a.load(Ordering::Acquire))
            .max()
            .unwrap();
        worst.push(last.saturating_sub(t0) as f64 / 1e3);
    }
    let how = if pubsub {
        "pub/sub".to_string()
    } else {
        format!("refresh every {refresh:?}, no pub/sub")
    };
    report(
        &format!("trip to every one of 3 other instances rejecting ({how})"),
        &mut worst,
    );
}
