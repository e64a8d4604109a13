//! [`harness::through_pure`], [`harness::through_breaker`] and
//! [`harness::status_both`] without locks or allocations: the same
//! observations (verdict, word left, clock reads, transitions reported,
//! corrupt word reported), from a clock and a recorder in `Cell`s, so that
//! the `2^32` words take hours rather than days. `tests/every_word.rs`
//! checks that they answer as the harness does.
//!
//! [`harness::through_pure`]: crate::harness::through_pure
//! [`harness::through_breaker`]: crate::harness::through_breaker
//! [`harness::status_both`]: crate::harness::status_both

use std::cell::Cell;

use tripword::__verification::{breaker_with_word, load_word, ticket};
use tripword::transition::{Event, Verdict, apply, status_at};
use tripword::{Clock, Observer, Release, Status, Transition, ValidConfig, Word};

/// What one event did, as the breaker can tell it (the harness's `Seen`,
/// with the transitions in an array: an event makes at most two).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Seen {
    /// What the caller was told (a release: recorded or stale; a force:
    /// done).
    pub verdict: Verdict,
    /// The word after the event.
    pub word: u64,
    /// How often the clock was read.
    pub reads: u32,
    /// The transitions reported, in order; `count` of them.
    pub transitions: [Option<Transition>; 3],
    /// How many transitions were reported.
    pub count: u32,
    /// The corrupt word reported, if any.
    pub corrupt: Option<u64>,
    /// How many corrupt-word reports were made (at most one is right).
    pub corrupt_reports: u32,
}

impl Seen {
    /// The transitions reported.
    pub fn transitions(&self) -> impl Iterator<Item = Transition> + '_ {
        self.transitions.iter().flatten().copied()
    }
}

/// A clock in a `Cell` that counts its reads.
#[derive(Debug, Default)]
struct LeanClock {
    now: u64,
    reads: Cell<u32>,
}

impl Clock for LeanClock {
    fn now(&self) -> u64 {
        self.reads.set(self.reads.get() + 1);
        self.now
    }
}

/// An observer in `Cell`s.
#[derive(Debug, Default)]
struct LeanRecorder {
    transitions: Cell<[Option<Transition>; 3]>,
    count: Cell<u32>,
    corrupt: Cell<Option<u64>>,
    corrupt_reports: Cell<u32>,
}

impl Observer for LeanRecorder {
    fn on_transition(&self, transition: Transition) {
        let n = self.count.get();
        let mut ts = self.transitions.get();
        if let Some(slot) = ts.get_mut(n as usize) {
            *slot = Some(transition);
        }
        self.transitions.set(ts);
        self.count.set(n + 1);
    }
    fn on_corrupt_word(&self, raw: u64, _counter: u32) {
        self.corrupt.set(Some(raw));
        self.corrupt_reports.set(self.corrupt_reports.get() + 1);
    }
}

/// `event` on `raw` at `now` through the pure layer, told as the breaker
/// would tell it.
pub fn through_pure<W: Word>(valid: &ValidConfig<W>, raw: W::Raw, event: Event, now: u64) -> Seen {
    let mut reads = 0;
    let step = apply(valid, raw, event, || {
        reads += 1;
        now
    });
    let verdict = match (event, step.verdict) {
        (Event::Admit, v) => v,
        (Event::Release { .. } | Event::FailureFor { .. }, Verdict::Recorded) => Verdict::Recorded,
        (Event::Release { .. } | Event::FailureFor { .. }, _) => Verdict::Stale,
        _ => Verdict::Done,
    };
    let mut transitions = [None; 3];
    let mut count = 0;
    for t in step.transitions {
        transitions[count] = Some(t);
        count += 1;
    }
    Seen {
        verdict,
        word: step.word.into(),
        reads,
        transitions,
        count: count as u32,
        corrupt: step.repaired.map(Into::into),
        corrupt_reports: u32::from(step.repaired.is_some()),
    }
}

/// `event` on `raw` at `now` through a `Breaker` loaded with `raw`, a
/// release carrying a forged ticket with the event's counter, a probe's if
/// `probe`.
pub fn through_breaker<W: Word>(
    valid: &ValidConfig<W>,
    raw: W::Raw,
    event: Event,
    now: u64,
    probe: bool,
) -> Seen {
    let clock = LeanClock {
        now,
        ..LeanClock::default()
    };
    let recorder = LeanRecorder::default();
    let b = breaker_with_word(*valid, &clock, &recorder, raw);
    let released = |r: Release| match r {
        Release::Recorded => Verdict::Recorded,
        Release::Stale => Verdict::Stale,
    };
    let verdict = match event {
        Event::Admit => match b.acquire() {
            Ok(t) => Verdict::Admitted {
                counter: t.counter(),
                probe: t.is_probe(),
            },
            Err(r) => Verdict::Rejected(r),
        },
        Event::Release { counter, outcome } => {
            released(b.release(ticket(&b, counter, probe), outcome))
        }
        Event::FailureFor { counter, open_for } => {
            released(b.release_failure_for(ticket(&b, counter, probe), open_for))
        }
        Event::ForceOpen => {
            b.force_open();
            Verdict::Done
        }
        Event::ForceOpenFor { open_for } => {
            b.force_open_for(open_for);
            Verdict::Done
        }
        Event::ForceClose => {
            b.force_close();
            Verdict::Done
        }
    };
    Seen {
        verdict,
        word: load_word(&b).into(),
        reads: clock.reads.get(),
        transitions: recorder.transitions.get(),
        count: recorder.count.get(),
        corrupt: recorder.corrupt.get(),
        corrupt_reports: recorder.corrupt_reports.get(),
    }
}

/// A status read of `raw` at `now` through a loaded `Breaker` and through
/// `transition::status_at`: both answers with their clock read counts, and
/// whether the breaker stored or reported nothing (it must not).
pub fn status_both<W: Word>(
    valid: &ValidConfig<W>,
    raw: W::Raw,
    now: u64,
) -> ((Status, u64), (Status, u64), bool) {
    let clock = LeanClock {
        now,
        ..LeanClock::default()
    };
    let recorder = LeanRecorder::default();
    let b = breaker_with_word(*valid, &clock, &recorder, raw);
    let mut reads = 0;
    let pure = status_at(valid, raw, || {
        reads += 1;
        now
    });
    let got = b.status();
    let quiet =
        load_word(&b) == raw && recorder.count.get() == 0 && recorder.corrupt_reports.get() == 0;
    ((got, u64::from(clock.reads.get())), (pure, reads), quiet)
}
