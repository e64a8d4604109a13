//! Turns criterion's saved results into the ratio tables of
//! the pages under `docs/performance/`.
//!
//! ```text
//! criterion-table [--dir DIR] [--runs NAME,NAME,...] [--head FUNCTION] [GROUP ...]
//! ```
//!
//! Reads `DIR/<group>/<bench>/<run>/{benchmark,estimates}.json` (criterion's
//! layout; `DIR` defaults to `$CARGO_TARGET_DIR/criterion` or
//! `target/criterion`; runs default to `new`, the latest). Save repeated runs
//! with `cargo bench ... -- --save-baseline run1` and pass `--runs
//! run1,run2,run3` to see their spread. Per benchmark it prints the median
//! over runs of criterion's median time per iteration, the spread of the
//! runs ((max - min) / median), the ratio to the group's baseline and the
//! ratio to `tripword_w64`. In the contention groups one iteration is one
//! call on every thread, so the time is what one thread sees per call.
//!
//! The group's baseline is its `atomic_load*` benchmark, else its
//! `mutex_breaker*` one, else its `bare_*` one (a service alone, in
//! `tower_layer`). `--head FUNCTION` takes the ratios to `FUNCTION` instead
//! of `tripword_w64` and adds a column with the difference in ns (the
//! `call_async` group: `--head tripword_w64/call`).

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

#[derive(Debug, Default)]
struct Bench {
    group: String,
    function: String,
    value: Option<String>,
    elements: Option<u64>,
    /// Median time per iteration (ns), one per run found.
    runs: Vec<f64>,
}

impl Bench {
    fn median(&self) -> f64 {
        let mut v = self.runs.clone();
        v.sort_by(f64::total_cmp);
        match v.len() {
            0 => f64::NAN,
            n if n % 2 == 1 => v[n / 2],
            n => (v[n / 2 - 1] + v[n / 2]) / 2.0,
        }
    }
    fn spread(&self) -> f64 {
        let lo = self.runs.iter().copied().fold(f64::INFINITY, f64::min);
        let hi = self.runs.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        (hi - lo) / self.median()
    }
}

/// The raw JSON text of `key`'s value (first occurrence), up to the next `,`
/// or `}` at the same depth. Enough for criterion's flat files.
fn raw<'a>(json: &'a str, key: &str) -> Option<&'a str> {
    let start = json.find(&format!("\"{key}\":"))? + key.len() + 3;
    let rest = &json[start..];
    let mut depth = 0i32;
    let mut in_str = false;
    for (i, c) in rest.char_indices() {
        match c {
            '"' => in_str = !in_str,
            '{' | '[' if !in_str => depth += 1,
            '}' | ']' if !in_str => {
                if depth == 0 {
                    return Some(rest[..i].trim());
                }
                depth -= 1;
            }
            ',' if !in_str && depth == 0 => return Some(rest[..i].trim()),
            _ => {}
        }
    }
    Some(rest.trim())
}

fn string(json: &str, key: &str) -> Option<String> {
    let v = raw(json, key)?;
    v.strip_prefix('"')
        .and_then(|s| s.strip_suffix('"'))
        .map(str::to_string)
}

fn median_ns(estimates: &str) -> Option<f64> {
    let median = raw(estimates, "median")?;
    raw(median, "point_estimate")?.parse().ok()
}

/// Baselines first, then tripword, then the peers.
fn rank(function: &str) -> u8 {
    match function {
        f if f.starts_with("atomic_load") || f.starts_with("bare_") => 0,
        f if f.starts_with("mutex_breaker") => 1,
        f if f.starts_with("tripword_w64") => 2,
        f if f.starts_with("tripword_w32") => 3,
        _ => 4,
    }
}

fn walk(dir: &Path, found: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for e in entries.flatten() {
        let p = e.path();
        if p.is_dir() {
            walk(&p, found);
        } else if p.file_name().is_some_and(|n| n == "benchmark.json") {
            found.push(p);
        }
    }
}

fn main() {
    let mut dir = std::env::var("CARGO_TARGET_DIR")
        .map(|t| PathBuf::from(t).join("criterion"))
        .unwrap_or_else(|_| PathBuf::from("target/criterion"));
    let mut runs = vec!["new".to_string()];
    let mut groups: Vec<String> = Vec::new();
    let mut head_name: Option<String> = None;
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        match a.as_str() {
            "--dir" => dir = PathBuf::from(args.next().unwrap_or_default()),
            "--runs" => {
                runs = args
                    .next()
                    .unwrap_or_default()
                    .split(',')
                    .map(str::to_string)
                    .collect();
            }
            "--head" => head_name = args.next(),
            "-h" | "--help" => {
                eprintln!(
                    "usage: criterion-table [--dir DIR] [--runs NAME,...] [--head FUNCTION] [GROUP ...]"
                );
                return;
            }
            g => groups.push(g.to_string()),
        }
    }
    let mut files = Vec::new();
    walk(&dir, &mut files);
    let mut benches: BTreeMap<String, Bench> = BTreeMap::new();
    for f in files {
        let Some(run) = f
            .parent()
            .and_then(Path::file_name)
            .and_then(|n| n.to_str())
        else {
            continue;
        };
        if !runs.iter().any(|r| r == run) {
            continue;
        }
        let (Ok(meta), Ok(est)) = (
            std::fs::read_to_string(&f),
            std::fs::read_to_string(f.with_file_name("estimates.json")),
        ) else {
            continue;
        };
        let Some(full) = string(&meta, "full_id") else {
            continue;
        };
        let Some(ns) = median_ns(&est) else { continue };
        let b = benches.entry(full).or_default();
        b.group = string(&meta, "group_id").unwrap_or_default();
        b.function = string(&meta, "function_id").unwrap_or_default();
        b.value = string(&meta, "value_str");
        b.elements = raw(&meta, "Elements").and_then(|v| v.parse().ok());
        b.runs.push(ns);
    }
    if benches.is_empty() {
        eprintln!(
            "no criterion results for runs {runs:?} under {}",
            dir.display()
        );
        std::process::exit(1);
    }
    let mut group_names: Vec<String> = Vec::new();
    for b in benches.values() {
        if !group_names.contains(&b.group)
            && (groups.is_empty() || groups.iter().any(|g| b.group.starts_with(g.as_str())))
        {
            group_names.push(b.group.clone());
        }
    }
    let mut out = String::new();
    for g in group_names {
        let mut members: Vec<&Bench> = benches.values().filter(|b| b.group == g).collect();
        // Contention groups: order by thread count, then keep criterion's
        // (alphabetical) order.
        members.sort_by_key(|b| {
            (
                b.value
                    .as_deref()
                    .and_then(|v| v.parse::<u64>().ok())
                    .unwrap_or(0),
                rank(&b.function),
            )
        });
        let values: Vec<Option<String>> = {
            let mut v: Vec<Option<String>> = Vec::new();
            for b in &members {
                if !v.contains(&b.value) {
                    v.push(b.value.clone());
                }
            }
            v
        };
        let _ = writeln!(out, "\n{g} ({} run(s): {})\n", runs.len(), runs.join(", "));
        let contended = members.iter().any(|b| b.elements.is_some());
        let head_label = head_name.as_deref().unwrap_or("tripword_w64");
        let (diff_head, diff_rule) = match &head_name {
            Some(h) => (format!(" − {h}, ns |"), "---:|"),
            None => (String::new(), ""),
        };
        if contended {
            let _ = writeln!(
                out,
                "| threads | implementation | ns per call per thread | spread | M calls/s total | ÷ baseline | ÷ {head_label} |{diff_head}\n|---:|---|---:|---:|---:|---:|---:|{diff_rule}"
            );
        } else {
            let _ = writeln!(
                out,
                "| benchmark | ns per call | spread | ÷ baseline | ÷ {head_label} |{diff_head}\n|---|---:|---:|---:|---:|{diff_rule}"
            );
        }
        for value in &values {
            let row: Vec<&&Bench> = members.iter().filter(|b| &b.value == value).collect();
            let baseline = row
                .iter()
                .find(|b| b.function.starts_with("atomic_load"))
                .or_else(|| row.iter().find(|b| b.function.starts_with("mutex_breaker")))
                .or_else(|| row.iter().find(|b| b.function.starts_with("bare_")))
                .map(|b| b.median());
            let head = match &head_name {
                Some(h) => row.iter().find(|b| &b.function == h),
                None => row
                    .iter()
                    .find(|b| {
                        b.function == "tripword_w64/manual_clock" || b.function == "tripword_w64"
                    })
                    .or_else(|| row.iter().find(|b| b.function.starts_with("tripword_w64"))),
            }
            .map(|b| b.median());
            for b in &row {
                let t = b.median();
                let base = baseline.map_or("–".to_string(), |x| format!("{:.2}×", t / x));
                let vs = head.map_or("–".to_string(), |x| format!("{:.2}×", t / x));
                let diff = match (&head_name, head) {
                    (Some(_), Some(x)) => format!(" {:+.2} |", t - x),
                    (Some(_), None) => " – |".to_string(),
                    (None, _) => String::new(),
                };
                let spread = if b.runs.len() > 1 {
                    format!("{:.0}%", b.spread() * 100.0)
                } else {
                    "–".to_string()
                };
                if contended {
                    let threads = b.elements.unwrap_or(1);
                    let _ = writeln!(
                        out,
                        "| {threads} | {} | {t:.2} | {spread} | {:.1} | {base} | {vs} |{diff}",
                        b.function,
                        threads as f64 / t * 1e3
                    );
                } else {
                    let _ = writeln!(
                        out,
                        "| {} | {t:.2} | {spread} | {base} | {vs} |{diff}",
                        b.function
                    );
                }
            }
        }
    }
    print!("{out}");
}
