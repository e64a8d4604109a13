//! The two drivers of the sans-IO compare-and-swap loop agree: `cell::update`
//! on a [`Cell`] and `cell::update_async` on an [`AsyncCell`], run on the
//! same script, give the same [`Applied`] (word, decision, verdict), report
//! the same swaps and transitions, leave the same word and read the clock
//! as often, at every step; and both agree with the pure layer
//! (`transition::apply`, the reference) driven through the same exchanges.
//!
//! The script: random configs (`W64` and `W32`), start words (valid states,
//! the zero word and arbitrary bit patterns, corrupt ones included), events
//! (admit, release with any outcome, hinted failure, force open, force open
//! for, force close), clock readings, and a contention schedule that decides
//! each exchange: made as asked, lost to another writer that applied an
//! event or stored a word first, failed spuriously with the word unchanged,
//! or failed with a cell error (before or after the write). The async cell
//! answers every load and exchange only after one `Poll::Pending`, so the
//! async driver is really suspended at each await; it is polled by a
//! hand-written loop with a no-op waker.
//!
//! Invariants checked: I1 and I3 (the only write is the exchange: a lost
//! attempt retries from the word the cell holds, so no election or trip is
//! made twice), I7 (a swap is reported once, after the exchange that won,
//! and never for an attempt that lost or a cell error), I8 (a corrupt word
//! is repaired and said so), I9 (a decision that changes nothing writes
//! nothing and a closed admission reads no clock).
//!
//! Also here: the value [`Update`] driven by hand against
//! `transition::apply` on an uncontended word, the cell-error path of both
//! drivers, and 32 tokio tasks racing `update_async` on one word behind a
//! `tokio::sync::Mutex`, round after round: one trip per round, exactly one
//! probe elected per round, every transition reported exactly once (I1, I3,
//! I7, I10).

use std::cell::{Cell as StdCell, RefCell};
use std::collections::VecDeque;
use std::future::Future;
use std::pin::{Pin, pin};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::task::{Context, Poll, Waker};

use proptest::prelude::*;
use tripword::cell::{
    self, Applied, AsyncCell, CasError, Cell, Next, Resolved, Swap, Update, update_async,
};
use tripword::transition::{self, Decision, Event, Verdict};
use tripword::word::{Snapshot, State};
use tripword::{Cause, Config, Jitter, Outcome, Status, Transition, ValidConfig, W32, W64, Word};

// ---------------------------------------------------------------------------
// The script.

/// The counter a release carries, resolved against the word it is applied
/// to: the word's own (a current ticket), the one before (stale), or any.
#[derive(Clone, Copy, Debug)]
enum Ticket {
    Current,
    Previous,
    Any(u32),
}

/// An event of the script, its ticket resolved when it is applied.
#[derive(Clone, Copy, Debug)]
enum Ev {
    Admit,
    Release(Ticket, Outcome),
    FailureFor(Ticket, u64),
    ForceOpen,
    ForceOpenFor(u64),
    ForceClose,
}

fn event<W: Word>(ev: Ev, word: W::Raw) -> Event {
    let counter = |t: Ticket| match t {
        Ticket::Current => Snapshot::counter_bits::<W>(word),
        Ticket::Previous => Snapshot::counter_bits::<W>(word).wrapping_sub(1),
        Ticket::Any(c) => c,
    };
    match ev {
        Ev::Admit => Event::Admit,
        Ev::Release(t, outcome) => Event::Release {
            counter: counter(t),
            outcome,
        },
        Ev::FailureFor(t, open_for) => Event::FailureFor {
            counter: counter(t),
            open_for,
        },
        Ev::ForceOpen => Event::ForceOpen,
        Ev::ForceOpenFor(open_for) => Event::ForceOpenFor { open_for },
        Ev::ForceClose => Event::ForceClose,
    }
}

/// How the cell answers the next exchange.
#[derive(Clone, Copy, Debug)]
enum Contend {
    /// A real compare-and-exchange, nobody in the way.
    Pass,
    /// Fails spuriously: `Changed` with the word unchanged.
    Spurious,
    /// Another writer applies this event first, at the reading with this
    /// index (through the pure layer); then the real compare-and-exchange.
    Interfere(Ev, usize),
    /// Another writer stores this word first (any bits); then the real
    /// compare-and-exchange.
    Overwrite(u64),
    /// The cell fails with this code, after the write when `applied`.
    Fail { applied: bool, code: u8 },
}

/// A cell error: the scripted code.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Lost(u8);

/// The word and the contention schedule, shared by the sync and the async
/// cell (each run has its own).
struct Scripted<'a, W: Word> {
    config: &'a ValidConfig<W>,
    readings: &'a [u64],
    word: StdCell<W::Raw>,
    script: RefCell<VecDeque<Contend>>,
    exchanges: StdCell<usize>,
}

impl<'a, W: Word> Scripted<'a, W> {
    fn new(
        config: &'a ValidConfig<W>,
        readings: &'a [u64],
        start: W::Raw,
        script: &[Contend],
    ) -> Self {
        Scripted {
            config,
            readings,
            word: StdCell::new(start),
            script: RefCell::new(script.iter().copied().collect()),
            exchanges: StdCell::new(0),
        }
    }

    fn load(&self) -> W::Raw {
        self.word.get()
    }

    fn exchange(&self, current: W::Raw, new: W::Raw) -> Result<(), CasError<W::Raw, Lost>> {
        self.exchanges.set(self.exchanges.get() + 1);
        let next = self
            .script
            .borrow_mut()
            .pop_front()
            .unwrap_or(Contend::Pass);
        match next {
            Contend::Pass => {}
            Contend::Spurious => return Err(CasError::Changed(self.word.get())),
            Contend::Interfere(ev, at) => {
                let w = self.word.get();
                let t = self.readings[at % self.readings.len()];
                let step = transition::apply(self.config, w, event::<W>(ev, w), || t);
                self.word.set(step.word);
            }
            Contend::Overwrite(raw) => self.word.set(W::from_u64(raw)),
            Contend::Fail { applied, code } => {
                if applied && self.word.get() == current {
                    self.word.set(new);
                }
                return Err(CasError::Cell(Lost(code)));
            }
        }
        if self.word.get() != current {
            return Err(CasError::Changed(self.word.get()));
        }
        self.word.set(new);
        Ok(())
    }
}

/// The scripted word as a [`Cell`].
struct SyncCell<'a, W: Word>(Scripted<'a, W>);

impl<W: Word> Cell<W> for SyncCell<'_, W> {
    type Error = Lost;
    fn load(&self) -> Result<W::Raw, Lost> {
        Ok(self.0.load())
    }
    fn compare_exchange(&self, current: W::Raw, new: W::Raw) -> Result<(), CasError<W::Raw, Lost>> {
        self.0.exchange(current, new)
    }
}

/// A future that is pending once (waking its task) and then ready: an
/// answer that takes a round trip.
struct YieldOnce<'a> {
    yielded: bool,
    pendings: &'a StdCell<usize>,
}

impl Future for YieldOnce<'_> {
    type Output = ();
    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        if self.yielded {
            return Poll::Ready(());
        }
        self.yielded = true;
        self.pendings.set(self.pendings.get() + 1);
        cx.waker().wake_by_ref();
        Poll::Pending
    }
}

/// The scripted word as an [`AsyncCell`]: each load and exchange is pending
/// once before it is made. `in_flight` is set while an exchange is
/// awaited, so the clock can check it is never read then.
struct SuspendingCell<'a, W: Word> {
    inner: Scripted<'a, W>,
    pendings: StdCell<usize>,
    loads: StdCell<usize>,
    in_flight: StdCell<bool>,
}

impl<W: Word> AsyncCell<W> for SuspendingCell<'_, W> {
    type Error = Lost;
    async fn load(&self) -> Result<W::Raw, Lost> {
        YieldOnce {
            yielded: false,
            pendings: &self.pendings,
        }
        .await;
        self.loads.set(self.loads.get() + 1);
        Ok(self.inner.load())
    }
    async fn compare_exchange(
        &self,
        current: W::Raw,
        new: W::Raw,
    ) -> Result<(), CasError<W::Raw, Lost>> {
        self.in_flight.set(true);
        YieldOnce {
            yielded: false,
            pendings: &self.pendings,
        }
        .await;
        let answer = self.inner.exchange(current, new);
        self.in_flight.set(false);
        answer
    }
}

/// Polls `f` to completion with a no-op waker (every pending future here
/// has already woken itself): the smallest executor.
fn block_on<F: Future>(f: F) -> F::Output {
    let mut f = pin!(f);
    let mut cx = Context::from_waker(Waker::noop());
    for _ in 0..1_000_000 {
        if let Poll::Ready(out) = f.as_mut().poll(&mut cx) {
            return out;
        }
    }
    panic!("the future never completed");
}

/// The scripted clock: each read returns the next reading, cycling.
struct Clock<'a> {
    readings: &'a [u64],
    reads: StdCell<usize>,
}

impl Clock<'_> {
    fn now(&self) -> u64 {
        let i = self.reads.get();
        self.reads.set(i + 1);
        self.readings[i % self.readings.len()]
    }
}

/// A reported swap, with what it derives (words widened to `u64`).
#[derive(Clone, Debug, PartialEq, Eq)]
struct Reported {
    replaced: u64,
    stored: u64,
    transitions: Vec<Transition>,
    repaired: Option<u64>,
}

impl Reported {
    fn of<W: Word>(swap: Swap<W>) -> Self {
        Reported {
            replaced: swap.replaced().into(),
            stored: swap.stored().into(),
            transitions: swap.transitions().iter().collect(),
            repaired: swap.repaired().map(Into::into),
        }
    }
}

/// An [`Applied`] told in full: its word, decision and verdict (the
/// rejection's wait included).
fn told<W: Word>(a: &Applied<W>) -> (u64, Decision, Verdict) {
    (a.word.into(), a.decision, a.verdict())
}

/// What one event of the script did, as a driver tells it (words widened
/// to `u64`).
#[derive(Clone, Debug, PartialEq, Eq)]
struct StepOut {
    /// The event, resolved against the word loaded before it.
    event: Event,
    /// The word and verdict, or the cell error.
    result: Result<(u64, Verdict), Lost>,
    /// The whole [`Applied`] (`None` in the reference run, which has none).
    applied: Option<Result<(u64, Decision, Verdict), Lost>>,
    /// Every `on_swap` call, in order.
    swaps: Vec<Reported>,
    /// The cell's word after the event.
    word_after: u64,
    /// Clock reads so far.
    reads: usize,
    /// Exchanges asked of the cell so far.
    exchanges: usize,
}

/// The script of one case.
#[derive(Clone, Debug)]
struct Script {
    start: u64,
    events: Vec<(Ev, Option<usize>)>,
    readings: Vec<u64>,
    contention: Vec<Contend>,
}

impl Script {
    fn seen_at(&self, at: Option<usize>) -> Option<u64> {
        at.map(|i| self.readings[i % self.readings.len()])
    }
}

fn run_sync<W: Word>(config: &ValidConfig<W>, s: &Script) -> Vec<StepOut> {
    let cell = SyncCell(Scripted::new(
        config,
        &s.readings,
        W::from_u64(s.start),
        &s.contention,
    ));
    let clock = Clock {
        readings: &s.readings,
        reads: StdCell::new(0),
    };
    s.events
        .iter()
        .map(|&(ev, at)| {
            let seen = Cell::load(&cell).expect("loads do not fail");
            let event = event::<W>(ev, seen);
            let mut swaps = Vec::new();
            let applied = cell::update(
                &cell,
                config,
                seen,
                event,
                s.seen_at(at),
                || clock.now(),
                |swap| swaps.push(Reported::of(swap)),
            );
            StepOut {
                event,
                result: applied
                    .as_ref()
                    .map(|a| (a.word.into(), a.verdict()))
                    .map_err(|e| *e),
                applied: Some(applied.as_ref().map(told).map_err(|e| *e)),
                swaps,
                word_after: cell.0.load().into(),
                reads: clock.reads.get(),
                exchanges: cell.0.exchanges.get(),
            }
        })
        .collect()
}

fn run_async<W: Word>(config: &ValidConfig<W>, s: &Script) -> Vec<StepOut> {
    let cell = SuspendingCell {
        inner: Scripted::new(config, &s.readings, W::from_u64(s.start), &s.contention),
        pendings: StdCell::new(0),
        loads: StdCell::new(0),
        in_flight: StdCell::new(false),
    };
    let clock = Clock {
        readings: &s.readings,
        reads: StdCell::new(0),
    };
    let out = s
        .events
        .iter()
        .map(|&(ev, at)| {
            let mut swaps = Vec::new();
            let (event, applied) = block_on(async {
                let seen = AsyncCell::load(&cell).await.expect("loads do not fail");
                let event = event::<W>(ev, seen);
                let applied = update_async(
                    &cell,
                    config,
                    seen,
                    event,
                    s.seen_at(at),
                    || {
                        assert!(
                            !cell.in_flight.get(),
                            "the clock is read while an exchange is in flight"
                        );
                        clock.now()
                    },
                    |swap| {
                        assert!(!cell.in_flight.get(), "a swap reported before its answer");
                        swaps.push(Reported::of(swap))
                    },
                )
                .await;
                (event, applied)
            });
            StepOut {
                event,
                result: applied
                    .as_ref()
                    .map(|a| (a.word.into(), a.verdict()))
                    .map_err(|e| *e),
                applied: Some(applied.as_ref().map(told).map_err(|e| *e)),
                swaps,
                word_after: cell.inner.load().into(),
                reads: clock.reads.get(),
                exchanges: cell.inner.exchanges.get(),
            }
        })
        .collect();
    assert_eq!(
        cell.pendings.get(),
        cell.loads.get() + cell.inner.exchanges.get(),
        "the async driver was suspended once at every load and exchange"
    );
    out
}

/// The reference: the same loop written with the pure layer
/// (`transition::apply`), on the same scripted cell.
fn run_reference<W: Word>(config: &ValidConfig<W>, s: &Script) -> Vec<StepOut> {
    let cell = SyncCell(Scripted::new(
        config,
        &s.readings,
        W::from_u64(s.start),
        &s.contention,
    ));
    let clock = Clock {
        readings: &s.readings,
        reads: StdCell::new(0),
    };
    s.events
        .iter()
        .map(|&(ev, at)| {
            let seen = cell.0.load();
            let event = event::<W>(ev, seen);
            let mut current = seen;
            // A reading given with the load serves the first attempt only.
            let mut first = s.seen_at(at);
            let mut swaps = Vec::new();
            let result = loop {
                let given = first.take();
                let step = transition::apply(config, current, event, || {
                    given.unwrap_or_else(|| clock.now())
                });
                if step.word == current {
                    break Ok((step.word.into(), step.verdict));
                }
                match cell.0.exchange(current, step.word) {
                    Ok(()) => {
                        swaps.push(Reported {
                            replaced: current.into(),
                            stored: step.word.into(),
                            transitions: step.transitions.iter().collect(),
                            repaired: step.repaired.map(Into::into),
                        });
                        break Ok((step.word.into(), step.verdict));
                    }
                    Err(CasError::Changed(now_held)) => current = now_held,
                    Err(CasError::Cell(e)) => break Err(e),
                }
            };
            StepOut {
                event,
                result,
                applied: None,
                swaps,
                word_after: cell.0.load().into(),
                reads: clock.reads.get(),
                exchanges: cell.0.exchanges.get(),
            }
        })
        .collect()
}

/// Whether `word` is corrupt under `config` (spec I8): it does not decode,
/// or it counts as many failures as the threshold or more.
fn corrupt<W: Word>(config: &ValidConfig<W>, word: u64) -> bool {
    match Snapshot::decode::<W>(W::from_u64(word)) {
        Err(_) => true,
        Ok(s) => {
            matches!(s.state, State::Closed { failures } if failures >= config.failure_threshold())
        }
    }
}

/// Runs the script through the three drivers and compares them step by
/// step; checks each step's own rules on the sync run.
fn agree<W: Word>(config: Config, s: &Script) {
    let valid = config.check::<W>().expect("small configs are valid");
    let sync = run_sync::<W>(&valid, s);
    let asynch = run_async::<W>(&valid, s);
    let reference = run_reference::<W>(&valid, s);
    assert_eq!(sync.len(), s.events.len());
    for (i, ((a, b), r)) in sync.iter().zip(&asynch).zip(&reference).enumerate() {
        let what = format!("step {i} ({:?}), config {config:?}", s.events[i]);
        assert_eq!(a, b, "{what}: sync and async drivers differ");
        let without = StepOut {
            applied: None,
            ..(*a).clone()
        };
        assert_eq!(
            &without, r,
            "{what}: the driver differs from the pure layer"
        );
        // The step's own rules.
        assert!(
            a.swaps.len() <= 1,
            "{what}: I7: at most one report per event"
        );
        match &a.result {
            Err(_) => assert!(
                a.swaps.is_empty(),
                "{what}: I7: a cell error reports nothing"
            ),
            Ok((word, _)) => {
                assert_eq!(
                    a.word_after, *word,
                    "{what}: the cell holds the word applied"
                );
                if let Some(swap) = a.swaps.first() {
                    assert_eq!(
                        swap.stored, *word,
                        "{what}: the swap stored the word applied"
                    );
                    assert_ne!(
                        swap.replaced, swap.stored,
                        "{what}: I9: a swap changes the word"
                    );
                    assert_eq!(
                        swap.repaired.is_some(),
                        corrupt::<W>(&valid, swap.replaced),
                        "{what}: I8: a corrupt word replaced is said so"
                    );
                }
                assert!(
                    !corrupt::<W>(&valid, *word),
                    "{what}: I8: the word applied is valid"
                );
            }
        }
        // I9: an admission into a valid `Closed` word reads no clock and
        // asks for no exchange.
        let (seen, reads, exchanges) = match i {
            0 => (W::from_u64(s.start).into(), 0, 0),
            _ => (
                sync[i - 1].word_after,
                sync[i - 1].reads,
                sync[i - 1].exchanges,
            ),
        };
        let closed = matches!(
            Snapshot::decode::<W>(W::from_u64(seen)),
            Ok(Snapshot {
                state: State::Closed { .. },
                ..
            })
        );
        if a.event == Event::Admit && closed && !corrupt::<W>(&valid, seen) {
            assert_eq!(
                (a.reads, a.exchanges),
                (reads, exchanges),
                "{what}: I9: a closed admission reads no clock and writes nothing"
            );
        }
    }
}

// ---------------------------------------------------------------------------
// Strategies.

fn outcome() -> impl Strategy<Value = Outcome> {
    prop_oneof![
        Just(Outcome::Success),
        Just(Outcome::Failure),
        Just(Outcome::Ignored)
    ]
}

fn ticket() -> impl Strategy<Value = Ticket> {
    prop_oneof![
        4 => Just(Ticket::Current),
        1 => Just(Ticket::Previous),
        1 => prop_oneof![0..8u32, any::<u32>()].prop_map(Ticket::Any),
    ]
}

fn hint() -> impl Strategy<Value = u64> {
    prop_oneof![0..4u64, 0..300u64, Just(u64::MAX), any::<u64>()]
}

fn ev() -> impl Strategy<Value = Ev> {
    prop_oneof![
        5 => Just(Ev::Admit),
        5 => (ticket(), outcome()).prop_map(|(t, o)| Ev::Release(t, o)),
        1 => (ticket(), hint()).prop_map(|(t, d)| Ev::FailureFor(t, d)),
        1 => Just(Ev::ForceOpen),
        1 => hint().prop_map(Ev::ForceOpenFor),
        1 => Just(Ev::ForceClose),
    ]
}

/// A valid word of any state (the fields reduced into range by `encode`),
/// failures possibly past the config's threshold (then it is corrupt).
fn state_word<W: Word>() -> impl Strategy<Value = u64> {
    (0..6u8, any::<u32>(), 0..5u32, any::<u64>(), 0..8u32).prop_map(
        |(kind, counter, failures, time, trips)| {
            let state = match kind {
                0 => State::Closed { failures },
                1 => State::Open { since: time, trips },
                2 => State::HalfOpen { trips },
                3 => State::Probing { since: time, trips },
                4 => State::ForcedOpen,
                _ => State::OpenUntil { until: time, trips },
            };
            Snapshot { state, counter }.encode::<W>().into()
        },
    )
}

/// Any word: zero, a state, or any bits.
fn word<W: Word>() -> impl Strategy<Value = u64> {
    prop_oneof![Just(0u64), state_word::<W>(), any::<u64>()]
}

fn contend<W: Word>() -> impl Strategy<Value = Contend> {
    prop_oneof![
        3 => Just(Contend::Pass),
        2 => Just(Contend::Spurious),
        3 => (ev(), any::<usize>()).prop_map(|(e, at)| Contend::Interfere(e, at)),
        1 => word::<W>().prop_map(Contend::Overwrite),
        1 => (any::<bool>(), any::<u8>()).prop_map(|(applied, code)| Contend::Fail { applied, code }),
    ]
}

/// Clock readings: from a start anywhere (near the wrap too), mostly small
/// steps forward, now and then a jump or a step back.
fn readings() -> impl Strategy<Value = Vec<u64>> {
    let start = prop_oneof![Just(0u64), Just(u64::MAX - 200), any::<u64>()];
    let delta = prop_oneof![
        6 => 0..40u64,
        1 => Just(1u64 << 15),
        1 => Just(1u64 << 22),
        1 => (1..5u64).prop_map(|d| d.wrapping_neg()),
        1 => any::<u64>(),
    ];
    (start, prop::collection::vec(delta, 1..24)).prop_map(|(start, deltas)| {
        deltas
            .iter()
            .scan(start, |t, d| {
                *t = t.wrapping_add(*d);
                Some(*t)
            })
            .collect()
    })
}

fn script<W: Word>() -> impl Strategy<Value = Script> {
    (
        word::<W>(),
        prop::collection::vec((ev(), prop::option::weighted(0.2, any::<usize>())), 1..40),
        readings(),
        prop::collection::vec(contend::<W>(), 0..60),
    )
        .prop_map(|(start, events, readings, contention)| Script {
            start,
            events,
            readings,
            contention,
        })
}

fn config() -> impl Strategy<Value = Config> {
    (
        1..5u32,
        1..60u64,
        1..60u64,
        prop::option::of(1..8u64),
        prop_oneof![Just(Some(0u64)), Just(None), Just(Some(2_000u64))],
        prop_oneof![
            Just(Jitter::None),
            any::<u32>().prop_map(|seed| Jitter::Equal { seed }),
            any::<u32>().prop_map(|seed| Jitter::Full { seed }),
        ],
    )
        .prop_map(|(n, open, probe, backoff, horizon, jitter)| {
            let mut c = Config::new()
                .failure_threshold(n)
                .open_for(open)
                .probe_timeout(probe)
                .jitter(jitter);
            if let Some(k) = backoff {
                c = c.exponential_backoff(open << k);
            }
            if let Some(h) = horizon {
                c = c.horizon(h);
            }
            c
        })
}

// ---------------------------------------------------------------------------
// `Update` by hand against the pure layer.

/// One event on `word` through [`Update`] driven by hand on an uncontended
/// word, against `transition::apply`: the same word, verdict, transitions,
/// repair and clock reads; an exchange asked exactly when the word changes
/// (I9). Then the same update losing its exchange to `other`: it retries
/// from `other`, reading the clock afresh, as `apply` on `other` does.
fn by_hand<W: Word>(config: Config, word: u64, ev: Ev, now: u64, seen_at: Option<u64>, other: u64) {
    let valid = config.check::<W>().expect("small configs are valid");
    let word = W::from_u64(word);
    let event = event::<W>(ev, word);
    let what = format!("{event:?} on {word:?} at {now} (given {seen_at:?}), config {config:?}");
    let mut pure_reads = 0;
    let pure = transition::apply(&valid, word, event, || {
        pure_reads += 1;
        seen_at.unwrap_or(now)
    });
    let mut reads = 0;
    let next = Update::new(&valid, word, event, seen_at).step(|| {
        reads += 1;
        now
    });
    assert_eq!(
        reads,
        if seen_at.is_some() { 0 } else { pure_reads },
        "{what}: clock reads"
    );
    let exchange = match next {
        Next::Done(applied) => {
            assert_eq!(
                pure.word, word,
                "{what}: I9: done only when nothing changes"
            );
            assert_eq!(applied.word, word, "{what}");
            assert_eq!(applied.verdict(), pure.verdict, "{what}");
            assert!(
                pure.transitions.is_empty() && pure.repaired.is_none(),
                "{what}"
            );
            return;
        }
        Next::Exchange(x) => x,
    };
    assert_ne!(pure.word, word, "{what}: I9: an exchange only for a change");
    assert_eq!(exchange.current(), word, "{what}: expects the word seen");
    assert_eq!(exchange.desired(), pure.word, "{what}: stores apply's word");
    // Won.
    let x2 = Update::new(&valid, word, event, seen_at).step(|| now);
    let Next::Exchange(x2) = x2 else {
        unreachable!("the same step")
    };
    let Ok(Resolved::Won { applied, swap }) = x2.resolve::<Lost>(Ok(())) else {
        panic!("{what}: an exchange that succeeded wins")
    };
    assert_eq!(applied.word, pure.word, "{what}");
    assert_eq!(applied.verdict(), pure.verdict, "{what}");
    assert_eq!(
        (swap.replaced(), swap.stored()),
        (word, pure.word),
        "{what}"
    );
    assert_eq!(swap.transitions(), pure.transitions, "{what}: I7");
    assert_eq!(swap.repaired(), pure.repaired, "{what}: I8");
    // A cell error ends it.
    let x3 = Update::new(&valid, word, event, seen_at).step(|| now);
    let Next::Exchange(x3) = x3 else {
        unreachable!("the same step")
    };
    assert_eq!(
        x3.resolve(Err(CasError::Cell(Lost(7)))).err(),
        Some(Lost(7)),
        "{what}"
    );
    // Lost to another writer: retry from the word it holds.
    let other = W::from_u64(other);
    let Ok(Resolved::Retry(again)) = exchange.resolve::<Lost>(Err(CasError::Changed(other))) else {
        panic!("{what}: a lost exchange retries")
    };
    assert_eq!(again.current(), other, "{what}: retries from the word held");
    let mut retry_pure_reads = 0;
    let retry_pure = transition::apply(&valid, other, event, || {
        retry_pure_reads += 1;
        now.wrapping_add(1)
    });
    let mut retry_reads = 0;
    let retried = again.step(|| {
        retry_reads += 1;
        now.wrapping_add(1)
    });
    assert_eq!(
        retry_reads, retry_pure_reads,
        "{what}: a retry reads the clock afresh, as needed"
    );
    let (word_after, verdict) = match retried {
        Next::Done(a) => (a.word, a.verdict()),
        Next::Exchange(x) => match x.resolve::<Lost>(Ok(())).expect("won") {
            Resolved::Won { applied, swap } => {
                assert_eq!(swap.transitions(), retry_pure.transitions, "{what}: retry");
                (applied.word, applied.verdict())
            }
            Resolved::Retry(_) => unreachable!("an exchange that succeeded wins"),
        },
    };
    assert_eq!(
        (word_after, verdict),
        (retry_pure.word, retry_pure.verdict),
        "{what}: retry"
    );
}

/// A sequence of events through [`Update`] by hand on a plain variable
/// (nobody else writes) and through `transition::apply`: the same words,
/// verdicts and transitions at every step.
fn sequence_by_hand<W: Word>(config: Config, start: u64, events: &[(Ev, u64)]) {
    let valid = config.check::<W>().expect("small configs are valid");
    let mut cell = W::from_u64(start);
    let mut reference = cell;
    for (i, &(ev, now)) in events.iter().enumerate() {
        let event = event::<W>(ev, cell);
        let pure = transition::apply(&valid, reference, event, || now);
        let mut reported = Vec::new();
        let mut update = Update::new(&valid, cell, event, None);
        let applied = loop {
            match update.step(|| now) {
                Next::Done(applied) => break applied,
                Next::Exchange(x) => {
                    let result = if cell == x.current() {
                        cell = x.desired();
                        Ok(())
                    } else {
                        Err(CasError::Changed(cell))
                    };
                    match x.resolve::<Lost>(result).expect("no cell error") {
                        Resolved::Won { applied, swap } => {
                            reported.extend(swap.transitions());
                            break applied;
                        }
                        Resolved::Retry(again) => update = again,
                    }
                }
            }
        };
        reference = pure.word;
        let what = format!("step {i}: {event:?} at {now}, config {config:?}");
        assert_eq!(cell, reference, "{what}: word");
        assert_eq!(applied.word, pure.word, "{what}");
        assert_eq!(applied.verdict(), pure.verdict, "{what}: verdict");
        assert_eq!(
            reported,
            pure.transitions.iter().collect::<Vec<_>>(),
            "{what}: I7"
        );
    }
}

fn cases() -> u32 {
    std::env::var("PROPTEST_CASES")
        .ok()
        .and_then(|c| c.parse().ok())
        .unwrap_or(1_000)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(cases()))]

    /// `update` and `update_async` agree with each other and with the pure
    /// layer under scripted contention, 64-bit word.
    #[test]
    fn sync_and_async_drivers_agree_w64(config in config(), s in script::<W64>()) {
        agree::<W64>(config, &s);
    }

    /// The same, 32-bit word.
    #[test]
    fn sync_and_async_drivers_agree_w32(config in config(), s in script::<W32>()) {
        agree::<W32>(config, &s);
    }

    /// `Update` by hand against `transition::apply`, one event on any word,
    /// 64-bit word.
    #[test]
    fn update_by_hand_matches_apply_w64(
        config in config(),
        word in word::<W64>(),
        ev in ev(),
        now in any::<u64>(),
        seen_at in prop::option::of(any::<u64>()),
        other in word::<W64>(),
    ) {
        by_hand::<W64>(config, word, ev, now, seen_at, other);
    }

    /// The same, 32-bit word.
    #[test]
    fn update_by_hand_matches_apply_w32(
        config in config(),
        word in word::<W32>(),
        ev in ev(),
        now in any::<u64>(),
        seen_at in prop::option::of(any::<u64>()),
        other in word::<W32>(),
    ) {
        by_hand::<W32>(config, word, ev, now, seen_at, other);
    }

    /// `Update` by hand on an uncontended word follows `transition::apply`
    /// through a whole sequence, both widths.
    #[test]
    fn update_sequence_matches_apply(
        config in config(),
        start in word::<W64>(),
        events in prop::collection::vec((ev(), any::<u64>()), 1..40),
        readings in readings(),
    ) {
        let timed: Vec<(Ev, u64)> = events
            .iter()
            .zip(readings.iter().cycle())
            .map(|(&(ev, _), &t)| (ev, t))
            .collect();
        sequence_by_hand::<W64>(config, start, &timed);
        sequence_by_hand::<W32>(config, start, &timed);
    }
}

// ---------------------------------------------------------------------------
// The cell-error path.

/// A cell error on the exchange (before or after the write) is returned by
/// both drivers as is, not retried, and nothing is reported; the next load
/// shows whether the write happened.
#[test]
fn a_cell_error_is_returned_by_both_drivers_and_nothing_is_reported() {
    let valid = Config::new()
        .failure_threshold(2)
        .open_for(10)
        .check::<W64>()
        .expect("valid");
    let readings = [5u64];
    for applied in [false, true] {
        // A failure: its first exchange fails spuriously, its second loses
        // to another caller's failure, and its third (now the trip) fails
        // with a cell error.
        let script = [
            Contend::Spurious,
            Contend::Interfere(Ev::Release(Ticket::Current, Outcome::Failure), 0),
            Contend::Fail { applied, code: 42 },
        ];
        let event = Event::Release {
            counter: 0,
            outcome: Outcome::Failure,
        };
        let sync = SyncCell(Scripted::new(&valid, &readings, 0, &script));
        let mut sync_reports = 0;
        let got = cell::update(&sync, &valid, 0, event, None, || 5, |_| sync_reports += 1);
        assert_eq!(got.map(|a| a.verdict()), Err(Lost(42)));
        assert_eq!(sync_reports, 0, "I7: nothing reported for a cell error");
        assert_eq!(sync.0.exchanges.get(), 3, "not retried after the error");

        let asynch = SuspendingCell {
            inner: Scripted::new(&valid, &readings, 0, &script),
            pendings: StdCell::new(0),
            loads: StdCell::new(0),
            in_flight: StdCell::new(false),
        };
        let mut async_reports = 0;
        let got = block_on(update_async(
            &asynch,
            &valid,
            0,
            event,
            None,
            || 5,
            |_| async_reports += 1,
        ));
        assert_eq!(got.map(|a| a.verdict()), Err(Lost(42)));
        assert_eq!(async_reports, 0, "I7: nothing reported for a cell error");
        assert_eq!(
            asynch.inner.exchanges.get(),
            3,
            "not retried after the error"
        );
        assert_eq!(asynch.pendings.get(), 3, "suspended at every exchange");

        for word in [sync.0.load(), asynch.inner.load()] {
            let status = Snapshot::decode::<W64>(word).expect("valid").state.status();
            assert_eq!(
                status,
                if applied {
                    Status::Open
                } else {
                    Status::Closed
                },
                "the next load shows whether the write happened"
            );
        }
    }
}

// ---------------------------------------------------------------------------
// 32 tokio tasks racing on one word.

/// A word behind a `tokio::sync::Mutex`; each operation yields to the
/// runtime before it takes the lock, so tasks interleave between a load
/// and its exchange.
struct TokioCell(tokio::sync::Mutex<u64>);

impl AsyncCell<W64> for TokioCell {
    type Error = std::convert::Infallible;
    async fn load(&self) -> Result<u64, Self::Error> {
        tokio::task::yield_now().await;
        Ok(*self.0.lock().await)
    }
    async fn compare_exchange(
        &self,
        current: u64,
        new: u64,
    ) -> Result<(), CasError<u64, Self::Error>> {
        tokio::task::yield_now().await;
        let mut word = self.0.lock().await;
        if *word != current {
            return Err(CasError::Changed(*word));
        }
        *word = new;
        Ok(())
    }
}

/// What the racing tasks share.
struct Race {
    cell: TokioCell,
    config: ValidConfig<W64>,
    clock: AtomicU64,
    reports: std::sync::Mutex<Vec<Transition>>,
}

impl Race {
    /// `event` through `update_async`, from a fresh load, reporting every
    /// transition.
    async fn run(&self, event: Event) -> Verdict {
        let Ok(seen) = self.cell.load().await;
        let Ok(applied) = update_async(
            &self.cell,
            &self.config,
            seen,
            event,
            None,
            || self.clock.load(Ordering::SeqCst),
            |swap| self.reports.lock().unwrap().extend(swap.transitions()),
        )
        .await;
        applied.verdict()
    }
}

const TASKS: usize = 32;

/// Runs `TASKS` tasks of `f` at once and returns their results.
async fn race<T: Send + 'static, F>(shared: &Arc<Race>, f: F) -> Vec<T>
where
    F: Fn(Arc<Race>) -> tokio::task::JoinHandle<T>,
{
    let handles: Vec<_> = (0..TASKS).map(|_| f(shared.clone())).collect();
    let mut out = Vec::with_capacity(TASKS);
    for h in handles {
        out.push(h.await.expect("no task panics"));
    }
    out
}

/// 200 rounds on a multi-thread runtime: 32 tasks admit and fail at once
/// (threshold 5: exactly five failures count and one trip is made, I3);
/// the clock passes the open time; 32 tasks admit at once: exactly one is
/// the probe, every other is rejected because a probe is running (I1);
/// the probe's success closes the breaker. Every transition is reported
/// exactly once, counters consecutive (I7, I10): four per round.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn tokio_tasks_elect_one_probe_per_round() {
    const ROUNDS: u32 = 200;
    const THRESHOLD: u32 = 5;
    const OPEN_FOR: u64 = 10;
    let shared = Arc::new(Race {
        cell: TokioCell(tokio::sync::Mutex::new(0)),
        config: Config::new()
            .failure_threshold(THRESHOLD)
            .open_for(OPEN_FOR)
            .probe_timeout(1_000)
            .check::<W64>()
            .expect("valid"),
        clock: AtomicU64::new(0),
        reports: std::sync::Mutex::new(Vec::new()),
    });
    for round in 0..ROUNDS {
        // Trip: every task admits and fails.
        let failed = race(&shared, |r| {
            tokio::spawn(async move {
                match r.run(Event::Admit).await {
                    Verdict::Admitted { counter, probe } => {
                        assert!(!probe, "round {round}: closed admits no probe");
                        Some(
                            r.run(Event::Release {
                                counter,
                                outcome: Outcome::Failure,
                            })
                            .await,
                        )
                    }
                    Verdict::Rejected(why) => {
                        assert_eq!(why.cause(), Cause::Open, "round {round}");
                        None
                    }
                    v => panic!("round {round}: admission said {v:?}"),
                }
            })
        })
        .await;
        let recorded = failed
            .iter()
            .filter(|v| **v == Some(Verdict::Recorded))
            .count();
        assert_eq!(
            recorded, THRESHOLD as usize,
            "round {round}: I3: failures counted"
        );
        assert!(
            failed
                .iter()
                .all(|v| matches!(v, None | Some(Verdict::Recorded | Verdict::Stale))),
            "round {round}: {failed:?}"
        );
        // The open time passes; everyone races for the probe.
        shared.clock.fetch_add(OPEN_FOR, Ordering::SeqCst);
        let admitted = race(&shared, |r| {
            tokio::spawn(async move { r.run(Event::Admit).await })
        })
        .await;
        let mut probes = Vec::new();
        for v in &admitted {
            match v {
                Verdict::Admitted {
                    counter,
                    probe: true,
                } => probes.push(*counter),
                Verdict::Rejected(why) => {
                    assert_eq!(why.cause(), Cause::Probing, "round {round}: {admitted:?}")
                }
                v => panic!("round {round}: I1: admitted {v:?} beside the probe"),
            }
        }
        assert_eq!(probes.len(), 1, "round {round}: I1: exactly one probe");
        let closed = shared
            .run(Event::Release {
                counter: probes[0],
                outcome: Outcome::Success,
            })
            .await;
        assert_eq!(closed, Verdict::Recorded, "round {round}: the probe closes");
        let word = *shared.cell.0.lock().await;
        let snap = Snapshot::decode::<W64>(word).expect("valid");
        assert_eq!(snap.state, State::Closed { failures: 0 }, "round {round}");
        assert_eq!(
            snap.counter,
            4 * (round + 1),
            "round {round}: four changes per round"
        );
    }
    let reports = shared.reports.lock().unwrap().clone();
    let counters: Vec<u32> = reports.iter().map(|t| t.counter).collect();
    assert_eq!(
        counters,
        (1..=4 * ROUNDS).collect::<Vec<_>>(),
        "I7: each transition reported exactly once"
    );
    use Status::{Closed, HalfOpen, Open, Probing};
    for (i, t) in reports.iter().enumerate() {
        let expected = [
            (Closed, Open),
            (Open, HalfOpen),
            (HalfOpen, Probing),
            (Probing, Closed),
        ][i % 4];
        assert_eq!((t.from, t.to), expected, "transition {i}: {t}");
    }
}

/// A spurious loss (the word unchanged) is retried by both drivers, from
/// the same word, and a closed admission writes nothing (I9).
#[test]
fn a_spurious_loss_is_retried_by_both_drivers() {
    let valid = Config::new().check::<W32>().expect("valid");
    let s = Script {
        start: 0,
        events: vec![(Ev::Admit, None), (Ev::ForceOpen, None)],
        readings: vec![0],
        contention: vec![Contend::Spurious],
    };
    let sync = run_sync::<W32>(&valid, &s);
    let asynch = run_async::<W32>(&valid, &s);
    assert_eq!(sync, asynch);
    let decisions: Vec<Decision> = sync
        .iter()
        .map(|o| o.applied.expect("ran").expect("no fault").1)
        .collect();
    assert_eq!(decisions, [Decision::Admitted, Decision::Done]);
    assert_eq!(sync[1].exchanges, 2, "the spurious loss was retried");
}
