//! Makes `CALLS` calls of one implementation in one scenario on one thread,
//! for a hardware-counter measurement that does not depend on how busy the
//! machine is:
//!
//! ```text
//! perf stat -e instructions,cycles target/release/per-call tripword_w64 closed 10000000
//! perf stat -e instructions,cycles target/release/per-call tripword_w64 closed 0
//! ```
//!
//! The difference of the two counts divided by `CALLS` is the cost of one
//! call in instructions (exact, load-independent) and cycles (what the core
//! spent, not counting time the thread was descheduled).
//! `benches/per-call.sh` runs it for every implementation.
//!
//! The `loop_*` implementations (closed scenario only) are the hot loops of
//! `tripword_benches::hot_loop`: the call inlined into one loop, with no
//! harness around it.

use std::sync::Arc;
use std::sync::atomic::AtomicU64;

use tripword::{W32, W64};
use tripword_benches::hot_loop;
use tripword_benches::subjects::{
    AtomicPair, ByHand, Failsafe, MutexBaseline, Recloser, Seatbelt, Subject, TowerResilience,
    Tripword, TripwordCall, TripwordCallAsync, TripwordTower, run_calls,
};
use tripword_lab::Workload;

// Out of line, so that one implementation's loop is compiled the same whatever
// else `main` holds.
#[inline(never)]
fn go<S: Subject>(scenario: &Workload, calls: u64) -> Option<u64> {
    let subject = Arc::new(S::build(scenario)?);
    let mut worker = subject.worker();
    Some(run_calls(&mut worker, &scenario.plan(0), 0, calls))
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let (Some(name), Some(scenario), Some(calls)) = (args.first(), args.get(1), args.get(2)) else {
        eprintln!("usage: per-call IMPLEMENTATION SCENARIO CALLS");
        std::process::exit(2);
    };
    let Some(scenario) = Workload::builtin()
        .into_iter()
        .find(|s| s.name == *scenario)
    else {
        eprintln!("unknown scenario {scenario}");
        std::process::exit(2);
    };
    let calls: u64 = calls.parse().unwrap_or(0);
    let closed = scenario.name == "closed";
    let hot = |run: fn(u64) -> u64| closed.then(|| run(calls));
    let admitted = match name.as_str() {
        "loop_atomic_load_pair" => hot(|n| hot_loop::load_pair(&AtomicU64::new(0), n)),
        "loop_atomic_load_pair_black_box" => {
            hot(|n| hot_loop::load_pair_black_box(&AtomicU64::new(0), n))
        }
        "loop_tripword_w64" => hot(|n| hot_loop::tripword_w64(&hot_loop::hot64(), n)),
        "loop_tripword_w64_permit" => hot(|n| hot_loop::tripword_w64_permit(&hot_loop::hot64(), n)),
        "loop_tripword_w64_opaque" => hot(|n| hot_loop::tripword_w64_opaque(&hot_loop::hot64(), n)),
        "loop_tripword_w32" => hot(|n| hot_loop::tripword_w32(&hot_loop::hot32(), n)),
        "loop_by_hand_two_atomics" => hot(|n| hot_loop::by_hand(&hot_loop::hot_by_hand(), n)),
        n if n == AtomicPair::NAME => go::<AtomicPair>(&scenario, calls),
        n if n == MutexBaseline::NAME => go::<MutexBaseline>(&scenario, calls),
        n if n == ByHand::NAME => go::<ByHand>(&scenario, calls),
        n if n == <Tripword<W64> as Subject>::NAME => go::<Tripword<W64>>(&scenario, calls),
        n if n == <Tripword<W32> as Subject>::NAME => go::<Tripword<W32>>(&scenario, calls),
        n if n == TripwordCall::NAME => go::<TripwordCall>(&scenario, calls),
        n if n == TripwordCallAsync::NAME => go::<TripwordCallAsync>(&scenario, calls),
        n if n == TripwordTower::NAME => go::<TripwordTower>(&scenario, calls),
        n if n == Failsafe::NAME => go::<Failsafe>(&scenario, calls),
        n if n == Recloser::NAME => go::<Recloser>(&scenario, calls),
        n if n == Seatbelt::NAME => go::<Seatbelt>(&scenario, calls),
        n if n == TowerResilience::NAME => go::<TowerResilience>(&scenario, calls),
        other => {
            eprintln!("unknown implementation {other}");
            std::process::exit(2);
        }
    };
    match admitted {
        Some(a) => println!("{name} {} {calls} calls, {a} admitted", scenario.name),
        None => println!("{name} does not run {}", scenario.name),
    }
}
