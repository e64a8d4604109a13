//! The sweep's results: one [`Row`] per (scheduler, scenario,
//! implementation, threads), written as CSV, as Markdown tables of throughput
//! and ratios, and as a hand-written SVG plot of throughput against threads.

use std::fmt::Write as _;

use crate::subjects::Kind;

/// The headline implementation every ratio is taken from.
pub const HEADLINE: &str = "tripword_w64";

/// One measured cell of the sweep, with all its repeats.
#[derive(Clone, Debug)]
pub struct Row {
    /// `os_threads`, `tokio_multi_thread` or `tokio_current_thread`.
    pub scheduler: &'static str,
    /// The scenario name.
    pub scenario: &'static str,
    /// The implementation name.
    pub implementation: &'static str,
    /// Baseline, tripword or peer.
    pub kind: Kind,
    /// Worker threads (tasks, for the current-thread scheduler).
    pub threads: usize,
    /// Calls per second, one per repeat.
    pub samples: Vec<f64>,
    /// Admitted calls over all calls, over all repeats.
    pub admitted: f64,
}

impl Row {
    fn sorted(&self) -> Vec<f64> {
        let mut s = self.samples.clone();
        s.sort_by(f64::total_cmp);
        s
    }
    /// Median calls per second over the repeats.
    pub fn median(&self) -> f64 {
        let s = self.sorted();
        match s.len() {
            0 => 0.0,
            n if n % 2 == 1 => s[n / 2],
            n => (s[n / 2 - 1] + s[n / 2]) / 2.0,
        }
    }
    /// Slowest repeat.
    pub fn min(&self) -> f64 {
        self.sorted().first().copied().unwrap_or(0.0)
    }
    /// Fastest repeat.
    pub fn max(&self) -> f64 {
        self.sorted().last().copied().unwrap_or(0.0)
    }
    /// Spread of the repeats: (max - min) / median.
    pub fn spread(&self) -> f64 {
        let m = self.median();
        if m > 0.0 {
            (self.max() - self.min()) / m
        } else {
            0.0
        }
    }
    /// Nanoseconds per call as one thread sees it (threads / throughput).
    pub fn ns_per_call(&self) -> f64 {
        let m = self.median();
        if m > 0.0 {
            self.threads as f64 / m * 1e9
        } else {
            f64::INFINITY
        }
    }
}

fn kind_name(k: Kind) -> &'static str {
    match k {
        Kind::Baseline => "baseline",
        Kind::Tripword => "tripword",
        Kind::Peer => "peer",
    }
}

/// The rows as CSV, with a header line.
pub fn csv(rows: &[Row]) -> String {
    let mut out = String::from(
        "scheduler,scenario,implementation,kind,threads,repeats,calls_per_sec_median,calls_per_sec_min,calls_per_sec_max,spread,ns_per_call_per_thread,admitted_fraction\n",
    );
    for r in rows {
        let _ = writeln!(
            out,
            "{},{},{},{},{},{},{:.0},{:.0},{:.0},{:.4},{:.3},{:.6}",
            r.scheduler,
            r.scenario,
            r.implementation,
            kind_name(r.kind),
            r.threads,
            r.samples.len(),
            r.median(),
            r.min(),
            r.max(),
            r.spread(),
            r.ns_per_call(),
            r.admitted,
        );
    }
    out
}

fn distinct<T: PartialEq + Copy>(it: impl Iterator<Item = T>) -> Vec<T> {
    let mut v = Vec::new();
    for x in it {
        if !v.contains(&x) {
            v.push(x);
        }
    }
    v
}

fn find<'a>(
    rows: &'a [Row],
    scheduler: &str,
    scenario: &str,
    implementation: &str,
    threads: usize,
) -> Option<&'a Row> {
    rows.iter().find(|r| {
        r.scheduler == scheduler
            && r.scenario == scenario
            && r.implementation == implementation
            && r.threads == threads
    })
}

/// Markdown tables for one scheduler and scenario: million calls per second
/// (median of the repeats, with the spread), then the headline's throughput
/// divided by every other implementation's.
pub fn tables(rows: &[Row], scheduler: &str, scenario: &str) -> String {
    let cell: Vec<&Row> = rows
        .iter()
        .filter(|r| r.scheduler == scheduler && r.scenario == scenario)
        .collect();
    let impls = distinct(cell.iter().map(|r| r.implementation));
    let threads = distinct(cell.iter().map(|r| r.threads));
    let mut out = String::new();
    if cell.is_empty() {
        // Not measured in this run (`--only`): no empty table.
        return out;
    }
    let _ = writeln!(
        out,
        "{scheduler} / {scenario}: million calls per second, all threads together (median; ± spread of repeats)\n"
    );
    let _ = write!(out, "| threads |");
    for i in &impls {
        let _ = write!(out, " {i} |");
    }
    let _ = write!(out, "\n|---:|");
    for _ in &impls {
        let _ = write!(out, "---:|");
    }
    out.push('\n');
    for &t in &threads {
        let _ = write!(out, "| {t} |");
        for i in &impls {
            match find(rows, scheduler, scenario, i, t) {
                Some(r) => {
                    let _ = write!(
                        out,
                        " {:.2} ±{:.0}% |",
                        r.median() / 1e6,
                        r.spread() * 100.0
                    );
                }
                None => out.push_str(" – |"),
            }
        }
        out.push('\n');
    }
    let others: Vec<_> = impls.iter().filter(|i| **i != HEADLINE).collect();
    if impls.contains(&HEADLINE) && !others.is_empty() {
        let _ = writeln!(out, "\n{HEADLINE} throughput ÷ other implementation's\n");
        let _ = write!(out, "| threads |");
        for i in &others {
            let _ = write!(out, " vs {i} |");
        }
        let _ = write!(out, "\n|---:|");
        for _ in &others {
            let _ = write!(out, "---:|");
        }
        out.push('\n');
        for &t in &threads {
            let _ = write!(out, "| {t} |");
            let head = find(rows, scheduler, scenario, HEADLINE, t).map(Row::median);
            for i in &others {
                match (head, find(rows, scheduler, scenario, i, t).map(Row::median)) {
                    (Some(h), Some(o)) if o > 0.0 => {
                        let _ = write!(out, " {:.2}× |", h / o);
                    }
                    _ => out.push_str(" – |"),
                }
            }
            out.push('\n');
        }
    }
    out
}

fn color(implementation: &str) -> (&'static str, &'static str) {
    // (stroke, dash pattern)
    match implementation {
        "tripword_w64" => ("#d62728", ""),
        "tripword_w32" => ("#ff7f0e", "6 3"),
        "tripword_w64_call" => ("#e377c2", ""),
        "tripword_w64_call_async" => ("#e377c2", "6 3"),
        "tripword_w64_tower" => ("#17becf", ""),
        "mutex_breaker" => ("#555555", "4 3"),
        "atomic_load_pair" => ("#000000", "1 3"),
        "failsafe" => ("#1f77b4", ""),
        "recloser" => ("#2ca02c", ""),
        "tower_resilience" => ("#9467bd", ""),
        _ => ("#8c564b", ""),
    }
}

/// An SVG plot: one panel per (scheduler, scenario), throughput (log scale)
/// against threads, one line per implementation.
pub fn svg(rows: &[Row], title: &str) -> String {
    const PW: f64 = 330.0;
    const PH: f64 = 230.0;
    const ML: f64 = 58.0;
    const MT: f64 = 34.0;
    const GAP_X: f64 = 30.0;
    const GAP_Y: f64 = 56.0;
    let schedulers = distinct(rows.iter().map(|r| r.scheduler));
    let scenarios = distinct(rows.iter().map(|r| r.scenario));
    let impls = distinct(rows.iter().map(|r| r.implementation));
    let legend_h = 40.0;
    let width = ML + scenarios.len() as f64 * (PW + GAP_X) + 20.0;
    let height = 40.0 + legend_h + schedulers.len() as f64 * (PH + GAP_Y) + 10.0;
    let mut s = String::new();
    let _ = writeln!(
        s,
        r#"<svg xmlns="http://www.w3.org/2000/svg" width="{width:.0}" height="{height:.0}" viewBox="0 0 {width:.0} {height:.0}" font-family="sans-serif" font-size="11">"#
    );
    let _ = writeln!(
        s,
        r#"<rect width="100%" height="100%" fill="white"/><text x="{ML}" y="22" font-size="15" font-weight="bold">{}</text>"#,
        escape(title)
    );
    // Legend.
    let mut lx = ML;
    for i in &impls {
        let (c, d) = color(i);
        let _ = writeln!(
            s,
            r#"<line x1="{lx}" y1="48" x2="{}" y2="48" stroke="{c}" stroke-width="2.5" stroke-dasharray="{d}"/><text x="{}" y="52">{i}</text>"#,
            lx + 22.0,
            lx + 26.0
        );
        lx += 30.0 + 7.0 * i.len() as f64;
    }
    for (row_i, sched) in schedulers.iter().enumerate() {
        for (col_i, scen) in scenarios.iter().enumerate() {
            let x0 = ML + col_i as f64 * (PW + GAP_X);
            let y0 = 40.0 + legend_h + MT + row_i as f64 * (PH + GAP_Y) - MT + 14.0;
            let cell: Vec<&Row> = rows
                .iter()
                .filter(|r| r.scheduler == *sched && r.scenario == *scen && r.median() > 0.0)
                .collect();
            let _ = writeln!(
                s,
                r##"<text x="{x0}" y="{:.1}" font-weight="bold">{sched} · {scen}</text><rect x="{x0}" y="{y0}" width="{PW}" height="{PH}" fill="none" stroke="#999"/>"##,
                y0 - 6.0
            );
            if cell.is_empty() {
                continue;
            }
            let threads = {
                let mut t = distinct(cell.iter().map(|r| r.threads));
                t.sort_unstable();
                t
            };
            let (lo, hi) = cell.iter().fold((f64::MAX, f64::MIN), |(lo, hi), r| {
                (lo.min(r.median()), hi.max(r.median()))
            });
            let dlo = (lo / 1e6).log10().floor();
            let dhi = ((hi / 1e6).log10().ceil()).max(dlo + 1.0);
            let ypos = |v: f64| y0 + PH - ((v / 1e6).log10() - dlo) / (dhi - dlo) * PH;
            let xpos = |t: usize| {
                let i = threads.iter().position(|x| *x == t).unwrap_or(0);
                if threads.len() == 1 {
                    x0 + PW / 2.0
                } else {
                    x0 + 24.0 + i as f64 * (PW - 48.0) / (threads.len() - 1) as f64
                }
            };
            // Decade grid and labels.
            let mut d = dlo;
            while d <= dhi + 1e-9 {
                let y = y0 + PH - (d - dlo) / (dhi - dlo) * PH;
                let _ = writeln!(
                    s,
                    r##"<line x1="{x0}" y1="{y:.1}" x2="{:.1}" y2="{y:.1}" stroke="#e5e5e5"/><text x="{:.1}" y="{:.1}" text-anchor="end">{}</text>"##,
                    x0 + PW,
                    x0 - 4.0,
                    y + 4.0,
                    fmt_mops(10f64.powf(d))
                );
                d += 1.0;
            }
            for &t in &threads {
                let _ = writeln!(
                    s,
                    r#"<text x="{:.1}" y="{:.1}" text-anchor="middle">{t}</text>"#,
                    xpos(t),
                    y0 + PH + 14.0
                );
            }
            let _ = writeln!(
                s,
                r##"<text x="{:.1}" y="{:.1}" text-anchor="middle" fill="#555">threads</text>"##,
                x0 + PW / 2.0,
                y0 + PH + 28.0
            );
            if col_i == 0 {
                let _ = writeln!(
                    s,
                    r##"<text transform="translate({:.1},{:.1}) rotate(-90)" text-anchor="middle" fill="#555">M calls/s (log)</text>"##,
                    x0 - 42.0,
                    y0 + PH / 2.0
                );
            }
            for i in &impls {
                let mut pts: Vec<&Row> = cell
                    .iter()
                    .copied()
                    .filter(|r| r.implementation == *i)
                    .collect();
                pts.sort_by_key(|r| r.threads);
                if pts.is_empty() {
                    continue;
                }
                let (c, dash) = color(i);
                let path: Vec<String> = pts
                    .iter()
                    .map(|r| format!("{:.1},{:.1}", xpos(r.threads), ypos(r.median())))
                    .collect();
                let _ = writeln!(
                    s,
                    r#"<polyline points="{}" fill="none" stroke="{c}" stroke-width="2" stroke-dasharray="{dash}"/>"#,
                    path.join(" ")
                );
                for r in &pts {
                    let _ = writeln!(
                        s,
                        r#"<circle cx="{:.1}" cy="{:.1}" r="3" fill="{c}"><title>{} {} threads: {:.2} M calls/s</title></circle>"#,
                        xpos(r.threads),
                        ypos(r.median()),
                        i,
                        r.threads,
                        r.median() / 1e6
                    );
                }
            }
        }
    }
    s.push_str("</svg>\n");
    s
}

fn fmt_mops(v: f64) -> String {
    if v >= 1.0 {
        format!("{v:.0}")
    } else {
        format!("{v}")
    }
}

fn escape(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(implementation: &'static str, threads: usize, samples: &[f64]) -> Row {
        Row {
            scheduler: "os_threads",
            scenario: "closed",
            implementation,
            kind: Kind::Peer,
            threads,
            samples: samples.to_vec(),
            admitted: 1.0,
        }
    }

    #[test]
    fn median_spread_and_ns_per_call() {
        let r = row("x", 2, &[3e6, 1e6, 2e6]);
        assert_eq!(r.median(), 2e6);
        assert_eq!(r.spread(), 1.0);
        assert_eq!(r.ns_per_call(), 1000.0);
        assert_eq!(row("x", 1, &[1.0, 3.0]).median(), 2.0);
    }

    #[test]
    fn tables_give_ratios_to_the_headline() {
        let rows = [row(HEADLINE, 1, &[10e6]), row("failsafe", 1, &[2e6])];
        let t = tables(&rows, "os_threads", "closed");
        assert!(t.contains("| 1 | 10.00 ±0% | 2.00 ±0% |"), "{t}");
        assert!(t.contains("| 1 | 5.00× |"), "{t}");
    }

    #[test]
    fn csv_and_svg_are_well_formed() {
        let rows = [
            row(HEADLINE, 1, &[10e6]),
            row(HEADLINE, 2, &[19e6]),
            row("recloser", 1, &[1e6]),
        ];
        let c = csv(&rows);
        assert_eq!(c.lines().count(), 4);
        assert!(c.lines().all(|l| l.split(',').count() == 12));
        let s = svg(&rows, "a <test>");
        assert!(s.starts_with("<svg") && s.trim_end().ends_with("</svg>"));
        assert_eq!(s.matches("<polyline").count(), 2);
        assert!(s.contains("a &lt;test&gt;"));
    }
}
