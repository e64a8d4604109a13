//! The local breaker an instance falls back on while Redis does not answer:
//! the same kit ([`cell::update`] on an atomic word, as
//! [`tripword::Breaker`] runs it), the instance's own clock, its own
//! transitions reported with [`Scope::Local`]. Tickets are counters, as for
//! the shared word, so both kinds fit the same two-word [`Ticket`](crate::Ticket).

use crate::observer::{FleetObserver, Scope};
use crate::time::LocalClock;
use std::cell::Cell as Slot;
use tripword::cell::{self, Cell};
use tripword::transition::{self, Decision, Event, Verdict};
use tripword::word::{Snapshot, State};
use tripword::{Outcome, Rejected, Status, Transition, ValidConfig, W64, Word};

pub(crate) struct Local {
    word: <W64 as Word>::Atomic,
}

impl Local {
    pub(crate) fn new() -> Self {
        Local {
            word: W64::new_cell(0),
        }
    }

    /// The address tickets of this breaker carry.
    pub(crate) fn address(&self) -> usize {
        core::ptr::from_ref(&self.word).addr()
    }

    fn load(&self) -> u64 {
        match Cell::<W64>::load(&self.word) {
            Ok(w) => w,
            Err(never) => match never {},
        }
    }

    /// The word of the local breaker.
    pub(crate) fn word(&self) -> u64 {
        self.load()
    }

    fn run(
        &self,
        config: &ValidConfig<W64>,
        event: Event,
        clock: &dyn LocalClock,
        observer: &dyn FleetObserver,
    ) -> (cell::Applied<W64>, Option<u64>) {
        self.run_traced(config, event, clock, observer, &mut |_| {})
    }

    /// [`run`](Self::run), handing each transition it made to `seen` too.
    fn run_traced(
        &self,
        config: &ValidConfig<W64>,
        event: Event,
        clock: &dyn LocalClock,
        observer: &dyn FleetObserver,
        seen: &mut dyn FnMut(Transition),
    ) -> (cell::Applied<W64>, Option<u64>) {
        let read = Slot::new(None);
        let applied = cell::update(
            &self.word,
            config,
            self.load(),
            event,
            None,
            || {
                let t = clock.micros();
                read.set(Some(t));
                t
            },
            |swap| {
                for t in swap.transitions() {
                    seen(t);
                    observer.on_scoped_transition(t, Scope::Local);
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
    pub(crate) fn acquire(
        &self,
        config: &ValidConfig<W64>,
        clock: &dyn LocalClock,
        observer: &dyn FleetObserver,
    ) -> Result<(u32, bool), Rejected> {
        let (applied, at) = self.run(config, Event::Admit, clock, observer);
        if applied.decision == Decision::Admitted {
            let probe = matches!(
                Snapshot::decode::<W64>(applied.word),
                Ok(Snapshot {
                    state: State::Probing { .. },
                    ..
                })
            );
            return Ok((Snapshot::counter_bits::<W64>(applied.word), probe));
        }
        // The rejection (cause and wait) the word makes at the reading the
        // decision made.
        let at = at.unwrap_or_else(|| clock.micros());
        match transition::apply(config, applied.word, Event::Admit, || at).verdict {
            Verdict::Rejected(why) => Err(why),
            // Not reached: the same word at the same time decides the same.
            _ => Ok((Snapshot::counter_bits::<W64>(applied.word), false)),
        }
    }

    /// A release; whether it counted.
    pub(crate) fn release(
        &self,
        config: &ValidConfig<W64>,
        counter: u32,
        outcome: Outcome,
        clock: &dyn LocalClock,
        observer: &dyn FleetObserver,
    ) -> bool {
        self.release_traced(config, counter, outcome, clock, observer)
            .0
    }

    /// A release, and the status this release moved the breaker to, if
    /// it moved it (`Open` when it tripped it or failed its probe, `Closed`
    /// when its probe succeeded).
    pub(crate) fn release_traced(
        &self,
        config: &ValidConfig<W64>,
        counter: u32,
        outcome: Outcome,
        clock: &dyn LocalClock,
        observer: &dyn FleetObserver,
    ) -> (bool, Option<Status>) {
        let mut moved = None;
        let (applied, _) = self.run_traced(
            config,
            Event::Release { counter, outcome },
            clock,
            observer,
            &mut |t| moved = Some(t.to),
        );
        (applied.decision == Decision::Recorded, moved)
    }

    /// An operator's force (`Event::ForceOpen`, `Event::ForceClose`).
    pub(crate) fn force(
        &self,
        config: &ValidConfig<W64>,
        event: Event,
        clock: &dyn LocalClock,
        observer: &dyn FleetObserver,
    ) {
        let _ = self.run(config, event, clock, observer);
    }

    pub(crate) fn status(&self, config: &ValidConfig<W64>, clock: &dyn LocalClock) -> Status {
        transition::status_at(config, self.load(), || clock.micros())
    }
}
