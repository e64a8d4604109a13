//! The figures of a fleet with a quorum (`Builder::quorum`), against a
//! redis-server this example starts on 127.0.0.1:
//!
//! 1. a closed call (acquire + release success) on a breaker with a quorum
//!    of 2 side by side with one without, in one run, as a ratio (and a
//!    second one without, whose ratio to the first is the noise);
//! 2. the latency of a failure below the instance's own threshold (no
//!    round trip), of a vote (the failure that opens the instance's own
//!    breaker: one round trip), of the vote that reaches the quorum and
//!    trips the fleet (two), and of the withdrawal of a vote (one);
//! 3. the time from the trip to a third instance rejecting, by pub/sub.
//!
//! ```sh
//! cargo run --release -p tripword-redis --example quorum            # full
//! cargo run --release -p tripword-redis --example quorum -- --quick  # fewer samples
//! ```

use std::hint::black_box;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};
use tripword::{Config, Outcome};
use tripword_redis::server::RedisServer;
use tripword_redis::{LocalClock, RedisBreaker};

/// An instance clock moved by hand: each instance's own open time ends
/// when the measurement says so.
#[derive(Clone)]
struct Manual(Arc<AtomicU64>);

impl LocalClock for Manual {
    fn micros(&self) -> u64 {
        self.0.load(Ordering::SeqCst)
    }
}

fn main() {
    let quick = std::env::args().any(|a| a == "--quick");
    let redis = RedisServer::start().expect("start redis-server (apt-get install redis-server)");
    println!(
        "redis-server on 127.0.0.1:{}, {} CPUs",
        redis.port(),
        std::thread::available_parallelism().map_or(1, |n| n.get())
    );
    closed_calls(&redis, quick);
    votes(&redis, quick);
}

fn builder(redis: &RedisServer, key: &str, threshold: u32) -> tripword_redis::Builder {
    let config = Config::new()
        .failure_threshold(threshold)
        .open_for(1_000_000)
        .probe_timeout(5_000_000);
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
    // Two breakers without a quorum (the second is the control: its ratio
    // to the first is the noise of the measurement) and one with.
    let plain = builder(redis, "closed-plain", 5).build().unwrap();
    let control = builder(redis, "closed-control", 5).build().unwrap();
    let quorum = builder(redis, "closed-quorum", 5)
        .quorum(2)
        .build()
        .unwrap();
    let iters = if quick { 200_000 } else { 5_000_000 };
    let rounds = if quick { 3 } else { 9 };
    let run = |b: &RedisBreaker| {
        let start = Instant::now();
        for _ in 0..iters {
            let t = black_box(b).acquire().unwrap();
            black_box(b.release(t, Outcome::Success));
        }
        start.elapsed().as_nanos() as f64 / iters as f64
    };
    let all = [&plain, &control, &quorum];
    let mut ns = [Vec::new(), Vec::new(), Vec::new()];
    let (mut noise, mut ratio) = (Vec::new(), Vec::new());
    for round in 0..rounds {
        // Each goes first in turn.
        let mut took = [0.0; 3];
        for k in 0..3 {
            let i = (round + k) % 3;
            took[i] = run(all[i]);
        }
        for i in 0..3 {
            ns[i].push(took[i]);
        }
        noise.push(took[1] / took[0]);
        ratio.push(took[2] / took[0]);
    }
    let trips: u64 = all.iter().map(|b| b.stats().call_round_trips).sum();
    println!(
        "closed call: quorum(1) {:.2} ns, control {:.2} ns, quorum(2) {:.2} ns; ratio control {:.2}, quorum(2) {:.2} (medians of {rounds} rounds of {iters}); round trips {trips}",
        median(&mut ns[0]),
        median(&mut ns[1]),
        median(&mut ns[2]),
        median(&mut noise),
        median(&mut ratio)
    );
}

fn votes(redis: &RedisServer, quick: bool) {
    let rounds = if quick { 30 } else { 200 };
    let clock = Manual(Arc::new(AtomicU64::new(1)));
    let make = |threshold| {
        builder(redis, "votes", threshold)
            .quorum(2)
            .local_clock(clock.clone())
            .build()
            .unwrap()
    };
    // Threshold 2: the first failure is counted locally, the second votes.
    let (a, b, c) = (make(2), make(2), make(2));
    let (mut below, mut vote, mut trip, mut withdraw, mut reach) =
        (Vec::new(), Vec::new(), Vec::new(), Vec::new(), Vec::new());
    let fail = |x: &RedisBreaker, into: &mut Vec<f64>| {
        let t = x.acquire().expect("closed");
        let start = Instant::now();
        x.release(t, Outcome::Failure);
        into.push(start.elapsed().as_secs_f64() * 1e6);
    };
    for _ in 0..rounds {
        fail(&a, &mut below);
        fail(&a, &mut vote);
        fail(&b, &mut below);
        let start = Instant::now();
        fail(&b, &mut trip);
        while c.acquire().map(|t| c.release(t, Outcome::Ignored)).is_ok() {
            std::hint::spin_loop();
        }
        reach.push(start.elapsed().as_secs_f64() * 1e6);
        // Back to closed: the operator's close drops the votes, and each
        // instance's own probe (its open time passed on its clock) closes
        // its own breaker.
        a.force_close().unwrap();
        // Every mirror reads the close before the next round.
        for x in [&a, &b, &c] {
            x.sync().unwrap();
        }
        clock.0.fetch_add(2_000_000, Ordering::SeqCst);
        for x in [&a, &b] {
            let t = x.acquire().expect("its own probe");
            let start = Instant::now();
            x.release(t, Outcome::Success);
            withdraw.push(start.elapsed().as_secs_f64() * 1e6);
        }
        while c.acquire().map(|t| c.release(t, Outcome::Ignored)).is_err() {
            std::thread::sleep(Duration::from_micros(50));
        }
    }
    for (name, v) in [
        (
            "failure below the own threshold (0 round trips)",
            &mut below,
        ),
        ("vote (1)", &mut vote),
        ("vote that reaches the quorum and trips (2)", &mut trip),
        ("withdrawal, own probe's success (1)", &mut withdraw),
        (
            "quorum trip to a third instance rejecting, pub/sub",
            &mut reach,
        ),
    ] {
        println!(
            "{name}: median {:.1} us, p99 {:.1} us ({} samples)",
            median(v),
            pct(v, 0.99),
            v.len()
        );
    }
}
