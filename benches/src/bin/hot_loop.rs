//! The hot loops of `tripword_benches::hot_loop`, timed in interleaved
//! bursts so that a busy machine slows every loop alike:
//!
//! ```text
//! cargo run --profile bench -p tripword-benches --bin hot-loop -- [ROUNDS] [CALLS]
//! ```
//!
//! Each round times every loop once, `CALLS` iterations each (default
//! 2 000 000, a millisecond or so), in the same order; `ROUNDS` rounds
//! (default 301). For each loop it prints the median over the rounds of its
//! time divided by the baseline's time in the same round (with the
//! quartiles), and the ratio of the fastest rounds. A round where another
//! process took the core shows as an outlier in one ratio, not as a shift
//! of the whole column: the median ratio is the figure to quote.

use std::hint::black_box;
use std::sync::atomic::AtomicU64;
use std::time::Instant;

use tripword_benches::hot_loop;

type Loop = Box<dyn Fn(u64) -> u64>;

fn main() {
    let mut args = std::env::args().skip(1).filter(|a| a != "--bench");
    let rounds: usize = args.next().and_then(|a| a.parse().ok()).unwrap_or(301);
    let calls: u64 = args
        .next()
        .and_then(|a| a.parse().ok())
        .unwrap_or(2_000_000);
    let word: &'static AtomicU64 = Box::leak(Box::new(AtomicU64::new(0)));
    let b64: &'static hot_loop::Hot64 = Box::leak(Box::new(hot_loop::hot64()));
    let b32: &'static hot_loop::Hot32 = Box::leak(Box::new(hot_loop::hot32()));
    let hand: &'static hot_loop::HotByHand = Box::leak(Box::new(hot_loop::hot_by_hand()));
    let loops: Vec<(&str, Loop)> = vec![
        (
            "atomic_load_pair",
            Box::new(|n| hot_loop::load_pair(black_box(word), n)),
        ),
        (
            "atomic_load_pair/black_box",
            Box::new(|n| hot_loop::load_pair_black_box(black_box(word), n)),
        ),
        (
            "tripword_w64",
            Box::new(|n| hot_loop::tripword_w64(black_box(b64), n)),
        ),
        (
            "tripword_w64/permit_guard",
            Box::new(|n| hot_loop::tripword_w64_permit(black_box(b64), n)),
        ),
        (
            "tripword_w64/opaque",
            Box::new(|n| hot_loop::tripword_w64_opaque(black_box(b64), n)),
        ),
        (
            "tripword_w32",
            Box::new(|n| hot_loop::tripword_w32(black_box(b32), n)),
        ),
        (
            "by_hand_two_atomics",
            Box::new(|n| hot_loop::by_hand(black_box(hand), n)),
        ),
    ];
    let mut times = vec![Vec::with_capacity(rounds); loops.len()];
    for _ in 0..rounds {
        for (i, (name, run)) in loops.iter().enumerate() {
            let t0 = Instant::now();
            let admitted = run(calls);
            let elapsed = t0.elapsed().as_secs_f64();
            assert_eq!(admitted, calls, "{name}: every call is admitted");
            times[i].push(elapsed);
        }
    }
    let quantile = |v: &mut Vec<f64>, q: f64| {
        v.sort_by(f64::total_cmp);
        v[((v.len() - 1) as f64 * q).round() as usize]
    };
    let base = times[0].clone();
    let base_min = base.iter().copied().fold(f64::MAX, f64::min);
    println!(
        "{rounds} rounds × {calls} calls; load average {}",
        std::fs::read_to_string("/proc/loadavg")
            .unwrap_or_default()
            .trim()
    );
    println!(
        "| loop | ns per call (median) | ÷ atomic_load_pair, median of rounds [quartiles] | fastest ÷ fastest |"
    );
    println!("|---|---:|---:|---:|");
    for (i, (name, _)) in loops.iter().enumerate() {
        let mut ratios: Vec<f64> = times[i].iter().zip(&base).map(|(t, b)| t / b).collect();
        let mut ns: Vec<f64> = times[i].iter().map(|t| t / calls as f64 * 1e9).collect();
        let min = times[i].iter().copied().fold(f64::MAX, f64::min);
        println!(
            "| {name} | {:.3} | {:.2}× [{:.2}–{:.2}] | {:.2}× |",
            quantile(&mut ns, 0.5),
            quantile(&mut ratios, 0.5),
            quantile(&mut ratios, 0.25),
            quantile(&mut ratios, 0.75),
            min / base_min
        );
    }
}
