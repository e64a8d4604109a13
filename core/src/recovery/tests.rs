//! The recovery states through the breaker, on both words (`docs/spec.md`,
//! "Several probes" R-rules and "The ramp"): exactly `n` probes, the close
//! and reopen rules, ignored and timed-out probes, stale tickets; the
//! ramp's share at every stage, its trip, its end in a plain `Closed`.

use crate::clock::ManualClock;
use crate::transition::{Event, Verdict, apply};
use crate::word::{Snapshot, State, W32, W64, Word};
use crate::*;
use std::vec::Vec;

/// The probe timeout of [`base`], in ticks.
const TIMEOUT: u64 = 1_000_000;

/// Trips on one failure, open 100 ticks, probes time out after
/// [`TIMEOUT`]; the finest resolution (`horizon(0)`: shift 0 on both
/// words, so a trial keeps its time in units of 2^12 ticks on `W64` and
/// 2^6 on `W32`, a ramp in 2^14 and 2^7).
fn base() -> Config {
    Config::new()
        .failure_threshold(1)
        .open_for(100)
        .probe_timeout(TIMEOUT)
        .horizon(0)
}

/// The trial's time unit in ticks.
fn trial_unit<W: Word>(b: &B<'_, W>) -> u64 {
    1 << (b.config().time_shift() + 3 * W::LAYOUT.probe_bits)
}

/// A breaker tripped at 0 and half-open at 100.
fn tripped<W: Word>(config: Config, clock: &ManualClock) -> B<'_, W> {
    let b = make::<W>(config, clock);
    let t = b.acquire().unwrap();
    b.release(t, Outcome::Failure);
    // The open time, rounded to the config's units.
    clock.advance(b.acquire().unwrap_err().retry_after().unwrap());
    b
}

type B<'c, W> = Breaker<&'c ManualClock, W, (), ValidConfig<W>>;

fn make<W: Word>(config: Config, clock: &ManualClock) -> B<'_, W> {
    Breaker::from_parts(config.check::<W>().unwrap(), clock, ())
}

fn state<W: Word>(b: &B<'_, W>) -> State {
    Snapshot::decode::<W>(b.load()).unwrap().state
}

fn exactly_n_probes_are_admitted<W: Word>(n: u8) {
    let clock = ManualClock::new(0);
    let b = tripped::<W>(base().probes(n), &clock);
    let tickets: Vec<Ticket> = (0..n).map(|_| b.acquire().unwrap()).collect();
    assert!(tickets.iter().all(Ticket::is_probe));
    let r = b.acquire().unwrap_err();
    assert_eq!(r.cause(), Cause::Probing);
    // Never early, and less than three of the trial's units late.
    let wait = r.retry_after().unwrap();
    assert!(
        (TIMEOUT..TIMEOUT + 3 * trial_unit(&b)).contains(&wait),
        "{wait}"
    );
    assert_eq!(b.status(), Status::Probing);
    // All but the last pass: still a trial; the last closes it.
    let mut it = tickets.into_iter();
    for t in it.by_ref().take(n as usize - 1) {
        assert_eq!(b.release(t, Outcome::Success), Release::Recorded);
        assert!(matches!(state(&b), State::Trial { .. }));
    }
    b.release(it.next().unwrap(), Outcome::Success);
    assert_eq!(b.status(), Status::Closed);
}

#[test]
fn exactly_n_probes_are_admitted_w64() {
    for n in 2..=15 {
        exactly_n_probes_are_admitted::<W64>(n);
    }
}

#[test]
fn exactly_n_probes_are_admitted_w32() {
    for n in 2..=3 {
        exactly_n_probes_are_admitted::<W32>(n);
    }
}

#[test]
fn probes_out_of_range_are_refused() {
    let e = Config::new().probes(16).check::<W64>().unwrap_err();
    assert_eq!((e.field, e.min, e.max), (Field::Probes, 1, 15));
    let e = Config::new().probes(4).check::<W32>().unwrap_err();
    assert_eq!((e.field, e.max), (Field::Probes, 3));
    let e = Config::new().probes(0).check::<W64>().unwrap_err();
    assert_eq!(e.field, Field::Probes);
    let e = Config::new()
        .probes(3)
        .probes_to_close(4)
        .check::<W64>()
        .unwrap_err();
    assert_eq!((e.field, e.max), (Field::ProbesToClose, 3));
}

fn the_k_th_success_closes_and_too_many_failures_reopen<W: Word>() {
    let clock = ManualClock::new(0);
    // 3 probes, 2 to close: one failure is allowed, the second reopens.
    let b = tripped::<W>(base().probes(3).probes_to_close(2), &clock);
    let [a, c, d] = [(); 3].map(|_| b.acquire().unwrap());
    b.release(a, Outcome::Failure);
    assert!(matches!(
        state(&b),
        State::Trial {
            failed: 1,
            running: 2,
            ..
        }
    ));
    b.release(c, Outcome::Success);
    assert!(matches!(state(&b), State::Trial { passed: 1, .. }));
    b.release(d, Outcome::Success);
    assert_eq!(b.status(), Status::Closed);

    let b = tripped::<W>(base().probes(3).probes_to_close(2), &clock);
    let [a, c, d] = [(); 3].map(|_| b.acquire().unwrap());
    b.release(a, Outcome::Failure);
    b.release(c, Outcome::Failure);
    // Reopened with backoff's trip count moved on; the last probe is stale.
    assert!(matches!(state(&b), State::Open { trips: 2, .. }));
    assert_eq!(b.release(d, Outcome::Success), Release::Stale);
}

#[test]
fn the_k_th_success_closes_and_too_many_failures_reopen_w64() {
    the_k_th_success_closes_and_too_many_failures_reopen::<W64>();
}

#[test]
fn the_k_th_success_closes_and_too_many_failures_reopen_w32() {
    the_k_th_success_closes_and_too_many_failures_reopen::<W32>();
}

#[test]
fn an_ignored_probe_frees_its_place() {
    let clock = ManualClock::new(0);
    let b = tripped::<W64>(base().probes(2), &clock);
    let a = b.acquire().unwrap();
    let c = b.acquire().unwrap();
    assert!(b.acquire().is_err());
    b.release(a, Outcome::Ignored);
    let d = b.acquire().unwrap();
    assert!(d.is_probe());
    b.release(c, Outcome::Success);
    b.release(d, Outcome::Success);
    assert_eq!(b.status(), Status::Closed);
}

fn a_lost_probe_is_bounded_by_the_probe_timeout<W: Word>() {
    let clock = ManualClock::new(0);
    let b = tripped::<W>(base().probes(2), &clock);
    let lost = b.acquire().unwrap();
    let slow = b.acquire().unwrap();
    // Rejected until the wait it states, admitted from then on.
    let wait = b.acquire().unwrap_err().retry_after().unwrap();
    assert!(wait >= TIMEOUT);
    clock.advance(wait - 1);
    assert!(b.acquire().is_err());
    clock.advance(1);
    // Timed out: the next caller starts a new trial; the old tickets are
    // stale.
    let fresh = b.acquire().unwrap();
    assert!(fresh.is_probe());
    assert_eq!(b.release(slow, Outcome::Success), Release::Stale);
    assert_eq!(b.release(lost, Outcome::Failure), Release::Stale);
    assert!(matches!(
        state(&b),
        State::Trial {
            running: 1,
            passed: 0,
            failed: 0,
            ..
        }
    ));
    b.release(fresh, Outcome::Success);
}

#[test]
fn a_lost_probe_is_bounded_by_the_probe_timeout_w64() {
    a_lost_probe_is_bounded_by_the_probe_timeout::<W64>();
}

#[test]
fn a_lost_probe_is_bounded_by_the_probe_timeout_w32() {
    a_lost_probe_is_bounded_by_the_probe_timeout::<W32>();
}

#[test]
fn a_trial_times_out_in_its_coarser_units_never_early_w32() {
    // W32 keeps the trial's time 6 bits coarser: at shift 0, 64-tick
    // units; the timeout lasts at least what was set, less than 3 units
    // more, and every rejection's wait is exact.
    let clock = ManualClock::new(0);
    let b = tripped::<W32>(base().probe_timeout(1_000).probes(2), &clock);
    let start = clock.now();
    let _lost = b.acquire().unwrap();
    let _held = b.acquire().unwrap();
    while let Err(r) = b.acquire() {
        let wait = r.retry_after().unwrap();
        assert!(wait >= 1);
        clock.advance(wait - 1);
        assert!(b.acquire().is_err(), "admitted before its wait");
        clock.advance(1);
    }
    let took = clock.now() - start;
    assert!((1_000..1_000 + 3 * 64).contains(&took), "{took}");
}

#[test]
fn the_ramp_admits_its_share_at_every_stage() {
    // 10 %, 50 %: stages of 2^20 ticks (64 of the ramp's units); W64
    // rounds shares to 1/1024.
    let clock = ManualClock::new(0);
    let step = 1 << 20;
    let config = base().ramp(Ramp::stages(step, &[1_000, 5_000]));
    let b = tripped::<W64>(config, &clock);
    let probe = b.acquire().unwrap();
    b.release(probe, Outcome::Success);
    assert_eq!(b.status(), Status::Recovering);
    let mut admitted = [0u32; 2];
    // 1 000 calls in each stage, all at one reading; then on to the next
    // stage, which the rejections say when it starts.
    for count in admitted.iter_mut() {
        let mut next_stage = 0;
        for _ in 0..1_000 {
            match b.acquire() {
                Ok(t) => {
                    *count += 1;
                    b.release(t, Outcome::Success);
                }
                Err(r) => {
                    assert_eq!(r.cause(), Cause::Ramp);
                    next_stage = r.retry_after().unwrap();
                    assert!(next_stage <= step + (3 << 14));
                }
            }
        }
        clock.advance(next_stage);
    }
    // ⌊c·p⌋ or one more: p = 102/1024 and 512/1024.
    assert!((99..=100).contains(&admitted[0]), "{admitted:?}");
    assert_eq!(admitted[1], 500);
    // Past the last stage the next call closes it and is admitted.
    assert!(b.acquire().is_ok());
    assert_eq!(b.status(), Status::Closed);
    assert!(matches!(state(&b), State::Closed { failures: 0 }));
}

#[test]
fn a_failing_ramp_reopens_with_backoff() {
    let clock = ManualClock::new(0);
    let config = base()
        .failure_threshold(2)
        .exponential_backoff(800)
        .ramp(Ramp::linear(1 << 20, 1));
    let b = make::<W64>(config, &clock);
    for _ in 0..2 {
        let t = b.acquire().unwrap();
        b.release(t, Outcome::Failure);
    }
    clock.advance(100);
    b.release(b.acquire().unwrap(), Outcome::Success);
    assert_eq!(b.status(), Status::Recovering);
    // Half the calls get through; two consecutive failures reopen, with
    // the trip count kept, so the open time doubles.
    let mut failures = 0;
    while failures < 2 {
        if let Ok(t) = b.acquire() {
            b.release(t, Outcome::Failure);
            failures += 1;
        }
    }
    assert!(matches!(state(&b), State::Open { trips: 2, .. }));
    assert_eq!(b.acquire().unwrap_err().retry_after(), Some(200));
}

#[test]
fn an_ended_ramp_is_plain_closed_one_load_no_clock() {
    let clock = ManualClock::new(0);
    let config = base().ramp(Ramp::progressive(1 << 14));
    let b = tripped::<W64>(config, &clock);
    b.release(b.acquire().unwrap(), Outcome::Success);
    clock.advance(13 << 14);
    b.release(b.acquire().unwrap(), Outcome::Success);
    let word = b.load();
    assert_eq!(
        Snapshot::decode::<W64>(word).unwrap().state,
        State::Closed { failures: 0 }
    );
    // The pure layer admits it without reading the clock or storing.
    let config = config.check::<W64>().unwrap();
    let step = apply(&config, word, Event::Admit, || panic!("clock read"));
    assert!(matches!(
        step.verdict,
        Verdict::Admitted { probe: false, .. }
    ));
    assert_eq!(step.word, word);
}

#[test]
fn recovery_words_round_trip_and_every_pattern_decodes() {
    for raw in [u64::MAX, 0xdead_beef_0000_0007, 6, 7, u64::MAX - 1] {
        let snap = Snapshot::decode::<W64>(raw).unwrap();
        assert_eq!(snap.encode::<W64>(), raw);
    }
    for raw in [u32::MAX, 6, 7, 0x8000_0006] {
        let snap = Snapshot::decode::<W32>(raw).unwrap();
        assert_eq!(snap.encode::<W32>(), raw);
    }
}

/// The config fixed at compile time: probes and a ramp as immediates.
struct Recovering;
impl ConstConfig for Recovering {
    const CONFIG: Config = Config::new()
        .failure_threshold(1)
        .open_for(100)
        .probe_timeout(TIMEOUT)
        .horizon(0)
        .probes(2)
        .ramp(Ramp::linear(1 << 18, 1));
}

static STATIC_CONFIG: ValidConfig<W32> = ValidConfig::new(Recovering::CONFIG);

/// One trip, two probes, the ramp, its end: the same on every breaker form.
fn every_form_recovers<B: CircuitBreaker>(b: &B, clock: &ManualClock) {
    let t = b.acquire().unwrap();
    b.release(t, Outcome::Failure);
    clock.advance(b.acquire().err().unwrap().retry_after().unwrap());
    let [p, q] = [(); 2].map(|_| b.acquire().unwrap());
    assert_eq!(b.acquire().err().unwrap().cause(), Cause::Probing);
    b.release(p, Outcome::Success);
    b.release(q, Outcome::Success);
    assert_eq!(b.status(), Status::Recovering);
    // Half the calls get through (1/2 on both words), alternating.
    let admitted: Vec<bool> = (0..8)
        .map(|_| match b.acquire() {
            Ok(t) => {
                b.release(t, Outcome::Success);
                true
            }
            Err(r) => {
                assert_eq!(r.cause(), Cause::Ramp);
                false
            }
        })
        .collect();
    assert_eq!(admitted.iter().filter(|a| **a).count(), 4, "{admitted:?}");
    let wait = b
        .acquire()
        .err()
        .map(|r| r.retry_after().unwrap())
        .unwrap_or(0);
    clock.advance(wait + (1 << 18));
    assert!(b.acquire().is_ok());
    assert_eq!(b.status(), Status::Closed);
}

#[test]
fn const_static_and_inline_breakers_recover_alike() {
    let clock = ManualClock::new(0);
    let b: ConstBreaker<Recovering, &ManualClock, W32> =
        ConstBreaker::from_parts(Const::new(), &clock, ());
    every_form_recovers(&b, &clock);
    let clock = ManualClock::new(0);
    let b: StaticBreaker<&ManualClock, W32> = StaticBreaker::from_parts(&STATIC_CONFIG, &clock, ());
    every_form_recovers(&b, &clock);
    let clock = ManualClock::new(0);
    let b = make::<W64>(Recovering::CONFIG, &clock);
    every_form_recovers(&b, &clock);
}

#[test]
fn a_rate_breaker_recovers_through_probes_and_a_ramp() {
    use crate::rate::{Rate, RateBreaker};
    let clock = ManualClock::new(0);
    let config = Config::new()
        .open_for(100)
        .probe_timeout(TIMEOUT)
        .horizon(0)
        .probes(2)
        .ramp(Ramp::linear(1 << 18, 1));
    let rate = Rate::new().failure_rate(50).minimum_calls(2).window(1_000);
    let b = RateBreaker::<_, W64>::new(config, rate, &clock).unwrap();
    every_form_recovers_rate(&b, &clock);
}

/// As [`every_form_recovers`], tripping by the failure rate (two failures
/// of two calls).
fn every_form_recovers_rate<B: CircuitBreaker>(b: &B, clock: &ManualClock) {
    for _ in 0..2 {
        let t = b.acquire().unwrap();
        b.release(t, Outcome::Failure);
    }
    assert_eq!(b.status(), Status::Open);
    clock.advance(b.acquire().err().unwrap().retry_after().unwrap());
    let [p, q] = [(); 2].map(|_| b.acquire().unwrap());
    assert_eq!(b.acquire().err().unwrap().cause(), Cause::Probing);
    b.release(p, Outcome::Success);
    b.release(q, Outcome::Success);
    assert_eq!(b.status(), Status::Recovering);
    // The ramp's failures reopen it: a rate breaker's threshold is one.
    loop {
        if let Ok(t) = b.acquire() {
            b.release(t, Outcome::Failure);
            break;
        }
    }
    assert_eq!(b.status(), Status::Open);
}

#[test]
fn the_longest_ramp_step_is_accepted_and_one_more_tick_refused() {
    for stages in [1u8, 3, 8] {
        for horizon in [0, 1 << 30] {
            let config = |step| {
                Config::new()
                    .horizon(horizon)
                    .ramp(Ramp::linear(step * u64::from(stages), stages))
            };
            let e = config(u64::MAX / 16).check::<W64>().unwrap_err();
            assert_eq!(e.field, Field::Ramp);
            let longest = e.max;
            assert!(config(longest).check::<W64>().is_ok(), "{stages} {horizon}");
            let e = config(longest + 1).check::<W64>().unwrap_err();
            assert_eq!((e.field, e.max), (Field::Ramp, longest));
            let e32 = config(u64::MAX / 16).check::<W32>().unwrap_err();
            assert!(config(e32.max).check::<W32>().is_ok());
            assert!(config(e32.max + 1).check::<W32>().is_err());
        }
    }
}
