use super::*;
use crate::stats::{Fairness, Latency};
use crate::workload::Workload;

fn row(imp: &str, kind: Kind, workers: usize, throughput: &[f64]) -> Row {
    Row {
        scheduler: "os_threads".into(),
        workload: "closed".into(),
        implementation: imp.into(),
        kind,
        workers,
        busy_threads: workers,
        throughput: throughput.to_vec(),
        admitted: 1.0,
        fairness: vec![Fairness {
            min_share: 0.9,
            max_share: 1.1,
        }],
        latency: Some(Latency {
            samples: 10,
            p50_ns: 20.0,
            p99_ns: 80.0,
            p999_ns: 90.0,
            max_ns: 100.0,
        }),
    }
}

pub(crate) fn results(rows: Vec<Row>, headline: &str) -> Results {
    Results {
        schema: SCHEMA.into(),
        name: "test".into(),
        started_unix: 0,
        machine: Machine {
            cpus: 2,
            cpu_model: "a <cpu>".into(),
            load_start: "0".into(),
            load_end: "0".into(),
        },
        settings: Settings {
            millis: 20,
            warm_up_millis: 10,
            repeats: 3,
            workers: vec![1, 2],
            sample_every: 1024,
            timer_cost_ns: 25.0,
            headline: headline.into(),
        },
        workloads: vec![Workload::closed()],
        schedulers: vec!["os_threads".into()],
        rows,
    }
}

#[test]
fn tables_give_spreads_ratios_and_warn_on_noise() {
    let res = results(
        vec![
            row("mine", Kind::Yours, 1, &[10e6, 11e6, 9e6]),
            row("floor", Kind::Baseline, 1, &[5e6, 5.5e6, 4.5e6]),
            row("peer", Kind::Peer, 1, &[9e6, 12e6, 8e6]),
        ],
        "mine",
    );
    let md = res.markdown();
    assert!(md.contains("| 1 | 10.00 (9.00–11.00) |"), "{md}");
    assert!(md.contains("mine (yours)"), "{md}");
    assert!(md.contains("2.00× (2.00–2.00) |"), "{md}");
    // 10/9, 11/12, 9/8: one repeat slower, others faster: flagged.
    assert!(md.contains(" ?"), "{md}");
    assert!(md.contains("WARNING: 1 ratio(s)"), "{md}");
    assert!(md.contains("20 / 80 / 90 / 100; 0.90–1.10"), "{md}");
    assert!(md.contains("a timing costs 25 ns"), "{md}");
}

#[test]
fn json_round_trips_and_csv_has_one_line_per_row() {
    let res = results(
        vec![
            row("mine", Kind::Yours, 1, &[10e6, 11e6, 9e6]),
            row("mine", Kind::Yours, 2, &[19e6, 18e6, 20e6]),
        ],
        "mine",
    );
    let json = serde_json::to_string(&res).unwrap();
    let back: Results = serde_json::from_str(&json).unwrap();
    assert_eq!(back, res);
    // The documented field names (docs/lab.md) are the ones written.
    let v: serde_json::Value = serde_json::from_str(&json).unwrap();
    for key in [
        "schema",
        "name",
        "machine",
        "settings",
        "workloads",
        "schedulers",
        "rows",
    ] {
        assert!(v.get(key).is_some(), "{key}");
    }
    let r = &v["rows"][0];
    for key in [
        "scheduler",
        "workload",
        "implementation",
        "kind",
        "workers",
        "busy_threads",
        "throughput",
        "admitted",
        "fairness",
        "latency",
    ] {
        assert!(r.get(key).is_some(), "{key}");
    }
    assert_eq!(r["kind"], "yours");
    assert_eq!(v["workloads"][0]["setup"], "trips");
    let c = csv(&res.rows);
    assert_eq!(c.lines().count(), 3);
    let fields = CSV_HEADER.split(',').count();
    assert!(c.lines().all(|l| l.split(',').count() == fields), "{c}");
}

#[cfg(feature = "plots")]
#[test]
fn svg_and_html_are_well_formed() {
    let res = results(
        vec![
            row("mine", Kind::Yours, 1, &[10e6]),
            row("mine", Kind::Yours, 2, &[19e6]),
            row("other", Kind::Peer, 1, &[1e6]),
        ],
        "mine",
    );
    let s = svg(&res, "os_threads");
    assert!(s.starts_with("<svg") && s.trim_end().ends_with("</svg>"));
    // 1 to 19 M calls/s: ticks at 1, 2 and 5 of each decade.
    let texts: Vec<&str> = s
        .split("</text>")
        .filter_map(|t| t.rsplit('>').next().map(str::trim))
        .collect();
    for tick in ["1.0", "2.0", "5.0", "10"] {
        assert!(texts.contains(&tick), "{tick}: {texts:?}");
    }
    assert!(s.contains("mine") && s.contains("other"));
    assert!(s.contains("a &lt;cpu&gt;"), "escaped title");
    let h = html(&res, &res.markdown(), &[s]);
    assert!(h.contains("<svg") && h.contains("<table>"));
    assert!(h.contains("<th>mine (yours)</th>"), "{h}");
    assert!(h.contains("<td>10.00 (10.00–10.00)</td>"), "{h}");
    assert!(h.contains("a &lt;cpu&gt;"), "the header, escaped");
}

#[test]
fn each_run_gets_a_folder_of_its_own() {
    let root = std::env::temp_dir().join(format!("tripword-lab-test-{}", std::process::id()));
    let a = fresh_dir(&root, "run").unwrap();
    let b = fresh_dir(&root, "run").unwrap();
    assert_ne!(a, b);
    assert!(b.ends_with("run-2"), "{}", b.display());
    std::fs::remove_dir_all(&root).unwrap();
    assert_eq!(timestamp(0), "19700101-000000");
    assert_eq!(timestamp(1_796_601_600 + 3661), "20261207-010101");
}
