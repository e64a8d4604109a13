//! Breaker-level tests: the seeds' scenarios, guards, observers, identity,
//! clocks and both word widths, through the atomic layer; and the
//! regressions of time in units and the counter's period through the same.

use crate::clock::ManualClock;
use crate::transition::Transition;
use crate::word::{Snapshot, State};
use crate::*;
use core::cell::{Cell, RefCell};
use std::vec::Vec;

/// Records every report, in order.
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

impl Log {
    fn phases(&self) -> Vec<(Status, Status)> {
        self.transitions
            .borrow()
            .iter()
            .map(|t| (t.from, t.to))
            .collect()
    }
    fn forced(&self) -> Vec<bool> {
        self.transitions.borrow().iter().map(|t| t.forced).collect()
    }
}

/// A word that is no state, with counter `counter`: tag 7 in a build
/// without the recovery states (where it is unknown), else a `ForcedOpen`
/// with its top bit set (stray bits). Both are corrupt (spec I8).
fn no_state<W: Word>(counter: u64) -> W::Raw {
    let stray = if crate::word::RECOVERY {
        4 | 1u64 << (W::LAYOUT.word_bits - 1)
    } else {
        0b111
    };
    W::from_u64(stray | counter << 3)
}

/// A clock that counts its reads.
struct CountingClock {
    now: Cell<u64>,
    reads: Cell<u32>,
}

impl Clock for CountingClock {
    fn now(&self) -> u64 {
        self.reads.set(self.reads.get() + 1);
        self.now.get()
    }
}

/// The seeds' config. `horizon(0)`: the finest resolution the durations
/// allow, `s = 0` on both widths, so the scenarios below count exact ticks
/// (`W32` counts 128-tick units at its default horizon).
const fn seed_config() -> Config {
    Config::new()
        .failure_threshold(3)
        .open_for(100)
        .probe_timeout(50)
        .horizon(0)
}

fn valid<W: Word>(config: Config) -> ValidConfig<W> {
    config.check::<W>().expect("a valid config")
}

fn breaker<W: Word>(clock: &ManualClock, config: Config) -> Breaker<&ManualClock, W, Log> {
    Breaker::from_parts(valid(config), clock, Log::default())
}

/// The rejection of an admission; panics if it was admitted.
fn rejected(r: Result<Ticket, Rejected>) -> Rejected {
    match r {
        Ok(t) => panic!("a rejection expected, got {t:?}"),
        Err(r) => r,
    }
}

/// The cause and wait of an admission's rejection.
fn refusal(r: Result<Ticket, Rejected>) -> (Cause, Option<u64>) {
    let r = rejected(r);
    (r.cause(), r.retry_after())
}

macro_rules! both_widths {
    ($($name:ident),* $(,)?) => {
        mod w64 { $( #[test] fn $name() { super::$name::<crate::word::W64>(); } )* }
        mod w32 { $( #[test] fn $name() { super::$name::<crate::word::W32>(); } )* }
    };
}

both_widths!(
    seed_000_scenario,
    seed_002_consecutive_not_total,
    probe_timeout_makes_late_result_stale,
    lost_probe_blocks_only_until_timeout,
    force_open_held_through_any_time,
    force_close_makes_older_tickets_stale,
    slow_closed_call_cannot_extend_open,
    permit_drop_records_abandon_outcome,
    permit_abandon_can_be_ignored,
    ticket_from_another_breaker_is_stale,
    ticket_counter_round_trips_at_the_largest_counter,
    failure_fast_path_compares_the_whole_counter,
    closed_path_is_quiet,
    rejections_read_the_clock_at_most_once,
    rejections_say_why_and_how_long,
    status_is_a_read_and_the_next_admission_moves,
    corrupt_word_is_reported_once_and_fails_open,
    wrapping_clock_through_the_breaker,
    closed_looking_corrupt_words_are_repaired,
    fast_path_lookalikes_are_repaired,
    backward_clock_fails_towards_probing,
    observer_may_call_back_into_the_breaker,
    probe_timeout_of_one_tick,
);

/// Seed 000: threshold 3, open for 100; the service goes down, three failures
/// open the breaker, open rejects without calling, a trial fails and reopens,
/// the service recovers, a trial succeeds and closes.
fn seed_000_scenario<W: Word>() {
    let clock = ManualClock::new(0);
    let b = breaker::<W>(&clock, seed_config());
    let service_up = Cell::new(true);
    let calls = Cell::new(0u32);
    let call = || -> Result<Result<(), ()>, Rejected> {
        let permit = b.permit()?;
        calls.set(calls.get() + 1);
        Ok(if service_up.get() {
            permit.success();
            Ok(())
        } else {
            permit.failure();
            Err(())
        })
    };

    assert_eq!(call(), Ok(Ok(())));
    service_up.set(false);
    for _ in 0..3 {
        assert_eq!(call(), Ok(Err(())));
    }
    assert_eq!(b.status(), Status::Open);
    for waited in 0..3 {
        let r = call().expect_err("open: rejected");
        assert_eq!(
            (r.cause(), r.retry_after()),
            (Cause::Open, Some(100 - waited))
        );
        clock.advance(1);
    }
    assert_eq!(calls.get(), 4, "the service is not called while open");

    clock.advance(97);
    assert_eq!(b.status(), Status::HalfOpen);
    assert_eq!(call(), Ok(Err(())), "half-open trial fails");
    assert_eq!(b.status(), Status::Open);

    service_up.set(true);
    clock.advance(100);
    assert_eq!(b.status(), Status::HalfOpen);
    assert_eq!(call(), Ok(Ok(())), "half-open trial succeeds");
    assert_eq!(b.status(), Status::Closed);
    assert_eq!(call(), Ok(Ok(())));
    assert_eq!(calls.get(), 7);

    use Status::*;
    assert_eq!(
        b.observer().phases(),
        [
            (Closed, Open),
            (Open, HalfOpen),
            (HalfOpen, Probing),
            (Probing, Open),
            (Open, HalfOpen),
            (HalfOpen, Probing),
            (Probing, Closed),
        ]
    );
    assert_eq!(b.observer().forced(), [false; 7]);
    let counters: Vec<u32> = b
        .observer()
        .transitions
        .borrow()
        .iter()
        .map(|t| t.counter)
        .collect();
    assert_eq!(counters, [1, 2, 3, 4, 5, 6, 7], "I7 and I10");
}

/// Seed 002: the breaker opens on N failures *in a row*, not N in total.
fn seed_002_consecutive_not_total<W: Word>() {
    let clock = ManualClock::new(0);
    let b = breaker::<W>(&clock, Config::new().failure_threshold(2));
    for outcome in [
        Outcome::Failure,
        Outcome::Success,
        Outcome::Failure,
        Outcome::Success,
    ] {
        b.release(b.acquire().unwrap(), outcome);
        assert_eq!(b.status(), Status::Closed);
    }
    // Ignored outcomes neither count nor reset.
    b.release(b.acquire().unwrap(), Outcome::Failure);
    b.release(b.acquire().unwrap(), Outcome::Ignored);
    assert_eq!(b.status(), Status::Closed);
    b.release(b.acquire().unwrap(), Outcome::Failure);
    assert_eq!(b.status(), Status::Open);
    assert_eq!(b.observer().phases(), [(Status::Closed, Status::Open)]);
}

/// Overwrites the breaker's word, as a stray write or retained RAM would.
/// Loops because `compare_exchange_weak` may fail spuriously (Miri makes it
/// fail 80% of the time).
fn poke<W: Word, O, P: ConfigSource<W>>(b: &Breaker<&ManualClock, W, O, P>, raw: W::Raw) {
    while crate::cell::Cell::<W>::compare_exchange(&b.word, b.load(), raw).is_err() {}
}

/// Trips the breaker with exactly `failure_threshold` failures (bounded, so
/// a mutant that never trips fails fast instead of looping).
fn trip<W: Word, O: Observer>(b: &Breaker<&ManualClock, W, O>) {
    for _ in 0..b.config().failure_threshold() {
        assert_eq!(b.status(), Status::Closed);
        b.release(b.acquire().unwrap(), Outcome::Failure);
    }
    assert_eq!(b.status(), Status::Open);
}

fn probe_timeout_makes_late_result_stale<W: Word>() {
    let clock = ManualClock::new(0);
    let b = breaker::<W>(&clock, seed_config());
    trip(&b);
    clock.advance(100);
    let slow = b.acquire().unwrap();
    assert!(slow.is_probe());
    clock.advance(49);
    assert_eq!(b.status(), Status::Probing);
    clock.advance(1);
    assert_eq!(b.status(), Status::HalfOpen, "probe timeout elapsed");
    let fresh = b.acquire().unwrap();
    assert!(fresh.is_probe());
    // The slow probe's late success cannot close the breaker.
    assert_eq!(b.release(slow, Outcome::Success), Release::Stale);
    assert_eq!(b.status(), Status::Probing);
    assert_eq!(b.release(fresh, Outcome::Success), Release::Recorded);
    assert_eq!(b.status(), Status::Closed);
}

fn lost_probe_blocks_only_until_timeout<W: Word>() {
    let clock = ManualClock::new(0);
    let b = breaker::<W>(&clock, seed_config());
    trip(&b);
    clock.advance(100);
    let lost = b.acquire().unwrap();
    drop(lost); // never released
    for waited in 1..50 {
        clock.advance(1);
        assert_eq!(
            refusal(b.acquire()),
            (Cause::Probing, Some(50 - waited)),
            "a probe is running"
        );
    }
    clock.advance(1);
    let probe = b
        .acquire()
        .expect("I5: a lost probe blocks for at most the timeout");
    assert!(probe.is_probe());
    b.release(probe, Outcome::Success);
}

fn force_open_held_through_any_time<W: Word>() {
    let clock = ManualClock::new(0);
    let b = breaker::<W>(&clock, seed_config());
    let held = b.acquire().unwrap();
    b.force_open();
    assert_eq!(b.status(), Status::Open);
    for jump in [1, 100, 1 << 20, 1 << 40, u64::MAX / 3] {
        clock.advance(jump);
        assert_eq!(refusal(b.acquire()), (Cause::ForcedOpen, None));
        assert_eq!(b.status(), Status::Open);
    }
    clock.set(0);
    assert_eq!(refusal(b.acquire()), (Cause::ForcedOpen, None));
    // The call admitted before force_open finishes; its result is ignored.
    assert_eq!(b.release(held, Outcome::Success), Release::Stale);
    assert_eq!(b.status(), Status::Open);
    b.force_open();
    assert_eq!(
        b.observer().phases(),
        [(Status::Closed, Status::Open)],
        "forcing twice reports once"
    );
    assert_eq!(b.observer().forced(), [true], "and says it was forced");
    b.force_close();
    assert_eq!(b.status(), Status::Closed);
    assert_eq!(b.observer().forced(), [true, true]);
    assert!(b.acquire().is_ok());
}

fn force_close_makes_older_tickets_stale<W: Word>() {
    let clock = ManualClock::new(0);
    let b = breaker::<W>(&clock, seed_config());
    let before = b.acquire().unwrap();
    b.release(b.acquire().unwrap(), Outcome::Failure);
    b.force_close();
    assert_eq!(b.release(before, Outcome::Failure), Release::Stale);
    // The policy was reset: three fresh failures are needed to trip.
    for _ in 0..2 {
        b.release(b.acquire().unwrap(), Outcome::Failure);
    }
    assert_eq!(b.status(), Status::Closed);
    b.release(b.acquire().unwrap(), Outcome::Failure);
    assert_eq!(b.status(), Status::Open);
}

/// A slow call admitted in Closed that fails after the breaker opened does not
/// extend or reset anything.
fn slow_closed_call_cannot_extend_open<W: Word>() {
    let clock = ManualClock::new(0);
    let b = breaker::<W>(&clock, seed_config());
    let slow = b.acquire().unwrap();
    trip(&b);
    let opened = b.snapshot().unwrap();
    clock.advance(90);
    assert_eq!(b.release(slow, Outcome::Failure), Release::Stale);
    assert_eq!(b.snapshot().unwrap(), opened);
    assert_eq!(refusal(b.acquire()), (Cause::Open, Some(10)));
    clock.advance(10);
    assert!(b.acquire().unwrap().is_probe(), "open time not extended");
}

fn permit_drop_records_abandon_outcome<W: Word>() {
    let clock = ManualClock::new(0);
    let b = breaker::<W>(&clock, seed_config());
    for _ in 0..3 {
        let _permit = b.permit().unwrap(); // early return: dropped
    }
    assert_eq!(
        b.status(),
        Status::Open,
        "abandoned permits count as failures"
    );
    // A probe abandoned while unwinding from a panic is a failure too.
    clock.advance(100);
    let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        let _probe = b.permit().unwrap();
        panic!("the protected call panicked");
    }));
    assert!(result.is_err());
    assert_eq!(b.status(), Status::Open);
}

fn permit_abandon_can_be_ignored<W: Word>() {
    let clock = ManualClock::new(0);
    let b = breaker::<W>(&clock, seed_config().abandon_as(Outcome::Ignored));
    for _ in 0..5 {
        drop(b.permit().unwrap());
    }
    assert_eq!(b.status(), Status::Closed);
    b.release(b.acquire().unwrap(), Outcome::Failure);
    b.release(b.acquire().unwrap(), Outcome::Failure);
    b.permit().unwrap().failure();
    assert_eq!(b.status(), Status::Open);
    // An abandoned probe returns the breaker to half-open.
    clock.advance(100);
    let probe = b.permit().unwrap();
    assert!(probe.is_probe());
    assert_eq!(probe.counter(), b.snapshot().unwrap().counter);
    drop(probe);
    assert_eq!(b.status(), Status::HalfOpen);
    assert_eq!(b.snapshot().unwrap().state, State::HalfOpen { trips: 1 });
    let p = b.permit().unwrap();
    assert_eq!(p.ignore(), Release::Recorded);
    assert_eq!(b.status(), Status::HalfOpen);
    let t = b.permit().unwrap().into_ticket();
    assert_eq!(b.release(t, Outcome::Success), Release::Recorded);
    assert_eq!(b.status(), Status::Closed);
}

fn ticket_from_another_breaker_is_stale<W: Word>() {
    let clock = ManualClock::new(0);
    let config = Config::new().failure_threshold(1).horizon(0);
    let a = breaker::<W>(&clock, config);
    let b = breaker::<W>(&clock, config);
    let from_a = a.acquire().unwrap();
    assert_eq!(from_a.counter(), 0);
    assert_eq!(b.release(from_a, Outcome::Failure), Release::Stale);
    assert_eq!(b.status(), Status::Closed);
    assert_eq!(a.status(), Status::Closed);
    // A success takes the fast path's compare, which checks the origin too.
    b.release(b.acquire().unwrap(), Outcome::Failure); // b: Open, counter 1
    b.force_close(); // b: Closed, counter 2, no failures
    let (from_a, _) = (
        a.acquire().unwrap(),
        a.release(a.acquire().unwrap(), Outcome::Failure),
    );
    a.force_close(); // a: Closed, counter 2, like b
    assert_eq!(from_a.counter(), 0);
    let from_a = a.acquire().unwrap();
    assert_eq!(from_a.counter(), 2);
    assert_eq!(b.load(), a.load(), "the same word in both");
    let origin_of = |t: &crate::Ticket| {
        let d = std::format!("{t:?}");
        d[d.find("origin: ").expect("Debug names the origin")..].to_string()
    };
    let a_origin = origin_of(&from_a);
    assert_eq!(
        b.release(from_a.clone_for_test(), Outcome::Success),
        Release::Stale
    );
    assert_eq!(a.release(from_a, Outcome::Success), Release::Recorded);

    // Probe tickets (the probe flag rides in the origin): both breakers
    // tripped and half-open under the same counter; each probe counts only
    // in its own breaker.
    for x in [&a, &b] {
        x.release(x.acquire().unwrap(), Outcome::Failure);
    }
    clock.advance(1_000);
    let (pa, pb) = (a.acquire().unwrap(), b.acquire().unwrap());
    assert!(pa.is_probe() && pb.is_probe());
    assert_eq!((pa.counter(), a.load()), (pb.counter(), b.load()));
    assert_eq!(
        origin_of(&pa),
        a_origin,
        "a probe's Debug shows its breaker's address, without the flag"
    );
    for outcome in [Outcome::Success, Outcome::Failure, Outcome::Ignored] {
        assert_eq!(b.release(pa.clone_for_test(), outcome), Release::Stale);
        assert_eq!(a.release(pb.clone_for_test(), outcome), Release::Stale);
    }
    assert_eq!(a.status(), Status::Probing);
    assert_eq!(a.release(pa, Outcome::Success), Release::Recorded);
    assert_eq!(b.release(pb, Outcome::Failure), Release::Recorded);
    assert_eq!((a.status(), b.status()), (Status::Closed, Status::Open));
}

/// The non-tripping failure fast path compares the ticket's whole counter
/// with the word's: a stale ticket whose counter is the complement of the
/// word's, or the largest counter against any other, is not counted.
fn failure_fast_path_compares_the_whole_counter<W: Word>() {
    let clock = ManualClock::new(0);
    let b = breaker::<W>(&clock, seed_config()); // threshold 3
    let l = W::LAYOUT;
    let t0 = b.acquire().unwrap();
    assert_eq!(t0.counter(), 0);
    let top = W::from_u64(l.closed(l.max_counter(), 0));
    poke(&b, top);
    assert_eq!(b.release(t0, Outcome::Failure), Release::Stale);
    assert_eq!(b.load(), top);
    let t_top = b.acquire().unwrap();
    let other = W::from_u64(l.closed(5, 0));
    poke(&b, other);
    assert_eq!(b.release(t_top, Outcome::Failure), Release::Stale);
    assert_eq!(b.load(), other);
}

/// The ticket keeps the counter where the word holds it: the largest
/// counter survives the round trip, and a success released under it takes
/// the fast path (nothing stored).
fn ticket_counter_round_trips_at_the_largest_counter<W: Word>() {
    let clock = ManualClock::new(0);
    let b = breaker::<W>(&clock, seed_config());
    let l = W::LAYOUT;
    let top = W::from_u64(l.closed(l.max_counter(), 0));
    poke(&b, top);
    let t = b.acquire().unwrap();
    assert_eq!((t.counter(), t.is_probe()), (l.max_counter(), false));
    assert_eq!(b.release(t, Outcome::Success), Release::Recorded);
    assert_eq!(b.load(), top);
    let t = b.acquire().unwrap();
    assert_eq!(b.release(t, Outcome::Failure), Release::Recorded);
    assert_eq!(b.load(), W::from_u64(l.closed(l.max_counter(), 1)));
}

/// I9: in Closed, admission and status read no clock and store nothing; a
/// success with no failures counted stores nothing.
fn closed_path_is_quiet<W: Word>() {
    let clock = CountingClock {
        now: Cell::new(5),
        reads: Cell::new(0),
    };
    let b: Breaker<&CountingClock, W> = Breaker::from_parts(valid(seed_config()), &clock, ());
    let before = b.load();
    for _ in 0..100 {
        let t = b.acquire().unwrap();
        assert_eq!(b.status(), Status::Closed);
        assert_eq!(b.release(t, Outcome::Success), Release::Recorded);
        assert_eq!(b.load(), before);
    }
    assert_eq!(clock.reads.get(), 0);
    // A failure below the threshold writes but reads no clock; the trip reads
    // it (once per compare-and-swap attempt: once, unless the CAS fails
    // spuriously, as Miri makes it do).
    b.release(b.acquire().unwrap(), Outcome::Failure);
    assert_eq!(clock.reads.get(), 0);
    assert_ne!(b.load(), before);
    b.release(b.acquire().unwrap(), Outcome::Failure);
    assert_eq!(clock.reads.get(), 0);
    b.release(b.acquire().unwrap(), Outcome::Failure);
    assert!(clock.reads.get() >= 1);
    assert_eq!(b.status(), Status::Open);
}

/// Rejections read the clock once (`Open`, `Probing`) or never
/// (`ForcedOpen`), store nothing, and an admission at the deadline reads it
/// once too: the fast path's `now` is handed to the loop, not read again.
/// Spurious CAS failures (Miri) may add a read per retry, hence `>=` there.
fn rejections_read_the_clock_at_most_once<W: Word>() {
    let clock = CountingClock {
        now: Cell::new(0),
        reads: Cell::new(0),
    };
    let b: Breaker<&CountingClock, W> = Breaker::from_parts(valid(seed_config()), &clock, ());
    for _ in 0..3 {
        b.release(b.acquire().unwrap(), Outcome::Failure);
    }
    let open = b.load();
    let reads = clock.reads.get();
    clock.now.set(99);
    assert_eq!(refusal(b.acquire()), (Cause::Open, Some(1)));
    assert_eq!(clock.reads.get(), reads + 1, "open rejection: one read");
    assert_eq!(b.load(), open, "open rejection: no store");
    clock.now.set(100);
    let probe = b.acquire().unwrap();
    assert!(probe.is_probe());
    let reads = clock.reads.get();
    assert!(reads >= 2, "the election read the clock");
    let probing = b.load();
    clock.now.set(149);
    assert_eq!(refusal(b.acquire()), (Cause::Probing, Some(1)));
    assert_eq!(clock.reads.get(), reads + 1, "probing rejection: one read");
    assert_eq!(b.load(), probing);
    b.force_open();
    let forced = b.load();
    let reads = clock.reads.get();
    assert_eq!(refusal(b.acquire()), (Cause::ForcedOpen, None));
    assert_eq!(b.release(probe, Outcome::Success), Release::Stale);
    assert_eq!(clock.reads.get(), reads, "forced open: no read");
    assert_eq!(b.load(), forced);
}

/// `Rejected` through the breaker: the cause, and the wait from the clock
/// reading the rejection made, exact at `s = 0`, with and without backoff;
/// `None` when forced; `Display` says both.
fn rejections_say_why_and_how_long<W: Word>() {
    let clock = ManualClock::new(1_000);
    let b = breaker::<W>(&clock, seed_config().exponential_backoff(400));
    trip(&b); // Open since 1000, trips 1: 100 ticks
    assert_eq!(refusal(b.acquire()), (Cause::Open, Some(100)));
    clock.advance(37);
    let r = rejected(b.acquire());
    assert_eq!((r.cause(), r.retry_after()), (Cause::Open, Some(63)));
    assert_eq!(
        std::format!("{r}"),
        "circuit open: call not admitted (retry after 63 ticks)"
    );
    clock.advance(63);
    let probe = b.acquire().unwrap();
    assert!(probe.is_probe());
    assert_eq!(refusal(b.acquire()), (Cause::Probing, Some(50)));
    clock.advance(20);
    let r = rejected(b.acquire());
    assert_eq!((r.cause(), r.retry_after()), (Cause::Probing, Some(30)));
    assert_eq!(
        std::format!("{r}"),
        "circuit probing: call not admitted (retry after 30 ticks)"
    );
    // The probe fails: trips 2, open for 200 from now.
    assert_eq!(b.release(probe, Outcome::Failure), Release::Recorded);
    assert_eq!(refusal(b.acquire()), (Cause::Open, Some(200)));
    clock.advance(199);
    assert_eq!(refusal(b.acquire()), (Cause::Open, Some(1)));
    clock.advance(1);
    let probe = b.acquire().unwrap();
    assert_eq!(b.release(probe, Outcome::Failure), Release::Recorded);
    assert_eq!(refusal(b.acquire()), (Cause::Open, Some(400)), "capped");
    b.force_open();
    let r = rejected(b.acquire());
    assert_eq!((r.cause(), r.retry_after()), (Cause::ForcedOpen, None));
    assert_eq!(
        std::format!("{r}"),
        "circuit forced open: call not admitted"
    );
    assert_eq!(
        std::format!("{r:?}"),
        "Rejected { cause: ForcedOpen, retry_after: None }"
    );
}

/// `status()` is a read: an elapsed `Open` or a timed-out `Probing` reads as
/// `HalfOpen`, but nothing is stored and the observer hears nothing; the
/// next admission makes the move and reports it (through `HalfOpen`).
fn status_is_a_read_and_the_next_admission_moves<W: Word>() {
    let clock = ManualClock::new(0);
    let b = breaker::<W>(&clock, seed_config());
    trip(&b);
    let open = b.load();
    let reports = b.observer().transitions.borrow().len();
    clock.advance(99);
    assert_eq!(b.status(), Status::Open);
    clock.advance(1);
    for _ in 0..3 {
        assert_eq!(b.status(), Status::HalfOpen);
    }
    assert_eq!(b.load(), open, "a status read stores nothing");
    assert!(matches!(b.snapshot().unwrap().state, State::Open { .. }));
    assert_eq!(b.observer().transitions.borrow().len(), reports);
    let probe = b.acquire().unwrap();
    assert!(probe.is_probe());
    assert_eq!(probe.counter(), 3);
    assert_eq!(
        b.observer().phases()[reports..],
        [
            (Status::Open, Status::HalfOpen),
            (Status::HalfOpen, Status::Probing)
        ]
    );
    // The same for a probe that timed out.
    let probing = b.load();
    clock.advance(49);
    assert_eq!(b.status(), Status::Probing);
    clock.advance(1);
    assert_eq!(b.status(), Status::HalfOpen);
    assert_eq!(b.load(), probing);
    assert_eq!(b.observer().transitions.borrow().len(), reports + 2);
    let next = b.acquire().unwrap();
    assert_eq!(next.counter(), 5);
    assert_eq!(
        b.observer().phases()[reports + 2..],
        [
            (Status::Probing, Status::HalfOpen),
            (Status::HalfOpen, Status::Probing)
        ]
    );
    let counters: Vec<u32> = b.observer().transitions.borrow()[reports..]
        .iter()
        .map(|t| t.counter)
        .collect();
    assert_eq!(counters, [2, 3, 4, 5]);
    assert_eq!(b.release(probe, Outcome::Success), Release::Stale);
    assert_eq!(b.release(next, Outcome::Success), Release::Recorded);
    // The status of the forced open reads no clock and says `Open`.
    b.force_open();
    clock.set(u64::MAX);
    assert_eq!(b.status(), Status::Open);
}

/// The election at the deadline reads the clock exactly once when no CAS
/// fails (not under Miri, whose weak CAS fails spuriously).
#[test]
#[cfg_attr(miri, ignore)]
fn probe_election_reads_the_clock_once() {
    let clock = CountingClock {
        now: Cell::new(0),
        reads: Cell::new(0),
    };
    let b: Breaker<&CountingClock> = Breaker::new(seed_config(), &clock);
    b.force_open();
    b.force_close();
    for _ in 0..3 {
        b.release(b.acquire().unwrap(), Outcome::Failure);
    }
    let reads = clock.reads.get();
    clock.now.set(100);
    assert!(b.acquire().unwrap().is_probe());
    assert_eq!(clock.reads.get(), reads + 1);
}

fn corrupt_word_is_reported_once_and_fails_open<W: Word>() {
    let clock = ManualClock::new(0);
    let b: Breaker<&ManualClock, W, Log> =
        Breaker::from_parts(valid(seed_config()), &clock, Log::default());
    // Corrupt the word in place, as a stray write or retained RAM would.
    let garbage = no_state::<W>(12);
    poke(&b, garbage);
    assert!(b.snapshot().is_err());
    assert_eq!(b.status(), Status::Closed, "a corrupt word reads as closed");
    assert_eq!(b.load(), garbage, "and the read repairs nothing");
    let t = b.acquire().expect("I8: a corrupt word fails open");
    assert_eq!(b.status(), Status::Closed);
    assert_eq!(*b.observer().corrupt.borrow(), [(garbage.into(), 13)]);
    assert_eq!(t.counter(), 13);
    assert_eq!(b.release(t, Outcome::Success), Release::Recorded);
    assert!(b.observer().transitions.borrow().is_empty());
    assert_eq!(
        b.snapshot(),
        Ok(Snapshot {
            state: State::Closed { failures: 0 },
            counter: 13
        })
    );
}

/// The fast paths decide from the raw word; a `Closed` word counting too
/// many failures, or with stray bits above the failure field, must still take
/// the slow path and be repaired and reported.
fn closed_looking_corrupt_words_are_repaired<W: Word>() {
    let l = W::LAYOUT;
    let over_threshold = Snapshot {
        state: State::Closed { failures: 3 },
        counter: 9,
    }
    .encode::<W>();
    let stray = W::from_u64(1u64 << (l.word_bits - 1) | 9 << 3);
    let all_ones_tag = no_state::<W>(0);
    let top_bit_only = W::from_u64(1u64 << (l.word_bits - 1));
    for (garbage, next) in [
        (over_threshold, 10),
        (stray, 10),
        (all_ones_tag, 1),
        (top_bit_only, 1),
    ] {
        let clock = ManualClock::new(0);
        let b = breaker::<W>(&clock, seed_config());
        poke(&b, garbage);
        let t = b.acquire().expect("fails open");
        assert_eq!(t.counter(), next);
        assert_eq!(*b.observer().corrupt.borrow(), [(garbage.into(), next)]);
        assert_eq!(b.snapshot().unwrap().state, State::Closed { failures: 0 });
        // A success on a repaired word is recorded through the fast path.
        assert_eq!(b.release(t, Outcome::Success), Release::Recorded);
        // And a success whose counter no longer matches is stale.
        let clock2 = ManualClock::new(0);
        let b2 = breaker::<W>(&clock2, seed_config());
        let t2 = b2.acquire().unwrap();
        poke(&b2, garbage);
        assert_eq!(b2.release(t2, Outcome::Success), Release::Stale);
        assert_eq!(b2.observer().corrupt.borrow().len(), 1);
    }
}

/// Corrupt words that look like the fast paths' cases must still reach the
/// loop, to be repaired and reported: a `ForcedOpen` with stray bits is not
/// a rejection, and a failure on a `Closed` word counting at least the
/// threshold under the ticket's own counter is not a failure to count.
fn fast_path_lookalikes_are_repaired<W: Word>() {
    let l = W::LAYOUT;
    let clock = ManualClock::new(0);
    let b = breaker::<W>(&clock, seed_config());
    let forced_with_trips = W::from_u64(4 | 5 << 3 | 1 << (3 + l.counter_bits));
    poke(&b, forced_with_trips);
    let t = b.acquire().expect("a corrupt word fails open");
    assert_eq!(t.counter(), 6);
    assert_eq!(
        *b.observer().corrupt.borrow(),
        [(forced_with_trips.into(), 6)]
    );

    let b = breaker::<W>(&clock, seed_config());
    let t = b.acquire().unwrap();
    let over = Snapshot {
        state: State::Closed { failures: 5 },
        counter: t.counter(),
    }
    .encode::<W>();
    poke(&b, over);
    assert_eq!(b.release(t, Outcome::Failure), Release::Stale);
    assert_eq!(*b.observer().corrupt.borrow(), [(over.into(), 1)]);
    assert_eq!(
        b.snapshot(),
        Ok(Snapshot {
            state: State::Closed { failures: 0 },
            counter: 1
        })
    );

    // `Closed` with exactly `threshold` failures, counter 0: the closed fast
    // path compares the whole word with `threshold << payload_shift`, and
    // this is that very word: still corrupt, still repaired.
    let b = breaker::<W>(&clock, seed_config()); // threshold 3
    let at = Snapshot {
        state: State::Closed { failures: 3 },
        counter: 0,
    }
    .encode::<W>();
    poke(&b, at);
    let t = b.acquire().expect("a corrupt word fails open");
    assert_eq!(t.counter(), 1);
    assert_eq!(*b.observer().corrupt.borrow(), [(at.into(), 1)]);
    assert_eq!(b.load(), W::from_u64(l.closed(1, 0)));
}

fn wrapping_clock_through_the_breaker<W: Word>() {
    let clock = ManualClock::new(u64::MAX - 30);
    let b = breaker::<W>(&clock, seed_config());
    trip(&b);
    clock.advance(99); // wraps past u64::MAX
    assert!(clock.now() < 100);
    assert_eq!(refusal(b.acquire()), (Cause::Open, Some(1)));
    clock.advance(1);
    let probe = b.acquire().expect("open time elapsed across the wrap");
    clock.advance(49);
    assert_eq!(b.release(probe, Outcome::Success), Release::Recorded);
    assert_eq!(b.status(), Status::Closed);
}

fn backward_clock_fails_towards_probing<W: Word>() {
    let clock = ManualClock::new(1_000);
    let b = breaker::<W>(&clock, seed_config());
    trip(&b);
    clock.set(999);
    assert_eq!(b.status(), Status::HalfOpen, "I6: towards probing");
    let probe = b.acquire().unwrap();
    assert!(probe.is_probe());
    // A probe stamped at 999 and a clock going back further: the probe's
    // timeout reads as elapsed, so the breaker does not stay probing.
    clock.set(500);
    assert_eq!(b.release(probe, Outcome::Success), Release::Stale);
    assert_eq!(b.status(), Status::HalfOpen);
    assert_eq!(b.snapshot().unwrap().state, State::HalfOpen { trips: 1 });
}

/// I7: reports run after the CAS with no lock held, so an observer may call
/// back into the breaker that reported (here it reads the status and forces
/// the freshly tripped breaker open, which reports again, re-entrantly).
fn observer_may_call_back_into_the_breaker<W: Word>() {
    type Reentrant<'a, W> = Breaker<&'a ManualClock, W, &'a CallsBack<'a, W>>;
    struct CallsBack<'a, W: Word> {
        breaker: std::cell::OnceCell<&'a Reentrant<'a, W>>,
        seen: RefCell<Vec<(Status, bool, Status)>>,
    }
    impl<W: Word> Observer for CallsBack<'_, W> {
        fn on_transition(&self, t: Transition) {
            let b = self.breaker.get().expect("set before use");
            self.seen.borrow_mut().push((t.to, t.forced, b.status()));
            if t.to == Status::Open && !t.forced {
                b.force_open();
            }
        }
    }
    let clock = ManualClock::new(0);
    let observer = CallsBack {
        breaker: std::cell::OnceCell::new(),
        seen: RefCell::new(Vec::new()),
    };
    let b: Reentrant<'_, W> =
        Breaker::from_parts(valid(Config::new().failure_threshold(1)), &clock, &observer);
    assert!(observer.breaker.set(&b).is_ok());
    b.release(b.acquire().unwrap(), Outcome::Failure);
    assert_eq!(
        *observer.seen.borrow(),
        [
            (Status::Open, false, Status::Open),
            (Status::Open, true, Status::Open)
        ]
    );
    assert_eq!(b.snapshot().unwrap().state, State::ForcedOpen);
}

/// A probe timeout of one tick, through the breaker. With `s = 0` a
/// lost probe blocks exactly one tick; at the default horizon (`W32`: `s =
/// 7`) it blocks at least 1 tick and less than `1 + 3 * 2^s`, and the
/// rejection's wait says exactly until when.
fn probe_timeout_of_one_tick<W: Word>() {
    for config in [
        Config::new()
            .failure_threshold(1)
            .open_for(10)
            .probe_timeout(1)
            .horizon(0),
        Config::new()
            .failure_threshold(1)
            .open_for(10)
            .probe_timeout(1),
    ] {
        let v = valid::<W>(config);
        let unit = 1u64 << v.time_shift();
        for elect_at in [1_000, 1_001, 1_000 + unit - 1] {
            let clock = ManualClock::new(0);
            let b = breaker::<W>(&clock, config);
            trip(&b);
            clock.set(elect_at);
            let lost = b.acquire().expect("the open time is long over");
            assert!(lost.is_probe());
            let r = rejected(b.acquire());
            assert_eq!(r.cause(), Cause::Probing);
            let wait = r.retry_after().unwrap();
            assert!((1..1 + 3 * unit).contains(&wait), "wait {wait}");
            if unit == 1 {
                assert_eq!(wait, 1);
            }
            clock.advance(wait - 1);
            assert_eq!(refusal(b.acquire()), (Cause::Probing, Some(1)));
            clock.advance(1);
            let next = b.acquire().expect("the probe timed out");
            assert!(next.is_probe());
            assert_eq!(b.release(lost, Outcome::Success), Release::Stale);
            // The new probe reports at once: in time, so it counts.
            assert_eq!(b.release(next, Outcome::Success), Release::Recorded);
            assert_eq!(b.status(), Status::Closed);
        }
    }
}

#[test]
fn static_breakers_of_both_widths() {
    static CLOCK: ManualClock = ManualClock::new(0);
    static B64: Breaker<&ManualClock> = Breaker::new(seed_config(), &CLOCK);
    static B32: Breaker32<&ManualClock> =
        Breaker::from_parts(ValidConfig::new(seed_config()), &CLOCK, ());
    const _: () = assert!(<W32 as Word>::LAYOUT.word_bits == 32);
    for _ in 0..3 {
        B64.release(B64.acquire().unwrap(), Outcome::Failure);
        B32.permit().unwrap().failure();
    }
    assert_eq!((B64.status(), B32.status()), (Status::Open, Status::Open));
}

#[test]
fn static_config_breaker_costs_a_word_and_a_pointer() {
    struct Ticks;
    impl Clock for Ticks {
        fn now(&self) -> u64 {
            0
        }
    }
    static CONFIG: ValidConfig<W32> = ValidConfig::new(seed_config());
    static CONFIG64: ValidConfig = ValidConfig::new(seed_config());
    static B: StaticBreaker<Ticks, W32> = StaticBreaker::from_parts(&CONFIG, Ticks, ());
    static B64: StaticBreaker<Ticks> = StaticBreaker::from_parts(&CONFIG64, Ticks, ());
    let ptr = core::mem::size_of::<usize>();
    assert_eq!(
        core::mem::size_of::<StaticBreaker<Ticks, W32>>(),
        (4usize).next_multiple_of(ptr) + ptr
    );
    assert_eq!(
        core::mem::size_of::<StaticBreaker<Ticks, W64>>(),
        8 + ptr.max(8)
    );
    for _ in 0..3 {
        B.permit().unwrap().failure();
        B64.permit().unwrap().failure();
    }
    assert_eq!((B.status(), B64.status()), (Status::Open, Status::Open));
    assert_eq!(B.config(), &CONFIG);
    assert!(core::ptr::eq(B.config(), &CONFIG), "the static itself");
    // A config read at run time is checked before it can make a breaker;
    // the error names the field (a `static` would not compile).
    let err = Config::new()
        .failure_threshold(4096)
        .check::<W32>()
        .unwrap_err();
    assert_eq!(err.field, Field::FailureThreshold);
}

#[test]
fn const_config_breaker_costs_the_word_and_matches_an_inline_config() {
    struct Seed;
    impl ConstConfig for Seed {
        const CONFIG: Config = seed_config().exponential_backoff(400);
    }
    static CLOCK: ManualClock = ManualClock::new(0);
    static K: ConstBreaker<Seed, &ManualClock, W32> =
        ConstBreaker::from_parts(Const::new(), &CLOCK, ());
    static I: Breaker<&ManualClock, W32> = Breaker::from_parts(
        ValidConfig::new(seed_config().exponential_backoff(400)),
        &CLOCK,
        (),
    );
    // RAM: the word and the clock reference; no config, no pointer to one.
    assert_eq!(
        core::mem::size_of::<ConstBreaker<Seed, ManualClock, W32>>(),
        core::mem::size_of::<Breaker<ManualClock, W32, (), ()>>()
    );
    assert_eq!(K.config(), I.config());
    assert_eq!(std::format!("{:?}", Const::<Seed>::default()), "Const");
    // The same operations leave the same words, through trips, backoff,
    // probes and forces.
    fn run<P: ConfigSource<W32>>(b: &Breaker<&ManualClock, W32, (), P>, op: u8) -> bool {
        match op {
            0 => b.permit().map(|p| p.failure()).is_ok(),
            1 => b.permit().map(|p| p.success()).is_ok(),
            2 => b.acquire().is_ok(),
            3 => {
                b.force_open();
                true
            }
            _ => {
                b.force_close();
                true
            }
        }
    }
    let ops: [(u64, u8); 14] = [
        (0, 0),
        (0, 0),
        (0, 0),
        (50, 1),
        (100, 1),
        (100, 0),
        (250, 1),
        (300, 2),
        (300, 1),
        (301, 3),
        (302, 4),
        (305, 1),
        (305, 2),
        (400, 1),
    ];
    for (at, op) in ops {
        CLOCK.set(at);
        assert_eq!(run(&K, op), run(&I, op), "op {op} at {at}");
        assert_eq!(K.load(), I.load(), "op {op} at {at}");
        assert_eq!(K.status(), I.status());
    }
}

#[test]
fn runtime_config_errors_name_field_and_range() {
    let err = Config::new()
        .failure_threshold(0)
        .check::<W64>()
        .unwrap_err();
    assert_eq!(err.field, Field::FailureThreshold);
    assert_eq!(
        std::format!("{err}"),
        "failure_threshold = 0 is out of range 1..=65535"
    );
    let err = Config::new()
        .failure_threshold(4096)
        .check::<W32>()
        .unwrap_err();
    assert_eq!(
        std::format!("{err}"),
        "failure_threshold = 4096 is out of range 1..=4095"
    );
    let err = Config::new().probe_timeout(0).check::<W32>().unwrap_err();
    assert_eq!(
        std::format!("{err}"),
        "probe_timeout = 0 is out of range 1..=1152921504606846976 ticks"
    );
    // A checked config builds a breaker of any form.
    let clock = ManualClock::new(0);
    let b = Breaker32::from_parts(Config::new().check().unwrap(), &clock, ());
    assert!(b.acquire().is_ok());
}

#[test]
#[should_panic(expected = "open_for is out of range")]
fn runtime_new_panics_on_bad_config() {
    let clock = ManualClock::new(0);
    let _ = Breaker::new(Config::new().open_for(0), &clock);
}

#[test]
fn single_probe_under_real_threads() {
    // I1 with OS threads; loom explores the interleavings exhaustively in the
    // verification crate.
    use std::sync::Barrier;
    use std::sync::atomic::{AtomicU32, Ordering};
    for round in 0..50 {
        let clock = ManualClock::new(0);
        let b = Breaker::new(seed_config(), &clock);
        trip(&b);
        clock.advance(100);
        let barrier = Barrier::new(8);
        let admitted = AtomicU32::new(0);
        std::thread::scope(|s| {
            for _ in 0..8 {
                s.spawn(|| {
                    barrier.wait();
                    match b.acquire() {
                        Ok(t) => {
                            assert!(t.is_probe());
                            admitted.fetch_add(1, Ordering::Relaxed);
                            drop(t); // never released
                        }
                        Err(r) => assert_eq!(r.cause(), Cause::Probing),
                    }
                });
            }
        });
        assert_eq!(admitted.load(Ordering::Relaxed), 1, "round {round}");
    }
}

#[test]
fn debug_output_names_the_state() {
    let clock = ManualClock::new(0);
    let b = Breaker::new(seed_config().failure_threshold(1), &clock);
    let s = std::format!("{b:?}");
    assert!(s.contains("Closed"), "{s}");
    let p = b.permit().unwrap();
    assert!(std::format!("{p:?}").contains("counter: 0"));
    p.failure();
    assert_eq!(std::format!("{}", Status::HalfOpen), "half-open");
    let r = rejected(b.acquire());
    assert_eq!(
        std::format!("{r}"),
        "circuit open: call not admitted (retry after 100 ticks)"
    );
    assert_eq!(
        std::format!("{r:?}"),
        "Rejected { cause: Open, retry_after: Some(100) }"
    );
    assert!(std::format!("{b:?}").contains("Open"));
}

// Time in units of 2^s ticks, and the counter's period.

/// The conversion to units, written independently of the core: the units of
/// `2^s` ticks a duration of `ticks` needs, `(d + 2 (2^s - 1)) >> s`.
fn need(ticks: u64, s: u32) -> u64 {
    (ticks + 2 * ((1u64 << s) - 1)) >> s
}

/// The first tick at which a word stamped at tick `t0` with a duration of
/// `units` units admits: the start of unit `(t0 >> s) + units`.
fn first_admitted(t0: u64, units: u64, s: u32) -> u64 {
    ((t0 >> s) + units) << s
}

/// The sparse-caller reproduction: `W32`, one failure trips, open for
/// 10 000 ticks, tripped at t = 100, a caller at `100 + k * 32 768` (a sensor
/// polled every 32.8 s at 1 kHz). In ticks, every call read an elapsed time
/// of 0 and was rejected forever. At the default horizon each call is the
/// first at or after its deadline and is admitted as the probe; the
/// dependency is still down, so each probe fails and reopens the breaker,
/// for 3 600 calls (32.8 hours, 28 turns of the ring).
#[test]
fn w32_caller_every_32_768_ticks_probes() {
    let config = Config::new().failure_threshold(1).open_for(10_000);
    let v = valid::<W32>(config);
    let s = v.time_shift();
    assert_eq!(s, 7, "the default horizon");
    let clock = ManualClock::new(100);
    let b = breaker::<W32>(&clock, config);
    b.release(b.acquire().unwrap(), Outcome::Failure);
    assert_eq!(b.status(), Status::Open);
    let calls = if cfg!(miri) { 200 } else { 3_600 };
    for k in 1..=calls {
        let now = 100 + k * 32_768;
        clock.set(now);
        let probe = b
            .acquire()
            .unwrap_or_else(|r| panic!("call {k} at {now}: {r}"));
        assert!(probe.is_probe(), "call {k}");
        assert_eq!(b.release(probe, Outcome::Failure), Release::Recorded);
        // Reopened at `now`: a caller in between is rejected until exactly
        // the word's deadline, which is not early.
        let deadline = first_admitted(now, need(10_000, s), s);
        assert!(deadline >= now + 10_000 && deadline < now + 10_000 + 3 * 128);
        clock.set(now + 9_999);
        assert_eq!(
            refusal(b.acquire()),
            (Cause::Open, Some(deadline - (now + 9_999)))
        );
    }
    assert_eq!(
        b.observer().transitions.borrow().len() as u64,
        1 + 3 * calls
    );

    // And a single caller whose first call comes `k` old rings after the
    // trip probes at once, for every k whose gap the ring covers.
    let ring = v.ring();
    for k in 1..=127u64 {
        assert!(k * 32_768 < ring - 10_000 - 128);
        let clock = ManualClock::new(100);
        let b = breaker::<W32>(&clock, config);
        b.release(b.acquire().unwrap(), Outcome::Failure);
        clock.set(100 + k * 32_768);
        assert!(b.acquire().expect("probes").is_probe(), "k {k}");
    }
}

/// Where a periodic caller with `spacing` lands its calls so that one of
/// them is at `target`: the first call after the trip at `since`, or 16
/// calls before `target` if that is later (the calls skipped would be
/// rejections, which store nothing).
fn first_call(since: u64, target: u64, spacing: u64) -> u64 {
    let back = ((target - since - 1) / spacing).min(16);
    target - back * spacing
}

/// One sparse periodic caller against a breaker of width `W` tripped at
/// `since` (threshold 1): calls at `first + j * spacing`. Before the word's
/// deadline every call is rejected as `Open`, stores nothing, and its wait
/// ends exactly at that deadline, which is at least `open_for` and less than
/// `open_for + 3 * 2^s` after the trip; the first call at or after it is the
/// probe. That probe is lost (never released): the caller is rejected as
/// `Probing` until the probe timeout, measured the same way, and the first
/// call at or after its end is the new probe, whose success closes.
fn sparse_caller<W: Word>(v: &ValidConfig<W>, since: u64, first: u64, spacing: u64) {
    let (s, d, pt) = (v.time_shift(), v.open_for(), v.probe_timeout());
    let unit = 1u64 << s;
    let ctx = || std::format!("since {since} first {first} spacing {spacing} open_for {d} s {s}");
    let clock = ManualClock::new(since);
    let b: Breaker<&ManualClock, W> = Breaker::from_parts(*v, &clock, ());
    b.release(b.acquire().unwrap(), Outcome::Failure);
    let deadline = first_admitted(since, need(d, s), s);
    assert!(deadline >= since + d && deadline < since + d + 3 * unit);

    let mut t = first;
    let (lost, elected) = loop {
        clock.set(t);
        let word = b.load();
        match b.acquire() {
            Err(r) => {
                assert!(
                    t < deadline,
                    "rejected at {t}, deadline {deadline}: {}",
                    ctx()
                );
                assert_eq!(r.cause(), Cause::Open, "{}", ctx());
                assert_eq!(t + r.retry_after().unwrap(), deadline, "at {t}: {}", ctx());
                assert_eq!(b.load(), word, "a rejection stores nothing");
            }
            Ok(p) => {
                assert!(p.is_probe(), "{}", ctx());
                assert!(t >= deadline, "admitted early at {t}: {}", ctx());
                assert!(t < since + d + spacing + 3 * unit, "{}", ctx());
                break (p, t);
            }
        }
        t += spacing;
    };
    assert!(
        t == first || t - spacing < deadline,
        "the first call at or after"
    );
    drop(lost); // never released

    let end = first_admitted(elected, need(pt, s), s);
    assert!(end >= elected + pt && end < elected + pt + 3 * unit);
    t += spacing;
    t += ((end.saturating_sub(t)) / spacing).saturating_sub(16) * spacing;
    loop {
        clock.set(t);
        match b.acquire() {
            Err(r) => {
                assert!(
                    t < end,
                    "rejected at {t}, probe timeout ends {end}: {}",
                    ctx()
                );
                assert_eq!(r.cause(), Cause::Probing, "{}", ctx());
                assert_eq!(t + r.retry_after().unwrap(), end, "at {t}: {}", ctx());
            }
            Ok(p) => {
                assert!(p.is_probe() && t >= end, "at {t}: {}", ctx());
                assert!(t < elected + pt + 3 * unit + spacing, "{}", ctx());
                assert_eq!(b.release(p, Outcome::Success), Release::Recorded);
                break;
            }
        }
        t += spacing;
    }
    assert_eq!(b.status(), Status::Closed);
}

/// A periodic caller whose gaps may pass the ring (beyond the horizon): for
/// up to 64 calls, each is decided exactly as the units modulo the ring say
/// (the information limit, `docs/spec.md` "Time faults"), and none is
/// admitted before `since + open_for`.
fn ring_caller<W: Word>(v: &ValidConfig<W>, since: u64, spacing: u64) {
    let (s, d) = (v.time_shift(), v.open_for());
    let n = need(d, s);
    let field = W::LAYOUT.time_mask();
    let clock = ManualClock::new(since);
    let b: Breaker<&ManualClock, W> = Breaker::from_parts(*v, &clock, ());
    b.release(b.acquire().unwrap(), Outcome::Failure);
    for j in 1..=64 {
        let t = since + j * spacing;
        clock.set(t);
        let elapsed = ((t >> s).wrapping_sub(since >> s)) & field;
        match b.acquire() {
            Err(r) => {
                assert!(elapsed < n, "since {since} spacing {spacing} call {j}");
                let start = t >> s << s;
                assert_eq!(
                    t + r.retry_after().unwrap(),
                    start + ((n - elapsed) << s),
                    "since {since} spacing {spacing} call {j}"
                );
            }
            Ok(p) => {
                assert!(elapsed >= n && t >= since + d && p.is_probe());
                return;
            }
        }
    }
}

/// Runs [`sparse_caller`] at every spacing within `window` ticks of each of
/// `centers` (up to `max`), with four phases: the trip-aligned caller (its
/// calls at `since + j * spacing`), and callers that land a call exactly on
/// the word's deadline, one tick before it, and one tick before
/// `since + open_for`.
fn sparse_callers<W: Word>(
    v: &ValidConfig<W>,
    sinces: &[u64],
    centers: &[u64],
    window: u64,
    max: u64,
) {
    let (s, d) = (v.time_shift(), v.open_for());
    let mut runs = 0u64;
    for &since in sinces {
        let deadline = first_admitted(since, need(d, s), s);
        for &center in centers {
            let low = center.saturating_sub(window).max(1);
            for spacing in low..=(center + window).min(max) {
                let aligned = since + spacing * (deadline - since).div_ceil(spacing);
                for target in [aligned, deadline, deadline - 1, since + d - 1] {
                    sparse_caller(v, since, first_call(since, target, spacing), spacing);
                    runs += 1;
                }
            }
        }
    }
    assert!(runs > 0);
}

/// Sparse periodic callers on `W32` at the default horizon
/// (an hour of 1 kHz ticks), open for 1 s and for 10 minutes: every spacing
/// within three units of each multiple of 32 768 ticks (the old ring, where
/// callers were rejected forever) up to an hour, of the hour itself, and of
/// the largest spacing the ring still measures exactly (`ring - open_for -
/// 4 units`); trips just after 0 and just before the 32-bit clock wraps.
/// Around the ring itself, each call is decided exactly as the units modulo
/// the ring say.
#[test]
#[cfg_attr(miri, ignore)]
fn sparse_callers_see_the_deadline_w32() {
    const HOUR: u64 = 3_600_000;
    for d in [1_000, 600_000] {
        let v = valid::<W32>(
            Config::new()
                .failure_threshold(1)
                .open_for(d)
                .probe_timeout(d),
        );
        let (s, ring) = (v.time_shift(), v.ring());
        assert_eq!(s, if d == 1_000 { 7 } else { 8 });
        let unit = 1u64 << s;
        let exact = ring - d - 4 * unit;
        assert!(exact >= HOUR, "the horizon is covered");
        let mut centers: Vec<u64> = (1..=HOUR / 32_768).map(|k| k * 32_768).collect();
        centers.push(HOUR);
        let sinces = [100, (1 << 32) - 3 * d - 77];
        sparse_callers(&v, &sinces, &centers, 3 * unit, HOUR);
        sparse_callers(&v, &sinces, &[exact], 3 * unit, exact);
        for since in sinces {
            for spacing in ring - 3 * unit..=ring + 3 * unit {
                ring_caller(&v, since, spacing);
            }
        }
    }
}

/// The same for `W64` with its figures: 1 µs ticks, open for
/// 1 s and 10 minutes, spacings up to an hour (3.6e9 ticks), `s = 0`, so
/// each deadline is the exact tick `since + open_for`. Spacings: around each
/// power of two from 2^15 to 2^33, each multiple of 10^8 up to an hour,
/// the hour, the largest spacing the ring measures exactly, and the ring.
#[test]
#[cfg_attr(miri, ignore)]
fn sparse_callers_see_the_deadline_w64() {
    const HOUR: u64 = 3_600_000_000;
    for d in [1_000_000, 600_000_000] {
        let v = valid::<W64>(
            Config::new()
                .failure_threshold(1)
                .open_for(d)
                .probe_timeout(d),
        );
        assert_eq!(v.time_shift(), 0);
        let ring = v.ring();
        assert_eq!(ring, 1 << 34);
        let exact = ring - d - 4;
        let mut centers: Vec<u64> = (15..=33).map(|k| 1u64 << k).collect();
        centers.extend((1..=36).map(|k| k * 100_000_000));
        centers.push(HOUR);
        centers.push(exact);
        let sinces = [100, (1 << 34) - d / 2, (1 << 40) + 12_345];
        sparse_callers(&v, &sinces, &centers, 8, exact);
        for since in sinces {
            for spacing in ring - 8..=ring + 8 {
                ring_caller(&v, since, spacing);
            }
        }
    }
}

/// The information limit (`docs/spec.md`, "Time faults"): a caller
/// that arrives exactly once per ring, inside the open time's window, reads
/// the same elapsed time every call and is rejected every time, with the
/// same wait; a caller trying again that wait later probes. At `W32`'s
/// default horizon the ring is 2^22 ticks (69.9 min at 1 kHz); with
/// `horizon(0)` it is 2^15, which is the original sparse-caller failure,
/// now only for a config that asks for it; `W64`'s is 2^34.
#[test]
fn callers_exactly_a_ring_apart_are_rejected_documented_limit() {
    fn every_ring<W: Word>(config: Config, ring: u64) {
        let v = valid::<W>(config);
        assert_eq!(v.ring(), ring);
        let s = v.time_shift();
        let d = v.open_for();
        let since = 100;
        let clock = ManualClock::new(since);
        let b = breaker::<W>(&clock, config);
        b.release(b.acquire().unwrap(), Outcome::Failure);
        let wait = first_admitted(since, need(d, s), s) - since;
        assert!(wait >= d && wait < d + (3 << s));
        for j in 1..=50 {
            clock.set(since + j * ring);
            assert_eq!(refusal(b.acquire()), (Cause::Open, Some(wait)), "lap {j}");
        }
        clock.advance(wait);
        assert!(b.acquire().expect("trying again probes").is_probe());
    }
    let config = Config::new().failure_threshold(1).open_for(10_000);
    every_ring::<W32>(config, 1 << 22);
    every_ring::<W32>(config.horizon(0), 1 << 15);
    every_ring::<W64>(config, 1 << 34);
}

/// How the counter is driven through `n` changes in [`held_across`].
#[derive(Clone, Copy, Debug)]
enum Driver {
    /// Lost probes: each probe timeout and re-election is 2 changes, no
    /// report.
    ProbeTimeouts,
    /// Probes that end `Ignored`: back to half-open and a new probe, 2
    /// changes, no time.
    IgnoredProbes,
    /// An operator toggling `force_open` / `force_close`: 1 change each, no
    /// time.
    Forces,
}

/// A ticket taken in `Closed` (counter 0) on a breaker of width `W`, held
/// while `driver` makes exactly `n` changes, then released as a failure:
/// what the release did, and the breaker's status after it. Every driver
/// ends in the state a ticket can be current in (`Closed`, or `Probing`).
fn held_across<W: Word>(driver: Driver, n: u32) -> (Release, Status) {
    const PT: u64 = 5;
    let config = Config::new()
        .failure_threshold(1)
        .open_for(10)
        .probe_timeout(PT)
        .horizon(0);
    let clock = ManualClock::new(0);
    let b = breaker::<W>(&clock, config);
    let held = b.acquire().unwrap();
    assert_eq!(held.counter(), 0);
    let changes = || b.snapshot().unwrap().counter;
    match driver {
        Driver::Forces => {
            for _ in 0..n / 2 {
                b.force_open();
                b.force_close();
            }
            if !n.is_multiple_of(2) {
                b.force_close(); // Closed to Closed: one change
            }
        }
        Driver::ProbeTimeouts | Driver::IgnoredProbes => {
            // Trip (1), then the first probe (2 more).
            b.release(b.acquire().unwrap(), Outcome::Failure);
            clock.advance(10);
            let mut probe = b.acquire().unwrap();
            assert_eq!(changes(), 3);
            for _ in 0..(n - 3) / 2 {
                probe = match driver {
                    Driver::ProbeTimeouts => {
                        drop(probe); // lost
                        clock.advance(PT);
                        b.acquire().unwrap()
                    }
                    _ => {
                        assert_eq!(b.release(probe, Outcome::Ignored), Release::Recorded);
                        b.acquire().unwrap()
                    }
                };
                assert!(probe.is_probe());
            }
            if n.is_multiple_of(2) {
                // The last probe succeeds: Closed.
                assert_eq!(b.release(probe, Outcome::Success), Release::Recorded);
            }
        }
    }
    let max = W::LAYOUT.max_counter();
    assert_eq!(changes(), n & max, "{driver:?}: {n} changes made");
    let status = b.status();
    assert!(matches!(status, Status::Closed | Status::Probing));
    (b.release(held, Outcome::Failure), b.status())
}

/// The counter's period, pinned as the documented limit
/// (`word::W32`, `docs/design-word.md` "Counter wrap"): on `W32` the counter
/// turns over after 1 024 changes, so a ticket held across exactly 1 024
/// changes is misread as current: its failure counts (here it trips the
/// breaker). Reached without time by ignored probes and by forces, and by
/// 510 probe timeouts. `W64` (4 194 304 changes) is not fooled by 1 024.
#[test]
#[cfg_attr(
    miri,
    ignore = "thousands of transitions (minutes under Miri); stage 30 runs it natively"
)]
fn w32_ticket_held_across_exactly_1024_changes_is_misread_documented_limit() {
    for driver in [Driver::ProbeTimeouts, Driver::IgnoredProbes, Driver::Forces] {
        assert_eq!(
            held_across::<W32>(driver, 1_024),
            (Release::Recorded, Status::Open),
            "{driver:?}"
        );
        assert_eq!(
            held_across::<W64>(driver, 1_024).0,
            Release::Stale,
            "{driver:?}"
        );
    }
}

/// The counter's period: one change short of it or past it, the
/// ticket held is stale, in the state a current ticket could be in.
#[test]
#[cfg_attr(
    miri,
    ignore = "thousands of transitions (minutes under Miri); stage 30 runs it natively"
)]
fn w32_ticket_held_across_1023_or_1025_changes_is_stale() {
    for driver in [Driver::ProbeTimeouts, Driver::IgnoredProbes, Driver::Forces] {
        for n in [1_023, 1_025] {
            let (release, status) = held_across::<W32>(driver, n);
            assert_eq!(release, Release::Stale, "{driver:?} {n}");
            assert_ne!(status, Status::Open, "{driver:?} {n}: nothing tripped");
        }
    }
}

/// `Rejected::retry_after` through the breaker, at `s > 0`
/// (`W32` at its default horizon, `W64` with a horizon of 2^40 ticks), in
/// `Open` and `Probing`, with and without backoff: it is never early (a
/// retry at `now + retry_after` succeeds, at `now + retry_after - 1` it is
/// rejected with a wait of 1) and at least the configured duration after the
/// trip; with `s = 0` it is exactly `deadline - now`. `None` when forced.
fn retry_after_is_never_early<W: Word>(horizon: u64) {
    for config in [
        Config::new()
            .failure_threshold(1)
            .open_for(1_000)
            .probe_timeout(700),
        Config::new()
            .failure_threshold(1)
            .open_for(1_000)
            .probe_timeout(700)
            .exponential_backoff(3_000),
    ] {
        for config in [config.horizon(horizon), config.horizon(0)] {
            let v = valid::<W>(config);
            let unit = 1u64 << v.time_shift();
            for (trip_at, probe_after) in [(5_000, 0), (5_001, 1), (5_000 + unit - 1, unit / 2)] {
                let clock = ManualClock::new(trip_at);
                let b = breaker::<W>(&clock, config);
                b.release(b.acquire().unwrap(), Outcome::Failure);
                let mut opened = trip_at;
                for trips in 1..=3 {
                    let d = v.open_duration(trips);
                    // Rejected from the trip until the wait says.
                    for now in [opened, opened + 1, opened + d / 2, opened + d - 1] {
                        clock.set(now);
                        let (cause, wait) = refusal(b.acquire());
                        assert_eq!(cause, Cause::Open);
                        let at = now + wait.unwrap();
                        assert!(at >= opened + d, "early: trips {trips} at {now}");
                        if unit == 1 {
                            assert_eq!(at, opened + d, "exact at s = 0");
                        }
                        clock.set(at - 1);
                        assert_eq!(refusal(b.acquire()), (Cause::Open, Some(1)));
                    }
                    clock.set(opened + d - 1);
                    let at = opened + d - 1 + refusal(b.acquire()).1.unwrap();
                    clock.set(at + probe_after);
                    let probe = b.acquire().expect("admitted at the wait's end");
                    assert!(probe.is_probe());
                    let elected = at + probe_after;
                    let pt = v.probe_timeout();
                    let (cause, wait) = refusal(b.acquire());
                    assert_eq!(cause, Cause::Probing);
                    let end = elected + wait.unwrap();
                    assert!(end >= elected + pt && end < elected + pt + 3 * unit);
                    if unit == 1 {
                        assert_eq!(end, elected + pt);
                    }
                    clock.set(end - 1);
                    assert_eq!(refusal(b.acquire()), (Cause::Probing, Some(1)));
                    clock.set(end);
                    drop(probe); // lost: the timeout frees it
                    let probe = b.acquire().expect("the probe timed out");
                    // The dependency is still down: one more trip.
                    assert_eq!(b.release(probe, Outcome::Failure), Release::Recorded);
                    opened = end;
                }
                b.force_open();
                assert_eq!(refusal(b.acquire()), (Cause::ForcedOpen, None));
            }
        }
    }
}

#[test]
fn retry_after_is_never_early_w32() {
    retry_after_is_never_early::<W32>(W32::LAYOUT.default_horizon());
}

#[test]
fn retry_after_is_never_early_w64() {
    retry_after_is_never_early::<W64>(1 << 40);
}

// The failure decides how long to stay open (`failure_for`, a Retry-After),
// and `force_open_for`.

mod open_time_hints {
    use super::*;
    both_widths!(
        failure_for_trips_until_the_hint,
        failure_for_on_a_probe_reopens_until_the_hint,
        failure_for_without_a_trip_is_a_plain_failure,
        failure_for_with_a_stale_ticket_changes_nothing,
        failure_for_is_clamped_to_half_the_ring,
        force_open_for_opens_now_then_half_opens,
        force_open_for_from_every_state,
        open_until_with_a_backward_clock_is_bounded,
    );
}

fn failure_for_trips_until_the_hint<W: Word>() {
    let clock = ManualClock::new(1_000);
    let b = breaker::<W>(&clock, seed_config().failure_threshold(1));
    let t = b.acquire().unwrap();
    assert_eq!(b.release_failure_for(t, 700), Release::Recorded);
    assert_eq!(b.status(), Status::Open);
    assert!(matches!(
        b.snapshot().unwrap().state,
        State::OpenUntil { trips: 1, .. }
    ));
    // Past the configured open time (100): still open, for the hint.
    clock.advance(100);
    assert_eq!(refusal(b.acquire()), (Cause::Open, Some(600)));
    clock.advance(599);
    assert_eq!(refusal(b.acquire()), (Cause::Open, Some(1)));
    assert_eq!(b.status(), Status::Open);
    clock.advance(1);
    assert_eq!(b.status(), Status::HalfOpen);
    let probe = b.acquire().unwrap();
    assert!(probe.is_probe());
    assert_eq!(
        b.observer().phases(),
        [
            (Status::Closed, Status::Open),
            (Status::Open, Status::HalfOpen),
            (Status::HalfOpen, Status::Probing)
        ]
    );
    // A plain probe failure after a hinted open backs off as after a trip:
    // trips counted on.
    b.release(probe, Outcome::Failure);
    assert!(matches!(
        b.snapshot().unwrap().state,
        State::Open { trips: 2, .. }
    ));
}

fn failure_for_on_a_probe_reopens_until_the_hint<W: Word>() {
    let clock = ManualClock::new(0);
    let b = breaker::<W>(&clock, seed_config().failure_threshold(1));
    b.release(b.acquire().unwrap(), Outcome::Failure);
    clock.advance(100);
    let probe = b.permit().unwrap();
    assert!(probe.is_probe());
    assert_eq!(probe.failure_for(2_000), Release::Recorded);
    assert!(matches!(
        b.snapshot().unwrap().state,
        State::OpenUntil { trips: 2, .. }
    ));
    clock.advance(1_999);
    assert_eq!(refusal(b.acquire()), (Cause::Open, Some(1)));
    clock.advance(1);
    assert!(b.acquire().unwrap().is_probe());
}

fn failure_for_without_a_trip_is_a_plain_failure<W: Word>() {
    let clock = ManualClock::new(0);
    let hinted = breaker::<W>(&clock, seed_config());
    let plain = breaker::<W>(&clock, seed_config());
    hinted.release_failure_for(hinted.acquire().unwrap(), 9_999);
    plain.release(plain.acquire().unwrap(), Outcome::Failure);
    assert_eq!(
        crate::__verification::load_word(&hinted),
        crate::__verification::load_word(&plain)
    );
    assert_eq!(
        hinted.snapshot().unwrap().state,
        State::Closed { failures: 1 }
    );
    assert!(hinted.observer().phases().is_empty());
}

fn failure_for_with_a_stale_ticket_changes_nothing<W: Word>() {
    let clock = ManualClock::new(0);
    let b = breaker::<W>(&clock, seed_config().failure_threshold(1));
    let old = b.acquire().unwrap();
    b.force_close();
    let before = crate::__verification::load_word(&b);
    assert_eq!(b.release_failure_for(old, 500), Release::Stale);
    assert_eq!(crate::__verification::load_word(&b), before);
    // Another breaker's ticket too.
    let other = breaker::<W>(&clock, seed_config().failure_threshold(1));
    assert_eq!(
        b.release_failure_for(other.acquire().unwrap(), 500),
        Release::Stale
    );
    assert_eq!(crate::__verification::load_word(&b), before);
    assert_eq!(b.status(), Status::Closed);
}

fn failure_for_is_clamped_to_half_the_ring<W: Word>() {
    let clock = ManualClock::new(0);
    let b = breaker::<W>(&clock, seed_config().failure_threshold(1));
    let longest = b.config().longest_hint();
    assert_eq!(longest, W::LAYOUT.max_units() << b.config().time_shift());
    b.release_failure_for(b.acquire().unwrap(), u64::MAX);
    // A `Rejected` holds waits up to `usize::MAX >> 2` ticks (2^30 - 1 on a
    // 32-bit target, which a W64 clamp of 2^33 passes).
    let most = (usize::MAX >> 2) as u64;
    assert_eq!(refusal(b.acquire()), (Cause::Open, Some(longest.min(most))));
    clock.advance(longest - 1);
    assert_eq!(b.status(), Status::Open);
    clock.advance(1);
    assert_eq!(b.status(), Status::HalfOpen);
    // A hint of zero: the next caller probes.
    b.force_close();
    b.release_failure_for(b.acquire().unwrap(), 0);
    assert!(b.acquire().unwrap().is_probe());
}

fn force_open_for_opens_now_then_half_opens<W: Word>() {
    let clock = ManualClock::new(5);
    let b = breaker::<W>(&clock, seed_config());
    let held = b.acquire().unwrap();
    b.force_open_for(300);
    assert_eq!(b.status(), Status::Open);
    assert_eq!(refusal(b.acquire()), (Cause::Open, Some(300)));
    // Every ticket issued before is stale.
    assert_eq!(b.release(held, Outcome::Success), Release::Stale);
    clock.advance(299);
    assert_eq!(refusal(b.acquire()), (Cause::Open, Some(1)));
    clock.advance(1);
    let probe = b.acquire().unwrap();
    assert!(probe.is_probe());
    b.release(probe, Outcome::Success);
    assert_eq!(b.status(), Status::Closed);
    assert_eq!(
        b.observer().phases(),
        [
            (Status::Closed, Status::Open),
            (Status::Open, Status::HalfOpen),
            (Status::HalfOpen, Status::Probing),
            (Status::Probing, Status::Closed)
        ]
    );
    assert!(b.observer().forced().iter().all(|f| !f));
}

fn force_open_for_from_every_state<W: Word>() {
    // (how to reach the state, the trips kept)
    type Setup<W> = fn(&Breaker<&ManualClock, W, Log>, &ManualClock);
    let setups: [(&str, Setup<W>, u32); 6] = [
        ("closed", |_, _| {}, 1),
        ("open", |b, _| trip(b), 1),
        (
            "half-open (elapsed open)",
            |b, c| {
                trip(b);
                c.advance(100);
            },
            1,
        ),
        (
            "probing",
            |b, c| {
                trip(b);
                c.advance(100);
                let _lost = b.acquire().unwrap(); // a probe never released
            },
            1,
        ),
        ("forced open", |b, _| b.force_open(), 1),
        (
            "open until",
            |b, _| {
                b.force_open_for(10);
            },
            1,
        ),
    ];
    for (name, setup, trips) in setups {
        let clock = ManualClock::new(0);
        let b = breaker::<W>(&clock, seed_config());
        setup(&b, &clock);
        let before = Snapshot::counter_bits::<W>(crate::__verification::load_word(&b));
        b.force_open_for(1_000);
        let snap = b.snapshot().unwrap();
        assert!(
            matches!(snap.state, State::OpenUntil { trips: t, .. } if t == trips),
            "{name}: {snap:?}"
        );
        assert!(snap.counter != before, "{name}: the counter moved");
        assert_eq!(refusal(b.acquire()).0, Cause::Open, "{name}");
        clock.advance(1_000);
        assert_eq!(b.status(), Status::HalfOpen, "{name}");
    }
}

/// The documented cost of keeping a deadline: a clock that steps back by
/// `b` delays the end of an `OpenUntil` by `b` (the word cannot tell "before
/// the deadline" from "the clock went back"), never by more; a step back by
/// more than half the ring reads as past the deadline.
fn open_until_with_a_backward_clock_is_bounded<W: Word>() {
    let clock = ManualClock::new(10_000);
    let b = breaker::<W>(&clock, seed_config());
    b.force_open_for(200);
    clock.set(10_000 - 50); // back 50
    assert_eq!(refusal(b.acquire()), (Cause::Open, Some(250)));
    clock.advance(250);
    assert!(b.acquire().unwrap().is_probe());
    // Back by more than half the ring: elapsed.
    let v = *b.config();
    b.force_close();
    clock.set(10_000);
    b.force_open_for(200);
    clock.set(10_000u64.wrapping_sub(v.longest_hint() + 1));
    assert!(b.acquire().unwrap().is_probe());
}

// The two mutants of `closed_failures` (the gate of the 64-bit
// failure fast path) that survived every suite, pinned where they bite.

/// `==` → `!=` in the tag test: a probe's failure on a `Probing` word whose
/// time field is near zero took the closed fast path. Threshold 3, open for
/// 100, the clock starting at 2^34 − 100: the trip stamps 2^34 − 100 + 3,
/// the probe is elected at 2^34 (time field 0), and its failure must reopen.
#[test]
fn probe_failure_on_a_probing_word_with_time_near_zero_reopens() {
    let clock = ManualClock::new((1 << 34) - 100);
    let b = breaker::<W64>(&clock, seed_config());
    for _ in 0..3 {
        b.release(b.acquire().unwrap(), Outcome::Failure);
    }
    assert_eq!(b.status(), Status::Open);
    clock.set(1 << 34);
    let probe = b.acquire().unwrap();
    assert!(probe.is_probe());
    assert!(matches!(
        b.snapshot().unwrap().state,
        State::Probing { since: 0, .. }
    ));
    assert_eq!(b.release(probe, Outcome::Failure), Release::Recorded);
    assert!(
        matches!(b.snapshot().unwrap().state, State::Open { trips: 2, .. }),
        "{:?}",
        b.snapshot()
    );
}

/// `>>` → `<<` in the failure count: `raw << shift` wraps to zero for a count
/// of 2^14 (and its multiples), so the 16 385th failure at a threshold of
/// 16 385 was counted in place without the trip.
#[test]
#[cfg_attr(
    miri,
    ignore = "thousands of transitions (minutes under Miri); stage 30 runs it natively"
)]
fn the_16385th_failure_trips_at_a_threshold_of_16385() {
    let clock = ManualClock::new(0);
    let b = breaker::<W64>(&clock, seed_config().failure_threshold(16_385));
    for n in 1..16_385u32 {
        b.release(b.acquire().unwrap(), Outcome::Failure);
        assert_eq!(
            b.snapshot().unwrap().state,
            State::Closed { failures: n },
            "failure {n}"
        );
    }
    b.release(b.acquire().unwrap(), Outcome::Failure);
    assert_eq!(b.status(), Status::Open);
    assert_eq!(
        b.observer().phases(),
        [(Status::Closed, Status::Open)],
        "exactly one trip"
    );
}

// ---------------------------------------------------------------------------
// Jitter on the open time (docs/spec.md, "Jitter").
#[cfg(feature = "jitter")]
mod jitter {
    use super::*;

    /// The mixing function is part of the contract: pinned to values computed
    /// outside the crate (a Python rendering of the finaliser).
    #[test]
    fn jitter_fraction_is_the_published_function() {
        assert_eq!(Jitter::fraction(0, 0, 0, 5), 0);
        assert_eq!(Jitter::fraction(1, 1, 1, 5), 5373);
        assert_eq!(Jitter::fraction(2, 1, 1, 5), 33659);
        assert_eq!(Jitter::fraction(0xdead_beef, 1023, 15, 4), 53380);
        let eq = |seed| {
            Config::new()
                .open_for(1000)
                .horizon(0)
                .jitter(Jitter::Equal { seed })
        };
        let full = |seed| {
            Config::new()
                .open_for(1000)
                .horizon(0)
                .jitter(Jitter::Full { seed })
        };
        assert_eq!(
            eq(1).check::<W64>().unwrap().jittered_open_duration(1, 1),
            960
        );
        assert_eq!(
            eq(2).check::<W64>().unwrap().jittered_open_duration(1, 1),
            744
        );
        assert_eq!(
            full(1).check::<W64>().unwrap().jittered_open_duration(1, 1),
            919
        );
        assert_eq!(
            full(2).check::<W64>().unwrap().jittered_open_duration(1, 1),
            487
        );
        // In units of 2^s ticks: W32 at its default horizon keeps 128-tick
        // units, and 1000 ticks need 9 of them (docs/spec.md, "Time").
        let w32 = Config::new().open_for(1000).check::<W32>().unwrap();
        assert_eq!(w32.time_shift(), 7);
        assert_eq!(w32.jittered_open_duration(1, 1), 9 << 7);
        // Trips saturate as the word's do (31 for W64), 0 reads as 1.
        let backoff = Config::new()
            .open_for(10)
            .exponential_backoff(10 << 30)
            .horizon(0)
            .jitter(Jitter::Equal { seed: 4 })
            .check::<W64>()
            .unwrap();
        let at_max = backoff.jittered_open_duration(1, 31);
        assert_eq!(backoff.jittered_open_duration(1, 100), at_max);
        assert_eq!(backoff.jittered_open_duration(1, u32::MAX), at_max);
        assert_eq!(
            backoff.jittered_open_duration(1, 0),
            backoff.jittered_open_duration(1, 1)
        );
        assert!(at_max > 10 << 29);
    }

    /// A jittered breaker rejects for exactly its jittered open time (the
    /// clock one tick before: rejected, with the exact wait; at it: a probe),
    /// on both widths, for equal and full jitter, after the first trip and
    /// after backed-off re-trips.
    fn jitter_is_what_the_breaker_waits<W: Word>() {
        for seed in 0..64u32 {
            for jitter in [Jitter::None, Jitter::Equal { seed }, Jitter::Full { seed }] {
                let valid = Config::new()
                    .failure_threshold(1)
                    .open_for(1000)
                    .exponential_backoff(4000)
                    .horizon(0)
                    .jitter(jitter)
                    .check::<W>()
                    .unwrap();
                let clock = ManualClock::new(0);
                let log = Log::default();
                let b = Breaker::from_parts(valid, &clock, &log);
                b.release(b.acquire().unwrap(), Outcome::Failure);
                for trips in 1..=4u32 {
                    let t = log.transitions.borrow().last().copied().unwrap();
                    assert_eq!(t.to, Status::Open);
                    let d = valid.jittered_open_duration(t.counter, trips);
                    let base = valid.open_duration(trips);
                    match jitter {
                        Jitter::None => assert_eq!(d, base),
                        Jitter::Equal { .. } => assert!(base / 2 < d && d <= base, "{d} of {base}"),
                        Jitter::Full { .. } => assert!(0 < d && d <= base, "{d} of {base}"),
                    }
                    let opened = clock.now();
                    clock.set(opened + d - 1);
                    let r = b.acquire().unwrap_err();
                    assert_eq!(r.retry_after(), Some(1), "{jitter:?} trip {trips}");
                    assert_eq!(b.status(), Status::Open);
                    clock.set(opened + d);
                    assert_eq!(b.status(), Status::HalfOpen);
                    let probe = b.acquire().unwrap();
                    // The probe fails: the next open time doubles (before jitter).
                    b.release(probe, Outcome::Failure);
                }
            }
        }
    }

    #[test]
    fn jitter_is_what_the_breaker_waits_w64() {
        jitter_is_what_the_breaker_waits::<W64>();
    }

    #[test]
    fn jitter_is_what_the_breaker_waits_w32() {
        jitter_is_what_the_breaker_waits::<W32>();
    }

    /// Replicas that trip together probe apart: 32 breakers with seeds 0..32,
    /// tripped at the same tick, reopen at (nearly) as many different ticks,
    /// spread over the jitter's range. Without jitter they would all reopen at
    /// one tick.
    #[test]
    fn replicas_that_trip_together_probe_apart() {
        for jitter in [|seed| Jitter::Equal { seed }, |seed| Jitter::Full { seed }] {
            let mut reopen: Vec<u64> = (0..32u32)
                .map(|seed| {
                    Config::new()
                        .open_for(10_000)
                        .horizon(0)
                        .jitter(jitter(seed))
                        .check::<W64>()
                        .unwrap()
                        .jittered_open_duration(1, 1)
                })
                .collect();
            reopen.sort_unstable();
            reopen.dedup();
            assert!(reopen.len() >= 30, "{reopen:?}");
            assert!(reopen[reopen.len() - 1] - reopen[0] >= 2_000, "{reopen:?}");
        }
    }

    /// The jitter changes with the trip (the counter the trip stored), so one
    /// breaker's successive open times are not all the same draw.
    #[test]
    fn jitter_differs_from_trip_to_trip() {
        let valid = Config::new()
            .open_for(10_000)
            .horizon(0)
            .jitter(Jitter::Equal { seed: 7 })
            .check::<W64>()
            .unwrap();
        let mut d: Vec<u64> = (1..40u32)
            .step_by(3)
            .map(|counter| valid.jittered_open_duration(counter, 1))
            .collect();
        d.sort_unstable();
        d.dedup();
        assert!(d.len() >= 12, "{d:?}");
    }

    /// A word with a trip count of 0 (written by hand: the breaker writes
    /// at least 1) reads as 1 for the jitter, as for the backoff: found by
    /// the fuzz word target (its model clamps the count).
    fn trips_zero_jitters_as_one<W: Word>() {
        let valid = Config::new()
            .open_for(1000)
            .horizon(0)
            .jitter(Jitter::Equal { seed: 0 })
            .check::<W>()
            .unwrap();
        let d = valid.jittered_open_duration(3, 1);
        for trips in [0, 1] {
            let raw = Snapshot {
                state: State::Open { since: 0, trips },
                counter: 3,
            }
            .encode::<W>();
            let clock = ManualClock::new(d - 1);
            let b = Breaker::with_word(valid, &clock, (), raw);
            assert_eq!(b.status(), Status::Open, "trips {trips}");
            clock.set(d);
            assert_eq!(b.status(), Status::HalfOpen, "trips {trips}");
        }
    }

    #[test]
    fn trips_zero_jitters_as_one_both_widths() {
        trips_zero_jitters_as_one::<W64>();
        trips_zero_jitters_as_one::<W32>();
    }

    /// `OpenUntil` times are never jittered: `failure_for` and
    /// `force_open_for` are what the caller asked for.
    #[test]
    fn open_until_is_not_jittered() {
        let valid = Config::new()
            .failure_threshold(1)
            .open_for(1000)
            .horizon(0)
            .jitter(Jitter::Full { seed: 3 })
            .check::<W64>()
            .unwrap();
        let clock = ManualClock::new(0);
        let b = Breaker::from_parts(valid, &clock, ());
        b.force_open_for(777);
        clock.set(776);
        assert_eq!(b.acquire().unwrap_err().retry_after(), Some(1));
        clock.set(777);
        assert!(b.acquire().is_ok());
    }
}

/// Every notification, in order, with the transitions between.
#[derive(Default)]
struct Notes(RefCell<Vec<Note>>);

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Note {
    T(Status, Status),
    Admitted { counter: u32, probe: bool },
    Rejected(Cause, Option<u64>),
    Recorded(Outcome),
    Stale(Outcome),
}

impl Observer for Notes {
    fn on_transition(&self, t: Transition) {
        self.0.borrow_mut().push(Note::T(t.from, t.to));
    }
    fn on_admitted(&self, ticket: &Ticket) {
        self.0.borrow_mut().push(Note::Admitted {
            counter: ticket.counter(),
            probe: ticket.is_probe(),
        });
    }
    fn on_rejected(&self, r: Rejected) {
        self.0
            .borrow_mut()
            .push(Note::Rejected(r.cause(), r.retry_after()));
    }
    fn on_recorded(&self, outcome: Outcome) {
        self.0.borrow_mut().push(Note::Recorded(outcome));
    }
    fn on_stale(&self, outcome: Outcome) {
        self.0.borrow_mut().push(Note::Stale(outcome));
    }
}

impl Notes {
    fn take(&self) -> Vec<Note> {
        core::mem::take(&mut *self.0.borrow_mut())
    }
}

fn notifications_on<W: Word>() {
    use Note::*;
    let clock = ManualClock::new(0);
    let config = seed_config().check::<W>().unwrap();
    let b = Breaker::<_, W, _>::from_parts(config, &clock, Notes::default());
    let other = Breaker::<_, W, _>::from_parts(config, &clock, ());

    // Closed fast paths: admission, a quiet success.
    let t = b.acquire().unwrap();
    b.release(t, Outcome::Success);
    assert_eq!(
        b.observer().take(),
        [
            Admitted {
                counter: 0,
                probe: false
            },
            Recorded(Outcome::Success)
        ]
    );

    // A failure that does not trip (the CAS fast path), an ignored call, a
    // foreign ticket (stale, nothing changes).
    b.release(b.acquire().unwrap(), Outcome::Failure);
    b.release(b.acquire().unwrap(), Outcome::Ignored);
    b.release(other.acquire().unwrap(), Outcome::Failure);
    assert_eq!(
        b.observer().take(),
        [
            Admitted {
                counter: 0,
                probe: false
            },
            Recorded(Outcome::Failure),
            Admitted {
                counter: 0,
                probe: false
            },
            Recorded(Outcome::Ignored),
            Stale(Outcome::Failure),
        ]
    );

    // The tripping failure: the transition, then the record. A ticket of
    // the closed state released after the trip is stale.
    let late = b.acquire().unwrap();
    b.release(b.acquire().unwrap(), Outcome::Failure);
    b.release(b.acquire().unwrap(), Outcome::Failure);
    b.release(late, Outcome::Success);
    assert_eq!(
        b.observer().take(),
        [
            Admitted {
                counter: 0,
                probe: false
            },
            Admitted {
                counter: 0,
                probe: false
            },
            Recorded(Outcome::Failure),
            Admitted {
                counter: 0,
                probe: false
            },
            T(Status::Closed, Status::Open),
            Recorded(Outcome::Failure),
            Stale(Outcome::Success),
        ]
    );

    // Open: rejected with the wait; then the probe's election (transitions
    // first), a rejection while probing, the probe's success.
    clock.advance(30);
    assert!(b.acquire().is_err());
    clock.advance(70);
    let probe = b.acquire().unwrap();
    assert!(b.acquire().is_err());
    b.release(probe, Outcome::Success);
    assert_eq!(
        b.observer().take(),
        [
            Rejected(Cause::Open, Some(70)),
            T(Status::Open, Status::HalfOpen),
            T(Status::HalfOpen, Status::Probing),
            Admitted {
                counter: 3,
                probe: true
            },
            Rejected(Cause::Probing, Some(50)),
            T(Status::Probing, Status::Closed),
            Recorded(Outcome::Success),
        ]
    );

    // Forced open: rejected with no wait; a ticket from before is stale,
    // `release_failure_for` included; permits notify through release.
    let before = b.acquire().unwrap();
    let permit = b.permit().unwrap();
    b.force_open();
    assert!(b.permit().is_err());
    b.release_failure_for(before, 10);
    drop(permit);
    assert_eq!(
        b.observer().take(),
        [
            Admitted {
                counter: 4,
                probe: false
            },
            Admitted {
                counter: 4,
                probe: false
            },
            T(Status::Closed, Status::Open),
            Rejected(Cause::ForcedOpen, None),
            Stale(Outcome::Failure),
            Stale(Outcome::Failure),
        ]
    );

    // `release_failure_for` recorded: the trip, then the record.
    b.force_close();
    let one = Config::new()
        .failure_threshold(1)
        .open_for(100)
        .check::<W>()
        .unwrap();
    let c = Breaker::<_, W, _>::from_parts(one, &clock, Notes::default());
    c.release_failure_for(c.acquire().unwrap(), 500);
    assert_eq!(
        c.observer().take(),
        [
            Admitted {
                counter: 0,
                probe: false
            },
            T(Status::Closed, Status::Open),
            Recorded(Outcome::Failure),
        ]
    );
}

#[test]
fn notifications_in_order_w64() {
    notifications_on::<W64>();
}

#[test]
fn notifications_in_order_w32() {
    notifications_on::<W32>();
}

/// `(A, B)` and `&O` forward every hook.
#[test]
fn pair_and_reference_observers_forward_every_hook() {
    let clock = ManualClock::new(0);
    let (a, b) = (Notes::default(), Notes::default());
    let config = seed_config().check::<W64>().unwrap();
    let breaker = Breaker::from_parts(config, &clock, (&a, &b));
    breaker.release(breaker.acquire().unwrap(), Outcome::Failure);
    breaker.force_open();
    assert!(breaker.acquire().is_err());
    breaker.release(breaker.forge_ticket(0, false), Outcome::Success);
    let expected = [
        Note::Admitted {
            counter: 0,
            probe: false,
        },
        Note::Recorded(Outcome::Failure),
        Note::T(Status::Closed, Status::Open),
        Note::Rejected(Cause::ForcedOpen, None),
        Note::Stale(Outcome::Success),
    ];
    assert_eq!(a.take(), expected);
    assert_eq!(b.take(), expected);
}

/// `(A, B)` forwards a corrupt-word report to both.
#[test]
fn pair_observer_forwards_corrupt_words() {
    let clock = ManualClock::new(0);
    let (a, b) = (Log::default(), Log::default());
    let config = seed_config().check::<W64>().unwrap();
    let breaker = Breaker::with_word(config, &clock, (&a, &b), no_state::<W64>(0));
    assert!(breaker.acquire().is_ok());
    assert_eq!(a.corrupt.borrow().len(), 1);
    assert_eq!(*a.corrupt.borrow(), *b.corrupt.borrow());
}

/// The firmware table: a `static` of named breakers.
mod table {
    use crate::clock::ManualClock;
    use crate::table::{BreakerTable, TableBreaker};
    use crate::*;

    static CLOCK: ManualClock = ManualClock::new(0);
    static CONFIG: ValidConfig<W32> = ValidConfig::new(Config::new().failure_threshold(1));
    static TABLE: BreakerTable<&str, TableBreaker<&ManualClock, W32>, 3> = crate::breaker_table!(
        ["uart", "i2c", "radio"],
        |_k| Breaker::from_parts(&CONFIG, &CLOCK, ())
    );

    #[test]
    fn length_and_emptiness() {
        assert_eq!(TABLE.len(), 3);
        assert!(!TABLE.is_empty());
        let none: BreakerTable<&str, TableBreaker<&ManualClock, W32>, 0> = BreakerTable::new([]);
        assert!(none.is_empty());
        assert_eq!(none.len(), 0);
    }

    #[test]
    fn keys_lookups_and_independent_breakers() {
        assert_eq!((TABLE.len(), TABLE.is_empty()), (3, false));
        assert_eq!(TABLE.index_of(&"i2c"), Some(1));
        assert_eq!(TABLE.index_of(&"spi"), None);
        assert_eq!(*TABLE.key(2), "radio");
        assert!(core::ptr::eq(TABLE.get(&"radio").unwrap(), TABLE.at(2)));
        let keys: std::vec::Vec<&str> = TABLE.iter().map(|(k, _)| *k).collect();
        assert_eq!(keys, ["uart", "i2c", "radio"]);
        let i2c = TABLE.get(&"i2c").unwrap();
        i2c.release(i2c.acquire().unwrap(), Outcome::Failure);
        let states: std::vec::Vec<Status> = TABLE.iter().map(|(_, b)| b.status()).collect();
        assert_eq!(states, [Status::Closed, Status::Open, Status::Closed]);
        i2c.force_close();
    }
}

/// The interrupt-safe transition log (feature `heapless`).
#[cfg(feature = "heapless")]
mod log {
    use crate::clock::ManualClock;
    use crate::log::{LogTo, Logged, TransitionLog};
    use crate::table::{BreakerTable, TableBreaker};
    use crate::*;
    use std::vec::Vec;

    static CLOCK: ManualClock = ManualClock::new(0);
    static CONFIG: ValidConfig<W32> = ValidConfig::new(Config::new().failure_threshold(1));

    #[test]
    fn transitions_arrive_with_their_key_in_order_and_a_full_queue_counts_drops() {
        static LOG: TransitionLog<u8, 4> = TransitionLog::new();
        static TABLE: BreakerTable<u8, TableBreaker<&ManualClock, W32, LogTo<u8, 4>>, 2> = crate::breaker_table!(
            [7, 9],
            |k| Breaker::from_parts(&CONFIG, &CLOCK, LOG.observer(k))
        );
        assert_eq!(*TABLE.at(0).observer().key(), 7);
        let b = TABLE.get(&9).unwrap();
        b.release(b.acquire().unwrap(), Outcome::Failure); // closed -> open
        TABLE.at(0).force_open(); // closed -> open (forced)
        b.force_close(); // open -> closed
        let drained: Vec<(u8, Status, Status, u32)> = core::iter::from_fn(|| LOG.pop())
            .map(|Logged { key, transition: t }| (key, t.from, t.to, t.counter))
            .collect();
        assert_eq!(
            drained,
            [
                (9, Status::Closed, Status::Open, 1),
                (7, Status::Closed, Status::Open, 1),
                (9, Status::Open, Status::Closed, 2),
            ]
        );
        // Six transitions into a queue of four, nobody draining: four kept,
        // two counted as dropped, none blocking.
        for _ in 0..3 {
            b.force_open();
            b.force_close();
        }
        assert_eq!(core::iter::from_fn(|| LOG.pop()).count(), 4);
        assert_eq!(LOG.dropped(), 2);
        assert_eq!(
            std::format!("{LOG:?}"),
            "TransitionLog { capacity: 4, dropped: 2, .. }"
        );
    }

    /// Producers on several threads (interrupt handlers' stand-ins), a
    /// consumer draining meanwhile: every transition is either drained
    /// exactly once or counted as dropped, and each breaker's arrive in
    /// counter order.
    #[test]
    fn concurrent_producers_lose_nothing_uncounted() {
        static LOG: TransitionLog<usize, 16> = TransitionLog::new();
        // W64: 12 000 transitions must not wrap the counter (W32's wraps
        // at 1 024, which would break the order test below).
        static CONFIG64: ValidConfig<W64> = ValidConfig::new(Config::new().failure_threshold(1));
        static TABLE: BreakerTable<usize, TableBreaker<&ManualClock, W64, LogTo<usize, 16>>, 3> = crate::breaker_table!(
            [0, 1, 2],
            |k| Breaker::from_parts(&CONFIG64, &CLOCK, LOG.observer(k))
        );
        const ROUNDS: u32 = 2_000;
        let drained = std::thread::scope(|s| {
            for i in 0..3 {
                s.spawn(move || {
                    for _ in 0..ROUNDS {
                        TABLE.at(i).force_open();
                        TABLE.at(i).force_close();
                    }
                });
            }
            let consumer = s.spawn(|| {
                let mut got: Vec<Logged<usize>> = Vec::new();
                let total = (3 * 2 * ROUNDS) as usize;
                // Bounded, so a log that loses transitions uncounted fails
                // the test instead of hanging it (each empty poll yields).
                let mut polls = 0u32;
                while got.len() + (LOG.dropped() as usize) < total {
                    if let Some(l) = LOG.pop() {
                        got.push(l);
                    } else {
                        polls += 1;
                        assert!(polls < 5_000_000, "transitions lost uncounted");
                        std::thread::yield_now();
                    }
                }
                got
            });
            consumer.join().unwrap()
        });
        let drained: Vec<Logged<usize>> = drained
            .into_iter()
            .chain(core::iter::from_fn(|| LOG.pop()))
            .collect();
        assert_eq!(
            drained.len() + LOG.dropped() as usize,
            (3 * 2 * ROUNDS) as usize
        );
        for key in 0..3 {
            let counters: Vec<u32> = drained
                .iter()
                .filter(|l| l.key == key)
                .map(|l| l.transition.counter)
                .collect();
            assert!(counters.windows(2).all(|w| w[0] < w[1]), "breaker {key}");
        }
    }
}

/// A failure's count that lost its exchange (docs/design.md, "Backoff in
/// the failure count"): a spurious failure retries from the word it saw, at
/// once, without reading again; one lost to another writer retries from a
/// word read after the wait (here the reader's value).
#[cfg(target_pointer_width = "64")]
#[test]
fn lost_count_retries_from_a_fresh_read() {
    use crate::breaker::backoff;
    assert_eq!(
        backoff(3u64, 3, || panic!("a spurious failure reads again")),
        3
    );
    let mut reads = 0;
    let contended = backoff(3u64, 5, || {
        reads += 1;
        7
    });
    assert_eq!((contended, reads), (7, 1));
}

/// A real failure storm: threads counting failures below the threshold on
/// one breaker lose exchanges to each other (on a machine with more than one
/// core, thousands of times) and take the backoff path. Every failure is
/// counted once: the word ends with exactly their number under the first
/// counter (no transition), every release is `Recorded`. Asserts nothing
/// about time.
fn storm_counts_every_failure<W: Word>(threshold: u32) {
    let threads = 3;
    let each = if cfg!(miri) { 20 } else { threshold / 4 };
    let clock = ManualClock::new(0);
    let config = Config::new()
        .failure_threshold(threshold)
        .open_for(10)
        .probe_timeout(10)
        .horizon(0);
    let b = Breaker::<&ManualClock, W>::from_parts(valid(config), &clock, ());
    let barrier = std::sync::Barrier::new(threads);
    std::thread::scope(|s| {
        for _ in 0..threads {
            s.spawn(|| {
                barrier.wait();
                for _ in 0..each {
                    let t = b.acquire().expect("closed admits");
                    assert_eq!(b.release(t, Outcome::Failure), Release::Recorded);
                }
            });
        }
    });
    let snap = b.snapshot().expect("valid");
    assert_eq!(
        (snap.counter, snap.state),
        (
            0,
            State::Closed {
                failures: threads as u32 * each
            }
        ),
        "a failure lost or counted twice, or a transition"
    );
}

#[test]
fn storm_counts_every_failure_w64() {
    storm_counts_every_failure::<W64>(W64::LAYOUT.max_failures());
}

#[test]
fn storm_counts_every_failure_w32() {
    storm_counts_every_failure::<W32>(W32::LAYOUT.max_failures());
}

// ---------------------------------------------------------------------------
// Mutants found by a full mutation-testing run: each test pins a
// boundary or a value that a surviving mutant changed.

/// An admission the slow path makes into `Closed` (here: a corrupt word,
/// repaired to `Closed` and admitted, I8) is an ordinary admission, not a
/// probe; only the admission that elects the probe of a half-open breaker
/// is one. Pins the guard `tag_of(raw) == TAG_PROBING` of `acquire_from`
/// (with `true`, the repaired word's ticket would claim to be a probe) and
/// `Permit::is_probe` (with `true`, every permit would).
fn closed_admissions_are_not_probes<W: Word>() {
    let clock = ManualClock::new(0);
    let b = breaker::<W>(&clock, seed_config());
    // The closed fast path.
    let p = b.permit().expect("closed admits");
    assert!(!p.is_probe());
    assert_eq!(p.success(), Release::Recorded);
    // The slow path, into a repaired `Closed` word.
    poke(&b, no_state::<W>(0));
    let t = b.acquire().expect("a corrupt word fails open");
    assert_eq!(b.status(), Status::Closed);
    assert!(!t.is_probe(), "a repaired word admits no probe");
    assert_eq!(b.release(t, Outcome::Success), Release::Recorded);
    poke(&b, no_state::<W>(0));
    let p = b.permit().expect("a corrupt word fails open");
    assert!(!p.is_probe(), "a repaired word admits no probe");
    assert_eq!(p.success(), Release::Recorded);
    // The probe is one, as a ticket and as a permit.
    trip(&b);
    clock.advance(100);
    let p = b.permit().expect("the probe");
    assert!(p.is_probe());
    assert_eq!(p.success(), Release::Recorded);
    assert_eq!(b.status(), Status::Closed);
}

#[test]
fn closed_admissions_are_not_probes_both_widths() {
    closed_admissions_are_not_probes::<W64>();
    closed_admissions_are_not_probes::<W32>();
}

/// The time the `fn() -> u64` clock below reads: a test that sets it is the
/// only one that uses it.
static FN_CLOCK_TICKS: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);

fn fn_clock_ticks() -> u64 {
    FN_CLOCK_TICKS.load(std::sync::atomic::Ordering::Relaxed)
}

/// A plain function is a clock that reads what the function returns (not a
/// constant): a breaker on one trips at the function's time and probes
/// exactly `open_for` ticks later, on both widths. Pins `<impl Clock for
/// fn() -> u64>::now` (with `0` or `1` the breaker's time would stand still
/// and it would never probe).
#[test]
fn fn_clock_reads_the_function() {
    use std::sync::atomic::Ordering::Relaxed;
    let clock: fn() -> u64 = fn_clock_ticks;
    FN_CLOCK_TICKS.store(1_000_000, Relaxed);
    assert_eq!(Clock::now(&clock), 1_000_000);
    FN_CLOCK_TICKS.store(7, Relaxed);
    assert_eq!(Clock::now(&clock), 7);

    fn check<W: Word>(clock: fn() -> u64) {
        FN_CLOCK_TICKS.store(1_000_000, Relaxed);
        let b = Breaker::<fn() -> u64, W>::from_parts(valid(seed_config()), clock, ());
        for _ in 0..3 {
            b.release(b.acquire().unwrap(), Outcome::Failure);
        }
        assert_eq!(b.status(), Status::Open);
        FN_CLOCK_TICKS.store(1_000_099, Relaxed);
        assert_eq!(refusal(b.acquire()), (Cause::Open, Some(1)));
        FN_CLOCK_TICKS.store(1_000_100, Relaxed);
        assert!(b.acquire().expect("open time elapsed").is_probe());
    }
    check::<W64>(clock);
    check::<W32>(clock);
}

/// `W32`'s longest duration: `((max_units - 1) << max_shift) + 1` ticks
/// (the most whose units fit half the ring at the largest shift).
const W32_LONGEST: u64 = (((1 << 14) - 1) << 17) + 1;

/// `open_for` and `probe_timeout` are at most `2^60` ticks (room for the
/// unit arithmetic): `W64` takes `2^60` itself and refuses `2^60 + 1` with
/// that range; `W32`, whose own limit is far lower, refuses `2^60` with its
/// own limit and `2^60 + 1` with `2^60`. Pins both `> max` tests of
/// `check_layout` (with `==` the value above is let through, with `>=` the
/// limit itself is refused).
#[test]
fn durations_up_to_2_pow_60_ticks() {
    let max = 1u64 << 60;
    let err = |field, value, max| ConfigError {
        field,
        value,
        min: 1,
        max,
    };
    let w64 = Config::new().open_for(max).check::<W64>().unwrap();
    assert_eq!((w64.open_for(), w64.time_shift()), (max, 28));
    let w64 = Config::new().probe_timeout(max).check::<W64>().unwrap();
    assert_eq!((w64.probe_timeout(), w64.time_shift()), (max, 28));
    assert_eq!(
        Config::new().open_for(max + 1).check::<W64>(),
        Err(err(Field::OpenFor, max + 1, max))
    );
    assert_eq!(
        Config::new().probe_timeout(max + 1).check::<W64>(),
        Err(err(Field::ProbeTimeout, max + 1, max))
    );
    assert_eq!(
        Config::new().open_for(max).check::<W32>(),
        Err(err(Field::OpenFor, max, W32_LONGEST))
    );
    assert_eq!(
        Config::new().probe_timeout(max).check::<W32>(),
        Err(err(Field::ProbeTimeout, max, W32_LONGEST))
    );
    assert_eq!(
        Config::new().open_for(max + 1).check::<W32>(),
        Err(err(Field::OpenFor, max + 1, max))
    );
    assert_eq!(
        Config::new().probe_timeout(max + 1).check::<W32>(),
        Err(err(Field::ProbeTimeout, max + 1, max))
    );
}

/// `W32`'s longest duration is exactly `((2^14 - 1) << 17) + 1` ticks
/// (2 147 352 577): taken as an open time or a probe timeout, refused one
/// tick above with that maximum. When both are too long and equal, the
/// error names `open_for` (the first field), and a backoff cap equal to a
/// too-long `open_for` does not take the blame either. Pins
/// `longest_allowed`'s `+ 1` (with `- 1` or `* 1` the limit is lower) and
/// the strict `>` of "which field is the longest" (with `>=` a tie moves
/// the error to the later field).
#[test]
fn w32_longest_duration_and_the_field_it_names() {
    let l = W32_LONGEST;
    assert_eq!(l, 2_147_352_577);
    let err = |field, value, min| ConfigError {
        field,
        value,
        min,
        max: l,
    };
    let open = Config::new().open_for(l).check::<W32>().unwrap();
    assert_eq!((open.open_for(), open.time_shift()), (l, 17));
    let probe = Config::new().probe_timeout(l).check::<W32>().unwrap();
    assert_eq!((probe.probe_timeout(), probe.time_shift()), (l, 17));
    assert_eq!(
        Config::new().open_for(l + 1).check::<W32>(),
        Err(err(Field::OpenFor, l + 1, 1))
    );
    assert_eq!(
        Config::new().probe_timeout(l + 1).check::<W32>(),
        Err(err(Field::ProbeTimeout, l + 1, 1))
    );
    assert_eq!(
        Config::new()
            .open_for(l + 1)
            .probe_timeout(l + 1)
            .check::<W32>(),
        Err(err(Field::OpenFor, l + 1, 1))
    );
    assert_eq!(
        Config::new()
            .open_for(l + 1)
            .exponential_backoff(l + 1)
            .check::<W32>(),
        Err(err(Field::OpenFor, l + 1, 1))
    );
}

/// A backoff cap longer than every other duration is the longest one: on
/// `W32` a reachable cap above the width's longest duration is refused as
/// the cap, with its own range (`open_for..=` the longest, so `min` is
/// `open_for`, not 1), and the message says so; on `W64` (no such limit
/// below `2^60`) the cap alone sets the time shift. Pins `cap > longest` in
/// `check_layout` (with `==` or `<` the cap is never the longest) and the
/// `Field::BackoffCap` arm of the reported minimum.
#[test]
fn backoff_cap_is_the_longest_duration() {
    let err = Config::new()
        .open_for(1 << 20)
        .exponential_backoff(1 << 32)
        .check::<W32>()
        .unwrap_err();
    assert_eq!(
        err,
        ConfigError {
            field: Field::BackoffCap,
            value: 1 << 32,
            min: 1 << 20,
            max: W32_LONGEST,
        }
    );
    assert_eq!(
        std::format!("{err}"),
        "exponential_backoff cap = 4294967296 is out of range 1048576..=2147352577 ticks"
    );
    // W64: 2^60 ticks need 28-bit units (2^34 of them fit the ring, at
    // most 2^33 per duration); `open_for` alone would need none.
    let v = Config::new()
        .open_for(1 << 30)
        .exponential_backoff(1 << 60)
        .horizon(0)
        .check::<W64>()
        .unwrap();
    assert_eq!(v.time_shift(), 28);
    assert_eq!(v.open_duration(31), 1 << 60);
    assert_eq!(
        Config::new()
            .open_for(1 << 30)
            .horizon(0)
            .check::<W64>()
            .unwrap()
            .time_shift(),
        0
    );
}

/// The backoff cap's range is `open_for..=min(open_for * 2^(max_trips -
/// 1), 2^60)`: a cap equal to `open_for` is a fixed open time, one below
/// is refused; above `2^60 / 2^(max_trips - 1)` (`2^30` on `W64`, `2^46` on
/// `W32`) the reachable cap is `2^60`, not the shifted `open_for`. Pins
/// `cap < open_for` (with `<=` a cap equal to it is refused) and the
/// overflow guard `open_for > (max >> doublings)` (with `==`, a base one
/// above the guard shifts to more than `2^60` and a cap above `2^60` gets
/// through).
#[test]
fn backoff_cap_range_bounds() {
    for (doublings, one_above) in [(30u32, (1u64 << 30) + 1), (14, (1 << 46) + 1)] {
        let check = |c: Config| {
            if doublings == 30 {
                c.check::<W64>().map(|v| v.backoff_cap())
            } else {
                c.check::<W32>().map(|v| v.backoff_cap())
            }
        };
        let cap =
            |open: u64, cap: u64| check(Config::new().open_for(open).exponential_backoff(cap));
        assert_eq!(cap(100, 100), Ok(Some(100)));
        assert_eq!(
            cap(100, 99),
            Err(ConfigError {
                field: Field::BackoffCap,
                value: 99,
                min: 100,
                max: 100 << doublings,
            })
        );
        assert_eq!(
            cap(100, (100 << doublings) + 1),
            Err(ConfigError {
                field: Field::BackoffCap,
                value: (100 << doublings) + 1,
                min: 100,
                max: 100 << doublings,
            })
        );
        // One above the guard: the reachable cap is 2^60 exactly.
        assert_eq!(
            cap(one_above, (1 << 60) + 1),
            Err(ConfigError {
                field: Field::BackoffCap,
                value: (1 << 60) + 1,
                min: one_above,
                max: 1 << 60,
            })
        );
    }
    // W64 takes the cap of 2^60 over a base one above the guard.
    let v = Config::new()
        .open_for((1 << 30) + 1)
        .exponential_backoff(1 << 60)
        .check::<W64>()
        .unwrap();
    assert_eq!(v.open_duration(2), (1 << 31) + 2);
    assert_eq!(v.open_duration(31), 1 << 60);
}

/// A backoff cap equal to `open_for` is a fixed open time: it never grows,
/// on either width, whatever the trip count. Pins `cap < open_for` of
/// `check_layout` (with `<=` that cap is refused).
#[test]
fn backoff_cap_equal_to_open_for_is_fixed() {
    for trips in [0, 1, 2, 15, 31, 100] {
        let v = Config::new()
            .open_for(100)
            .exponential_backoff(100)
            .horizon(0);
        assert_eq!(v.check::<W64>().unwrap().open_duration(trips), 100);
        assert_eq!(v.check::<W32>().unwrap().open_duration(trips), 100);
    }
}

/// The backed-off open time is `min(open_for * 2^(k-1), cap)` exactly, also
/// when the cap is not a power-of-two multiple of `open_for`: with
/// `open_for` 100 and cap 201, the second trip opens for 200 (not the cap:
/// `201 >> 1 == 100` is the tie of the overflow guard), the third for 201.
/// `jittered_open_duration` with no jitter, at `s = 0`, is the same. Pins
/// `open_for > (cap >> doublings)` of `open_duration` (with `>=` the tie
/// gives the cap) and the doubling of `jittered_open_duration` (`open <<
/// (trips - 1)`, and `cap < doubled`).
fn backoff_is_exact_below_an_odd_cap<W: Word>() {
    let v = valid::<W>(
        Config::new()
            .open_for(100)
            .exponential_backoff(201)
            .horizon(0),
    );
    assert_eq!(v.time_shift(), 0);
    let max = W::LAYOUT.max_trips();
    for (trips, d) in [
        (0, 100),
        (1, 100),
        (2, 200),
        (3, 201),
        (4, 201),
        (max, 201),
        (max + 1, 201),
    ] {
        assert_eq!(v.open_duration(trips), d, "trips {trips}");
        #[cfg(feature = "jitter")]
        assert_eq!(v.jittered_open_duration(5, trips), d, "trips {trips}");
    }
    // And where the cap is a power-of-two multiple: 100, 200, 400, 800.
    let v = valid::<W>(
        Config::new()
            .open_for(100)
            .exponential_backoff(800)
            .horizon(0),
    );
    for (trips, d) in [(1, 100), (2, 200), (3, 400), (4, 800), (5, 800)] {
        assert_eq!(v.open_duration(trips), d, "trips {trips}");
        #[cfg(feature = "jitter")]
        assert_eq!(v.jittered_open_duration(5, trips), d, "trips {trips}");
    }
}

#[test]
fn backoff_is_exact_below_an_odd_cap_both_widths() {
    backoff_is_exact_below_an_odd_cap::<W64>();
    backoff_is_exact_below_an_odd_cap::<W32>();
}

/// `ValidConfig` equality is the config's: equal configs compare equal,
/// configs differing in one field do not. Its `Debug` names the config and
/// the derived time shift. `horizon()` is the one set, or the width's
/// default (an hour: 3 600 000 000 ticks for `W64`, 3 600 000 for `W32`).
/// Pins `<impl PartialEq for ValidConfig<W>>::eq`, its `Debug` and
/// `ValidConfig::horizon` (with `true`, an empty `Debug`, `0` or `1`).
#[test]
fn valid_config_equality_debug_and_horizon() {
    let a = valid::<W64>(Config::new());
    assert_eq!(a, valid::<W64>(Config::new()));
    assert_ne!(a, valid::<W64>(Config::new().open_for(999)));
    assert_ne!(a, valid::<W64>(Config::new().horizon(0)));
    let w32 = valid::<W32>(Config::new());
    assert_eq!(
        std::format!("{w32:?}"),
        std::format!(
            "ValidConfig {{ config: {:?}, time_shift: 7 }}",
            Config::new()
        )
    );
    assert_eq!(
        std::format!("{a:?}"),
        std::format!(
            "ValidConfig {{ config: {:?}, time_shift: 0 }}",
            Config::new()
        )
    );
    assert_eq!(a.horizon(), 3_600_000_000);
    assert_eq!(w32.horizon(), 3_600_000);
    assert_eq!(
        valid::<W64>(Config::new().horizon(12_345)).horizon(),
        12_345
    );
    assert_eq!(valid::<W32>(Config::new().horizon(0)).horizon(), 0);
}

/// A run-time open time (`failure_for`, `force_open_for`) is taken in
/// units of `2^s` ticks and clamped to half the ring: at `s = 7` (W32 at
/// its default horizon, W64 at a horizon of `2^40` ticks) 1 000 ticks are
/// 9 units, and the clamp is `max_units << 7` ticks (`longest_hint`).
/// Through the breaker: a `force_open_for(1000)` rejects until the ninth
/// unit after the call's. Pins the clamp test `ticks >= max << shift` of
/// `hint_units` and `longest_hint` (with `>>` for `<<`, almost every time
/// would be clamped, and the longest hint would be 2^7 times too short).
fn hints_in_units<W: Word>(config: Config) {
    let v = valid::<W>(config);
    assert_eq!(v.time_shift(), 7);
    let max = W::LAYOUT.max_units();
    assert_eq!(v.longest_hint(), max << 7);
    assert_eq!(v.hint_units(1_000), 9);
    assert_eq!(v.hint_units((max << 7) - 1), max);
    assert_eq!(v.hint_units(max << 7), max);
    assert_eq!(v.hint_units(u64::MAX), max);
    let clock = ManualClock::new(0);
    let b = Breaker::<&ManualClock, W>::from_parts(v, &clock, ());
    b.force_open_for(1_000);
    clock.set(9 * 128 - 1);
    assert_eq!(refusal(b.acquire()), (Cause::Open, Some(1)));
    clock.set(9 * 128);
    assert!(b.acquire().expect("the hint elapsed").is_probe());
}

#[test]
fn hints_in_units_both_widths() {
    hints_in_units::<W64>(Config::new().horizon(1 << 40));
    hints_in_units::<W32>(Config::new());
}

/// The messages `ValidConfig::new` panics with (a compile error in a
/// `const`) name the field, one per field. Pins `ConfigError::message`.
#[test]
fn config_error_messages_name_the_field() {
    let message = |field| {
        ConfigError {
            field,
            value: 0,
            min: 1,
            max: 1,
        }
        .message()
    };
    let expected = [
        (
            Field::FailureThreshold,
            "failure_threshold is out of range for this word width",
        ),
        (
            Field::OpenFor,
            "open_for is out of range for this word width",
        ),
        (
            Field::BackoffCap,
            "exponential_backoff cap is out of range (open_for..=open_for * 2^(max trips - 1))",
        ),
        (
            Field::ProbeTimeout,
            "probe_timeout is out of range for this word width",
        ),
        (
            Field::Horizon,
            "horizon plus the longest duration does not fit the word",
        ),
        (
            Field::FailureRate,
            "failure_rate is out of range 1..=100 percent",
        ),
        (
            Field::MinimumCalls,
            "minimum_calls is out of range for this word width's bucket counts",
        ),
        (
            Field::Window,
            "window is out of range (at least one tick per bucket)",
        ),
    ];
    for (field, text) in expected {
        assert_eq!(message(field), format!("tripword: {text}"), "{field:?}");
    }
}

/// `OnTransition` hands every transition to its closure, once (mutation
/// testing found it covered only by a doctest that prints).
#[test]
fn on_transition_calls_the_closure_with_each_transition() {
    let seen = RefCell::new(Vec::new());
    let clock = ManualClock::new(0);
    let b = Breaker::<&ManualClock, W64, _>::from_parts(
        valid(Config::new().failure_threshold(1).open_for(10)),
        &clock,
        OnTransition(|t: Transition| seen.borrow_mut().push((t.from, t.to, t.counter))),
    );
    b.force_open();
    b.force_close();
    assert_eq!(
        *seen.borrow(),
        [
            (Status::Closed, Status::Open, 1),
            (Status::Open, Status::Closed, 2)
        ]
    );
}

/// `Rejected::at` gives the rejection a word makes at a reading, as the
/// breaker's own admission does: the wait left for a timed word (`Open`,
/// `Probing`), none for the operator's hold (mutation testing found the
/// timed/untimed branch untested).
#[test]
fn rejected_at_is_what_the_breaker_rejects_with() {
    let clock = ManualClock::new(1_000);
    let b = breaker::<W64>(&clock, Config::new().failure_threshold(1).open_for(100));
    b.release(b.acquire().unwrap(), Outcome::Failure);
    clock.advance(30);
    let word: u64 = b.load();
    let at = Rejected::at(b.config(), word, clock.now());
    assert_eq!((at.cause(), at.retry_after()), (Cause::Open, Some(70)));
    assert_eq!(at, b.acquire().unwrap_err());
    b.force_open();
    let word: u64 = b.load();
    let at = Rejected::at(b.config(), word, clock.now());
    assert_eq!((at.cause(), at.retry_after()), (Cause::ForcedOpen, None));
    assert_eq!(at, b.acquire().unwrap_err());
}

/// The wait a `Rejected` carries saturates at `usize::MAX >> 2` ticks (the
/// word's bits less the cause's two), instead of losing its top bits
/// (mutation testing: the bound shifted the wrong way went unnoticed).
#[test]
fn rejected_wait_saturates() {
    let most = (usize::MAX >> 2) as u64;
    let open = W64::LAYOUT.open(0, 0, 1);
    for (wait, kept) in [
        (0, 0),
        (most - 1, most - 1),
        (most, most),
        (most + 1, most),
        (u64::MAX, most),
    ] {
        let r = Rejected::waiting(open, wait);
        assert_eq!(
            (r.cause(), r.retry_after()),
            (Cause::Open, Some(kept)),
            "{wait}"
        );
    }
}

/// `Transition` and `Corruption` print what they say (mutation testing:
/// their `Display` was untested).
#[test]
fn transition_and_corruption_display() {
    let t = Transition {
        from: Status::Closed,
        to: Status::Open,
        counter: 7,
        forced: true,
    };
    assert_eq!(t.to_string(), "closed -> open (forced, counter 7)");
    let t = Transition { forced: false, ..t };
    assert_eq!(t.to_string(), "closed -> open (counter 7)");
    assert_eq!(
        crate::word::Corruption::UnknownTag(6).to_string(),
        "corrupt breaker word: unknown state tag 6"
    );
    assert_eq!(
        crate::word::Corruption::StrayBits.to_string(),
        "corrupt breaker word: bits its state does not use are set"
    );
}

/// `force_open_for` on a timed word keeps the trips so far for the backoff
/// of the open time after it, as a trip would; from `Closed` it counts one
/// (mutation testing: "keep the trips" was untested).
#[test]
fn force_open_for_keeps_the_trips_for_the_backoff() {
    force_open_for_keeps_trips::<W64>();
    force_open_for_keeps_trips::<W32>();
}

fn force_open_for_keeps_trips<W: Word>() {
    let clock = ManualClock::new(0);
    let b = breaker::<W>(
        &clock,
        Config::new()
            .failure_threshold(1)
            .open_for(10)
            .probe_timeout(5)
            .exponential_backoff(1_000)
            .horizon(0),
    );
    b.release(b.acquire().unwrap(), Outcome::Failure); // trip 1: open 10
    clock.advance(10);
    let probe = b.acquire().unwrap();
    b.release(probe, Outcome::Failure); // trip 2: open 20
    assert_eq!(b.acquire().unwrap_err().retry_after(), Some(20));
    b.force_open_for(5); // held 5 ticks; trips stay 2
    clock.advance(5);
    let probe = b.acquire().unwrap();
    b.release(probe, Outcome::Failure); // trip 3: open 40
    assert_eq!(b.acquire().unwrap_err().retry_after(), Some(40));
}

/// `Clock::TICK_PERIOD` of a clock of a given rate: the nearest nanosecond,
/// saturating.
#[test]
fn tick_periods_round_to_the_nearest_nanosecond() {
    use crate::clock::tick_period;
    use core::time::Duration;
    assert_eq!(tick_period(1, 1_000_000), Duration::from_micros(1));
    assert_eq!(tick_period(1, 1_000), Duration::from_millis(1));
    // 32 768 Hz: 30 517.578 125 ns, up to 30 518; 3 GHz: 0.333 ns, down to 0.
    assert_eq!(tick_period(1, 32_768), Duration::from_nanos(30_518));
    assert_eq!(tick_period(1, 3_000_000_000), Duration::ZERO);
    // 3 ticks of 1/7 s: 428 571 428.57 ns, up.
    assert_eq!(tick_period(3, 7), Duration::from_nanos(428_571_429));
    // Ticks of whole seconds, and past what a `u64` of nanoseconds holds.
    assert_eq!(tick_period(5, 1), Duration::from_secs(5));
    assert_eq!(tick_period(u64::MAX, 1), Duration::from_nanos(u64::MAX));
    assert_eq!(
        tick_period(u64::MAX / 1_000_000_000, 1),
        Duration::from_secs(u64::MAX / 1_000_000_000)
    );
}

/// `OnCall` sees every call once, in order: admissions (the probe marked),
/// rejections with their cause, recorded and stale releases.
#[test]
fn on_call_sees_each_call_once() {
    let events = RefCell::new(Vec::new());
    let clock = ManualClock::new(0);
    let b = Breaker::from_parts(
        Config::new()
            .failure_threshold(1)
            .open_for(10)
            .check::<W64>()
            .unwrap(),
        &clock,
        OnCall(|e: CallEvent| events.borrow_mut().push(e)),
    );
    let slow = b.acquire().unwrap();
    b.release(b.acquire().unwrap(), Outcome::Failure);
    b.release(slow, Outcome::Success);
    let rejected = b.acquire().unwrap_err();
    clock.advance(10);
    let probe = b.acquire().unwrap();
    b.release(probe, Outcome::Success);
    assert_eq!(
        *events.borrow(),
        [
            CallEvent::Admitted {
                counter: 0,
                probe: false
            },
            CallEvent::Admitted {
                counter: 0,
                probe: false
            },
            CallEvent::Recorded(Outcome::Failure),
            CallEvent::Stale(Outcome::Success),
            CallEvent::Rejected(rejected),
            CallEvent::Admitted {
                counter: 3,
                probe: true
            },
            CallEvent::Recorded(Outcome::Success),
        ]
    );
}
