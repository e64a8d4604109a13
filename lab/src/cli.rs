//! The command line of the lab (and of any program built on [`Lab`]).
//!
//! [`Lab`]: crate::Lab

use std::path::PathBuf;
use std::time::Duration;

use crate::workload::Workload;

/// `available_parallelism()`, or 1 where it is unknown.
pub fn available() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get())
}

/// 1, 2, 4, … below `max`, then `max`.
pub fn doubling(max: usize) -> Vec<usize> {
    let max = max.max(1);
    let mut v: Vec<usize> = std::iter::successors(Some(1usize), |n| n.checked_mul(2))
        .take_while(|n| *n < max)
        .collect();
    v.push(max);
    v
}

fn workload(s: &str) -> Result<Workload, String> {
    Workload::parse(s)
}

/// The options of a run.
#[derive(Clone, Debug, clap::Args)]
#[command(
    about = "A contention lab: workloads × schedulers × worker counts × implementations",
    long_about = "A contention lab: workloads × schedulers × worker counts × implementations.\n\n\
        Every implementation makes the calls of each workload for a fixed time, with each \
        worker count, on each scheduler. Repeats are interleaved (each walks the whole grid) \
        so that drift on a shared machine hits every implementation alike; every figure is \
        the median with the min–max of the repeats. Writes results.json, results.csv, \
        report.md, report.html and one SVG per scheduler to a folder of its own \
        (--out/--name, never overwritten). Never fails on timings.\n\n\
        Compare two runs: tripword-lab compare A/results.json B/results.json\n\n\
        See docs/lab.md for the guide.",
    after_help = "Examples:\n  \
        tripword-lab --quick                                  # a smoke test\n  \
        tripword-lab --workers 1,3,6 --scheduler os_threads\n  \
        tripword-lab --workload closed --workload 'flaky:fail=0.1,burst=8'\n  \
        tripword-lab compare target/lab/a/results.json target/lab/b/results.json\n  \
        tripword-lab --list"
)]
pub struct Options {
    /// The worker counts (threads or tasks) per cell, comma-separated (a
    /// later --workers replaces an earlier one).
    /// Default: 1, 2, 4, … up to available_parallelism(). More workers than
    /// CPUs is allowed (a warning is printed).
    #[arg(long, value_name = "N,N,…", value_delimiter = ',', action = clap::ArgAction::Set)]
    pub workers: Vec<usize>,

    /// Shorthand for --workers 1,2,4,…,N.
    #[arg(long, value_name = "N", conflicts_with = "workers")]
    pub threads: Option<usize>,

    /// A workload: a built-in name (closed, failure_storm, half_open_storm)
    /// or NAME:key=value,… with keys fail (failure share), burst (failures
    /// in runs of this length), slow (share of slow calls), slow_us,
    /// keys (for registries), setup (trips, never_trips, tripped).
    /// Repeatable. Default: the three built-in ones.
    #[arg(long = "workload", value_name = "SPEC", value_parser = workload)]
    pub workloads: Vec<Workload>,

    /// The schedulers to run, comma-separated. Default: every one this
    /// build has (--list).
    #[arg(long = "scheduler", value_name = "NAME", value_delimiter = ',', action = clap::ArgAction::Set)]
    pub schedulers: Vec<String>,

    /// Measured time per cell, in milliseconds. Default: 300, or 20 with
    /// --quick.
    #[arg(long, value_name = "MS")]
    pub millis: Option<u64>,

    /// Warm-up before each cell, in milliseconds. Default: a fifth of
    /// --millis, at least 10.
    #[arg(long, value_name = "MS")]
    pub warm_up: Option<u64>,

    /// How many times the whole grid is measured (interleaved).
    #[arg(long, value_name = "R", default_value_t = 3)]
    pub repeats: usize,

    /// A smoke test: 20 ms cells (unless --millis says otherwise).
    #[arg(long)]
    pub quick: bool,

    /// Time no calls (by default one call in 1024 is timed, for the
    /// latency percentiles).
    #[arg(long)]
    pub no_latency: bool,

    /// Keep only cells whose implementation, scheduler or workload is NAME.
    /// Names of one kind add up, kinds narrow each other.
    #[arg(long, value_name = "NAME")]
    pub only: Vec<String>,

    /// The implementation the ratio tables divide by. Default: yours (the
    /// first implementation of kind `yours`), else tripword_w64, else the
    /// first one.
    #[arg(long, value_name = "NAME")]
    pub headline: Option<String>,

    /// The folder runs are written under.
    #[arg(long, value_name = "DIR", default_value = "target/lab")]
    pub out: PathBuf,

    /// This run's folder name under --out. Default: the start time
    /// (YYYYMMDD-HHMMSS, UTC). A folder that exists gets a -2, -3, … suffix.
    #[arg(long, value_name = "NAME")]
    pub name: Option<String>,

    /// Print the implementations, schedulers and workloads, then exit.
    #[arg(long)]
    pub list: bool,

    /// Ignored: `cargo bench` passes it to every target.
    #[arg(long, hide = true)]
    pub bench: bool,
}

impl Options {
    /// The measured time per cell.
    pub fn duration(&self) -> Duration {
        let default = if self.quick { 20 } else { 300 };
        Duration::from_millis(self.millis.unwrap_or(default).max(1))
    }

    /// The warm-up per cell.
    pub fn warm_up(&self) -> Duration {
        match self.warm_up {
            Some(ms) => Duration::from_millis(ms),
            None => (self.duration() / 5).max(Duration::from_millis(10)),
        }
    }

    /// How many times the grid is measured.
    pub fn repeats(&self) -> usize {
        self.repeats.max(1)
    }

    /// The worker counts.
    pub fn worker_counts(&self) -> Vec<usize> {
        if let Some(n) = self.threads {
            return doubling(n);
        }
        let mut w: Vec<usize> = self.workers.iter().copied().filter(|n| *n > 0).collect();
        if w.is_empty() {
            return doubling(available());
        }
        w.sort_unstable();
        w.dedup();
        w
    }

    /// The workloads.
    pub fn workloads(&self) -> Vec<Workload> {
        if self.workloads.is_empty() {
            Workload::builtin()
        } else {
            self.workloads.clone()
        }
    }
}
