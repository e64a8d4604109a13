//! The contention sweep: threads × scheduler × scenario × implementation.
//!
//! ```text
//! cargo run --release -p tripword-benches --bin contention -- [--quick]
//!     [--threads N] [--out DIR] [--millis MS] [--repeats R] [--only NAME]...
//! ```
//!
//! Every cell runs the same calls (see `tripword_benches::subjects`) for a
//! fixed time on OS threads, on a tokio multi-thread runtime (N workers, N
//! tasks) and on a tokio current-thread runtime (N tasks, one thread).
//! Repeats are interleaved (each repeat walks the whole grid) so drift on a
//! shared machine hits every implementation alike. Prints throughput tables,
//! ratios of `tripword_w64` to every baseline and peer, and the goals (the
//! core's three; the services adapter's two, from the tokio columns: the
//! `tripword_w64_call_async` and `tripword_w64_call` cells, and
//! `tripword_w64_tower` against `tower_resilience`) as PASS/MISS from this
//! run's own numbers; writes `contention.csv`,
//! `contention.svg` and `contention.md` to `--out` (default
//! `target/contention`). Never fails on timings.

use std::fmt::Write as _;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use tripword::{W32, W64};
use tripword_benches::pool::{Pool, Run, run_tokio};
use tripword_benches::report::{self, HEADLINE, Row};
use tripword_benches::subjects::{
    AtomicPair, Failsafe, Kind, MutexBaseline, PrivateTripword, Recloser, Scenario, Subject,
    TowerResilience, Tripword, TripwordCall, TripwordCallAsync, TripwordTower,
};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Scheduler {
    OsThreads,
    TokioMultiThread,
    TokioCurrentThread,
}

impl Scheduler {
    const ALL: [Scheduler; 3] = [
        Scheduler::OsThreads,
        Scheduler::TokioMultiThread,
        Scheduler::TokioCurrentThread,
    ];
    fn name(self) -> &'static str {
        match self {
            Scheduler::OsThreads => "os_threads",
            Scheduler::TokioMultiThread => "tokio_multi_thread",
            Scheduler::TokioCurrentThread => "tokio_current_thread",
        }
    }
}

type Measure = fn(Scheduler, Scenario, usize, Duration) -> Option<Run>;

fn measure<S: Subject>(
    scheduler: Scheduler,
    scenario: Scenario,
    threads: usize,
    duration: Duration,
) -> Option<Run> {
    let subject = Arc::new(S::build(scenario)?);
    let warm_up = (duration / 5).max(Duration::from_millis(10));
    Some(match scheduler {
        Scheduler::OsThreads => {
            let pool = Pool::new(&subject, scenario, threads);
            pool.run_for(warm_up);
            pool.run_for(duration)
        }
        Scheduler::TokioMultiThread | Scheduler::TokioCurrentThread => {
            let multi = scheduler == Scheduler::TokioMultiThread;
            run_tokio(&subject, scenario, threads, multi, warm_up);
            run_tokio(&subject, scenario, threads, multi, duration)
        }
    })
}

/// Every implementation, baselines first, then tripword (the core's ticket
/// API, then `tripword-std`'s `call`, `call_async` and tower layer), then
/// the peers.
const IMPLEMENTATIONS: [(&str, Kind, Measure); 11] = [
    (AtomicPair::NAME, AtomicPair::KIND, measure::<AtomicPair>),
    (
        PrivateTripword::NAME,
        PrivateTripword::KIND,
        measure::<PrivateTripword>,
    ),
    (
        MutexBaseline::NAME,
        MutexBaseline::KIND,
        measure::<MutexBaseline>,
    ),
    (
        <Tripword<W64> as Subject>::NAME,
        Kind::Tripword,
        measure::<Tripword<W64>>,
    ),
    (
        <Tripword<W32> as Subject>::NAME,
        Kind::Tripword,
        measure::<Tripword<W32>>,
    ),
    (
        TripwordCall::NAME,
        TripwordCall::KIND,
        measure::<TripwordCall>,
    ),
    (
        TripwordCallAsync::NAME,
        TripwordCallAsync::KIND,
        measure::<TripwordCallAsync>,
    ),
    (
        TripwordTower::NAME,
        TripwordTower::KIND,
        measure::<TripwordTower>,
    ),
    (Failsafe::NAME, Failsafe::KIND, measure::<Failsafe>),
    (Recloser::NAME, Recloser::KIND, measure::<Recloser>),
    (
        TowerResilience::NAME,
        TowerResilience::KIND,
        measure::<TowerResilience>,
    ),
];

struct Options {
    threads: usize,
    out: PathBuf,
    duration: Duration,
    repeats: usize,
    quick: bool,
    only: Vec<String>,
}

const USAGE: &str =
    "usage: contention [--quick] [--threads N] [--out DIR] [--millis MS] [--repeats R]";

fn parse_args() -> Result<Options, String> {
    let available = std::thread::available_parallelism().map_or(1, |n| n.get());
    let mut o = Options {
        threads: available,
        out: PathBuf::from("target/contention"),
        duration: Duration::from_millis(300),
        repeats: 3,
        quick: false,
        only: Vec::new(),
    };
    let mut millis = None;
    let mut repeats = None;
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        let mut value = |name: &str| args.next().ok_or(format!("{name} needs a value\n{USAGE}"));
        match a.as_str() {
            "--quick" => o.quick = true,
            "--threads" => {
                o.threads = value("--threads")?
                    .parse()
                    .map_err(|e| format!("--threads: {e}"))?;
            }
            "--out" => o.out = PathBuf::from(value("--out")?),
            "--only" => o.only.push(value("--only")?),
            "--millis" => {
                millis = Some(
                    value("--millis")?
                        .parse()
                        .map_err(|e| format!("--millis: {e}"))?,
                );
            }
            "--repeats" => {
                repeats = Some(
                    value("--repeats")?
                        .parse()
                        .map_err(|e| format!("--repeats: {e}"))?,
                );
            }
            // `cargo bench` passes --bench to every target; ignore it.
            "--bench" => {}
            "-h" | "--help" => return Err(USAGE.to_string()),
            other => return Err(format!("unknown argument {other}\n{USAGE}")),
        }
    }
    if o.quick {
        o.duration = Duration::from_millis(60);
        o.repeats = 1;
    }
    if let Some(ms) = millis {
        o.duration = Duration::from_millis(ms);
    }
    if let Some(r) = repeats {
        o.repeats = r;
    }
    o.threads = o.threads.max(1);
    o.repeats = o.repeats.max(1);
    Ok(o)
}

/// 1, 2, 4, … below `max`, then `max`.
fn thread_counts(max: usize) -> Vec<usize> {
    let mut v: Vec<usize> = std::iter::successors(Some(1usize), |n| n.checked_mul(2))
        .take_while(|n| *n < max)
        .collect();
    v.push(max);
    v
}

fn cpu_model() -> String {
    std::fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("model name"))
                .and_then(|l| l.split(':').nth(1))
                .map(|m| m.trim().to_string())
        })
        .unwrap_or_else(|| "unknown".to_string())
}

fn load_average() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .map(|s| s.split_whitespace().take(3).collect::<Vec<_>>().join(" "))
        .unwrap_or_else(|_| "unknown".to_string())
}

fn get<'a>(rows: &'a [Row], sched: &str, scen: &str, imp: &str, threads: usize) -> Option<&'a Row> {
    rows.iter().find(|r| {
        r.scheduler == sched
            && r.scenario == scen
            && r.implementation == imp
            && r.threads == threads
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
    let os = Scheduler::OsThreads.name();
    let closed = Scenario::Closed.name();
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
            .filter(|r| r.scheduler == os && r.scenario == closed && r.threads == t)
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
    service_goals(rows, widest, &mut out, &mut compact);
    let _ = writeln!(out, "GOALS: {}", compact.join(", "));
    out
}

/// The services adapter's two goals, from the tokio columns of this run
/// (closed scenario, 1 and 2 workers): `call_async` on a ready future costs
/// at most 2 ns more per call than the synchronous `call` (G4), and the
/// tower layer has at least 10× `tower-resilience`'s throughput (G5). The
/// compact line gives the worst cell of each.
fn service_goals(rows: &[Row], widest: usize, out: &mut String, compact: &mut Vec<String>) {
    let closed = Scenario::Closed.name();
    let workers: Vec<usize> = [1, 2].into_iter().filter(|t| *t <= widest).collect();
    let (mut worst_extra, mut worst_ratio): (Option<f64>, Option<f64>) = (None, None);
    for scheduler in [Scheduler::TokioMultiThread, Scheduler::TokioCurrentThread] {
        let sched = scheduler.name();
        for &t in &workers {
            // Time per call on one thread: the multi-thread runtime runs
            // one worker per thread, the current-thread one every task on
            // its one thread.
            let busy = if scheduler == Scheduler::TokioCurrentThread {
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
    let o = match parse_args() {
        Ok(o) => o,
        Err(msg) => {
            eprintln!("{msg}");
            std::process::exit(2);
        }
    };
    let available = std::thread::available_parallelism().map_or(1, |n| n.get());
    let counts = thread_counts(o.threads);
    let mut header = String::new();
    let _ = writeln!(
        header,
        "machine: {} × {}; available_parallelism {available}; load average at start {}",
        available,
        cpu_model(),
        load_average()
    );
    let _ = writeln!(
        header,
        "run: threads {counts:?}, {} ms per cell after a {} ms warm-up, {} repeat(s){}",
        o.duration.as_millis(),
        (o.duration / 5).max(Duration::from_millis(10)).as_millis(),
        o.repeats,
        if o.quick { " (--quick)" } else { "" }
    );
    if o.threads > available {
        let _ = writeln!(
            header,
            "WARNING: {} threads > available_parallelism {available}: the busiest cells measure the OS scheduler",
            o.threads
        );
    }
    print!("{header}");

    let mut rows: Vec<Row> = Vec::new();
    for repeat in 0..o.repeats {
        eprintln!("repeat {}/{}", repeat + 1, o.repeats);
        for scheduler in Scheduler::ALL {
            for scenario in Scenario::ALL {
                for &threads in &counts {
                    for (name, kind, m) in IMPLEMENTATIONS {
                        let keep = o
                            .only
                            .iter()
                            .all(|f| f == name || f == scheduler.name() || f == scenario.name());
                        if !keep {
                            continue;
                        }
                        let Some(run) = m(scheduler, scenario, threads, o.duration) else {
                            continue;
                        };
                        let admitted = if run.calls > 0 {
                            run.admitted as f64 / run.calls as f64
                        } else {
                            0.0
                        };
                        match rows.iter_mut().find(|r| {
                            r.scheduler == scheduler.name()
                                && r.scenario == scenario.name()
                                && r.implementation == name
                                && r.threads == threads
                        }) {
                            Some(r) => {
                                let n = r.samples.len() as f64;
                                r.admitted = (r.admitted * n + admitted) / (n + 1.0);
                                r.samples.push(run.throughput());
                            }
                            None => rows.push(Row {
                                scheduler: scheduler.name(),
                                scenario: scenario.name(),
                                implementation: name,
                                kind,
                                threads,
                                samples: vec![run.throughput()],
                                admitted,
                            }),
                        }
                    }
                }
            }
        }
    }

    let mut md = header.clone();
    let _ = writeln!(md, "load average at end {}\n", load_average());
    for scheduler in Scheduler::ALL {
        for scenario in Scenario::ALL {
            let tables = report::tables(&rows, scheduler.name(), scenario.name());
            if !tables.is_empty() {
                md.push_str(&tables);
                md.push('\n');
            }
        }
    }
    let goal_lines = goals(&rows, *counts.last().unwrap_or(&1));
    md.push_str(&goal_lines);
    println!("\n{}", &md[header.len()..]);

    let written = std::fs::create_dir_all(&o.out).and_then(|()| {
        std::fs::write(o.out.join("contention.csv"), report::csv(&rows))?;
        let title = format!(
            "tripword contention sweep: {available} × {}, {} ms cells, {} repeat(s)",
            cpu_model(),
            o.duration.as_millis(),
            o.repeats
        );
        std::fs::write(o.out.join("contention.svg"), report::svg(&rows, &title))?;
        std::fs::write(o.out.join("contention.md"), &md)
    });
    match written {
        Ok(()) => println!(
            "wrote {0}/contention.csv, {0}/contention.svg, {0}/contention.md",
            o.out.display()
        ),
        Err(e) => eprintln!("could not write to {}: {e}", o.out.display()),
    }
}
