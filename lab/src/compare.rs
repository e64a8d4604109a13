//! `compare A.json B.json`: every cell both runs measured, its throughput
//! change from A to B, judged against both runs' spread
//! ([`judge`](crate::stats::judge)).

use std::fmt::Write as _;

use crate::report::Results;
use crate::stats::{Spread, Verdict, judge};

/// One cell's change.
#[derive(Clone, Debug, PartialEq)]
pub struct Change {
    /// `scheduler / workload / implementation / workers`.
    pub cell: String,
    /// A's median throughput, calls/s.
    pub before: Spread,
    /// B's.
    pub after: Spread,
    /// B's median ÷ A's − 1.
    pub change: f64,
    /// Regression, improvement or noise.
    pub verdict: Verdict,
}

/// The changes of every cell in both runs, in A's order.
pub fn compare(a: &Results, b: &Results, threshold: f64) -> Vec<Change> {
    a.rows
        .iter()
        .filter_map(|ra| {
            let rb = b.get(&ra.scheduler, &ra.workload, &ra.implementation, ra.workers)?;
            let (change, verdict) = judge(&ra.throughput, &rb.throughput, threshold);
            Some(Change {
                cell: format!(
                    "{} / {} / {} / {}",
                    ra.scheduler, ra.workload, ra.implementation, ra.workers
                ),
                before: ra.spread(),
                after: rb.spread(),
                change,
                verdict,
            })
        })
        .collect()
}

/// The comparison as a Markdown table and a summary line.
pub fn render(changes: &[Change], threshold: f64) -> String {
    let mut out = String::from(
        "| cell (scheduler / workload / implementation / workers) | A M calls/s (min–max) | B M calls/s (min–max) | change | verdict |\n|---|---:|---:|---:|---|\n",
    );
    let (mut reg, mut imp) = (0, 0);
    for c in changes {
        let (a, b) = (c.before.scaled(1e6), c.after.scaled(1e6));
        let v = match c.verdict {
            Verdict::Regression => {
                reg += 1;
                "REGRESSION"
            }
            Verdict::Improvement => {
                imp += 1;
                "improvement"
            }
            Verdict::Noise => "noise",
        };
        let _ = writeln!(
            out,
            "| {} | {:.2} ({:.2}–{:.2}) | {:.2} ({:.2}–{:.2}) | {:+.1}% | {v} |",
            c.cell,
            a.median,
            a.min,
            a.max,
            b.median,
            b.min,
            b.max,
            c.change * 100.0
        );
    }
    let _ = writeln!(
        out,
        "\n{} cells compared: {reg} regression(s), {imp} improvement(s), {} within the spread or {:.0}% (noise)",
        changes.len(),
        changes.len() - reg - imp,
        threshold * 100.0
    );
    out
}

/// The `compare` subcommand: `A.json B.json [--threshold PCT]`. Returns the
/// exit status: 0, or 2 when a file cannot be read.
pub fn main(args: &[String]) -> i32 {
    let mut files = Vec::new();
    let mut threshold = 0.05;
    let mut it = args.iter();
    while let Some(a) = it.next() {
        match a.as_str() {
            "--threshold" => match it.next().and_then(|v| v.parse::<f64>().ok()) {
                Some(pct) => threshold = pct / 100.0,
                None => {
                    eprintln!("--threshold takes a percentage (5 = 5%)");
                    return 2;
                }
            },
            "-h" | "--help" => {
                println!(
                    "tripword-lab compare A/results.json B/results.json [--threshold PCT]\n\n\
                     Judges each cell both runs measured: a regression (or improvement) when B's \
                     min–max range of throughput lies wholly below (above) A's and the medians \
                     differ by more than PCT percent (default 5); noise otherwise."
                );
                return 0;
            }
            f => files.push(f.to_string()),
        }
    }
    let [a, b] = files.as_slice() else {
        eprintln!("compare takes two results.json files");
        return 2;
    };
    let load = |p: &str| -> Result<Results, String> {
        let text = std::fs::read_to_string(p).map_err(|e| format!("{p}: {e}"))?;
        serde_json::from_str(&text).map_err(|e| format!("{p}: {e}"))
    };
    match (load(a), load(b)) {
        (Ok(ra), Ok(rb)) => {
            println!("A: {a} ({})\nB: {b} ({})\n", ra.name, rb.name);
            print!("{}", render(&compare(&ra, &rb, threshold), threshold));
            0
        }
        (Err(e), _) | (_, Err(e)) => {
            eprintln!("{e}");
            2
        }
    }
}
