//! Tests that kill mutants the rest of the suite let live (issue 3, item 7).
//!
//! `cargo mutants -p tripword` found each of these gaps: a public method whose
//! result no test looked at, or a boundary no test stood on. Each test names
//! the mutant it kills. See docs/verification.md, "Mutation
//! testing".

use std::cell::{Cell, RefCell};

use tripword::clock::ManualClock;
use tripword::word::{Layout, State};
use tripword::{
    Breaker, Clock, Config, ConfigError, Field, Observer, OnTransition, Outcome, Phase, Release,
    Transition, W32, W64, Word,
};

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

/// Kills the constant-returning mutants of `Config::get_open_for` and
/// `Config::get_backoff_cap`.
#[test]
fn config_getters_return_what_was_set() {
    let c = Config::new()
        .failure_threshold(7)
        .open_for(123)
        .probe_timeout(45)
        .exponential_backoff(456);
    assert_eq!(c.get_failure_threshold(), 7);
    assert_eq!(c.get_open_for(), 123);
    assert_eq!(c.get_probe_timeout(), 45);
    assert_eq!(c.get_backoff_cap(), Some(456));
    assert_eq!(c.fixed_open_time().get_backoff_cap(), None);
    assert_eq!(Config::new().get_backoff_cap(), None);
}

/// Kills `replace > with >= in Config::open_duration`: when the doubled time
/// lands exactly on `cap >> doublings` without reaching the cap, the doubled
/// time is used, not the cap.
#[test]
fn backoff_doubling_just_under_the_cap_is_not_capped() {
    let c = Config::new().open_for(100).exponential_backoff(201);
    assert_eq!(c.open_duration(1), 100);
    assert_eq!(c.open_duration(2), 200); // 100 == 201 >> 1: not capped
    assert_eq!(c.open_duration(3), 201);
}

fn field_of(r: Result<Config, ConfigError>) -> Option<Field> {
    r.err().map(|e| e.field)
}

/// Every range edge of `validate`, on both widths: the smallest and largest
/// allowed values pass, one beyond fails with the field named. Kills the
/// `<` → `<=`, `>` → `>=` and `>` → `==` mutants of `Config::validate_layout`.
fn validate_edges<W: Word>() {
    let l: Layout = W::LAYOUT;
    let max = l.max_duration();
    let base = Config::new().open_for(10).probe_timeout(10);
    let ok = |c: Config| assert_eq!(c.validate::<W>(), Ok(c), "{c:?}");

    ok(base.failure_threshold(1));
    ok(base.failure_threshold(l.max_failures()));
    assert_eq!(
        field_of(base.failure_threshold(0).validate::<W>()),
        Some(Field::FailureThreshold)
    );
    assert_eq!(
        field_of(base.failure_threshold(l.max_failures() + 1).validate::<W>()),
        Some(Field::FailureThreshold)
    );

    ok(base.open_for(1));
    ok(base.open_for(max));
    assert_eq!(
        field_of(base.open_for(0).validate::<W>()),
        Some(Field::OpenFor)
    );
    assert_eq!(
        field_of(base.open_for(max + 1).validate::<W>()),
        Some(Field::OpenFor)
    );

    ok(base.exponential_backoff(10)); // cap == open_for
    ok(base.exponential_backoff(max)); // cap == max
    let e = base.exponential_backoff(9).validate::<W>().unwrap_err();
    assert_eq!((e.field, e.min, e.max), (Field::BackoffCap, 10, max));
    let e = base
        .exponential_backoff(max + 1)
        .validate::<W>()
        .unwrap_err();
    assert_eq!((e.field, e.value), (Field::BackoffCap, max + 1));

    ok(base.probe_timeout(1));
    ok(base.probe_timeout(max));
    assert_eq!(
        field_of(base.probe_timeout(0).validate::<W>()),
        Some(Field::ProbeTimeout)
    );
    assert_eq!(
        field_of(base.probe_timeout(max + 1).validate::<W>()),
        Some(Field::ProbeTimeout)
    );
}

#[test]
fn validate_accepts_each_edge_and_rejects_one_beyond_w64() {
    validate_edges::<W64>();
}

#[test]
fn validate_accepts_each_edge_and_rejects_one_beyond_w32() {
    validate_edges::<W32>();
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
            from: Phase::Closed,
            to: Phase::ForcedOpen,
            counter: 1,
        },
    );
    assert_eq!(*log.corrupt.borrow(), [(0b111, 3)]);
    assert_eq!(log.transitions.borrow().len(), 1);

    let clock = ManualClock::new(0);
    let b = Breaker::with_observer(Config::new(), &clock, &log);
    b.force_open();
    assert_eq!(log.transitions.borrow().len(), 2);
}

/// Kills `<impl Observer for OnTransition<F>>::on_transition with ()`: the
/// closure sees every transition, once.
#[test]
fn on_transition_calls_the_closure_once_per_change() {
    let seen = Cell::new(0u32);
    let clock = ManualClock::new(0);
    let b = Breaker::with_observer(
        Config::new(),
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
    assert_eq!(
        W64::load(&W64::new_cell(0xdead_beef_0000_0001)),
        0xdead_beef_0000_0001
    );
    assert_eq!(W32::load(&W32::new_cell(0xdead_0001)), 0xdead_0001);
}
