//! Single-thread fast paths, each group with its baselines and peers in the
//! same run:
//!
//! - `closed_call`: admit + report success on a closed breaker;
//! - `open_rejection`: admission refused by an open breaker;
//! - `probing_rejection`: admission refused while a probe is out;
//! - `failure_release`: admit + report failure on a closed breaker that
//!   does not trip (every release writes);
//! - `hot_loop`: the closed call inlined into the caller's own loop
//!   (`tripword_benches::hot_loop`), against the same loop around a bare
//!   pair of atomic loads: one iteration is one call.
//!
//! `manual_clock` variants use `tripword::clock::ManualClock` (an atomic
//! load); `real_clock` variants read `Instant` (microsecond ticks). The peers
//! always read the real clock (`seatbelt` through `tick::Clock`; its calls
//! are futures ready on their first poll, polled once with a no-op waker).
//! `failsafe` and `recloser` have no probing state (half-open admits every
//! caller), so they are absent from `probing_rejection`; `seatbelt` is not
//! measured there yet. Baselines: `atomic_load_pair` (two `black_box`ed
//! `Acquire` loads: the floor of a call that only reads the word),
//! `atomic_load_cas` (a load and a compare-and-swap: the floor of a call
//! that writes) and `mutex_breaker` (the same state machine behind a
//! `Mutex`).
//!
//! `cargo bench -p tripword-benches --bench fast_path -- --warm-up-time 1 --measurement-time 2`
//! (`-- hot_loop` for that group alone)

use std::hint::black_box;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use criterion::{
    BenchmarkGroup, Criterion, criterion_group, criterion_main, measurement::WallTime,
};
use tripword::clock::ManualClock;
use tripword::{Breaker, Config, Outcome, ValidConfig, W32, W64, Word};
use tripword_benches::exec::{block_on, now, poll_once, runtime};
use tripword_benches::hot_loop;
use tripword_benches::mutex_breaker::MutexBreaker;
use tripword_benches::subjects::{
    AtomicPair, Request, TicketApi, call, failsafe_breaker, failsafe_call, recloser_breaker,
    recloser_call, recloser_trip, seatbelt_breaker, seatbelt_call, storm_call, tower_breaker,
    tower_call,
};
use tripword_std::MonotonicClock;

/// Long enough that nothing times out during a measurement: 1000 s in
/// microsecond ticks (W64); for W32 the longest duration it keeps in whole
/// ticks (`w32`: horizon 0, time shift 0, as measured before the word kept
/// time in units).
const LONG: u64 = 1_000_000_000;
const LONG_W32: u64 = W32::LAYOUT.max_units();

/// `config` checked for the 32-bit word, in whole ticks.
fn w32(config: Config) -> ValidConfig<W32> {
    let valid = config.horizon(0).check::<W32>().expect("in range for W32");
    assert_eq!(valid.time_shift(), 0);
    valid
}

#[inline]
fn closed<B: TicketApi>(b: &B) -> bool {
    call(b, Outcome::Success)
}

/// Trips the breaker: failures until it rejects.
fn trip<B: TicketApi>(b: &B) {
    while call(b, Outcome::Failure) {}
}

fn baselines(g: &mut BenchmarkGroup<'_, WallTime>) {
    let pair = AtomicPair::default();
    g.bench_function("atomic_load_pair", |b| {
        b.iter(|| black_box(&pair).load_pair())
    });
}

fn closed_call(c: &mut Criterion) {
    let mut g = c.benchmark_group("closed_call");
    baselines(&mut g);

    let b64 = Breaker::new(Config::new(), ManualClock::new(0));
    g.bench_function("tripword_w64/manual_clock", |b| {
        b.iter(|| closed(black_box(&b64)))
    });
    let b64r = Breaker::new(Config::new(), MonotonicClock);
    g.bench_function("tripword_w64/real_clock", |b| {
        b.iter(|| closed(black_box(&b64r)))
    });
    g.bench_function("tripword_w64/permit_guard", |b| {
        b.iter(|| black_box(&b64).permit().map(|p| p.success()).is_ok())
    });
    let b32: Breaker<_, W32> = Breaker::from_parts(w32(Config::new()), ManualClock::new(0), ());
    g.bench_function("tripword_w32/manual_clock", |b| {
        b.iter(|| closed(black_box(&b32)))
    });

    let m = MutexBreaker::new(5, 1000, 1000, ManualClock::new(0));
    g.bench_function("mutex_breaker", |b| {
        b.iter(|| match black_box(&m).acquire() {
            Ok(t) => {
                m.release(t, Outcome::Success);
                true
            }
            Err(_) => false,
        })
    });

    let fs = failsafe_breaker(5, Duration::from_secs(10));
    g.bench_function("failsafe", |b| {
        b.iter(|| failsafe_call(black_box(&fs), true))
    });
    let rc = recloser_breaker(0.5, 100, 10, Duration::from_secs(10));
    g.bench_function("recloser", |b| {
        b.iter(|| recloser_call(black_box(&rc), true))
    });
    let (sb, _sb_clock) = seatbelt_breaker(0.5, 100, Duration::from_secs(10));
    g.bench_function("seatbelt", |b| {
        b.iter(|| now(seatbelt_call(black_box(&sb), Request::Succeed)))
    });
    let rt = runtime();
    let mut tw = tower_breaker(5, Duration::from_secs(10));
    g.bench_function("tower_resilience", |b| {
        b.iter(|| block_on(&rt, tower_call(&mut tw, Request::Succeed)))
    });
    g.finish();
}

fn open_rejection(c: &mut Criterion) {
    let mut g = c.benchmark_group("open_rejection");
    baselines(&mut g);

    let cfg = Config::new().failure_threshold(1).open_for(LONG);
    let cfg32 = Config::new().failure_threshold(1).open_for(LONG_W32);
    let b64 = Breaker::new(cfg, ManualClock::new(0));
    trip(&b64);
    g.bench_function("tripword_w64/manual_clock", |b| {
        b.iter(|| closed(black_box(&b64)))
    });
    let b64r = Breaker::new(cfg, MonotonicClock);
    trip(&b64r);
    g.bench_function("tripword_w64/real_clock", |b| {
        b.iter(|| closed(black_box(&b64r)))
    });
    let b32: Breaker<_, W32> = Breaker::from_parts(w32(cfg32), ManualClock::new(0), ());
    trip(&b32);
    g.bench_function("tripword_w32/manual_clock", |b| {
        b.iter(|| closed(black_box(&b32)))
    });
    // A forced-open breaker rejects without reading the clock at all.
    let forced = Breaker::new(Config::new(), ManualClock::new(0));
    forced.force_open();
    g.bench_function("tripword_w64/forced_open", |b| {
        b.iter(|| closed(black_box(&forced)))
    });

    let m = MutexBreaker::new(1, LONG, LONG, ManualClock::new(0));
    trip(&m);
    g.bench_function("mutex_breaker/manual_clock", |b| {
        b.iter(|| black_box(&m).acquire().is_ok())
    });
    let mr = MutexBreaker::new(1, LONG, LONG, MonotonicClock);
    trip(&mr);
    g.bench_function("mutex_breaker/real_clock", |b| {
        b.iter(|| black_box(&mr).acquire().is_ok())
    });

    let fs = failsafe_breaker(1, Duration::from_secs(1000));
    failsafe_call(&fs, false);
    assert!(!failsafe_call(&fs, true), "failsafe should be open");
    g.bench_function("failsafe", |b| {
        b.iter(|| failsafe_call(black_box(&fs), true))
    });
    let rc = recloser_breaker(0.5, 1, 1, Duration::from_secs(1000));
    recloser_trip(&rc);
    assert!(!recloser_call(&rc, true), "recloser should be open");
    g.bench_function("recloser", |b| {
        b.iter(|| recloser_call(black_box(&rc), true))
    });
    let (sb, _sb_clock) = seatbelt_breaker(0.5, 1, Duration::from_secs(1000));
    now(seatbelt_call(&sb, Request::Fail));
    assert!(
        !now(seatbelt_call(&sb, Request::Succeed)),
        "seatbelt should be open"
    );
    g.bench_function("seatbelt", |b| {
        b.iter(|| now(seatbelt_call(black_box(&sb), Request::Succeed)))
    });
    let rt = runtime();
    let mut tw = tower_breaker(1, Duration::from_secs(1000));
    block_on(&rt, tower_call(&mut tw, Request::Fail));
    assert!(
        !block_on(&rt, tower_call(&mut tw, Request::Succeed)),
        "tower should be open"
    );
    g.bench_function("tower_resilience", |b| {
        b.iter(|| block_on(&rt, tower_call(&mut tw, Request::Succeed)))
    });
    g.finish();
}

fn probing_rejection(c: &mut Criterion) {
    let mut g = c.benchmark_group("probing_rejection");
    baselines(&mut g);

    let cfg = Config::new()
        .failure_threshold(1)
        .open_for(10)
        .probe_timeout(LONG);
    let cfg32 = Config::new()
        .failure_threshold(1)
        .open_for(10)
        .probe_timeout(LONG_W32);

    let b64 = Breaker::new(cfg, ManualClock::new(0));
    trip(&b64);
    b64.clock().advance(10);
    let probe64 = b64.acquire().expect("probe");
    assert!(probe64.is_probe());
    g.bench_function("tripword_w64/manual_clock", |b| {
        b.iter(|| closed(black_box(&b64)))
    });

    let b64r = Breaker::new(cfg, MonotonicClock);
    trip(&b64r);
    std::thread::sleep(Duration::from_millis(1));
    let probe64r = b64r.acquire().expect("probe");
    g.bench_function("tripword_w64/real_clock", |b| {
        b.iter(|| closed(black_box(&b64r)))
    });

    let b32: Breaker<_, W32> = Breaker::from_parts(w32(cfg32), ManualClock::new(0), ());
    trip(&b32);
    b32.clock().advance(10);
    let probe32 = b32.acquire().expect("probe");
    g.bench_function("tripword_w32/manual_clock", |b| {
        b.iter(|| closed(black_box(&b32)))
    });

    let m = MutexBreaker::new(1, 10, LONG, ManualClock::new(0));
    trip(&m);
    m.clock().advance(10);
    let mprobe = m.acquire().expect("probe");
    g.bench_function("mutex_breaker/manual_clock", |b| {
        b.iter(|| black_box(&m).acquire().is_ok())
    });

    let rt = runtime();
    let mut tw = tower_breaker(1, Duration::from_micros(1));
    block_on(&rt, tower_call(&mut tw, Request::Fail));
    std::thread::sleep(Duration::from_millis(1));
    let mut prober = tw.clone();
    let mut probe = Box::pin(tower_call(&mut prober, Request::Hang));
    {
        let _context = rt.enter();
        assert!(poll_once(&mut probe).is_none(), "tower probe should hang");
    }
    assert!(
        !block_on(&rt, tower_call(&mut tw, Request::Succeed)),
        "tower should reject while probing"
    );
    g.bench_function("tower_resilience", |b| {
        b.iter(|| block_on(&rt, tower_call(&mut tw, Request::Succeed)))
    });
    g.finish();

    b64.release(probe64, Outcome::Success);
    b64r.release(probe64r, Outcome::Success);
    b32.release(probe32, Outcome::Success);
    m.release(mprobe, Outcome::Success);
    drop(probe);
}

fn failure_release(c: &mut Criterion) {
    let mut g = c.benchmark_group("failure_release");
    let word = AtomicU64::new(0);
    g.bench_function("atomic_load_cas", |b| {
        b.iter(|| {
            let w = black_box(&word);
            let v = w.load(Ordering::Acquire);
            w.compare_exchange_weak(v, v.wrapping_add(1), Ordering::AcqRel, Ordering::Acquire)
                .is_ok()
        })
    });

    let b64 = Breaker::new(
        Config::new().failure_threshold(W64::LAYOUT.max_failures()),
        ManualClock::new(0),
    );
    g.bench_function("tripword_w64/manual_clock", |b| {
        b.iter(|| storm_call(black_box(&b64)))
    });
    let b32: Breaker<_, W32> = Breaker::from_parts(
        w32(Config::new().failure_threshold(W32::LAYOUT.max_failures())),
        ManualClock::new(0),
        (),
    );
    g.bench_function("tripword_w32/manual_clock", |b| {
        b.iter(|| storm_call(black_box(&b32)))
    });
    let m = MutexBreaker::new(W64::LAYOUT.max_failures(), 1000, 1000, ManualClock::new(0));
    g.bench_function("mutex_breaker", |b| {
        b.iter(|| match black_box(&m).acquire() {
            Ok(t) => {
                m.release(t, Outcome::Failure);
                true
            }
            Err(_) => {
                m.force_close();
                false
            }
        })
    });

    let fs = failsafe_breaker(u32::MAX, Duration::from_secs(10));
    g.bench_function("failsafe", |b| {
        b.iter(|| failsafe_call(black_box(&fs), false))
    });
    let rc = recloser_breaker(2.0, 100, 10, Duration::from_secs(10));
    g.bench_function("recloser", |b| {
        b.iter(|| recloser_call(black_box(&rc), false))
    });
    let (sb, _sb_clock) = seatbelt_breaker(0.99, u32::MAX, Duration::from_secs(10));
    g.bench_function("seatbelt", |b| {
        b.iter(|| now(seatbelt_call(black_box(&sb), Request::Fail)))
    });
    let rt = runtime();
    let mut tw = tower_breaker(usize::MAX, Duration::from_secs(10));
    g.bench_function("tower_resilience", |b| {
        b.iter(|| block_on(&rt, tower_call(&mut tw, Request::Fail)))
    });
    g.finish();
}

/// One `hot_loop` benchmark: `iters` iterations of `run`'s loop, timed as a
/// whole, so criterion reports the time of one iteration.
fn hot<T>(g: &mut BenchmarkGroup<'_, WallTime>, name: &str, subject: &T, run: fn(&T, u64) -> u64) {
    g.bench_function(name, |b| {
        b.iter_custom(|iters| {
            let t0 = Instant::now();
            let admitted = run(black_box(subject), iters);
            let elapsed = t0.elapsed();
            assert_eq!(admitted, iters, "{name}: every call is admitted");
            elapsed
        })
    });
}

fn hot_loop(c: &mut Criterion) {
    let mut g = c.benchmark_group("hot_loop");
    let word = AtomicU64::new(0);
    hot(&mut g, "atomic_load_pair", &word, hot_loop::load_pair);
    hot(
        &mut g,
        "atomic_load_pair/black_box",
        &word,
        hot_loop::load_pair_black_box,
    );
    let b64 = hot_loop::hot64();
    hot(&mut g, "tripword_w64", &b64, hot_loop::tripword_w64);
    hot(
        &mut g,
        "tripword_w64/permit_guard",
        &b64,
        hot_loop::tripword_w64_permit,
    );
    hot(
        &mut g,
        "tripword_w64/opaque",
        &b64,
        hot_loop::tripword_w64_opaque,
    );
    let b32 = hot_loop::hot32();
    hot(&mut g, "tripword_w32", &b32, hot_loop::tripword_w32);
    g.finish();
}

criterion_group!(
    benches,
    closed_call,
    open_rejection,
    probing_rejection,
    failure_release,
    hot_loop
);
criterion_main!(benches);
