//! Tests that kill mutants the rest of the suite let live.
//!
//! `cargo mutants -p tripword` found each of these gaps: a public method whose
//! result no test looked at, or a boundary no test stood on. Each test names
//! the mutant it kills. See docs/verification-mutants.md, "Mutation
//! testing".

use std::cell::{Cell, RefCell};

use tripword::clock::ManualClock;
use tripword::word::{Layout, State};
use tripword::{
    Breaker, Clock, Config, ConfigError, Field, Observer, OnTransition, Outcome, Release, Status,
    Transition, ValidConfig, W32, W64, Word,
};
use tripword_verification::model::ModelConfig;

/// Kills `Ticket::is_probe -> true` and `Permit::is_probe -> true`: a call
/// admitted in `Closed` is not the probe.
#[test]
fn closed_admissions_are_not_probes() {
    let clock = ManualClock::new(0);
    let b = Breaker::new(Config::new().failure_threshold(1).open_for(10), &clock);
    let t = b.acquire().expect("closed admits");
    assert!(!t.is_probe());
    let p = b.permit().expect("closed admits");
    assert!(!p.is_probe());
    assert_eq!(p.failure(), Release::Recorded);
    assert_eq!(b.release(t, Outcome::Failure), Release::Stale);
    clock.advance(10);
    let probe = b.permit().expect("elected");
    assert!(probe.is_probe());
    assert_eq!(probe.success(), Release::Recorded);
}

fn at_1234() -> u64 {
    1234
}

/// Kills `<impl Clock for fn() -> u64>::now -> 0` and `-> 1`: a function
/// clock reads the function, and the breaker stamps `Open` with it.
#[test]
fn function_clock_reads_the_function() {
    let clock: fn() -> u64 = at_1234;
    assert_eq!(clock.now(), 1234);
    let b = Breaker::new(Config::new().failure_threshold(1), clock);
    b.release(b.acquire().expect("closed admits"), Outcome::Failure);
    assert_eq!(
        b.snapshot().expect("valid").state,
        State::Open {
            since: 1234,
            trips: 1
        }
    );
}

/// Kills the constant-returning mutants of `ValidConfig`'s getters: each
/// returns what was set (the horizon: the width's default when none was).
#[test]
fn config_getters_return_what_was_set() {
    let config = Config::new()
        .failure_threshold(7)
        .open_for(123)
        .probe_timeout(45)
        .exponential_backoff(456)
        .abandon_as(Outcome::Ignored);
    let c = config.check::<W64>().expect("in range");
    assert_eq!(c.failure_threshold(), 7);
    assert_eq!(c.open_for(), 123);
    assert_eq!(c.probe_timeout(), 45);
    assert_eq!(c.backoff_cap(), Some(456));
    assert_eq!(c.abandon(), Outcome::Ignored);
    assert_eq!(c.horizon(), 3_600_000_000);
    assert_eq!(*c.config(), config);
    let fixed = config.fixed_open_time().check::<W64>().expect("in range");
    assert_eq!(fixed.backoff_cap(), None);
    let c32 = config.check::<W32>().expect("in range");
    assert_eq!(c32.horizon(), 3_600_000);
    assert_eq!((c32.time_shift(), c32.ring()), (7, 1 << 22));
    let set = config.horizon(12_345).check::<W32>().expect("in range");
    assert_eq!(
        (set.horizon(), set.time_shift(), set.ring()),
        (12_345, 0, 1 << 15)
    );
    assert_eq!(
        Config::new().check::<W64>().map(|c| c.backoff_cap()),
        Ok(None)
    );
    assert_eq!(
        ValidConfig::<W64>::new(Config::new().open_for(9)).open_for(),
        9
    );
}

/// Kills `replace > with >= in ValidConfig::open_duration`: when the doubled
/// time lands exactly on `cap >> doublings` without reaching the cap, the
/// doubled time is used, not the cap.
#[test]
fn backoff_doubling_just_under_the_cap_is_not_capped() {
    let c = Config::new()
        .open_for(100)
        .exponential_backoff(201)
        .check::<W64>()
        .expect("in range");
    assert_eq!(c.open_duration(1), 100);
    assert_eq!(c.open_duration(2), 200); // 100 == 201 >> 1: not capped
    assert_eq!(c.open_duration(3), 201);
}

fn field_of<W: Word>(r: Result<ValidConfig<W>, ConfigError>) -> Option<Field> {
    r.err().map(|e| e.field)
}

/// The largest duration a width accepts (at its default horizon): the
/// largest `d` with `need(d) <= 2^(T-1)` units at the largest shift, and at
/// most `2^60`.
fn longest<W: Word>() -> u64 {
    let l = W::LAYOUT;
    let s = l.word_bits - l.time_bits;
    let by_units = (((1u64 << (l.time_bits - 1)) + 1) << s) - 2 * ((1 << s) - 1) - 1;
    by_units.min(1 << 60)
}

/// Every range edge of `check`, on both widths: the smallest and largest
/// allowed values pass, one beyond fails with the field named. Kills the
/// `<` → `<=`, `>` → `>=` and `>` → `==` mutants of `Config::check_layout`.
fn check_edges<W: Word>() {
    let l: Layout = W::LAYOUT;
    let base = Config::new().open_for(10).probe_timeout(10);
    let ok = |c: Config| {
        let v = c.check::<W>();
        assert_eq!(v.map(|v| *v.config()), Ok(c), "{c:?}");
    };

    ok(base.failure_threshold(1));
    ok(base.failure_threshold(l.max_failures()));
    assert_eq!(
        field_of(base.failure_threshold(0).check::<W>()),
        Some(Field::FailureThreshold)
    );
    assert_eq!(
        field_of(base.failure_threshold(l.max_failures() + 1).check::<W>()),
        Some(Field::FailureThreshold)
    );

    // Durations: 1..=2^60 ticks as values; the longest the word can time
    // is the horizon check's.
    let max = longest::<W>();
    ok(base.open_for(1));
    ok(base.open_for(max));
    assert_eq!(
        field_of(base.open_for(0).check::<W>()),
        Some(Field::OpenFor)
    );
    assert_eq!(
        field_of(base.open_for((1 << 60) + 1).check::<W>()),
        Some(Field::OpenFor)
    );
    if max < 1 << 60 {
        // No shift holds it: the duration is named, with its true range.
        let e = base.open_for(max + 1).check::<W>().unwrap_err();
        assert_eq!((e.field, e.min, e.max), (Field::OpenFor, 1, max));
        let e = base.probe_timeout(max + 1).check::<W>().unwrap_err();
        assert_eq!((e.field, e.max), (Field::ProbeTimeout, max));
    }

    ok(base.exponential_backoff(10)); // cap == open_for
    let reachable = 10u64 << (l.max_trips() - 1);
    ok(base.exponential_backoff(reachable)); // the longest the trips reach
    let e = base.exponential_backoff(9).check::<W>().unwrap_err();
    assert_eq!((e.field, e.min, e.max), (Field::BackoffCap, 10, reachable));
    let e = base
        .exponential_backoff(reachable + 1)
        .check::<W>()
        .unwrap_err();
    assert_eq!(
        (e.field, e.value, e.max),
        (Field::BackoffCap, reachable + 1, reachable)
    );

    ok(base.probe_timeout(1));
    ok(base.probe_timeout(max));
    assert_eq!(
        field_of(base.probe_timeout(0).check::<W>()),
        Some(Field::ProbeTimeout)
    );
    assert_eq!(
        field_of(base.probe_timeout((1 << 60) + 1).check::<W>()),
        Some(Field::ProbeTimeout)
    );

    // The horizon: the largest shift's ring holds horizon + longest + 4
    // units.
    let s = l.word_bits - l.time_bits;
    let top = (1u128 << (l.time_bits + s)) - 10 - 4 * (1u128 << s);
    if let Ok(top) = u64::try_from(top) {
        ok(base.horizon(top));
        // The range reported is the true one.
        let e = base.horizon(top + 1).check::<W>().unwrap_err();
        assert_eq!((e.field, e.min, e.max), (Field::Horizon, 0, top));
    }
    assert_eq!(
        field_of(base.horizon(u64::MAX).check::<W>()),
        Some(Field::Horizon)
    );
}

#[test]
fn check_accepts_each_edge_and_rejects_one_beyond_w64() {
    check_edges::<W64>();
}

#[test]
fn check_accepts_each_edge_and_rejects_one_beyond_w32() {
    check_edges::<W32>();
}

/// The time shift at every edge where it changes: the core derives the one
/// the spec's rule (the reference model's) derives, and accepts exactly the
/// configs for which the rule finds one. Kills the boundary mutants of the
/// shift search in `Config::check_layout` and of `units`.
fn shift_edges<W: Word>() {
    let l = W::LAYOUT;
    let mut checked = 0;
    for s in 0..=l.word_bits - l.time_bits {
        let ring = 1u128 << (l.time_bits + s);
        for longest in [1u64, 3, 1000, 600_000, 1 << 20, 1 << 30] {
            let fit = ring as i128 - i128::from(longest) - 4 * (1i128 << s);
            for delta in [-1i128, 0, 1] {
                let Ok(horizon) = u64::try_from(fit + delta) else {
                    continue;
                };
                let config = Config::new()
                    .open_for(longest)
                    .probe_timeout(1)
                    .horizon(horizon);
                let want = ModelConfig::derive_shift(&l, horizon, longest);
                let got = config.check::<W>();
                assert_eq!(
                    got.as_ref().ok().map(ValidConfig::time_shift),
                    want,
                    "{config:?} on W{}",
                    l.word_bits
                );
                if want.is_none() {
                    assert_eq!(got.unwrap_err().field, Field::Horizon);
                }
                checked += 1;
            }
        }
    }
    assert!(checked > 100);
}

#[test]
fn shift_is_the_spec_rule_at_every_edge_w64() {
    shift_edges::<W64>();
}

#[test]
fn shift_is_the_spec_rule_at_every_edge_w32() {
    shift_edges::<W32>();
}

/// Records both kinds of report.
#[derive(Default)]
struct Log {
    transitions: RefCell<Vec<Transition>>,
    corrupt: RefCell<Vec<(u64, u32)>>,
}

impl Observer for Log {
    fn on_transition(&self, t: Transition) {
        self.transitions.borrow_mut().push(t);
    }
    fn on_corrupt_word(&self, raw: u64, counter: u32) {
        self.corrupt.borrow_mut().push((raw, counter));
    }
}

/// Kills `<impl Observer for &O>::on_corrupt_word with ()` (and checks the
/// forwarding of transitions): an observer behind a reference gets every
/// report.
#[test]
fn observer_behind_a_reference_forwards_everything() {
    let log = Log::default();
    // Called on `&Log` as the observer type (method syntax would pick
    // `Log`'s own impl).
    let by_ref: &Log = &log;
    <&Log as Observer>::on_corrupt_word(&by_ref, 0b111, 3);
    <&Log as Observer>::on_transition(
        &by_ref,
        Transition {
            from: Status::Closed,
            to: Status::Open,
            counter: 1,
            forced: true,
        },
    );
    assert_eq!(*log.corrupt.borrow(), [(0b111, 3)]);
    assert_eq!(log.transitions.borrow().len(), 1);

    let clock = ManualClock::new(0);
    let b = Breaker::from_parts(ValidConfig::<W64>::new(Config::new()), &clock, &log);
    b.force_open();
    assert_eq!(log.transitions.borrow().len(), 2);
}

/// Kills `<impl Observer for OnTransition<F>>::on_transition with ()`: the
/// closure sees every transition, once.
#[test]
fn on_transition_calls_the_closure_once_per_change() {
    let seen = Cell::new(0u32);
    let clock = ManualClock::new(0);
    let b = Breaker::from_parts(
        ValidConfig::<W64>::new(Config::new()),
        &clock,
        OnTransition(|t: Transition| {
            assert_eq!(t.counter, seen.get() + 1);
            seen.set(seen.get() + 1);
        }),
    );
    b.force_open();
    b.force_close();
    assert_eq!(seen.get(), 2);
}

/// Kills `<impl Word for W64>::new_cell -> Default::default()` and the W32
/// twin: a cell holds the word it was made with (the breaker only ever makes
/// cells of the zero word, which `Default` also gives).
#[test]
fn new_cell_holds_the_given_word() {
    use tripword::cell::Cell;
    assert_eq!(
        Cell::<W64>::load(&W64::new_cell(0xdead_beef_0000_0001)),
        Ok(0xdead_beef_0000_0001)
    );
    assert_eq!(
        Cell::<W32>::load(&W32::new_cell(0xdead_0001)),
        Ok(0xdead_0001)
    );
}
