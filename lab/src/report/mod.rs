//! A run's results: one [`Row`] per cell (scheduler × workload ×
//! implementation × workers), gathered in [`Results`] (the JSON document,
//! schema in `docs/lab.md`), and written as Markdown tables, CSV, JSON, SVG
//! plots (feature `plots`) and one HTML page, into a folder of its own.

mod html;
#[cfg(feature = "plots")]
mod svg;

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

pub use self::html::{html, markdown_to_html};
#[cfg(feature = "plots")]
pub use self::svg::svg;
use crate::stats::{Fairness, Latency, Spread, ratio};
use crate::subject::Kind;
use crate::workload::Workload;

/// The `schema` field of every results file this version writes.
pub const SCHEMA: &str = "tripword-lab/1";

/// One measured cell, with all its repeats.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Row {
    /// The scheduler's name.
    pub scheduler: String,
    /// The workload's name.
    pub workload: String,
    /// The implementation's name.
    pub implementation: String,
    /// What the implementation is in the comparison.
    pub kind: Kind,
    /// Workers (threads or tasks).
    pub workers: usize,
    /// Threads busy with those workers (1 on a current-thread runtime).
    pub busy_threads: usize,
    /// Calls per second, all workers together, one per repeat.
    pub throughput: Vec<f64>,
    /// Admitted calls over all calls, over all repeats.
    pub admitted: f64,
    /// How evenly the workers shared the calls, one per repeat.
    pub fairness: Vec<Fairness>,
    /// Latency percentiles of the sampled calls of all repeats (absent
    /// when sampling was off).
    pub latency: Option<Latency>,
}

impl Row {
    /// The throughput's median and range over the repeats.
    pub fn spread(&self) -> Spread {
        Spread::of(&self.throughput)
    }
    /// Median calls per second.
    pub fn median(&self) -> f64 {
        self.spread().median
    }
    /// What one call costs a busy thread, in nanoseconds (busy threads ÷
    /// median throughput).
    pub fn ns_per_call(&self) -> f64 {
        let m = self.median();
        if m > 0.0 {
            self.busy_threads as f64 / m * 1e9
        } else {
            f64::INFINITY
        }
    }
    /// The least fair repeat.
    pub fn worst_fairness(&self) -> Option<Fairness> {
        Fairness::worst(&self.fairness)
    }
}

/// The machine a run was taken on.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Machine {
    /// `available_parallelism()`.
    pub cpus: usize,
    /// The CPU's model name.
    pub cpu_model: String,
    /// Load averages (1, 5, 15 min) at the start.
    pub load_start: String,
    /// Load averages at the end.
    pub load_end: String,
}

/// How a run was taken.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Settings {
    /// Measured time per cell, in milliseconds.
    pub millis: u64,
    /// Warm-up per cell, in milliseconds.
    pub warm_up_millis: u64,
    /// Repeats of the whole grid (interleaved).
    pub repeats: usize,
    /// The worker counts.
    pub workers: Vec<usize>,
    /// One call in this many is timed (0: none).
    pub sample_every: usize,
    /// What one timing costs (a pair of `Instant::now()`), in nanoseconds.
    pub timer_cost_ns: f64,
    /// The implementation the ratio tables divide by.
    pub headline: String,
}

/// A whole run: the JSON document (`results.json`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Results {
    /// [`SCHEMA`].
    pub schema: String,
    /// The run's name (its folder's).
    pub name: String,
    /// Seconds since the Unix epoch at the start.
    pub started_unix: u64,
    /// The machine.
    pub machine: Machine,
    /// The settings.
    pub settings: Settings,
    /// The workloads, in report order.
    pub workloads: Vec<Workload>,
    /// The schedulers' names, in report order.
    pub schedulers: Vec<String>,
    /// One row per measured cell.
    pub rows: Vec<Row>,
}

impl Results {
    /// The row of one cell.
    pub fn get(&self, scheduler: &str, workload: &str, imp: &str, workers: usize) -> Option<&Row> {
        self.rows.iter().find(|r| {
            r.scheduler == scheduler
                && r.workload == workload
                && r.implementation == imp
                && r.workers == workers
        })
    }

    /// The implementations measured, in report order.
    pub fn implementations(&self) -> Vec<String> {
        distinct(self.rows.iter().map(|r| r.implementation.clone()))
    }

    /// The header: machine, settings, workloads, latency overhead.
    pub fn header(&self) -> String {
        let (m, s) = (&self.machine, &self.settings);
        let mut h = String::new();
        let _ = writeln!(
            h,
            "machine: {} × {}; load average at start {}, at end {}",
            m.cpus, m.cpu_model, m.load_start, m.load_end
        );
        let _ = writeln!(
            h,
            "run {}: workers {:?}, {} ms per cell after a {} ms warm-up, {} repeat(s) (interleaved)",
            self.name, s.workers, s.millis, s.warm_up_millis, s.repeats
        );
        for w in &self.workloads {
            let _ = writeln!(h, "workload {}", w.describe());
        }
        if s.sample_every > 0 {
            let _ = writeln!(
                h,
                "latency: 1 call in {} timed; a timing costs {:.0} ns, {:.3} ns per call spread over all calls",
                s.sample_every,
                s.timer_cost_ns,
                s.timer_cost_ns / s.sample_every as f64
            );
        } else {
            h.push_str("latency: not sampled (--no-latency)\n");
        }
        h
    }

    /// The Markdown report: the header, then per scheduler and workload a
    /// throughput table, a ratio table against the headline, and a latency
    /// and fairness table.
    pub fn markdown(&self) -> String {
        let mut md = self.header();
        md.push('\n');
        let workloads: Vec<&str> = self.workloads.iter().map(|w| w.name.as_str()).collect();
        for sched in &self.schedulers {
            for w in &workloads {
                md.push_str(&tables(self, sched, w));
            }
        }
        md
    }
}

fn distinct<T: PartialEq>(it: impl Iterator<Item = T>) -> Vec<T> {
    let mut v = Vec::new();
    for x in it {
        if !v.contains(&x) {
            v.push(x);
        }
    }
    v
}

fn label(r: &Row) -> String {
    if r.kind == Kind::Yours {
        format!("{} (yours)", r.implementation)
    } else {
        r.implementation.clone()
    }
}

/// Markdown tables of one scheduler and workload (empty when not measured).
pub fn tables(res: &Results, sched: &str, workload: &str) -> String {
    let cell: Vec<&Row> = res
        .rows
        .iter()
        .filter(|r| r.scheduler == sched && r.workload == workload)
        .collect();
    let mut out = String::new();
    if cell.is_empty() {
        return out;
    }
    let impls: Vec<&Row> = {
        let names = distinct(cell.iter().map(|r| r.implementation.as_str()));
        names
            .iter()
            .filter_map(|n| cell.iter().copied().find(|r| r.implementation == *n))
            .collect()
    };
    let mut workers = distinct(cell.iter().map(|r| r.workers));
    workers.sort_unstable();
    let head = |out: &mut String, first: &str, cols: &[String]| {
        let _ = write!(out, "| {first} |");
        for c in cols {
            let _ = write!(out, " {c} |");
        }
        let _ = write!(out, "\n|---:|");
        for _ in cols {
            out.push_str("---:|");
        }
        out.push('\n');
    };
    let _ = writeln!(
        out,
        "### {sched} / {workload}: million calls per second, all workers together (median, min–max of {} repeat(s))\n",
        res.settings.repeats
    );
    let names: Vec<String> = impls.iter().map(|r| label(r)).collect();
    head(&mut out, "workers", &names);
    for &n in &workers {
        let _ = write!(out, "| {n} |");
        for i in &impls {
            match res.get(sched, workload, &i.implementation, n) {
                Some(r) => {
                    let s = r.spread().scaled(1e6);
                    let _ = write!(out, " {:.2} ({:.2}–{:.2}) |", s.median, s.min, s.max);
                }
                None => out.push_str(" – |"),
            }
        }
        out.push('\n');
    }
    let headline = &res.settings.headline;
    let others: Vec<&&Row> = impls
        .iter()
        .filter(|r| r.implementation != *headline)
        .collect();
    let headline_label = cell
        .iter()
        .find(|r| r.implementation == *headline)
        .map(|r| label(r));
    if let Some(hl) = headline_label.filter(|_| !others.is_empty()) {
        let _ = writeln!(
            out,
            "\n{hl} throughput ÷ each other's (median, min–max of the per-repeat ratios; above 1: {headline} did more calls; `?`: the range straddles 1 or spans over 25%, do not read it)\n"
        );
        let cols: Vec<String> = others.iter().map(|r| format!("vs {}", label(r))).collect();
        head(&mut out, "workers", &cols);
        let mut noisy = 0;
        for &n in &workers {
            let _ = write!(out, "| {n} |");
            let h = res.get(sched, workload, headline, n);
            for o in &others {
                let other = res.get(sched, workload, &o.implementation, n);
                match h
                    .zip(other)
                    .and_then(|(h, o)| ratio(&h.throughput, &o.throughput))
                {
                    Some(r) => {
                        let s = r.spread;
                        let mark = if r.noisy {
                            noisy += 1;
                            " ?"
                        } else {
                            ""
                        };
                        let _ =
                            write!(out, " {:.2}× ({:.2}–{:.2}){mark} |", s.median, s.min, s.max);
                    }
                    None => out.push_str(" – |"),
                }
            }
            out.push('\n');
        }
        if noisy > 0 {
            let _ = writeln!(
                out,
                "\nWARNING: {noisy} ratio(s) above are marked `?`: their repeats disagree; run more repeats (--repeats 5) or longer cells (--millis) before reading them."
            );
        }
    }
    if cell
        .iter()
        .any(|r| r.latency.is_some() || !r.fairness.is_empty())
    {
        let _ = writeln!(
            out,
            "\nlatency of the sampled calls (ns: p50 / p99 / p99.9 / max) and fairness (smallest–largest worker's calls ÷ an even share)\n"
        );
        head(&mut out, "workers", &names);
        for &n in &workers {
            let _ = write!(out, "| {n} |");
            for i in &impls {
                match res.get(sched, workload, &i.implementation, n) {
                    Some(r) => {
                        if let Some(l) = r.latency {
                            let _ = write!(
                                out,
                                " {:.0} / {:.0} / {:.0} / {:.0}",
                                l.p50_ns, l.p99_ns, l.p999_ns, l.max_ns
                            );
                        } else {
                            out.push_str(" –");
                        }
                        if let Some(f) = r.worst_fairness() {
                            let _ = write!(out, "; {:.2}–{:.2}", f.min_share, f.max_share);
                        }
                        out.push_str(" |");
                    }
                    None => out.push_str(" – |"),
                }
            }
            out.push('\n');
        }
    }
    out.push('\n');
    out
}

/// The CSV header: one line per [`Row`].
pub const CSV_HEADER: &str = "scheduler,workload,implementation,kind,workers,busy_threads,repeats,calls_per_sec_median,calls_per_sec_min,calls_per_sec_max,ns_per_call_per_thread,admitted_fraction,fairness_min_share,fairness_max_share,latency_samples,p50_ns,p99_ns,p999_ns,max_ns";

/// The rows as CSV, with [`CSV_HEADER`] (names are `[A-Za-z0-9_]`, so no
/// field needs quoting).
pub fn csv(rows: &[Row]) -> String {
    let mut out = format!("{CSV_HEADER}\n");
    for r in rows {
        let s = r.spread();
        let f = r.worst_fairness();
        let _ = write!(
            out,
            "{},{},{},{},{},{},{},{:.0},{:.0},{:.0},{:.3},{:.6},",
            r.scheduler,
            r.workload,
            r.implementation,
            r.kind.name(),
            r.workers,
            r.busy_threads,
            r.throughput.len(),
            s.median,
            s.min,
            s.max,
            r.ns_per_call(),
            r.admitted
        );
        match f {
            Some(f) => {
                let _ = write!(out, "{:.4},{:.4},", f.min_share, f.max_share);
            }
            None => out.push_str(",,"),
        }
        match r.latency {
            Some(l) => {
                let _ = writeln!(
                    out,
                    "{},{:.0},{:.0},{:.0},{:.0}",
                    l.samples, l.p50_ns, l.p99_ns, l.p999_ns, l.max_ns
                );
            }
            None => out.push_str(",,,,\n"),
        }
    }
    out
}

/// A folder of its own under `root`: `root/name`, or `root/name-2`, `-3`, …
/// when that exists. Created.
pub fn fresh_dir(root: &Path, name: &str) -> std::io::Result<PathBuf> {
    std::fs::create_dir_all(root)?;
    for n in 1.. {
        let dir = if n == 1 {
            root.join(name)
        } else {
            root.join(format!("{name}-{n}"))
        };
        match std::fs::create_dir(&dir) {
            Ok(()) => return Ok(dir),
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
            Err(e) => return Err(e),
        }
    }
    unreachable!("some suffix is free")
}

/// `YYYYMMDD-HHMMSS` (UTC) of `unix` seconds.
pub fn timestamp(unix: u64) -> String {
    let (days, secs) = (unix / 86_400, unix % 86_400);
    // Civil from days (Howard Hinnant's algorithm).
    let z = days as i64 + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    format!(
        "{y:04}{m:02}{d:02}-{:02}{:02}{:02}",
        secs / 3600,
        secs / 60 % 60,
        secs % 60
    )
}

/// Writes `results.json`, `results.csv`, `report.md`, one
/// `<scheduler>.svg` per scheduler (feature `plots`) and `report.html` to
/// `dir`; returns the paths.
pub fn write_all(res: &Results, md: &str, dir: &Path) -> std::io::Result<Vec<PathBuf>> {
    let mut written = Vec::new();
    let mut put = |name: String, text: &str| -> std::io::Result<()> {
        let p = dir.join(name);
        std::fs::write(&p, text)?;
        written.push(p);
        Ok(())
    };
    let json = serde_json::to_string_pretty(res).map_err(std::io::Error::other)?;
    put("results.json".into(), &json)?;
    put("results.csv".into(), &csv(&res.rows))?;
    put("report.md".into(), md)?;
    #[cfg_attr(not(feature = "plots"), allow(unused_mut))]
    let mut plots = Vec::new();
    #[cfg(feature = "plots")]
    for sched in &res.schedulers {
        if res.rows.iter().any(|r| &r.scheduler == sched) {
            let s = svg(res, sched);
            put(format!("{sched}.svg"), &s)?;
            plots.push(s);
        }
    }
    put("report.html".into(), &html(res, md, &plots))?;
    Ok(written)
}

#[cfg(test)]
mod tests;
