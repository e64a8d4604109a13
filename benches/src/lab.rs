//! The contention lab: any circuit breaker, called by 1..N threads or tasks
//! on every scheduler, in three scenarios, side by side with baselines and
//! peers; reported as Markdown tables, CSV and an SVG plot per scheduler.
//!
//! To measure a breaker of your own, implement [`SimpleSubject`] (build it
//! for a [`Scenario`]; one call that reports a success or a failure and says
//! whether it was admitted) and hand it to a [`Lab`]. The whole program,
//! with the command line of the `contention` binary (`--threads`, `--quick`,
//! `--only`, …):
//!
//! ```no_run
//! use std::sync::atomic::{AtomicBool, Ordering};
//! use tripword_benches::lab::{Lab, Scenario, SimpleSubject};
//!
//! /// Never opens: admits every call and records nothing.
//! struct AlwaysClosed(AtomicBool);
//!
//! impl SimpleSubject for AlwaysClosed {
//!     const NAME: &'static str = "always_closed";
//!     fn build(_: Scenario) -> Option<Self> {
//!         Some(AlwaysClosed(AtomicBool::new(false)))
//!     }
//!     fn call(&self, _ok: bool) -> bool {
//!         !self.0.load(Ordering::Acquire)
//!     }
//! }
//!
//! Lab::from_args()
//!     .builtin() // the baselines, tripword and the peers
//!     .simple::<AlwaysClosed>() // yours
//!     .run()
//!     .report(&[]);
//! ```
//!
//! A breaker that needs per-thread state, or whose calls are futures that
//! should be `.await`ed by the async schedulers, implements [`Subject`] and
//! [`Worker`] instead (as every built-in one does) and is added with
//! [`Lab::subject`].
//!
//! `benches/examples/my_breaker.rs` is a complete example (a breaker in
//! 30 lines) and `docs/lab.md` the guide: the scenarios' contract, every
//! scheduler, the outputs and how to read them.

use std::fmt::Write as _;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use clap::Parser;
use tripword::{W32, W64};

pub use crate::pool::Run;
use crate::pool::{Placement, Pool, run_smol, run_tokio};
pub use crate::report::Row;
use crate::report::{self, HEADLINE};
use crate::subjects::{
    AtomicPair, Failsafe, MutexBaseline, PrivateTripword, Recloser, Seatbelt, TowerResilience,
    Tripword, TripwordCall, TripwordCallAsync, TripwordTower,
};
pub use crate::subjects::{Kind, Scenario, Subject, Worker};

/// The short way into the lab: a breaker every worker shares by reference,
/// and one call.
///
/// The lab builds it once per cell ([`build`](Self::build)), shares it
/// (through an `Arc`) with every worker thread or task, and calls
/// [`call`](Self::call) in a loop: `ok = true` in [`Scenario::Closed`],
/// `false` in both storms. What each scenario asks of the configuration:
///
/// - [`Scenario::Closed`]: a breaker that would trip after a few
///   consecutive failures (the built-in ones use 5, or a 50% failure rate
///   over 100 calls); it never sees one, so every call is admitted;
/// - [`Scenario::FailureStorm`]: a threshold the run never reaches, so every
///   call is admitted and every release records a failure;
/// - [`Scenario::HalfOpenStorm`]: tripped before the run (fail calls in
///   `build` until it rejects) and open for the shortest time it allows, so
///   callers race to be the probe.
///
/// Return `None` from `build` for a scenario the breaker cannot be set up
/// for: its cells are left out.
pub trait SimpleSubject: Send + Sync + Sized + 'static {
    /// The name in tables, CSV, plots and `--only`.
    const NAME: &'static str;
    /// What it is in the comparison: a peer unless said otherwise.
    const KIND: Kind = Kind::Peer;
    /// The breaker set up for `scenario`, or `None` to skip the scenario.
    fn build(scenario: Scenario) -> Option<Self>;
    /// One call: ask to be admitted; if admitted, report a success (`ok`) or
    /// a failure. Returns whether the call was admitted.
    fn call(&self, ok: bool) -> bool;
}

/// A [`SimpleSubject`] as a [`Subject`]: every worker holds an `Arc` of the
/// one breaker and makes its [`call`](SimpleSubject::call).
#[derive(Debug)]
pub struct Simple<B>(pub B);

/// A worker of [`Simple`].
#[derive(Debug)]
pub struct SimpleWorker<B>(Arc<Simple<B>>);

impl<B: SimpleSubject> Subject for Simple<B> {
    type Worker = SimpleWorker<B>;
    const NAME: &'static str = B::NAME;
    const KIND: Kind = B::KIND;
    fn build(scenario: Scenario) -> Option<Self> {
        B::build(scenario).map(Simple)
    }
    fn worker(self: &Arc<Self>) -> SimpleWorker<B> {
        SimpleWorker(Arc::clone(self))
    }
}

impl<B: SimpleSubject> Worker for SimpleWorker<B> {
    #[inline]
    fn closed(&mut self) -> bool {
        self.0.0.call(true)
    }
    #[inline]
    fn failure_storm(&mut self) -> bool {
        self.0.0.call(false)
    }
    #[inline]
    fn half_open_storm(&mut self) -> bool {
        self.0.0.call(false)
    }
}

/// What runs the workers of a cell.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, clap::ValueEnum)]
#[value(rename_all = "snake_case")]
pub enum Scheduler {
    /// N OS threads, where the OS puts them (pre-spawned, released by a
    /// barrier).
    OsThreads,
    /// N OS threads, thread `i` pinned to core `i` (`core_affinity`).
    OsThreadsPinned,
    /// A tokio multi-thread runtime with N workers running N tasks.
    TokioMultiThread,
    /// A tokio current-thread runtime running N tasks on one thread.
    TokioCurrentThread,
    /// A `smol` executor (`async-executor`) run by N threads, N tasks.
    Smol,
}

impl Scheduler {
    /// Every scheduler, in report order.
    pub const ALL: [Scheduler; 5] = [
        Scheduler::OsThreads,
        Scheduler::OsThreadsPinned,
        Scheduler::TokioMultiThread,
        Scheduler::TokioCurrentThread,
        Scheduler::Smol,
    ];

    /// The name in tables, CSV, file names and `--only`.
    pub const fn name(self) -> &'static str {
        match self {
            Scheduler::OsThreads => "os_threads",
            Scheduler::OsThreadsPinned => "os_threads_pinned",
            Scheduler::TokioMultiThread => "tokio_multi_thread",
            Scheduler::TokioCurrentThread => "tokio_current_thread",
            Scheduler::Smol => "smol",
        }
    }

    /// How many threads are busy when `workers` workers (threads or tasks)
    /// run: one for the current-thread runtime, `workers` otherwise.
    pub const fn busy_threads(self, workers: usize) -> usize {
        match self {
            Scheduler::TokioCurrentThread => 1,
            _ => workers,
        }
    }

    /// Runs `S` built for `scenario` on this scheduler with `workers`
    /// threads or tasks: a warm-up of a fifth of `duration` (at least
    /// 10 ms), then `duration` measured. `None` where `S` does not run
    /// `scenario`.
    pub fn measure<S: Subject>(
        self,
        scenario: Scenario,
        workers: usize,
        duration: Duration,
    ) -> Option<Run> {
        let subject = Arc::new(S::build(scenario)?);
        let warm_up = warm_up(duration);
        Some(match self {
            Scheduler::OsThreads | Scheduler::OsThreadsPinned => {
                let placement = if self == Scheduler::OsThreadsPinned {
                    Placement::Pinned
                } else {
                    Placement::Unpinned
                };
                let pool = Pool::placed(&subject, scenario, workers, placement);
                pool.run_for(warm_up);
                pool.run_for(duration)
            }
            Scheduler::TokioMultiThread | Scheduler::TokioCurrentThread => {
                let multi = self == Scheduler::TokioMultiThread;
                run_tokio(&subject, scenario, workers, multi, warm_up);
                run_tokio(&subject, scenario, workers, multi, duration)
            }
            Scheduler::Smol => {
                run_smol(&subject, scenario, workers, warm_up);
                run_smol(&subject, scenario, workers, duration)
            }
        })
    }
}

/// The warm-up before each measured cell: a fifth of its time, at least
/// 10 ms.
pub fn warm_up(duration: Duration) -> Duration {
    (duration / 5).max(Duration::from_millis(10))
}

/// `available_parallelism()`, or 1 where it is unknown.
pub fn available() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get())
}

/// The command line of the sweep (and of any program built on [`Lab`]).
#[derive(Clone, Debug, Parser)]
#[command(
    name = "contention",
    about = "The contention sweep: threads × scheduler × scenario × implementation",
    long_about = "The contention sweep: threads × scheduler × scenario × implementation.\n\n\
        Every implementation (baselines, tripword, the peer circuit breakers, and any breaker \
        added through tripword_benches::lab::Lab) makes the same calls of each scenario for a \
        fixed time, on 1, 2, 4, … up to --threads workers, on every scheduler. Repeats are \
        interleaved (each walks the whole grid) so that drift on a shared machine hits every \
        implementation alike. Prints Markdown tables of throughput and of the headline's \
        ratios to every other implementation; writes contention.csv, contention.md and one \
        contention-<scheduler>.svg per scheduler to --out. Never fails on timings.\n\n\
        Scenarios: closed (healthy dependency: admit, report success), failure_storm (every \
        call fails, the breaker never trips: every release writes), half_open_storm (the \
        dependency stays down, the breaker is half-open every microsecond and callers race \
        to be the probe).\n\n\
        Schedulers: os_threads, os_threads_pinned (thread i on core i), tokio_multi_thread \
        (N workers, N tasks), tokio_current_thread (N tasks on one thread), smol (an \
        async-executor run by N threads, N tasks). Tasks yield every 1024 calls.\n\n\
        See docs/lab.md for the guide.",
    after_help = "Examples:\n  \
        contention --quick                       # CI: 60 ms cells, one repeat\n  \
        contention --threads 16 --out perf16     # a 16-core machine\n  \
        contention --only closed --only os_threads --only os_threads_pinned\n  \
        contention --list"
)]
pub struct Options {
    /// The most workers (threads or tasks) per cell. The sweep runs 1, 2, 4,
    /// … below N, then N. Default: available_parallelism(). More than that
    /// is allowed (a warning is printed): those cells measure the OS
    /// scheduler as much as the breaker.
    #[arg(long, value_name = "N", default_value_t = available())]
    pub threads: usize,

    /// Where to write contention.csv, contention.md and one
    /// contention-SCHEDULER.svg per scheduler (created if missing).
    #[arg(long, value_name = "DIR", default_value = "target/contention")]
    pub out: PathBuf,

    /// Measured time per cell, in milliseconds, after a warm-up of a fifth
    /// of it (at least 10 ms). Default: 300, or 60 with --quick.
    #[arg(long, value_name = "MS")]
    pub millis: Option<u64>,

    /// How many times the whole grid is measured; tables give the median
    /// and the spread ((max − min) / median) of the repeats. Default: 3, or
    /// 1 with --quick.
    #[arg(long, value_name = "R")]
    pub repeats: Option<usize>,

    /// A fast pass for CI or a smoke test: 60 ms cells, one repeat (unless
    /// --millis or --repeats say otherwise).
    #[arg(long)]
    pub quick: bool,

    /// Keep only the cells whose implementation, scheduler or scenario is
    /// NAME. Repeatable: names of the same kind add up (--only failsafe
    /// --only seatbelt), kinds narrow each other (--only closed --only
    /// smol). --list prints the names.
    #[arg(long, value_name = "NAME")]
    pub only: Vec<String>,

    /// The implementation every other one is compared with in the ratio
    /// tables (its throughput ÷ theirs).
    #[arg(long, value_name = "NAME", default_value = HEADLINE)]
    pub headline: String,

    /// Print the implementations, schedulers and scenarios, then exit.
    #[arg(long)]
    pub list: bool,

    /// Ignored: `cargo bench` passes it to every target.
    #[arg(long, hide = true)]
    pub bench: bool,
}

impl Options {
    /// The measured time per cell.
    pub fn duration(&self) -> Duration {
        let default = if self.quick { 60 } else { 300 };
        Duration::from_millis(self.millis.unwrap_or(default).max(1))
    }

    /// How many times the grid is measured.
    pub fn repeats(&self) -> usize {
        let default = if self.quick { 1 } else { 3 };
        self.repeats.unwrap_or(default).max(1)
    }

    /// The worker counts of the sweep: 1, 2, 4, … below `--threads`, then
    /// `--threads`.
    pub fn thread_counts(&self) -> Vec<usize> {
        thread_counts(self.threads.max(1))
    }
}

/// 1, 2, 4, … below `max`, then `max`.
pub fn thread_counts(max: usize) -> Vec<usize> {
    let mut v: Vec<usize> = std::iter::successors(Some(1usize), |n| n.checked_mul(2))
        .take_while(|n| *n < max)
        .collect();
    v.push(max);
    v
}

/// Measures one implementation on one scheduler, scenario and worker count.
type Measure = fn(Scheduler, Scenario, usize, Duration) -> Option<Run>;

fn measure<S: Subject>(
    scheduler: Scheduler,
    scenario: Scenario,
    workers: usize,
    duration: Duration,
) -> Option<Run> {
    scheduler.measure::<S>(scenario, workers, duration)
}

/// One implementation in the lab.
#[derive(Clone, Copy, Debug)]
struct Entry {
    name: &'static str,
    kind: Kind,
    measure: Measure,
}

/// A sweep to run: the options and the implementations, in report order.
#[derive(Clone, Debug)]
pub struct Lab {
    options: Options,
    entries: Vec<Entry>,
}

impl Lab {
    /// A lab with no implementations yet.
    pub fn new(options: Options) -> Lab {
        Lab {
            options,
            entries: Vec::new(),
        }
    }

    /// [`Lab::new`] with the options of this process's command line (exits
    /// with the usage on `--help` or an error).
    pub fn from_args() -> Lab {
        Lab::new(Options::parse())
    }

    /// The options.
    pub fn options(&self) -> &Options {
        &self.options
    }

    /// Adds `S`. A second implementation with the same name replaces the
    /// first.
    pub fn subject<S: Subject>(mut self) -> Lab {
        self.entries.retain(|e| e.name != S::NAME);
        self.entries.push(Entry {
            name: S::NAME,
            kind: S::KIND,
            measure: measure::<S>,
        });
        self
    }

    /// Adds the breaker `B` (see [`SimpleSubject`]).
    pub fn simple<B: SimpleSubject>(self) -> Lab {
        self.subject::<Simple<B>>()
    }

    /// Adds the baselines: the bare atomic load pair, the scaling control
    /// (`tripword` on a breaker per thread) and the `Mutex` breaker.
    pub fn baselines(self) -> Lab {
        self.subject::<AtomicPair>()
            .subject::<PrivateTripword>()
            .subject::<MutexBaseline>()
    }

    /// Adds `tripword`: the core's ticket API in both word widths, then
    /// `tripword-std`'s `call`, `call_async` and tower layer.
    pub fn tripword(self) -> Lab {
        self.subject::<Tripword<W64>>()
            .subject::<Tripword<W32>>()
            .subject::<TripwordCall>()
            .subject::<TripwordCallAsync>()
            .subject::<TripwordTower>()
    }

    /// Adds the peers from crates.io: `failsafe`, `recloser`, `seatbelt`,
    /// `tower-resilience`.
    pub fn peers(self) -> Lab {
        self.subject::<Failsafe>()
            .subject::<Recloser>()
            .subject::<Seatbelt>()
            .subject::<TowerResilience>()
    }

    /// [`baselines`](Self::baselines), [`tripword`](Self::tripword) and
    /// [`peers`](Self::peers).
    pub fn builtin(self) -> Lab {
        self.baselines().tripword().peers()
    }

    /// The implementations' names, in report order.
    pub fn names(&self) -> Vec<&'static str> {
        self.entries.iter().map(|e| e.name).collect()
    }

    /// Whether `--only` keeps the cell: names of one kind (implementation,
    /// scheduler, scenario) add up, kinds narrow each other.
    fn keeps(&self, name: &str, scheduler: Scheduler, scenario: Scenario) -> bool {
        let only = &self.options.only;
        let is_impl = |f: &String| self.entries.iter().any(|e| e.name == f.as_str());
        let is_sched = |f: &String| Scheduler::ALL.iter().any(|s| s.name() == f.as_str());
        let is_scen = |f: &String| Scenario::ALL.iter().any(|s| s.name() == f.as_str());
        let dimension = |of_kind: &dyn Fn(&String) -> bool, value: &str| {
            let named: Vec<&String> = only.iter().filter(|f| of_kind(f)).collect();
            named.is_empty() || named.iter().any(|f| f.as_str() == value)
        };
        dimension(&is_impl, name)
            && dimension(&is_sched, scheduler.name())
            && dimension(&is_scen, scenario.name())
    }

    fn list(&self) -> String {
        let mut out = String::from("implementations:\n");
        for e in &self.entries {
            let _ = writeln!(out, "  {} ({:?})", e.name, e.kind);
        }
        out.push_str("schedulers:\n");
        for s in Scheduler::ALL {
            let _ = writeln!(out, "  {}", s.name());
        }
        out.push_str("scenarios:\n");
        for s in Scenario::ALL {
            let _ = writeln!(out, "  {}", s.name());
        }
        out
    }

    /// Measures every cell `--only` keeps, `--repeats` times, printing the
    /// run's header and its progress (on stderr). With `--list`, prints the
    /// names and exits; with an `--only` name nothing has, prints the names
    /// and exits with status 2.
    pub fn run(&self) -> Sweep {
        let o = &self.options;
        if o.list {
            print!("{}", self.list());
            std::process::exit(0);
        }
        let names = self.names();
        let unknown: Vec<&String> = o
            .only
            .iter()
            .filter(|f| {
                !names.contains(&f.as_str())
                    && !Scheduler::ALL.iter().any(|s| s.name() == f.as_str())
                    && !Scenario::ALL.iter().any(|s| s.name() == f.as_str())
            })
            .collect();
        if !unknown.is_empty() {
            eprintln!("--only: unknown name(s) {unknown:?}\n{}", self.list());
            std::process::exit(2);
        }
        let available = available();
        let counts = o.thread_counts();
        let duration = o.duration();
        let mut header = String::new();
        let _ = writeln!(
            header,
            "machine: {available} × {}; available_parallelism {available}; load average at start {}",
            cpu_model(),
            load_average()
        );
        let cores = crate::pool::cores();
        let _ = writeln!(
            header,
            "run: threads {counts:?}, {} ms per cell after a {} ms warm-up, {} repeat(s){}; os_threads_pinned: {}",
            duration.as_millis(),
            warm_up(duration).as_millis(),
            o.repeats(),
            if o.quick { " (--quick)" } else { "" },
            if cores.is_empty() {
                "cores unknown, threads left unpinned".to_string()
            } else {
                format!("thread i on core i mod {}", cores.len())
            }
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
        for repeat in 0..o.repeats() {
            eprintln!("repeat {}/{}", repeat + 1, o.repeats());
            for scheduler in Scheduler::ALL {
                for scenario in Scenario::ALL {
                    for &threads in &counts {
                        for e in &self.entries {
                            if !self.keeps(e.name, scheduler, scenario) {
                                continue;
                            }
                            let Some(run) = (e.measure)(scheduler, scenario, threads, duration)
                            else {
                                continue;
                            };
                            record(&mut rows, e, scheduler, scenario, threads, &run);
                        }
                    }
                }
            }
        }
        Sweep {
            options: o.clone(),
            rows,
            counts,
            header,
        }
    }
}

/// Adds one measured run to its row (a new row on the first repeat).
fn record(
    rows: &mut Vec<Row>,
    e: &Entry,
    scheduler: Scheduler,
    scenario: Scenario,
    threads: usize,
    run: &Run,
) {
    let admitted = if run.calls > 0 {
        run.admitted as f64 / run.calls as f64
    } else {
        0.0
    };
    match rows.iter_mut().find(|r| {
        r.scheduler == scheduler.name()
            && r.scenario == scenario.name()
            && r.implementation == e.name
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
            implementation: e.name,
            kind: e.kind,
            threads,
            samples: vec![run.throughput()],
            admitted,
        }),
    }
}

/// What a [`Lab`] measured.
#[derive(Clone, Debug)]
pub struct Sweep {
    /// The options it ran with.
    pub options: Options,
    /// One row per measured cell.
    pub rows: Vec<Row>,
    /// The worker counts.
    pub counts: Vec<usize>,
    /// The machine and run lines printed at the start.
    pub header: String,
}

impl Sweep {
    /// The most workers of the run.
    pub fn widest(&self) -> usize {
        self.counts.last().copied().unwrap_or(1)
    }

    /// The measured row of one cell.
    pub fn get(
        &self,
        scheduler: Scheduler,
        scenario: Scenario,
        implementation: &str,
        threads: usize,
    ) -> Option<&Row> {
        self.rows.iter().find(|r| {
            r.scheduler == scheduler.name()
                && r.scenario == scenario.name()
                && r.implementation == implementation
                && r.threads == threads
        })
    }

    /// The Markdown report: the header, then for every scheduler and
    /// scenario a throughput table and a ratio table (against
    /// `--headline`).
    pub fn markdown(&self) -> String {
        let mut md = self.header.clone();
        let _ = writeln!(md, "load average at end {}\n", load_average());
        for scheduler in Scheduler::ALL {
            for scenario in Scenario::ALL {
                let tables = report::tables(
                    &self.rows,
                    scheduler.name(),
                    scenario.name(),
                    &self.options.headline,
                );
                if !tables.is_empty() {
                    md.push_str(&tables);
                    md.push('\n');
                }
            }
        }
        md
    }

    /// Prints the tables and `extra` (the `contention` binary's goals), and
    /// writes `contention.md` (the same text), `contention.csv` and one
    /// `contention-<scheduler>.svg` per measured scheduler to `--out`.
    /// Returns the paths written; an error to write is printed, not fatal.
    pub fn report(&self, extra: &[String]) -> Vec<PathBuf> {
        let mut md = self.markdown();
        for line in extra {
            md.push_str(line);
        }
        println!("\n{}", &md[self.header.len()..]);
        let out = &self.options.out;
        let mut written = Vec::new();
        let result = (|| -> std::io::Result<()> {
            std::fs::create_dir_all(out)?;
            let csv = out.join("contention.csv");
            report::write_csv(&self.rows, std::fs::File::create(&csv)?)?;
            written.push(csv);
            let title = format!(
                "{} × {}, {} ms cells, {} repeat(s)",
                available(),
                cpu_model(),
                self.options.duration().as_millis(),
                self.options.repeats()
            );
            for scheduler in Scheduler::ALL {
                if !self.rows.iter().any(|r| r.scheduler == scheduler.name()) {
                    continue;
                }
                let svg = out.join(format!("contention-{}.svg", scheduler.name()));
                std::fs::write(&svg, report::svg(&self.rows, scheduler.name(), &title))?;
                written.push(svg);
            }
            let path = out.join("contention.md");
            std::fs::write(&path, &md)?;
            written.push(path);
            Ok(())
        })();
        match result {
            Ok(()) => {
                let names: Vec<String> = written.iter().map(|p| p.display().to_string()).collect();
                println!("wrote {}", names.join(", "));
            }
            Err(e) => eprintln!("could not write to {}: {e}", out.display()),
        }
        written
    }
}

/// The CPU's model name from `/proc/cpuinfo`, or `unknown`.
pub fn cpu_model() -> String {
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

/// The 1, 5 and 15 minute load averages from `/proc/loadavg`, or `unknown`.
pub fn load_average() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .map(|s| s.split_whitespace().take(3).collect::<Vec<_>>().join(" "))
        .unwrap_or_else(|_| "unknown".to_string())
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::CommandFactory;

    fn options(args: &[&str]) -> Options {
        Options::try_parse_from(std::iter::once("contention").chain(args.iter().copied()))
            .expect("valid arguments")
    }

    #[test]
    fn the_command_line_is_consistent() {
        Options::command().debug_assert();
    }

    #[test]
    fn quick_and_explicit_values() {
        let o = options(&["--quick", "--threads", "16"]);
        assert_eq!(o.duration(), Duration::from_millis(60));
        assert_eq!(o.repeats(), 1);
        assert_eq!(o.thread_counts(), [1, 2, 4, 8, 16]);
        let o = options(&["--quick", "--millis", "5", "--repeats", "2", "--bench"]);
        assert_eq!((o.duration(), o.repeats()), (Duration::from_millis(5), 2));
        assert_eq!(thread_counts(3), [1, 2, 3]);
        assert_eq!(thread_counts(1), [1]);
    }

    #[test]
    fn only_adds_up_within_a_kind_and_narrows_across_kinds() {
        let lab = Lab::new(options(&[
            "--only", "failsafe", "--only", "recloser", "--only", "closed",
        ]))
        .builtin();
        assert!(lab.keeps("failsafe", Scheduler::Smol, Scenario::Closed));
        assert!(lab.keeps("recloser", Scheduler::OsThreads, Scenario::Closed));
        assert!(!lab.keeps("recloser", Scheduler::OsThreads, Scenario::FailureStorm));
        assert!(!lab.keeps("seatbelt", Scheduler::OsThreads, Scenario::Closed));
        let all = Lab::new(options(&[])).builtin();
        assert!(all.keeps(
            "seatbelt",
            Scheduler::OsThreadsPinned,
            Scenario::HalfOpenStorm
        ));
        assert_eq!(all.names().len(), 12);
    }

    #[test]
    fn a_tiny_sweep_fills_every_scheduler() {
        let lab = Lab::new(options(&[
            "--millis",
            "2",
            "--threads",
            "2",
            "--only",
            "closed",
            "--only",
            "tripword_w64",
            "--only",
            "seatbelt",
        ]))
        .builtin();
        let sweep = lab.run();
        for scheduler in Scheduler::ALL {
            for name in ["tripword_w64", "seatbelt"] {
                for threads in [1, 2] {
                    let row = sweep
                        .get(scheduler, Scenario::Closed, name, threads)
                        .unwrap_or_else(|| panic!("{scheduler:?} {name} {threads}"));
                    assert!(row.median() > 0.0 && row.admitted == 1.0, "{row:?}");
                }
            }
        }
        assert!(sweep.markdown().contains("smol / closed"));
    }
}
