//! One SVG plot per scheduler (`plotters`): a panel per workload,
//! throughput (log scale) against workers, a line per implementation with
//! the min–max bar of its repeats, and a legend.

use plotters::coord::Shift;
use plotters::prelude::*;

use super::{Results, Row, distinct};

/// Draws one scheduler's plot into `root`: one panel per scenario,
/// throughput (million calls per second, log scale) against threads, one
/// line per implementation, and a legend below.
pub fn plot<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    res: &Results,
    scheduler: &str,
    title: &str,
) -> Result<(), DrawingAreaErrorKind<DB::ErrorType>> {
    root.fill(&WHITE)?;
    let rows: Vec<&Row> = res
        .rows
        .iter()
        .filter(|r| r.scheduler == scheduler && r.median() > 0.0)
        .collect();
    let scenarios = distinct(rows.iter().map(|r| r.workload.as_str()));
    let all = res.implementations();
    let impls = distinct(rows.iter().map(|r| r.implementation.as_str()));
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
            .filter(|r| r.workload == *scenario)
            .collect();
        let mut threads = distinct(cell.iter().map(|r| r.workers));
        threads.sort_unstable();
        let (lo, hi) = cell.iter().fold((f64::MAX, f64::MIN), |(lo, hi), r| {
            let s = r.spread();
            (lo.min(s.min.max(1.0) / 1e6), hi.max(s.max / 1e6))
        });
        let (lo, hi) = (lo / 1.5, hi * 1.5);
        let mut chart = ChartBuilder::on(area)
            .caption(*scenario, ("sans-serif", 15))
            .margin(8)
            .x_label_area_size(34)
            .y_label_area_size(52)
            .build_cartesian_2d(
                -0.5..threads.len() as f64 - 0.5,
                (lo..hi).log_scale().with_key_points(ticks(lo, hi)),
            )?;
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
            } else if *y >= 1.0 {
                format!("{y:.1}")
            } else {
                format!("{y:.2}")
            }
        };
        chart
            .configure_mesh()
            .disable_x_mesh()
            .x_desc("workers")
            .y_desc("M calls/s (log)")
            .x_labels(2 * threads.len() + 1)
            .x_label_formatter(&label)
            .y_labels(6)
            .y_label_formatter(&mops)
            .light_line_style(WHITE.mix(0.0))
            .draw()?;
        for (index, implementation) in impls.iter().enumerate() {
            let mut bars: Vec<(f64, f64, f64)> = Vec::new();
            let mut points: Vec<(f64, f64)> = cell
                .iter()
                .filter(|r| r.implementation == *implementation)
                .filter_map(|r| {
                    let x = threads.iter().position(|t| *t == r.workers)? as f64;
                    let s = r.spread().scaled(1e6);
                    bars.push((x, s.min.max(lo), s.max));
                    Some((x, s.median))
                })
                .collect();
            points.sort_by(|a, b| a.0.total_cmp(&b.0));
            if points.is_empty() {
                continue;
            }
            let (color, dashed) = style(
                implementation,
                all.iter()
                    .position(|a| a == implementation)
                    .unwrap_or(index),
            );
            let line = color.stroke_width(2);
            if dashed {
                chart.draw_series(DashedLineSeries::new(points.iter().copied(), 6, 4, line))?;
            } else {
                chart.draw_series(LineSeries::new(points.iter().copied(), line))?;
            }
            chart.draw_series(points.iter().map(|p| Circle::new(*p, 3, color.filled())))?;
            // The min–max range of the repeats, as a vertical bar.
            chart.draw_series(bars.iter().map(|&(x, lo, hi)| {
                PathElement::new(vec![(x, lo), (x, hi)], color.stroke_width(1))
            }))?;
        }
    }
    // The legend, `columns` implementations a row.
    let column = (width / columns as u32) as i32;
    for (index, implementation) in impls.iter().enumerate() {
        let (color, dashed) = style(
            implementation,
            all.iter()
                .position(|a| a == implementation)
                .unwrap_or(index),
        );
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

/// The y axis ticks between `lo` and `hi`: 1, 2, 5 in every decade; every
/// whole mantissa (1, 2, 3, … 9) where that gives fewer than four; only the
/// powers of ten where it gives more than ten.
fn ticks(lo: f64, hi: f64) -> Vec<f64> {
    let (first, last) = (lo.log10().floor() as i32, hi.log10().ceil() as i32);
    let within = |mantissas: &[f64]| -> Vec<f64> {
        (first..=last)
            .flat_map(|e| mantissas.iter().map(move |m| m * 10f64.powi(e)))
            .filter(|v| (lo..=hi).contains(v))
            .collect()
    };
    let coarse = within(&[1.0, 2.0, 5.0]);
    if coarse.len() > 10 {
        within(&[1.0])
    } else if coarse.len() >= 4 {
        coarse
    } else {
        within(&[1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0])
    }
}

/// How many legend entries fit a row of a plot `width` pixels wide (at
/// most four).
fn legend_columns(width: u32) -> usize {
    (width / 240).clamp(1, 4) as usize
}

/// One scheduler's plot (see [`plot`]) as an SVG document.
pub fn svg(res: &Results, scheduler: &str) -> String {
    let rows = &res.rows;
    let title = format!(
        "{} × {}, {} ms cells, {} repeat(s); bars: min–max",
        res.machine.cpus, res.machine.cpu_model, res.settings.millis, res.settings.repeats
    );
    let scenarios = distinct(
        rows.iter()
            .filter(|r| r.scheduler == scheduler)
            .map(|r| r.workload.as_str()),
    )
    .len()
    .max(1) as u32;
    let impls = distinct(
        rows.iter()
            .filter(|r| r.scheduler == scheduler)
            .map(|r| r.implementation.as_str()),
    )
    .len();
    let width = 20 + 400 * scenarios;
    let legend_rows = impls.div_ceil(legend_columns(width)) as u32;
    let size = (width, 360 + 22 * legend_rows);
    let mut out = String::new();
    {
        let root = SVGBackend::with_string(&mut out, size).into_drawing_area();
        plot(&root, res, scheduler, &title).expect("drawing into a string");
    }
    out
}

/// The line colour and whether the line is dashed, per implementation:
/// fixed for the built-in ones, else the `index`-th of a palette of
/// distinct colours (Tableau 10, then darker and lighter variants).
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
            const OTHERS: [u32; 8] = [
                0x8c564b, 0x0b6e4f, 0xb8860b, 0x3b3bd6, 0xa0522d, 0x6a3d9a, 0x008b8b, 0xc71585,
            ];
            (rgb(OTHERS[index % OTHERS.len()]), false)
        }
    }
}
