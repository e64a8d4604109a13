//! The sweep's results: one [`Row`] per (scheduler, scenario,
//! implementation, threads), written as CSV (the `csv` crate), as Markdown
//! tables of throughput and ratios, and as an SVG plot per scheduler of
//! throughput against threads (`plotters`, SVG backend).

use std::fmt::Write as _;

use plotters::coord::Shift;
use plotters::prelude::*;

use crate::subjects::Kind;

/// The headline implementation every ratio is taken from.
pub const HEADLINE: &str = "tripword_w64";

/// One measured cell of the sweep, with all its repeats.
#[derive(Clone, Debug)]
pub struct Row {
    /// The scheduler's name (`lab::Scheduler::name`).
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

/// The CSV header: one line per [`Row`].
pub const CSV_HEADER: [&str; 12] = [
    "scheduler",
    "scenario",
    "implementation",
    "kind",
    "threads",
    "repeats",
    "calls_per_sec_median",
    "calls_per_sec_min",
    "calls_per_sec_max",
    "spread",
    "ns_per_call_per_thread",
    "admitted_fraction",
];

/// Writes the rows as CSV (with the [`CSV_HEADER`] line) to `out`.
pub fn write_csv<W: std::io::Write>(rows: &[Row], out: W) -> csv::Result<()> {
    let mut w = csv::Writer::from_writer(out);
    w.write_record(CSV_HEADER)?;
    for r in rows {
        w.write_record([
            r.scheduler.to_string(),
            r.scenario.to_string(),
            r.implementation.to_string(),
            kind_name(r.kind).to_string(),
            r.threads.to_string(),
            r.samples.len().to_string(),
            format!("{:.0}", r.median()),
            format!("{:.0}", r.min()),
            format!("{:.0}", r.max()),
            format!("{:.4}", r.spread()),
            format!("{:.3}", r.ns_per_call()),
            format!("{:.6}", r.admitted),
        ])?;
    }
    w.flush()?;
    Ok(())
}

/// The rows as CSV, with a header line.
pub fn csv(rows: &[Row]) -> String {
    let mut out = Vec::new();
    write_csv(rows, &mut out).expect("writing CSV to memory");
    String::from_utf8(out).expect("the CSV fields are UTF-8")
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
/// (median of the repeats, with the spread), then `headline`'s throughput
/// divided by every other implementation's (left out when `headline` was
/// not measured).
pub fn tables(rows: &[Row], scheduler: &str, scenario: &str, headline: &str) -> String {
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
    let others: Vec<_> = impls.iter().filter(|i| **i != headline).collect();
    if impls.contains(&headline) && !others.is_empty() {
        let _ = writeln!(out, "\n{headline} throughput ÷ other implementation's\n");
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
            let head = find(rows, scheduler, scenario, headline, t).map(Row::median);
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

/// The line colour and whether the line is dashed, per implementation:
/// fixed for the ones this crate knows, from plotters' palette for others.
fn style(implementation: &str, index: usize) -> (RGBColor, bool) {
    let rgb = |hex: u32| RGBColor((hex >> 16) as u8, (hex >> 8) as u8, hex as u8);
    match implementation {
        "tripword_w64" => (rgb(0xd62728), false),
        "tripword_w32" => (rgb(0xff7f0e), true),
        "tripword_w64_private" => (rgb(0xd62728), true),
        "tripword_w64_call" => (rgb(0xe377c2), false),
        "tripword_w64_call_async" => (rgb(0xe377c2), true),
        "tripword_w64_tower" => (rgb(0x17becf), false),
        "mutex_breaker" => (rgb(0x555555), true),
        "atomic_load_pair" => (rgb(0x000000), true),
        "failsafe" => (rgb(0x1f77b4), false),
        "recloser" => (rgb(0x2ca02c), false),
        "seatbelt" => (rgb(0xbcbd22), false),
        "tower_resilience" => (rgb(0x9467bd), false),
        _ => {
            let c = Palette99::pick(index).to_rgba();
            (RGBColor(c.0, c.1, c.2), false)
        }
    }
}

/// Draws one scheduler's plot into `root`: one panel per scenario,
/// throughput (million calls per second, log scale) against threads, one
/// line per implementation, and a legend below.
pub fn plot<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    rows: &[Row],
    scheduler: &str,
    title: &str,
) -> Result<(), DrawingAreaErrorKind<DB::ErrorType>> {
    root.fill(&WHITE)?;
    let rows: Vec<&Row> = rows
        .iter()
        .filter(|r| r.scheduler == scheduler && r.median() > 0.0)
        .collect();
    let scenarios = distinct(rows.iter().map(|r| r.scenario));
    let impls = distinct(rows.iter().map(|r| r.implementation));
    let (width, height) = root.dim_in_pixel();
    let columns = legend_columns(width);
    let legend_rows = impls.len().div_ceil(columns) as u32;
    let root = root.titled(&format!("{title} · {scheduler}"), ("sans-serif", 18))?;
    let (panels, legend) = root.split_vertically(height - 40 - 22 * legend_rows);
    let areas = panels.split_evenly((1, scenarios.len().max(1)));
    for (area, scenario) in areas.iter().zip(&scenarios) {
        let cell: Vec<&Row> = rows
            .iter()
            .copied()
            .filter(|r| r.scenario == *scenario)
            .collect();
        let mut threads = distinct(cell.iter().map(|r| r.threads));
        threads.sort_unstable();
        let (lo, hi) = cell.iter().fold((f64::MAX, f64::MIN), |(lo, hi), r| {
            (lo.min(r.median() / 1e6), hi.max(r.median() / 1e6))
        });
        let (lo, hi) = (lo / 1.5, hi * 1.5);
        let mut chart = ChartBuilder::on(area)
            .caption(*scenario, ("sans-serif", 15))
            .margin(8)
            .x_label_area_size(34)
            .y_label_area_size(52)
            .build_cartesian_2d(-0.5..threads.len() as f64 - 0.5, (lo..hi).log_scale())?;
        // Thread counts sit at 0, 1, 2, … (evenly, whatever the counts);
        // key points in between are left unlabelled.
        let label = |x: &f64| {
            let i = x.round();
            match threads.get(i as usize) {
                Some(t) if (x - i).abs() < 1e-6 && i >= 0.0 => t.to_string(),
                _ => String::new(),
            }
        };
        let mops = |y: &f64| {
            if *y >= 10.0 {
                format!("{y:.0}")
            } else {
                format!("{y:.2}")
            }
        };
        chart
            .configure_mesh()
            .disable_x_mesh()
            .x_desc("threads")
            .y_desc("M calls/s (log)")
            .x_labels(2 * threads.len() + 1)
            .x_label_formatter(&label)
            .y_labels(6)
            .y_label_formatter(&mops)
            .light_line_style(WHITE.mix(0.0))
            .draw()?;
        for (index, implementation) in impls.iter().enumerate() {
            let mut points: Vec<(f64, f64)> = cell
                .iter()
                .filter(|r| r.implementation == *implementation)
                .filter_map(|r| {
                    let x = threads.iter().position(|t| *t == r.threads)?;
                    Some((x as f64, r.median() / 1e6))
                })
                .collect();
            points.sort_by(|a, b| a.0.total_cmp(&b.0));
            if points.is_empty() {
                continue;
            }
            let (color, dashed) = style(implementation, index);
            let line = color.stroke_width(2);
            if dashed {
                chart.draw_series(DashedLineSeries::new(points.iter().copied(), 6, 4, line))?;
            } else {
                chart.draw_series(LineSeries::new(points.iter().copied(), line))?;
            }
            chart.draw_series(points.iter().map(|p| Circle::new(*p, 3, color.filled())))?;
        }
    }
    // The legend, `columns` implementations a row.
    let column = (width / columns as u32) as i32;
    for (index, implementation) in impls.iter().enumerate() {
        let (color, dashed) = style(implementation, index);
        let x = 20 + column * (index % columns) as i32;
        let y = 14 + 22 * (index / columns) as i32;
        let line = color.stroke_width(2);
        if dashed {
            for dash in [(x, x + 8), (x + 12, x + 20), (x + 24, x + 28)] {
                legend.draw(&PathElement::new(vec![(dash.0, y), (dash.1, y)], line))?;
            }
        } else {
            legend.draw(&PathElement::new(vec![(x, y), (x + 28, y)], line))?;
        }
        legend.draw(&Text::new(
            implementation.to_string(),
            (x + 36, y - 7),
            ("sans-serif", 13),
        ))?;
    }
    root.present()
}

/// How many legend entries fit a row of a plot `width` pixels wide (at
/// most four).
fn legend_columns(width: u32) -> usize {
    (width / 240).clamp(1, 4) as usize
}

/// One scheduler's plot (see [`plot`]) as an SVG document.
pub fn svg(rows: &[Row], scheduler: &str, title: &str) -> String {
    let scenarios = distinct(
        rows.iter()
            .filter(|r| r.scheduler == scheduler)
            .map(|r| r.scenario),
    )
    .len()
    .max(1) as u32;
    let impls = distinct(
        rows.iter()
            .filter(|r| r.scheduler == scheduler)
            .map(|r| r.implementation),
    )
    .len();
    let width = 20 + 400 * scenarios;
    let legend_rows = impls.div_ceil(legend_columns(width)) as u32;
    let size = (width, 360 + 22 * legend_rows);
    let mut out = String::new();
    {
        let root = SVGBackend::with_string(&mut out, size).into_drawing_area();
        plot(&root, rows, scheduler, title).expect("drawing into a string");
    }
    out
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
        let t = tables(&rows, "os_threads", "closed", HEADLINE);
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
        assert!(c.starts_with("scheduler,scenario,implementation,"));
        let s = svg(&rows, "os_threads", "a <test>");
        assert!(s.starts_with("<svg") && s.trim_end().ends_with("</svg>"));
        // One line per implementation, and a legend entry for each.
        assert!(s.matches("<polyline").count() >= 2, "{s}");
        assert!(s.contains("recloser") && s.contains(HEADLINE));
        assert!(s.contains("a &lt;test&gt;"), "{s}");
        assert!(svg(&rows, "smol", "nothing measured").starts_with("<svg"));
    }
}
