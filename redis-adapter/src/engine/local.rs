//! The local breaker an instance falls back on while Redis does not answer:
//! the same kit ([`cell::update`] on an atomic word, as
//! [`tripword::Breaker`] runs it), the instance's own clock, its own
//! transitions reported with [`Scope::Local`]. Tickets are counters, as for
//! the shared word, so both kinds fit the same two-word [`Ticket`](crate::Ticket).
//! With a quorum it is also the instance's own judge of its failures while
//! the fleet is closed.

use super::mirror::{CLEAR, HELD, RUN};
use crate::observer::{FleetObserver, Scope};
use crate::time::LocalClock;
use std::cell::Cell as Slot;
use std::sync::Arc;
use tripword::cell::{self, Cell};
use tripword::transition::{self, Decision, Event, Verdict};
use tripword::word::{Snapshot, State};
use tripword::{Health, Outcome, Rejected, Status, Transition, ValidConfig, W64, Word};

/// The local breaker, with the config, the clock and the observer it runs
/// with (the breaker's own).
pub(crate) struct Local {
    word: <W64 as Word>::Atomic,
    config: ValidConfig<W64>,
    clock: Arc<dyn LocalClock>,
    observer: Arc<dyn FleetObserver>,
}

impl Local {
    pub(crate) fn new(
        config: ValidConfig<W64>,
        clock: Arc<dyn LocalClock>,
        observer: Arc<dyn FleetObserver>,
    ) -> Self {
        Local {
            word: W64::new_cell(0),
            config,
            clock,
            observer,
        }
    }

    /// The address tickets of this breaker carry.
    pub(crate) fn address(&self) -> usize {
        core::ptr::from_ref(&self.word).addr()
    }

    /// The word of the local breaker.
    pub(crate) fn word(&self) -> u64 {
        match Cell::<W64>::load(&self.word) {
            Ok(w) => w,
            Err(never) => match never {},
        }
    }

    /// Applies `event` with the kit, handing each transition it made to
    /// `seen` too. Returns what it applied, and the clock's reading the
    /// decision was made at (none when it read no time).
    fn run(
        &self,
        event: Event,
        seen: &mut dyn FnMut(Transition),
    ) -> (cell::Applied<W64>, Option<u64>) {
        let read = Slot::new(None);
        let applied = cell::update(
            &self.word,
            &self.config,
            self.word(),
            event,
            None,
            || {
                let t = self.clock.micros();
                read.set(Some(t));
                t
            },
            |swap| {
                for t in swap.transitions() {
                    seen(t);
                    self.observer.on_scoped_transition(t, Scope::Local);
                }
            },
        );
        match applied {
            Ok(a) => (a, read.get()),
            Err(never) => match never {},
        }
    }

    /// An admission: the counter and whether it is the probe, or the
    /// rejection.
    pub(crate) fn acquire(&self) -> Result<(u32, bool), Rejected> {
        let (applied, at) = self.run(Event::Admit, &mut |_| {});
        if applied.decision == Decision::Admitted {
            // The single probe, or one of a trial's.
            let probe = super::words::probing(applied.word);
            return Ok((Snapshot::counter_bits::<W64>(applied.word), probe));
        }
        // The rejection (cause and wait) the word makes at the reading the
        // decision made.
        let at = at.unwrap_or_else(|| self.clock.micros());
        match transition::apply(&self.config, applied.word, Event::Admit, || at).verdict {
            Verdict::Rejected(why) => Err(why),
            // Not reached: the same word at the same time decides the same.
            _ => Ok((Snapshot::counter_bits::<W64>(applied.word), false)),
        }
    }

    /// A release; whether it counted.
    pub(crate) fn release(&self, counter: u32, outcome: Outcome) -> bool {
        self.release_traced(counter, outcome).0
    }

    /// A release, and the status this release moved the breaker to, if
    /// it moved it (`Open` when it tripped it or failed its probe, `Closed`
    /// when its probe succeeded).
    pub(crate) fn release_traced(&self, counter: u32, outcome: Outcome) -> (bool, Option<Status>) {
        let mut moved = None;
        let (applied, _) = self.run(Event::Release { counter, outcome }, &mut |t| {
            moved = Some(t.to);
        });
        (applied.decision == Decision::Recorded, moved)
    }

    /// An operator's force (`Event::ForceOpen`, `Event::ForceClose`).
    pub(crate) fn force(&self, event: Event) {
        let _ = self.run(event, &mut |_| {});
    }

    pub(crate) fn status(&self) -> Status {
        transition::status_at(&self.config, self.word(), || self.clock.micros())
    }

    /// The state as one value, at one reading of its clock (see
    /// [`tripword::transition::health_at`]).
    pub(crate) fn health(&self) -> Health {
        let (word, now) = (self.word(), self.clock.micros());
        let status = transition::status_at(&self.config, word, || now);
        transition::health_at(&self.config, word, status, Some(now))
    }

    /// Trips the breaker if it is closed: `failure_threshold` failures
    /// recorded through its API (an instance that loses Redis while the
    /// fleet is down stays open for an open time, then probes on its own).
    pub(crate) fn trip(&self) {
        if self.status() != Status::Closed {
            return;
        }
        for _ in 0..self.config.failure_threshold() {
            if let Ok((counter, _)) = self.acquire() {
                self.release(counter, Outcome::Failure);
            }
        }
    }

    /// An outcome that could not reach Redis, recorded while the breaker
    /// is closed (an outcome of a call it did not admit must not settle
    /// its probe: a probe it elects for it is released as ignored).
    /// Whether it was.
    pub(crate) fn record(&self, outcome: Outcome) -> bool {
        if self.status() != Status::Closed {
            return false;
        }
        let Ok((counter, probe)) = self.acquire() else {
            return false;
        };
        let outcome = if probe { Outcome::Ignored } else { outcome };
        self.release(counter, outcome);
        true
    }

    /// The breaker as the mirror's view of this instance's own breaker
    /// sees it, with a quorum (`Mirror::set_own`): clear, in a run of
    /// failures, or holding the instance off.
    pub(crate) fn own(&self) -> u8 {
        match Snapshot::decode::<W64>(self.word()) {
            Ok(Snapshot {
                state: State::Closed { failures: 0 },
                ..
            }) => CLEAR,
            Ok(Snapshot {
                state: State::Closed { .. },
                ..
            }) => RUN,
            _ => HELD,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Mutex;
    use std::sync::atomic::{AtomicU64, Ordering};
    use tripword::{Cause, Config};

    /// A clock the test sets.
    #[derive(Default)]
    struct Manual(AtomicU64);

    impl LocalClock for Manual {
        fn micros(&self) -> u64 {
            self.0.load(Ordering::Relaxed)
        }
    }

    /// Records each transition with its scope.
    #[derive(Default)]
    struct Seen(Mutex<Vec<(Status, Status, Scope)>>);

    impl tripword::Observer for Seen {
        fn on_transition(&self, _: Transition) {}
    }

    impl FleetObserver for Seen {
        fn on_scoped_transition(&self, t: Transition, scope: Scope) {
            self.0.lock().unwrap().push((t.from, t.to, scope));
        }
    }

    fn local() -> (Local, Arc<Manual>, Arc<Seen>) {
        let config = ValidConfig::new(
            Config::new()
                .failure_threshold(3)
                .open_for(1_000)
                .probe_timeout(500),
        );
        let clock = Arc::new(Manual::default());
        let seen = Arc::new(Seen::default());
        let local = Local::new(config, clock.clone(), seen.clone());
        (local, clock, seen)
    }

    #[test]
    fn the_local_breaker_trips_probes_and_closes_on_its_own_clock() {
        let (b, clock, seen) = local();
        assert_eq!(b.status(), Status::Closed);
        assert_eq!(b.own(), CLEAR);
        assert_eq!(b.acquire(), Ok((0, false)));
        assert_eq!(b.release_traced(0, Outcome::Failure), (true, None));
        assert_eq!(b.own(), RUN, "in a run of failures");
        assert_ne!(b.word(), 0);
        assert!(b.release(0, Outcome::Failure));
        assert_eq!(
            b.release_traced(0, Outcome::Failure),
            (true, Some(Status::Open))
        );
        assert_eq!(b.own(), HELD);
        assert_eq!(b.status(), Status::Open);
        assert_eq!(
            *seen.0.lock().unwrap(),
            [(Status::Closed, Status::Open, Scope::Local)]
        );
        // Open: rejected, with the wait on its own clock.
        clock.0.store(400, Ordering::Relaxed);
        let why = b.acquire().unwrap_err();
        assert_eq!(why.cause(), Cause::Open);
        assert_eq!(why.retry_after(), Some(600));
        // A stale ticket (the counter moved on) changes nothing.
        assert!(!b.release(0, Outcome::Success));
        // The open time over: the probe, whose success closes it.
        clock.0.store(1_000, Ordering::Relaxed);
        let (counter, probe) = b.acquire().unwrap();
        assert!(probe);
        assert_eq!(b.acquire().unwrap_err().cause(), Cause::Probing);
        assert_eq!(
            b.release_traced(counter, Outcome::Success),
            (true, Some(Status::Closed))
        );
        assert_eq!(b.status(), Status::Closed);
        assert_eq!(b.own(), CLEAR);
    }

    #[test]
    fn a_trip_and_a_force_hold_the_local_breaker() {
        let (b, _clock, seen) = local();
        b.trip();
        assert_eq!(b.status(), Status::Open);
        let trips = seen.0.lock().unwrap().len();
        b.trip();
        assert_eq!(
            seen.0.lock().unwrap().len(),
            trips,
            "an open breaker is not tripped again"
        );
        let (b, _clock, _seen) = local();
        b.force(Event::ForceOpen);
        assert_eq!(b.acquire().unwrap_err().cause(), Cause::ForcedOpen);
        b.trip();
        assert_eq!(
            b.acquire().unwrap_err().cause(),
            Cause::ForcedOpen,
            "held, not tripped"
        );
        b.force(Event::ForceClose);
        assert_eq!(b.status(), Status::Closed);
        assert!(b.acquire().is_ok());
    }

    #[test]
    fn an_unreported_outcome_counts_only_while_closed() {
        let (b, _clock, _seen) = local();
        assert!(b.record(Outcome::Failure));
        assert!(b.record(Outcome::Failure));
        assert_eq!(b.own(), RUN);
        assert!(b.record(Outcome::Failure), "the third trips it");
        assert_eq!(b.status(), Status::Open);
        assert!(!b.record(Outcome::Failure), "not while open");
        assert!(
            !b.record(Outcome::Success),
            "nor a success: it would settle nothing"
        );
    }

    #[test]
    fn each_local_breaker_has_its_own_address() {
        let (a, _, _) = local();
        let (b, _, _) = local();
        assert_ne!(a.address(), b.address());
        assert_eq!(a.address(), core::ptr::from_ref(&a.word).addr());
        assert_eq!(a.address() % 8, 0, "tickets keep two flags in the low bits");
    }
}
