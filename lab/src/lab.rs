//! [`Lab`]: what to measure (implementations, schedulers) and how (the
//! [`Options`]), run into a [`Sweep`].

use std::fmt::Write as _;
use std::path::PathBuf;
use std::sync::Arc;

use clap::{Args, FromArgMatches};

use crate::cli::{Options, available};
use crate::report::{self, Machine, Results, Row, SCHEMA, Settings};
use crate::sched::{Cell, Scheduler, SubjectCell, Timing};
use crate::stats::{Fairness, Latency};
use crate::subject::{Kind, Simple, SimpleSubject, Subject};
use crate::workload::{CHUNK, Workload};

#[derive(Clone)]
struct Entry {
    name: &'static str,
    kind: Kind,
    cell: fn(&Workload) -> Option<Arc<dyn Cell>>,
}

fn cell<S: Subject>(w: &Workload) -> Option<Arc<dyn Cell>> {
    SubjectCell::<S>::build(w).map(|c| Arc::new(c) as Arc<dyn Cell>)
}

/// A run: the options, the implementations and the schedulers, in report
/// order.
#[derive(Clone)]
pub struct Lab {
    options: Options,
    entries: Vec<Entry>,
    schedulers: Vec<Arc<dyn Scheduler>>,
}

impl std::fmt::Debug for Lab {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Lab")
            .field("options", &self.options)
            .field("implementations", &self.names())
            .finish_non_exhaustive()
    }
}

fn command() -> clap::Command {
    // A later option overrides an earlier one (a script's defaults, then
    // the user's own).
    Options::augment_args(clap::Command::new("tripword-lab")).args_override_self(true)
}

impl Lab {
    /// A lab with no implementations yet and every built-in scheduler.
    pub fn new(options: Options) -> Lab {
        Lab {
            options,
            entries: Vec::new(),
            schedulers: crate::sched::builtin(),
        }
    }

    /// [`Lab::new`] with this process's command line (exits with the usage
    /// on `--help` or an error). `compare A.json B.json` as the first
    /// arguments runs the comparison instead, and exits.
    pub fn from_args() -> Lab {
        Lab::from_args_with::<NoFlags>().0
    }

    /// [`from_args`](Self::from_args) with flags of your own: `T` is a
    /// `#[derive(clap::Args)]` struct, parsed from the same command line.
    pub fn from_args_with<T: Args + FromArgMatches>() -> (Lab, T) {
        let args: Vec<String> = std::env::args().collect();
        if args.get(1).map(String::as_str) == Some("compare") {
            std::process::exit(crate::compare::main(&args[2..]));
        }
        match Lab::parse_with::<T>(&args) {
            Ok((options, mine)) => (Lab::new(options), mine),
            Err(e) => e.exit(),
        }
    }

    /// The options parsed from `args` (the program name first).
    pub fn parse(args: &[impl AsRef<str>]) -> Result<Options, clap::Error> {
        Lab::parse_with::<NoFlags>(args).map(|(o, _)| o)
    }

    /// The options and your flags `T` parsed from `args` (the program name
    /// first).
    pub fn parse_with<T: Args + FromArgMatches>(
        args: &[impl AsRef<str>],
    ) -> Result<(Options, T), clap::Error> {
        let matches =
            T::augment_args(command()).try_get_matches_from(args.iter().map(|a| a.as_ref()))?;
        Ok((
            Options::from_arg_matches(&matches)?,
            T::from_arg_matches(&matches)?,
        ))
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
            cell: cell::<S>,
        });
        self
    }

    /// Adds the breaker `B` (see [`SimpleSubject`]).
    pub fn simple<B: SimpleSubject>(self) -> Lab {
        self.subject::<Simple<B>>()
    }

    /// Adds a scheduler of your own (or a built-in one again); one with the
    /// same name replaces the first.
    pub fn scheduler(mut self, s: impl Scheduler + 'static) -> Lab {
        let name = s.name();
        self.schedulers.retain(|x| x.name() != name);
        self.schedulers.push(Arc::new(s));
        self
    }

    /// Adds the baselines: the bare atomic load pair (the floor), the
    /// breaker a user writes by hand with two atomics (`by_hand_two_atomics`:
    /// no single probe, no stale results, a racy trip) and the `Mutex`
    /// breaker (the naive reference).
    pub fn baselines(self) -> Lab {
        self.subject::<crate::subjects::AtomicPair>()
            .subject::<crate::subjects::ByHand>()
            .subject::<crate::subjects::MutexBaseline>()
    }

    /// Adds `tripword`: the core's ticket API in both word widths, the
    /// per-worker scaling control, `tripword-std`'s `call` and
    /// `call_async`, its registry (for workloads with `keys` > 1), and
    /// (feature `tower`) its tower layer.
    #[cfg(feature = "tripword")]
    pub fn tripword(self) -> Lab {
        use crate::subjects::{
            PrivateTripword, Tripword, TripwordCall, TripwordCallAsync, TripwordRegistry,
        };
        let lab = self
            .subject::<Tripword<tripword::W64>>()
            .subject::<Tripword<tripword::W32>>()
            .subject::<PrivateTripword>()
            .subject::<TripwordCall>()
            .subject::<TripwordCallAsync>()
            .subject::<TripwordRegistry>();
        #[cfg(feature = "tower")]
        let lab = lab.subject::<crate::subjects::TripwordTower>();
        lab
    }

    /// Adds the peers from crates.io: `failsafe`, `recloser`, `seatbelt`,
    /// `tower-resilience`.
    #[cfg(feature = "peers")]
    pub fn peers(self) -> Lab {
        use crate::subjects::{Failsafe, Recloser, Seatbelt, TowerResilience};
        self.subject::<Failsafe>()
            .subject::<Recloser>()
            .subject::<Seatbelt>()
            .subject::<TowerResilience>()
    }

    /// Every built-in implementation this build has.
    pub fn builtin(self) -> Lab {
        let lab = self.baselines();
        #[cfg(feature = "tripword")]
        let lab = lab.tripword();
        #[cfg(feature = "peers")]
        let lab = lab.peers();
        lab
    }

    /// The implementations' names, in report order.
    pub fn names(&self) -> Vec<&'static str> {
        self.entries.iter().map(|e| e.name).collect()
    }

    fn scheduler_names(&self) -> Vec<String> {
        self.schedulers.iter().map(|s| s.name()).collect()
    }

    /// Whether `--only` keeps the cell.
    fn keeps(&self, imp: &str, sched: &str, workload: &str) -> bool {
        let only = &self.options.only;
        let scheds = self.scheduler_names();
        let loads = self.options.workloads();
        let is_impl = |f: &String| self.entries.iter().any(|e| e.name == f.as_str());
        let is_sched = |f: &String| scheds.contains(f);
        let is_load = |f: &String| loads.iter().any(|w| &w.name == f);
        let dimension = |of_kind: &dyn Fn(&String) -> bool, value: &str| {
            let named: Vec<&String> = only.iter().filter(|f| of_kind(f)).collect();
            named.is_empty() || named.iter().any(|f| f.as_str() == value)
        };
        dimension(&is_impl, imp) && dimension(&is_sched, sched) && dimension(&is_load, workload)
    }

    /// What `--list` prints.
    pub fn list(&self) -> String {
        let mut out = String::from("implementations:\n");
        for e in &self.entries {
            let _ = writeln!(out, "  {} ({})", e.name, e.kind.name());
        }
        out.push_str("schedulers:\n");
        for s in self.scheduler_names() {
            let _ = writeln!(out, "  {s}");
        }
        out.push_str("workloads:\n");
        for w in self.options.workloads() {
            let _ = writeln!(out, "  {}", w.describe());
        }
        out
    }

    /// The headline: `--headline`, else yours, else `tripword_w64`, else
    /// the first. An error names what can be chosen.
    pub fn headline(&self) -> Result<String, String> {
        let names = self.names();
        match &self.options.headline {
            Some(h) if names.contains(&h.as_str()) => Ok(h.clone()),
            Some(h) => Err(format!(
                "--headline {h}: no such implementation; choose one of {}",
                names.join(", ")
            )),
            None => Ok(self
                .entries
                .iter()
                .find(|e| e.kind == Kind::Yours)
                .map(|e| e.name)
                .or_else(|| names.iter().copied().find(|n| *n == "tripword_w64"))
                .or_else(|| names.first().copied())
                .unwrap_or_default()
                .to_string()),
        }
    }

    /// Checks the options against what this lab has: `Err` says what is
    /// wrong (an unknown `--only`, `--headline` or `--scheduler` name).
    pub fn check(&self) -> Result<(), String> {
        self.headline()?;
        let scheds = self.scheduler_names();
        let loads = self.options.workloads();
        for s in &self.options.schedulers {
            if !scheds.contains(s) {
                return Err(format!(
                    "--scheduler {s}: unknown; this build has {}",
                    scheds.join(", ")
                ));
            }
        }
        let names = self.names();
        let unknown: Vec<&String> = self
            .options
            .only
            .iter()
            .filter(|f| {
                !names.contains(&f.as_str())
                    && !scheds.contains(f)
                    && !loads.iter().any(|w| &w.name == *f)
            })
            .collect();
        if !unknown.is_empty() {
            return Err(format!(
                "--only: unknown name(s) {unknown:?}\n{}",
                self.list()
            ));
        }
        Ok(())
    }

    /// Measures every cell `--only` keeps, `--repeats` times (interleaved),
    /// printing progress on stderr. With `--list`, prints the names and
    /// exits; with a name nothing has, prints what is wrong and exits with
    /// status 2.
    pub fn run(&self) -> Sweep {
        let o = &self.options;
        if o.list {
            print!("{}", self.list());
            std::process::exit(0);
        }
        if let Err(e) = self.check() {
            eprintln!("{e}");
            std::process::exit(2);
        }
        self.measure()
    }

    /// [`run`](Self::run) without the exits: the caller has [`check`]ed.
    ///
    /// [`check`]: Self::check
    pub fn measure(&self) -> Sweep {
        let o = &self.options;
        let started_unix = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_secs());
        let load_start = load_average();
        let counts = o.worker_counts();
        let workloads = o.workloads();
        let schedulers: Vec<&Arc<dyn Scheduler>> = self
            .schedulers
            .iter()
            .filter(|s| o.schedulers.is_empty() || o.schedulers.contains(&s.name()))
            .collect();
        let timing = Timing {
            warm_up: o.warm_up(),
            duration: o.duration(),
            sample: !o.no_latency,
        };
        let timer_cost_ns = crate::sched::timer_cost_ns();
        if counts.iter().any(|n| *n > available()) {
            eprintln!(
                "WARNING: more workers than available_parallelism {}: those cells measure the OS scheduler as much as the breaker",
                available()
            );
        }
        let mut rows: Vec<Row> = Vec::new();
        let mut latencies: Vec<Vec<u32>> = Vec::new();
        for repeat in 0..o.repeats() {
            eprintln!("repeat {}/{}", repeat + 1, o.repeats());
            for sched in &schedulers {
                let sname = sched.name();
                for w in &workloads {
                    for &n in &counts {
                        for e in &self.entries {
                            if !self.keeps(e.name, &sname, &w.name) {
                                continue;
                            }
                            let Some(cell) = (e.cell)(w) else { continue };
                            let run = sched.run(cell, n, timing);
                            let admitted = run.admitted as f64 / run.calls.max(1) as f64;
                            let i = match rows.iter().position(|r| {
                                r.scheduler == sname
                                    && r.workload == w.name
                                    && r.implementation == e.name
                                    && r.workers == n
                            }) {
                                Some(i) => i,
                                None => {
                                    rows.push(Row {
                                        scheduler: sname.clone(),
                                        workload: w.name.clone(),
                                        implementation: e.name.to_string(),
                                        kind: e.kind,
                                        workers: n,
                                        busy_threads: sched.busy_threads(n),
                                        throughput: Vec::new(),
                                        admitted: 0.0,
                                        fairness: Vec::new(),
                                        latency: None,
                                    });
                                    latencies.push(Vec::new());
                                    rows.len() - 1
                                }
                            };
                            let r = &mut rows[i];
                            let k = r.throughput.len() as f64;
                            r.admitted = (r.admitted * k + admitted) / (k + 1.0);
                            r.throughput.push(run.throughput());
                            r.fairness.extend(Fairness::of(&run.per_worker));
                            latencies[i].extend(run.latencies_ns);
                        }
                    }
                }
            }
        }
        for (r, mut l) in rows.iter_mut().zip(latencies) {
            r.latency = Latency::of(&mut l);
        }
        let name = o
            .name
            .clone()
            .unwrap_or_else(|| report::timestamp(started_unix));
        Sweep {
            out: o.out.clone(),
            results: Results {
                schema: SCHEMA.to_string(),
                name,
                started_unix,
                machine: Machine {
                    cpus: available(),
                    cpu_model: cpu_model(),
                    load_start,
                    load_end: load_average(),
                },
                settings: Settings {
                    millis: timing.duration.as_millis() as u64,
                    warm_up_millis: timing.warm_up.as_millis() as u64,
                    repeats: o.repeats(),
                    workers: counts,
                    sample_every: if timing.sample { CHUNK } else { 0 },
                    timer_cost_ns,
                    headline: self.headline().unwrap_or_default(),
                },
                workloads,
                schedulers: schedulers.iter().map(|s| s.name()).collect(),
                rows,
            },
        }
    }
}

/// No flags of one's own (for [`Lab::from_args`]).
#[derive(Clone, Copy, Debug, clap::Args)]
pub struct NoFlags {}

/// What a [`Lab`] measured.
#[derive(Clone, Debug)]
pub struct Sweep {
    /// The folder runs are written under (`--out`).
    pub out: PathBuf,
    /// The results (the JSON document).
    pub results: Results,
}

impl Sweep {
    /// The most workers of the run.
    pub fn widest(&self) -> usize {
        self.results.settings.workers.last().copied().unwrap_or(1)
    }

    /// The measured row of one cell.
    pub fn get(&self, sched: &str, workload: &str, imp: &str, workers: usize) -> Option<&Row> {
        self.results.get(sched, workload, imp, workers)
    }

    /// The Markdown report.
    pub fn markdown(&self) -> String {
        self.results.markdown()
    }

    /// Prints the report and `extra` lines, and writes every file to a
    /// folder of its own under `--out`; returns that folder (`None`, with
    /// the error printed, when it could not be written).
    pub fn report(&self, extra: &[String]) -> Option<PathBuf> {
        let mut md = self.markdown();
        for line in extra {
            md.push_str(line);
        }
        println!("{md}");
        let written = report::fresh_dir(&self.out, &self.results.name)
            .and_then(|dir| report::write_all(&self.results, &md, &dir).map(|_| dir));
        match written {
            Ok(dir) => {
                println!(
                    "wrote {}/ (report.html, report.md, results.json, results.csv, plots)",
                    dir.display()
                );
                Some(dir)
            }
            Err(e) => {
                eprintln!("could not write under {}: {e}", self.out.display());
                None
            }
        }
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
