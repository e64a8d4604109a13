//! The contention sweep: threads × scheduler × scenario × implementation.
//!
//! ```text
//! cargo run --release -p tripword-benches --bin contention -- --help
//! cargo run --release -p tripword-benches --bin contention -- [--quick]
//!     [--workers N,N,…] [--out DIR] [--millis MS] [--repeats R] [--only NAME]...
//! ```
//!
//! The lab (the `tripword-lab` crate) with every built-in implementation:
//! the baselines, `tripword` (the core's ticket API in both widths,
//! `tripword-std`'s `call`, `call_async` and tower layer) and the peers
//! (`failsafe`, `recloser`, `seatbelt`, `tower-resilience`), on OS threads
//! (unpinned and pinned), tokio (multi-thread and current-thread) and
//! `smol`. After the tables it prints the goals (the core's three, from the
//! unpinned OS threads; the storm goal, G6, from the same threads:
//! the failure and half-open storms at 2 threads against `failsafe` and the
//! `Mutex` baseline; the services adapter's two, from the tokio columns:
//! the `tripword_w64_call_async` and `tripword_w64_call` cells, and
//! `tripword_w64_tower` against `tower_resilience`) as PASS/MISS from this
//! run's own numbers, and a `GOALS:` summary line for CI. Writes
//! the lab's files to a folder of its own under `--out` (default
//! `target/lab`). Never fails on timings.
//! `docs/lab.md` is the guide.

use std::fmt::Write as _;

use tripword_lab::subjects::{
    AtomicPair, Failsafe, Kind, MutexBaseline, PrivateTripword, Subject as _, TowerResilience,
    TripwordCall, TripwordCallAsync, TripwordTower,
};
use tripword_lab::{Lab, Row};

/// The implementation every goal is about.
const HEADLINE: &str = "tripword_w64";

fn get<'a>(rows: &'a [Row], sched: &str, scen: &str, imp: &str, threads: usize) -> Option<&'a Row> {
    rows.iter().find(|r| {
        r.scheduler == sched
            && r.workload == scen
            && r.implementation == imp
            && r.workers == threads
    })
}

fn verdict(pass: bool) -> &'static str {
    if pass { "PASS" } else { "MISS" }
}

/// The goals, from this run's numbers: the core's three (OS threads), then
/// the services adapter's two (tokio).
fn goals(rows: &[Row], widest: usize) -> String {
    let mut out = String::new();
    let mut compact: Vec<String> = Vec::new();
    let os = "os_threads";
    let closed = "closed";
    let head1 = get(rows, os, closed, HEADLINE, 1);
    match (head1, get(rows, os, closed, AtomicPair::NAME, 1)) {
        (Some(h), Some(p)) => {
            let ratio = h.ns_per_call() / p.ns_per_call();
            compact.push(format!("G1 {} {ratio:.2}×", verdict(ratio <= 2.0)));
            let _ = writeln!(
                out,
                "GOAL 1 {}: closed acquire+success release within 2× of the bare atomic load pair: {ratio:.2}× ({:.2} ns vs {:.2} ns per call, 1 thread)",
                verdict(ratio <= 2.0),
                h.ns_per_call(),
                p.ns_per_call()
            );
        }
        _ => out.push_str("GOAL 1 n/a: closed scenario on OS threads not measured\n"),
    }
    for t in [1, widest] {
        let head = get(rows, os, closed, HEADLINE, t);
        let fastest_peer = rows
            .iter()
            .filter(|r| r.scheduler == os && r.workload == closed && r.workers == t)
            .filter(|r| r.kind == Kind::Peer)
            .max_by(|a, b| a.median().total_cmp(&b.median()));
        if let (Some(h), Some(p)) = (head, fastest_peer) {
            let ratio = h.median() / p.median();
            compact.push(format!("G2@{t} {} {ratio:.2}×", verdict(ratio >= 10.0)));
            let _ = writeln!(
                out,
                "GOAL 2 {}: ≥10× the fastest peer, closed, {t} thread(s): {ratio:.1}× {} ({:.2} vs {:.2} M calls/s)",
                verdict(ratio >= 10.0),
                p.implementation,
                h.median() / 1e6,
                p.median() / 1e6
            );
        }
        if widest == 1 {
            break;
        }
    }
    match (head1, get(rows, os, closed, HEADLINE, 2)) {
        (Some(one), Some(two)) => {
            let ratio = two.median() / one.median();
            compact.push(format!("G3 {} {ratio:.2}×", verdict(ratio >= 1.8)));
            // The read-only baseline scales as well as the machine lets any
            // code scale: the ceiling to read the goal against.
            // So does the same code on a breaker per thread: nothing shared,
            // so its scaling is the machine's for exactly these calls.
            let scaled = |name: &str| match (
                get(rows, os, closed, name, 1),
                get(rows, os, closed, name, 2),
            ) {
                (Some(a), Some(b)) => Some(b.median() / a.median()),
                _ => None,
            };
            let mut ceiling = String::new();
            if let Some(x) = scaled(AtomicPair::NAME) {
                let _ = write!(
                    ceiling,
                    "; in the same run the atomic load pair scaled {x:.2}×"
                );
            }
            if let Some(x) = scaled(PrivateTripword::NAME) {
                let _ = write!(
                    ceiling,
                    ", the same calls on a breaker per thread (nothing shared) {x:.2}×, so sharing keeps {:.0}% of the machine's scaling",
                    100.0 * ratio / x
                );
            }
            let _ = writeln!(
                out,
                "GOAL 3 {}: closed throughput at 2 threads ≥ 1.8× 1 thread: {ratio:.2}× ({:.2} vs {:.2} M calls/s{ceiling})",
                verdict(ratio >= 1.8),
                two.median() / 1e6,
                one.median() / 1e6
            );
        }
        _ => out.push_str("GOAL 3 n/a: needs --threads 2 or more\n"),
    }
    storm_goals(rows, widest, &mut out, &mut compact);
    service_goals(rows, widest, &mut out, &mut compact);
    let _ = writeln!(out, "GOALS: {}", compact.join(", "));
    out
}

/// The goal for the writing scenarios (G6): at 2 threads on OS
/// threads, in the failure storm and the half-open storm, the headline has
/// at least 1.5× `failsafe`'s throughput and 2× the `Mutex` baseline's. The
/// compact line gives the worst of the four ratios against its bar.
fn storm_goals(rows: &[Row], widest: usize, out: &mut String, compact: &mut Vec<String>) {
    let os = "os_threads";
    if widest < 2 {
        out.push_str("GOAL 6 n/a: needs --threads 2 or more\n");
        return;
    }
    let mut worst: Option<(f64, String)> = None;
    for scen in ["failure_storm", "half_open_storm"] {
        let Some(head) = get(rows, os, scen, HEADLINE, 2) else {
            continue;
        };
        for (peer, bar) in [(Failsafe::NAME, 1.5), (MutexBaseline::NAME, 2.0)] {
            let Some(p) = get(rows, os, scen, peer, 2) else {
                continue;
            };
            let ratio = head.median() / p.median();
            let _ = writeln!(
                out,
                "GOAL 6 {}: {scen}, 2 threads, ≥ {bar}× {peer}: {ratio:.2}× ({:.2} vs {:.2} M calls/s)",
                verdict(ratio >= bar),
                head.median() / 1e6,
                p.median() / 1e6
            );
            let margin = ratio / bar;
            if worst.as_ref().is_none_or(|(m, _)| margin < *m) {
                worst = Some((margin, format!("{ratio:.2}× {peer} {scen}")));
            }
        }
    }
    match worst {
        Some((margin, what)) => compact.push(format!("G6 {} worst {what}", verdict(margin >= 1.0))),
        None => out.push_str(
            "GOAL 6 n/a: the storms not measured against failsafe and the Mutex on OS threads\n",
        ),
    }
}

/// The services adapter's two goals, from the tokio columns of this run
/// (closed scenario, 1 and 2 workers): `call_async` on a ready future costs
/// at most 2 ns more per call than the synchronous `call` (G4), and the
/// tower layer has at least 10× `tower-resilience`'s throughput (G5). The
/// compact line gives the worst cell of each.
fn service_goals(rows: &[Row], widest: usize, out: &mut String, compact: &mut Vec<String>) {
    let closed = "closed";
    let workers: Vec<usize> = [1, 2].into_iter().filter(|t| *t <= widest).collect();
    let (mut worst_extra, mut worst_ratio): (Option<f64>, Option<f64>) = (None, None);
    for sched in ["tokio_multi_thread", "tokio_current_thread"] {
        for &t in &workers {
            // Time per call on one thread: the multi-thread runtime runs
            // one worker per thread, the current-thread one every task on
            // its one thread.
            let busy = if sched == "tokio_current_thread" {
                1
            } else {
                t
            };
            let ns = |r: &Row| busy as f64 / r.median() * 1e9;
            if let (Some(a), Some(c)) = (
                get(rows, sched, closed, TripwordCallAsync::NAME, t),
                get(rows, sched, closed, TripwordCall::NAME, t),
            ) {
                let extra = ns(a) - ns(c);
                worst_extra = Some(worst_extra.map_or(extra, |w: f64| w.max(extra)));
                let _ = writeln!(
                    out,
                    "GOAL 4 {}: call_async on a ready future ≤ call + 2 ns, {sched}, {t} worker(s): {extra:+.2} ns ({:.2} vs {:.2} ns per call)",
                    verdict(extra <= 2.0),
                    ns(a),
                    ns(c)
                );
            }
            if let (Some(l), Some(p)) = (
                get(rows, sched, closed, TripwordTower::NAME, t),
                get(rows, sched, closed, TowerResilience::NAME, t),
            ) {
                let ratio = l.median() / p.median();
                worst_ratio = Some(worst_ratio.map_or(ratio, |w: f64| w.min(ratio)));
                let _ = writeln!(
                    out,
                    "GOAL 5 {}: tower layer ≥ 10× tower_resilience, {sched}, {t} worker(s): {ratio:.1}× ({:.2} vs {:.2} M calls/s)",
                    verdict(ratio >= 10.0),
                    l.median() / 1e6,
                    p.median() / 1e6
                );
            }
        }
    }
    match worst_extra {
        Some(w) => compact.push(format!("G4 {} worst {w:+.2} ns", verdict(w <= 2.0))),
        None => out.push_str("GOAL 4 n/a: call and call_async not measured in tokio tasks\n"),
    }
    match worst_ratio {
        Some(w) => compact.push(format!("G5 {} worst {w:.1}×", verdict(w >= 10.0))),
        None => out.push_str("GOAL 5 n/a: the tower layers not measured in tokio tasks\n"),
    }
}

fn main() {
    let sweep = Lab::from_args().builtin().run();
    let goals = goals(&sweep.results.rows, sweep.widest());
    sweep.report(&[goals]);
}
