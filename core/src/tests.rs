//! Breaker-level tests: the seeds' scenarios, guards, observers, identity,
//! clocks and both word widths, through the atomic layer.

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
    fn phases(&self) -> Vec<(Phase, Phase)> {
        self.transitions
            .borrow()
            .iter()
            .map(|t| (t.from, t.to))
            .collect()
    }
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

const fn seed_config() -> Config {
    Config::new()
        .failure_threshold(3)
        .open_for(100)
        .probe_timeout(50)
}

fn breaker<W: Word>(clock: &ManualClock, config: Config) -> Breaker<&ManualClock, W, Log> {
    Breaker::from_parts(config, clock, Log::default())
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
    corrupt_word_is_reported_once_and_fails_open,
    wrapping_clock_through_the_breaker,
    closed_looking_corrupt_words_are_repaired,
    fast_path_lookalikes_are_repaired,
    backward_clock_fails_towards_probing,
    observer_may_call_back_into_the_breaker,
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
    for _ in 0..3 {
        assert_eq!(call(), Err(Rejected));
    }
    assert_eq!(calls.get(), 4, "the service is not called while open");

    clock.advance(100);
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

    use Phase::*;
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
    assert_eq!(b.observer().phases(), [(Phase::Closed, Phase::Open)]);
}

/// Overwrites the breaker's word, as a stray write or retained RAM would.
/// Loops because `compare_exchange_weak` may fail spuriously (Miri makes it
/// fail 80% of the time).
fn poke<W: Word, O>(b: &Breaker<&ManualClock, W, O>, raw: W::Raw) {
    while W::compare_exchange_weak(&b.word, b.load_word(), raw).is_err() {}
}

/// Trips the breaker with exactly `failure_threshold` failures (bounded, so
/// a mutant that never trips fails fast instead of looping).
fn trip<W: Word, O: Observer>(b: &Breaker<&ManualClock, W, O>) {
    for _ in 0..b.config().get_failure_threshold() {
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
    for _ in 0..49 {
        clock.advance(1);
        assert_eq!(b.acquire(), Err(Rejected));
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
        assert_eq!(b.acquire(), Err(Rejected));
        assert_eq!(b.status(), Status::Open);
    }
    clock.set(0);
    assert_eq!(b.acquire(), Err(Rejected));
    // The call admitted before force_open finishes; its result is ignored.
    assert_eq!(b.release(held, Outcome::Success), Release::Stale);
    assert_eq!(b.status(), Status::Open);
    b.force_open();
    assert_eq!(
        b.observer().phases(),
        [(Phase::Closed, Phase::ForcedOpen)],
        "forcing twice reports once"
    );
    b.force_close();
    assert_eq!(b.status(), Status::Closed);
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
    let p = b.permit().unwrap();
    assert_eq!(p.ignore(), Release::Recorded);
    assert_eq!(b.status(), Status::HalfOpen);
    let t = b.permit().unwrap().into_ticket();
    assert_eq!(b.release(t, Outcome::Success), Release::Recorded);
    assert_eq!(b.status(), Status::Closed);
}

fn ticket_from_another_breaker_is_stale<W: Word>() {
    let clock = ManualClock::new(0);
    let a = breaker::<W>(&clock, Config::new().failure_threshold(1));
    let b = breaker::<W>(&clock, Config::new().failure_threshold(1));
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
    assert_eq!(b.load_word(), a.load_word(), "the same word in both");
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
    assert_eq!((pa.counter(), a.load_word()), (pb.counter(), b.load_word()));
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
    assert_eq!(b.load_word(), top);
    let t_top = b.acquire().unwrap();
    let other = W::from_u64(l.closed(5, 0));
    poke(&b, other);
    assert_eq!(b.release(t_top, Outcome::Failure), Release::Stale);
    assert_eq!(b.load_word(), other);
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
    assert_eq!(b.load_word(), top);
    let t = b.acquire().unwrap();
    assert_eq!(b.release(t, Outcome::Failure), Release::Recorded);
    assert_eq!(b.load_word(), W::from_u64(l.closed(l.max_counter(), 1)));
}

/// I9: in Closed, admission and status read no clock and store nothing; a
/// success with no failures counted stores nothing.
fn closed_path_is_quiet<W: Word>() {
    let clock = CountingClock {
        now: Cell::new(5),
        reads: Cell::new(0),
    };
    let b: Breaker<&CountingClock, W> = Breaker::from_parts(seed_config(), &clock, ());
    let before = b.load_word();
    for _ in 0..100 {
        let t = b.acquire().unwrap();
        assert_eq!(b.status(), Status::Closed);
        assert_eq!(b.release(t, Outcome::Success), Release::Recorded);
        assert_eq!(b.load_word(), before);
    }
    assert_eq!(clock.reads.get(), 0);
    // A failure below the threshold writes but reads no clock; the trip reads
    // it (once per compare-and-swap attempt: once, unless the CAS fails
    // spuriously, as Miri makes it do).
    b.release(b.acquire().unwrap(), Outcome::Failure);
    assert_eq!(clock.reads.get(), 0);
    assert_ne!(b.load_word(), before);
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
    let b: Breaker<&CountingClock, W> = Breaker::from_parts(seed_config(), &clock, ());
    for _ in 0..3 {
        b.release(b.acquire().unwrap(), Outcome::Failure);
    }
    let open = b.load_word();
    let reads = clock.reads.get();
    clock.now.set(99);
    assert_eq!(b.acquire(), Err(Rejected));
    assert_eq!(clock.reads.get(), reads + 1, "open rejection: one read");
    assert_eq!(b.load_word(), open, "open rejection: no store");
    clock.now.set(100);
    let probe = b.acquire().unwrap();
    assert!(probe.is_probe());
    let reads = clock.reads.get();
    assert!(reads >= 2, "the election read the clock");
    let probing = b.load_word();
    clock.now.set(149);
    assert_eq!(b.acquire(), Err(Rejected));
    assert_eq!(clock.reads.get(), reads + 1, "probing rejection: one read");
    assert_eq!(b.load_word(), probing);
    b.force_open();
    let forced = b.load_word();
    let reads = clock.reads.get();
    assert_eq!(b.acquire(), Err(Rejected));
    assert_eq!(b.release(probe, Outcome::Success), Release::Stale);
    assert_eq!(clock.reads.get(), reads, "forced open: no read");
    assert_eq!(b.load_word(), forced);
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
        Breaker::from_parts(seed_config(), &clock, Log::default());
    // Corrupt the word in place, as a stray write or retained RAM would.
    let garbage = W::from_u64(0b111 | (12 << 3));
    poke(&b, garbage);
    assert!(b.snapshot().is_err());
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
    let all_ones_tag = W::from_u64(0b111);
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
    assert_eq!(b.load_word(), W::from_u64(l.closed(1, 0)));
}

fn wrapping_clock_through_the_breaker<W: Word>() {
    let clock = ManualClock::new(u64::MAX - 30);
    let b = breaker::<W>(&clock, seed_config());
    trip(&b);
    clock.advance(99); // wraps past u64::MAX
    assert!(clock.now() < 100);
    assert_eq!(b.acquire(), Err(Rejected));
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
}

/// I7: reports run after the CAS with no lock held, so an observer may call
/// back into the breaker that reported (here it reads the status and forces
/// the freshly tripped breaker open, which reports again, re-entrantly).
fn observer_may_call_back_into_the_breaker<W: Word>() {
    type Reentrant<'a, W> = Breaker<&'a ManualClock, W, &'a CallsBack<'a, W>>;
    struct CallsBack<'a, W: Word> {
        breaker: std::cell::OnceCell<&'a Reentrant<'a, W>>,
        seen: RefCell<Vec<(Phase, Status)>>,
    }
    impl<W: Word> Observer for CallsBack<'_, W> {
        fn on_transition(&self, t: Transition) {
            let b = self.breaker.get().expect("set before use");
            self.seen.borrow_mut().push((t.to, b.status()));
            if t.to == Phase::Open {
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
        Breaker::from_parts(Config::new().failure_threshold(1), &clock, &observer);
    assert!(observer.breaker.set(&b).is_ok());
    b.release(b.acquire().unwrap(), Outcome::Failure);
    assert_eq!(
        *observer.seen.borrow(),
        [
            (Phase::Open, Status::Open),
            (Phase::ForcedOpen, Status::Open)
        ]
    );
    assert_eq!(b.snapshot().unwrap().state, State::ForcedOpen);
}

#[test]
fn static_breakers_of_both_widths() {
    static CLOCK: ManualClock = ManualClock::new(0);
    static B64: Breaker<&ManualClock> = Breaker::new(seed_config(), &CLOCK);
    static B32: Breaker32<&ManualClock> = Breaker::from_parts(seed_config(), &CLOCK, ());
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
    static CONFIG: Config = seed_config();
    static B: Breaker<Ticks, W32, (), &Config> = Breaker::from_static(&CONFIG, Ticks, ());
    let ptr = core::mem::size_of::<usize>();
    assert_eq!(
        core::mem::size_of::<Breaker<Ticks, W32, (), &Config>>(),
        (4usize).next_multiple_of(ptr) + ptr
    );
    assert_eq!(
        core::mem::size_of::<Breaker<Ticks, W64, (), &Config>>(),
        8 + ptr.max(8)
    );
    for _ in 0..3 {
        B.permit().unwrap().failure();
    }
    assert_eq!(B.status(), Status::Open);
    assert_eq!(B.config(), &CONFIG);
    static BAD: Config = Config::new().open_for(1 << 20);
    let err = Breaker::<Ticks, W32, (), &Config>::try_from_static(&BAD, Ticks, ()).unwrap_err();
    assert_eq!(err.field, Field::OpenFor);
}

#[test]
fn const_config_breaker_costs_the_word_and_matches_an_inline_config() {
    struct Seed;
    impl ConstConfig for Seed {
        const CONFIG: Config = seed_config().exponential_backoff(400);
    }
    static CLOCK: ManualClock = ManualClock::new(0);
    static K: Breaker<&ManualClock, W32, (), config::Const<Seed>> = Breaker::from_const(&CLOCK, ());
    static I: Breaker<&ManualClock, W32> =
        Breaker::from_parts(seed_config().exponential_backoff(400), &CLOCK, ());
    // RAM: the word and the clock reference; no config, no pointer to one.
    assert_eq!(
        core::mem::size_of::<Breaker<ManualClock, W32, (), config::Const<Seed>>>(),
        core::mem::size_of::<Breaker<ManualClock, W32, (), ()>>()
    );
    assert_eq!(K.config(), I.config());
    assert_eq!(
        std::format!("{:?}", config::Const::<Seed>::default()),
        "Const"
    );
    // The same operations leave the same words, through trips, backoff,
    // probes and forces.
    fn run<P: core::borrow::Borrow<Config>>(b: &Breaker<&ManualClock, W32, (), P>, op: u8) -> bool {
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
        assert_eq!(K.load_word(), I.load_word(), "op {op} at {at}");
        assert_eq!(K.status(), I.status());
    }
}

#[test]
fn runtime_config_errors_name_field_and_range() {
    let clock = ManualClock::new(0);
    let err = Breaker::try_new(Config::new().failure_threshold(0), &clock).unwrap_err();
    assert_eq!(err.field, Field::FailureThreshold);
    assert_eq!(
        std::format!("{err}"),
        "failure_threshold = 0 is out of range 1..=65535"
    );
    let err =
        Breaker32::try_from_parts(Config::new().probe_timeout(1 << 20), &clock, ()).unwrap_err();
    assert_eq!(
        std::format!("{err}"),
        "probe_timeout = 1048576 is out of range 1..=16384 ticks"
    );
    assert!(Breaker::try_new(Config::new(), &clock).is_ok());
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
                    if let Ok(t) = b.acquire() {
                        assert!(t.is_probe());
                        admitted.fetch_add(1, Ordering::Relaxed);
                        drop(t); // never released
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
    let b = Breaker::new(seed_config(), &clock);
    let s = std::format!("{b:?}");
    assert!(s.contains("Closed"), "{s}");
    let p = b.permit().unwrap();
    assert!(std::format!("{p:?}").contains("counter: 0"));
    p.success();
    assert_eq!(std::format!("{}", Status::HalfOpen), "half-open");
    assert_eq!(
        std::format!("{Rejected}"),
        "circuit open: call not admitted"
    );
}
