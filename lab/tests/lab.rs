//! The lab itself: its command line, a tiny run end to end, and `compare`
//! on synthetic results. Nothing here depends on how fast the machine is.

use std::sync::atomic::{AtomicU64, Ordering};

use tripword_lab::compare::{compare, render};
use tripword_lab::report::{Machine, Results, Row, SCHEMA, Settings};
use tripword_lab::stats::Verdict;
use tripword_lab::{Call, Kind, Lab, Setup, SimpleSubject, Workload};

#[test]
fn the_command_line() {
    let o = Lab::parse(&["lab", "--workers", "1,3,6", "--quick"]).unwrap();
    assert_eq!(o.worker_counts(), [1, 3, 6]);
    assert_eq!(o.duration().as_millis(), 20);
    assert_eq!(o.repeats(), 3, "three repeats by default, --quick too");
    assert_eq!(o.warm_up().as_millis(), 10);
    let o = Lab::parse(&[
        "lab",
        "--threads",
        "16",
        "--warm-up",
        "50",
        "--millis",
        "100",
    ])
    .unwrap();
    assert_eq!(o.worker_counts(), [1, 2, 4, 8, 16]);
    assert_eq!(
        (o.warm_up().as_millis(), o.duration().as_millis()),
        (50, 100)
    );
    let o = Lab::parse(&[
        "lab",
        "--workload",
        "closed",
        "--workload",
        "flaky:fail=0.1,burst=8,slow=0.01,slow_us=20",
        "--scheduler",
        "os_threads,smol",
    ])
    .unwrap();
    let w = o.workloads();
    assert_eq!(w[0], Workload::closed());
    assert_eq!(
        (w[1].name.as_str(), w[1].burst, w[1].slow_us),
        ("flaky", 8, 20)
    );
    assert_eq!(o.schedulers, ["os_threads", "smol"]);
    assert_eq!(Lab::parse(&["lab"]).unwrap().workloads().len(), 3);
    assert!(Lab::parse(&["lab", "--workload", "x:fail=3"]).is_err());
    assert!(Lab::parse(&["lab", "--workers", "1", "--threads", "2"]).is_err());
    // A later option replaces an earlier one (a script's, then the user's).
    let o = Lab::parse(&[
        "lab",
        "--workers",
        "1,2,4",
        "--name",
        "a",
        "--workers",
        "3",
        "--name",
        "b",
    ])
    .unwrap();
    assert_eq!((o.worker_counts(), o.name.as_deref()), (vec![3], Some("b")));
}

/// Flags of a program of one's own, next to the lab's.
#[derive(clap::Args, Debug)]
struct Mine {
    /// How many shards my breaker has.
    #[arg(long, default_value_t = 1)]
    shards: u32,
}

#[test]
fn a_program_adds_its_own_flags() {
    let (o, mine) = Lab::parse_with::<Mine>(&["lab", "--shards", "4", "--quick"]).unwrap();
    assert_eq!(mine.shards, 4);
    assert!(o.quick);
}

static CALLS: AtomicU64 = AtomicU64::new(0);

/// Counts its calls; never opens; skips the tripped setup.
struct Counting;

impl SimpleSubject for Counting {
    const NAME: &'static str = "counting";
    fn build(w: &Workload) -> Option<Self> {
        (w.setup != Setup::Tripped).then_some(Counting)
    }
    fn call(&self, call: Call) -> bool {
        CALLS.fetch_add(1, Ordering::Relaxed);
        call.perform();
        true
    }
}

#[test]
fn headlines_default_to_yours_and_unknown_names_are_errors() {
    let lab = Lab::new(Lab::parse(&["lab"]).unwrap())
        .baselines()
        .simple::<Counting>();
    assert_eq!(lab.headline().unwrap(), "counting");
    let lab = Lab::new(Lab::parse(&["lab", "--headline", "nope"]).unwrap()).baselines();
    let e = lab.check().unwrap_err();
    assert!(e.contains("nope") && e.contains("mutex_breaker"), "{e}");
    let lab = Lab::new(Lab::parse(&["lab", "--only", "nope"]).unwrap()).baselines();
    assert!(lab.check().is_err());
    let lab = Lab::new(Lab::parse(&["lab", "--scheduler", "nope"]).unwrap()).baselines();
    assert!(lab.check().is_err());
}

#[test]
fn a_tiny_run_fills_every_cell_it_keeps() {
    let o = Lab::parse(&[
        "lab",
        "--millis",
        "2",
        "--warm-up",
        "1",
        "--repeats",
        "2",
        "--workers",
        "1,2",
        "--scheduler",
        "os_threads",
        "--workload",
        "closed",
        "--workload",
        "flaky:fail=0.5,burst=2",
    ])
    .unwrap();
    let lab = Lab::new(o).baselines().simple::<Counting>();
    lab.check().unwrap();
    let sweep = lab.measure();
    let res = &sweep.results;
    assert_eq!(res.schema, SCHEMA);
    for w in ["closed", "flaky"] {
        for n in [1, 2] {
            let r = sweep
                .get("os_threads", w, "counting", n)
                .unwrap_or_else(|| panic!("{w} {n}"));
            assert_eq!(r.kind, Kind::Yours);
            assert_eq!(r.throughput.len(), 2, "one per repeat");
            assert!(r.throughput.iter().all(|t| *t > 0.0));
            assert_eq!(r.fairness.len(), 2);
            assert!(r.latency.is_some_and(|l| l.samples >= 2));
        }
    }
    assert!(CALLS.load(Ordering::Relaxed) > 0);
    let md = sweep.markdown();
    assert!(
        md.contains("counting (yours) throughput ÷ each other's"),
        "{md}"
    );
    assert!(
        md.contains("workload flaky: 50% of calls fail (in bursts of 2)"),
        "{md}"
    );
}

fn synthetic(scale: f64) -> Results {
    let row = |imp: &str, t: [f64; 3]| Row {
        scheduler: "os_threads".into(),
        workload: "closed".into(),
        implementation: imp.into(),
        kind: Kind::Baseline,
        workers: 2,
        busy_threads: 2,
        throughput: t.iter().map(|x| x * 1e6).collect(),
        admitted: 1.0,
        fairness: Vec::new(),
        latency: None,
    };
    Results {
        schema: SCHEMA.into(),
        name: format!("x{scale}"),
        started_unix: 0,
        machine: Machine {
            cpus: 2,
            cpu_model: "test".into(),
            load_start: "0".into(),
            load_end: "0".into(),
        },
        settings: Settings {
            millis: 20,
            warm_up_millis: 10,
            repeats: 3,
            workers: vec![2],
            sample_every: 0,
            timer_cost_ns: 0.0,
            headline: "a".into(),
        },
        workloads: vec![Workload::closed()],
        schedulers: vec!["os_threads".into()],
        rows: vec![
            row("a", [100.0 * scale, 103.0 * scale, 97.0 * scale]),
            row("b", [50.0, 52.0, 49.0]),
        ],
    }
}

#[test]
fn compare_flags_a_planted_slowdown_and_stays_quiet_on_equal_data() {
    let before = synthetic(1.0);
    let slower = synthetic(0.8);
    let changes = compare(&before, &slower, 0.05);
    assert_eq!(changes.len(), 2);
    assert_eq!(changes[0].verdict, Verdict::Regression);
    assert!((changes[0].change + 0.2).abs() < 1e-9);
    assert_eq!(changes[1].verdict, Verdict::Noise, "b did not change");
    assert!(render(&changes, 0.05).contains("1 regression(s)"));
    let same = compare(&before, &synthetic(1.0), 0.05);
    assert!(same.iter().all(|c| c.verdict == Verdict::Noise));
    // Through a results file, as the subcommand reads it.
    let dir = std::env::temp_dir().join(format!("tripword-lab-compare-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let (a, b) = (dir.join("a.json"), dir.join("b.json"));
    std::fs::write(&a, serde_json::to_string(&before).unwrap()).unwrap();
    std::fs::write(&b, serde_json::to_string(&slower).unwrap()).unwrap();
    let args = [a.display().to_string(), b.display().to_string()];
    assert_eq!(tripword_lab::compare::main(&args), 0);
    assert_eq!(tripword_lab::compare::main(&args[..1]), 2);
    std::fs::remove_dir_all(&dir).unwrap();
}

#[cfg(feature = "tripword")]
#[test]
fn a_registry_spreads_calls_over_the_keys_a_workload_asks_for() {
    use tripword_lab::subjects::TripwordRegistry;
    let o = Lab::parse(&[
        "lab",
        "--millis",
        "2",
        "--warm-up",
        "1",
        "--repeats",
        "1",
        "--workers",
        "2",
        "--scheduler",
        "os_threads",
        "--workload",
        "closed",
        "--workload",
        "keyed:keys=64,fail=0.01",
    ])
    .unwrap();
    let sweep = Lab::new(o).subject::<TripwordRegistry>().measure();
    assert!(
        sweep
            .get("os_threads", "closed", "tripword_registry", 2)
            .is_none(),
        "one key: no registry"
    );
    let r = sweep
        .get("os_threads", "keyed", "tripword_registry", 2)
        .expect("64 keys");
    assert!(r.throughput[0] > 0.0 && r.admitted > 0.0);
}
