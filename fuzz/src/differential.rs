//! Differential check: real breakers of both word widths, sharing one
//! `ManualClock`, against the reference model, after every operation.
//!
//! The operations include the hinted ones: a failure that carries its open
//! time (`release_failure_for` on a held ticket, `Permit::failure_for` on a
//! held permit) and `force_open_for`, with hints of a few ticks, a span of
//! either width's config or layout (the open time, half the ring =
//! `longest_hint`, the ring) plus a small offset, near `u64::MAX`, or any.
//!
//! Per operation and per width, the breaker and its model must agree on:
//! the verdict (admitted or not, the ticket's counter modulo the counter
//! period, whether it is the probe; a rejection's cause and wait; recorded
//! or stale; the status, a pure read), the transitions the observer heard
//! (from, to, forced, counter modulo the period, in order, each once: I7),
//! whether the clock was read (I9: never for a closed admission, a success
//! or a status read in `Closed`), and the whole state afterwards (the word
//! decodes, I8, and equals the model's state with times in units of the
//! config's time shift modulo the time field, and the counter modulo its
//! period). No corrupt word is ever reported.

use std::cell::{Cell, RefCell};
use std::fmt::Debug;

use arbitrary::Arbitrary;
use tripword::clock::ManualClock;
use tripword::word::{Snapshot, State, W32, W64, Word};
use tripword::{
    Breaker, Clock, Observer, Outcome, Permit, Rejected, Release, Ticket, Transition, ValidConfig,
};
use tripword_verification::model::{Model, ModelConfig, ModelRejected, ModelState, ModelTicket};

use crate::input::{ConfigSpec, Out};

/// Most tickets (and, separately, permits) a lane holds; acquiring more
/// loses the oldest (a lost ticket is legal: a lost probe falls back on the
/// probe timeout).
pub const MAX_HELD: usize = 32;

/// One fuzz input: a config, where the clock starts, and the operations.
#[derive(Arbitrary, Clone, Debug, PartialEq, Eq)]
pub struct DiffCase {
    /// The config, mapped into each width's ranges.
    pub config: ConfigSpec,
    /// The clock's first reading (near `u64::MAX` exercises the wrap).
    pub start: u64,
    /// What happens, in order.
    pub ops: Vec<Op>,
}

impl DiffCase {
    /// Runs the case on both widths; panics on the first disagreement.
    pub fn run(&self) {
        run(
            self.start,
            Some(self.config.config::<W64>()),
            Some(self.config.config::<W32>()),
            &self.ops,
        );
    }
}

/// An operation, applied to both widths' breakers and models.
#[derive(Arbitrary, Clone, Copy, Debug, PartialEq, Eq)]
pub enum Op {
    /// `acquire()`; a ticket admitted is held.
    Acquire,
    /// Releases held ticket `slot` (modulo the number held; oldest first):
    /// current or stale.
    Release {
        /// Which held ticket.
        slot: u8,
        /// With what outcome.
        outcome: Out,
    },
    /// Releases a ticket of the other width's breaker here: always stale.
    ReleaseForeign {
        /// Which held ticket of the other breaker.
        slot: u8,
        /// With what outcome.
        outcome: Out,
    },
    /// `permit()`; a permit admitted is held.
    Permit,
    /// Finishes held permit `slot` with an outcome.
    FinishPermit {
        /// Which held permit.
        slot: u8,
        /// With what outcome.
        outcome: Out,
    },
    /// Drops held permit `slot` without an outcome (the abandon policy).
    DropPermit {
        /// Which held permit.
        slot: u8,
    },
    /// `status()`.
    Status,
    /// `force_open()`.
    ForceOpen,
    /// `force_close()`.
    ForceClose,
    /// Moves the shared clock.
    Clock(ClockMove),
    /// Repeats a burst of state changes, to turn the counter (a few bursts
    /// take the 32-bit word's, period 1024, around with tickets held). Kept
    /// short: its cost is what bounds the executions per second.
    Repeat {
        /// How many times.
        times: u8,
        /// What.
        burst: Burst,
    },
    /// `release_failure_for` of held ticket `slot` (current or stale).
    FailureFor {
        /// Which held ticket.
        slot: u8,
        /// How long to stay open, if it trips.
        hint: Hint,
    },
    /// Finishes held permit `slot` with `failure_for`.
    PermitFailureFor {
        /// Which held permit.
        slot: u8,
        /// How long to stay open, if it trips.
        hint: Hint,
    },
    /// `force_open_for`.
    ForceOpenFor(Hint),
}

/// How long a hinted failure or `force_open_for` asks to stay open.
#[derive(Arbitrary, Clone, Copy, Debug, PartialEq, Eq)]
pub enum Hint {
    /// A few ticks, 0 included.
    Ticks(u8),
    /// A span of one width's config or layout (`Span::MaxDuration` is
    /// `longest_hint`, half the ring), plus a small offset.
    Span(Jump),
    /// `u64::MAX - n`: clamped.
    Top(u8),
    /// Anything.
    Any(u64),
}

/// A move of the shared clock.
#[derive(Arbitrary, Clone, Copy, Debug, PartialEq, Eq)]
pub enum ClockMove {
    /// Forward a few ticks.
    Tick(u8),
    /// Back a few ticks.
    Back(u8),
    /// Forward by a span of one width's config or layout.
    Forward(Jump),
    /// Back by such a span.
    Backward(Jump),
    /// To `u64::MAX - n`: the next moves forward wrap the clock.
    NearWrap(u16),
    /// Anywhere.
    Set(u64),
}

/// A clock move measured in a width's own spans, plus a small offset.
#[derive(Arbitrary, Clone, Copy, Debug, PartialEq, Eq)]
pub struct Jump {
    /// Which span.
    pub span: Span,
    /// The 64-bit width's config and layout (else the 32-bit one's).
    pub wide: bool,
    /// Added to the span (so -1, 0, +1 around each edge are all reachable).
    pub delta: i8,
}

/// A length of time that matters to a breaker.
#[derive(Arbitrary, Clone, Copy, Debug, PartialEq, Eq)]
pub enum Span {
    /// `open_for`.
    OpenFor,
    /// The longest open time (the backoff cap, or `open_for`).
    LongestOpen,
    /// `probe_timeout`.
    ProbeTimeout,
    /// The longest duration the word holds at the config's time shift
    /// (half the ring).
    MaxDuration,
    /// The ring, `2^(time_bits + shift)` ticks (modulo `2^64`): a multiple
    /// of it reads as no time.
    TimeField,
}

/// What a [`Op::Repeat`] repeats.
#[derive(Arbitrary, Clone, Copy, Debug, PartialEq, Eq)]
pub enum Burst {
    /// `force_close()`: one change each.
    ForceClose,
    /// `force_open()` then `force_close()`: two changes.
    ForceCycle,
    /// `acquire()`, and if it is admitted, release it `Ignored` (in
    /// `HalfOpen`: two changes per probe).
    IgnoredProbe,
}

/// A clock that counts its reads (SPEC I9).
#[derive(Debug)]
pub struct CountingClock<'c> {
    clock: &'c ManualClock,
    reads: Cell<u32>,
}

impl Clock for CountingClock<'_> {
    fn now(&self) -> u64 {
        self.reads.set(self.reads.get() + 1);
        self.clock.now()
    }
}

/// An observer that keeps what it hears.
#[derive(Debug, Default)]
pub struct Recorder {
    transitions: RefCell<Vec<Transition>>,
    corrupt: Cell<u32>,
}

impl Observer for Recorder {
    fn on_transition(&self, transition: Transition) {
        self.transitions.borrow_mut().push(transition);
    }
    fn on_corrupt_word(&self, _raw: u64, _counter: u32) {
        self.corrupt.set(self.corrupt.get() + 1);
    }
}

type FuzzBreaker<'c, W> = Breaker<CountingClock<'c>, W, Recorder>;

/// One width: its breaker, its model, and what its callers hold.
struct Lane<'b, 'c, W: Word> {
    breaker: &'b FuzzBreaker<'c, W>,
    clock: &'c ManualClock,
    model: Model,
    tickets: Vec<(Ticket, ModelTicket)>,
    permits: Vec<(Permit<'b, CountingClock<'c>, W, Recorder>, ModelTicket)>,
}

fn name<W: Word>() -> &'static str {
    if W::LAYOUT.word_bits == 64 {
        "W64"
    } else {
        "W32"
    }
}

impl<'b, 'c, W: Word> Lane<'b, 'c, W> {
    fn new(breaker: &'b FuzzBreaker<'c, W>, clock: &'c ManualClock) -> Self {
        Lane {
            breaker,
            clock,
            model: Model::new(ModelConfig::for_width::<W>(breaker.config())),
            tickets: Vec::new(),
            permits: Vec::new(),
        }
    }

    fn period(&self) -> u64 {
        self.model.config().counter_period()
    }

    fn wrap(&self, counter: u64) -> u32 {
        (counter % self.period()) as u32
    }

    fn check_rejection(&self, what: &dyn Debug, now: u64, real: Rejected, model: ModelRejected) {
        assert_eq!(
            (real.cause(), real.retry_after()),
            (model.cause, model.retry_after),
            "{}: {what:?} at {now}: rejection differs from the model's",
            name::<W>()
        );
    }

    fn check_ticket(&self, what: &dyn Debug, counter: u32, probe: bool, model: ModelTicket) {
        assert_eq!(
            (counter, probe),
            (self.wrap(model.counter), model.probe),
            "{}: {what:?}: ticket (counter, probe) differs from the model's {model:?}",
            name::<W>()
        );
    }

    fn acquire(&mut self) {
        let now = self.clock.now();
        let real = self.breaker.acquire();
        let model = self.model.acquire(now);
        match (real, model) {
            (Ok(ticket), Ok(m)) => {
                self.check_ticket(&"acquire", ticket.counter(), ticket.is_probe(), m);
                self.hold(ticket, m);
            }
            (Err(r), Err(m)) => self.check_rejection(&"acquire", now, r, m),
            (real, model) => panic!(
                "{}: acquire at {now}: breaker {real:?}, model {model:?}",
                name::<W>()
            ),
        }
        self.settle(&"acquire");
    }

    fn hold(&mut self, ticket: Ticket, model: ModelTicket) {
        if self.tickets.len() >= MAX_HELD {
            // Lost: never released.
            let _lost = self.tickets.remove(0);
        }
        self.tickets.push((ticket, model));
    }

    fn take_ticket(&mut self, slot: u8) -> Option<(Ticket, ModelTicket)> {
        if self.tickets.is_empty() {
            None
        } else {
            Some(self.tickets.remove(usize::from(slot) % self.tickets.len()))
        }
    }

    fn release(&mut self, slot: u8, outcome: Outcome) {
        let Some((ticket, m)) = self.take_ticket(slot) else {
            return self.idle(&"release (no ticket held)");
        };
        self.release_ticket(ticket, m, outcome);
    }

    fn release_ticket(&mut self, ticket: Ticket, m: ModelTicket, outcome: Outcome) {
        let now = self.clock.now();
        let what = ("release", ticket.counter(), ticket.is_probe(), outcome, now);
        let real = self.breaker.release(ticket, outcome);
        let model = self.model.release(m.counter, outcome, now);
        assert_eq!(
            real == Release::Recorded,
            model,
            "{}: {what:?}: breaker {real:?}, model recorded = {model}",
            name::<W>()
        );
        self.settle(&what);
    }

    /// A ticket of another breaker: stale, and nothing here moves.
    fn release_foreign(&mut self, ticket: Ticket, outcome: Outcome) {
        let what = (
            "foreign release",
            ticket.counter(),
            ticket.is_probe(),
            outcome,
        );
        let real = self.breaker.release(ticket, outcome);
        assert_eq!(real, Release::Stale, "{}: {what:?}", name::<W>());
        self.idle(&what);
    }

    fn permit(&mut self) {
        let now = self.clock.now();
        let real = self.breaker.permit();
        let model = self.model.acquire(now);
        match (real, model) {
            (Ok(permit), Ok(m)) => {
                assert_eq!(permit.is_probe(), m.probe, "{}: permit probe", name::<W>());
                if self.permits.len() >= MAX_HELD {
                    // Too many held: check this admission, then drop the
                    // oldest permit (the model releases it too) and hold this.
                    self.settle(&"permit");
                    return self.drop_permit_at(0, Some(permit), m);
                }
                self.permits.push((permit, m));
            }
            (Err(r), Err(m)) => self.check_rejection(&"permit", now, r, m),
            (real, model) => panic!(
                "{}: permit at {now}: breaker {:?}, model {model:?}",
                name::<W>(),
                real.map(|p| p.is_probe())
            ),
        }
        self.settle(&"permit");
    }

    /// Drops the permit at `index` (abandon outcome), then holds `new`.
    fn drop_permit_at(
        &mut self,
        index: usize,
        new: Option<Permit<'b, CountingClock<'c>, W, Recorder>>,
        m: ModelTicket,
    ) {
        let (old, old_m) = self.permits.remove(index);
        let now = self.clock.now();
        drop(old);
        self.model
            .release(old_m.counter, self.model.config().abandon, now);
        self.settle(&"drop permit");
        if let Some(new) = new {
            self.permits.push((new, m));
        }
    }

    fn finish_permit(&mut self, slot: u8, outcome: Outcome) {
        if self.permits.is_empty() {
            return self.idle(&"finish permit (none held)");
        }
        let (permit, m) = self.permits.remove(usize::from(slot) % self.permits.len());
        let now = self.clock.now();
        let real = permit.finish(outcome);
        let model = self.model.release(m.counter, outcome, now);
        assert_eq!(
            real == Release::Recorded,
            model,
            "{}: finish permit {m:?} with {outcome:?} at {now}: breaker {real:?}",
            name::<W>()
        );
        self.settle(&"finish permit");
    }

    fn drop_permit(&mut self, slot: u8) {
        if self.permits.is_empty() {
            return self.idle(&"drop permit (none held)");
        }
        let index = usize::from(slot) % self.permits.len();
        let (_, m) = self.permits[index];
        self.drop_permit_at(index, None, m);
    }

    fn status(&mut self) {
        let now = self.clock.now();
        let real = self.breaker.status();
        let model = self.model.status(now);
        assert_eq!(real, model, "{}: status at {now}", name::<W>());
        self.settle(&"status");
    }

    fn force_open(&mut self) {
        self.breaker.force_open();
        self.model.force_open();
        self.settle(&"force_open");
    }

    fn force_close(&mut self) {
        self.breaker.force_close();
        self.model.force_close();
        self.settle(&"force_close");
    }

    fn failure_for(&mut self, slot: u8, hint: u64) {
        let Some((ticket, m)) = self.take_ticket(slot) else {
            return self.idle(&"failure_for (no ticket held)");
        };
        let now = self.clock.now();
        let what = (
            "release_failure_for",
            ticket.counter(),
            ticket.is_probe(),
            hint,
            now,
        );
        let real = self.breaker.release_failure_for(ticket, hint);
        let model = self.model.release_failure_for(m.counter, hint, now);
        assert_eq!(
            real == Release::Recorded,
            model,
            "{}: {what:?}: breaker {real:?}, model recorded = {model}",
            name::<W>()
        );
        self.settle(&what);
    }

    fn permit_failure_for(&mut self, slot: u8, hint: u64) {
        if self.permits.is_empty() {
            return self.idle(&"permit failure_for (none held)");
        }
        let (permit, m) = self.permits.remove(usize::from(slot) % self.permits.len());
        let now = self.clock.now();
        let real = permit.failure_for(hint);
        let model = self.model.release_failure_for(m.counter, hint, now);
        assert_eq!(
            real == Release::Recorded,
            model,
            "{}: permit {m:?} failure_for({hint}) at {now}: breaker {real:?}",
            name::<W>()
        );
        self.settle(&"permit failure_for");
    }

    fn force_open_for(&mut self, hint: u64) {
        let now = self.clock.now();
        self.breaker.force_open_for(hint);
        self.model.force_open_for(hint, now);
        self.settle(&("force_open_for", hint, now));
    }

    fn ignored_probe(&mut self) {
        self.acquire();
        if self.tickets.last().is_some_and(|(t, _)| t.is_probe()) {
            let slot = self.tickets.len() - 1;
            let (ticket, m) = self.tickets.remove(slot);
            self.release_ticket(ticket, m, Outcome::Ignored);
        }
    }

    /// Something happened that the model and the breaker do not see.
    fn idle(&mut self, what: &dyn Debug) {
        self.model.clear_last();
        self.settle(what);
    }

    /// `ticks` of span `span` for this width.
    fn span(&self, span: Span) -> u64 {
        let config = self.breaker.config();
        let layout = W::LAYOUT;
        let shift = config.time_shift();
        match span {
            Span::OpenFor => config.open_for(),
            Span::LongestOpen => config.open_duration(layout.max_trips()),
            Span::ProbeTimeout => config.probe_timeout(),
            Span::MaxDuration => layout.max_units() << shift,
            // 2^64 at W64's largest shift: a whole turn of the clock.
            Span::TimeField => (1u128 << (layout.time_bits + shift)) as u64,
        }
    }

    /// After every operation: transitions, clock reads, corruption reports
    /// and the state agree with the model.
    fn settle(&mut self, what: &dyn Debug) {
        let w = name::<W>();
        let period = self.period();
        let want = self.model.transitions().iter().map(|t| Transition {
            from: t.from.status(),
            to: t.to.status(),
            counter: (t.counter % period) as u32,
            forced: t.forced(),
        });
        let mut heard = self.breaker.observer().transitions.borrow_mut();
        if !heard.iter().copied().eq(want.clone()) {
            panic!(
                "{w}: {what:?}: transitions reported {heard:?}, model's {:?}",
                want.collect::<Vec<_>>()
            );
        }
        heard.clear();
        drop(heard);
        assert_eq!(
            self.breaker.observer().corrupt.get(),
            0,
            "{w}: {what:?}: a corrupt word was reported"
        );
        let reads = self.breaker.clock().reads.replace(0);
        assert!(reads <= 1, "{w}: {what:?}: clock read {reads} times");
        assert_eq!(
            reads == 1,
            self.model.read_clock(),
            "{w}: {what:?}: clock read {reads} times, model read it: {}",
            self.model.read_clock()
        );
        let raw = tripword::__verification::load_word(self.breaker);
        let snap = Snapshot::decode::<W>(raw).unwrap_or_else(|e| {
            panic!(
                "{w}: {what:?}: stored word {:#x} is corrupt: {e:?}",
                raw.into()
            )
        });
        let expected = Snapshot {
            state: model_state(self.model.config(), self.model.state()),
            counter: self.wrap(self.model.counter()),
        };
        assert_eq!(
            snap,
            expected,
            "{w}: {what:?}: state differs from the model's {:?} (counter {})",
            self.model.state(),
            self.model.counter()
        );
    }
}

/// The word state the model's state should be stored as: timestamps in
/// units of `2^shift` ticks modulo the time field.
pub fn model_state(config: &ModelConfig, state: ModelState) -> State {
    match state {
        ModelState::Closed { failures } => State::Closed { failures },
        ModelState::Open { since, trips } => State::Open {
            since: config.units(since),
            trips: trips as u32,
        },
        ModelState::HalfOpen { trips } => State::HalfOpen {
            trips: trips as u32,
        },
        ModelState::Probing { since, trips } => State::Probing {
            since: config.units(since),
            trips: trips as u32,
        },
        ModelState::ForcedOpen => State::ForcedOpen,
        ModelState::OpenUntil { until, trips } => State::OpenUntil {
            until: config.units(until),
            trips: trips as u32,
        },
        ModelState::Trial {
            since,
            trips,
            running,
            passed,
            failed,
        } => State::Trial {
            since: config.coarse(since, config.trial_extra()),
            trips: trips as u32,
            running,
            passed,
            failed,
        },
        ModelState::Ramp {
            since,
            trips,
            credit,
            failures,
        } => State::Ramp {
            since: config.coarse(since, config.ramp_extra()),
            trips: trips as u32,
            credit: credit as u32,
            failures,
        },
    }
}

macro_rules! each_lane {
    ($a:expr, $b:expr, |$lane:ident| $body:expr) => {{
        if let Some($lane) = $a.as_mut() {
            $body;
        }
        if let Some($lane) = $b.as_mut() {
            $body;
        }
    }};
}

fn breaker<'c, W: Word>(config: ValidConfig<W>, clock: &'c ManualClock) -> FuzzBreaker<'c, W> {
    let counting = CountingClock {
        clock,
        reads: Cell::new(0),
    };
    Breaker::from_parts(config, counting, Recorder::default())
}

/// Runs `ops` on a 64-bit breaker with `config64` and a 32-bit one with
/// `config32` (either may be absent), each against its model, with one
/// `ManualClock` starting at `start`. Panics on the first disagreement.
pub fn run(
    start: u64,
    config64: Option<ValidConfig<W64>>,
    config32: Option<ValidConfig<W32>>,
    ops: &[Op],
) {
    let clock = ManualClock::new(start);
    let b64 = config64.map(|c| breaker::<W64>(c, &clock));
    let b32 = config32.map(|c| breaker::<W32>(c, &clock));
    let mut l64 = b64.as_ref().map(|b| Lane::new(b, &clock));
    let mut l32 = b32.as_ref().map(|b| Lane::new(b, &clock));
    let span = |jump: Jump, l64: &Option<Lane<'_, '_, W64>>, l32: &Option<Lane<'_, '_, W32>>| {
        let ticks = match (jump.wide, l64.as_ref(), l32.as_ref()) {
            (true, Some(l), _) | (false, Some(l), None) => l.span(jump.span),
            (_, _, Some(l)) => l.span(jump.span),
            (_, None, None) => 0,
        };
        ticks.wrapping_add_signed(jump.delta.into())
    };
    for op in ops {
        let hint = |hint: Hint| match hint {
            Hint::Ticks(n) => u64::from(n),
            Hint::Span(jump) => span(jump, &l64, &l32),
            Hint::Top(n) => u64::MAX - u64::from(n),
            Hint::Any(t) => t,
        };
        match *op {
            Op::Acquire => each_lane!(l64, l32, |l| l.acquire()),
            Op::Release { slot, outcome } => {
                each_lane!(l64, l32, |l| l.release(slot, outcome.into()))
            }
            Op::ReleaseForeign { slot, outcome } => {
                if let (Some(a), Some(b)) = (l64.as_mut(), l32.as_mut()) {
                    if let Some((ticket, _)) = a.take_ticket(slot) {
                        b.release_foreign(ticket, outcome.into());
                    }
                    if let Some((ticket, _)) = b.take_ticket(slot) {
                        a.release_foreign(ticket, outcome.into());
                    }
                }
            }
            Op::Permit => each_lane!(l64, l32, |l| l.permit()),
            Op::FinishPermit { slot, outcome } => {
                each_lane!(l64, l32, |l| l.finish_permit(slot, outcome.into()))
            }
            Op::DropPermit { slot } => each_lane!(l64, l32, |l| l.drop_permit(slot)),
            Op::Status => each_lane!(l64, l32, |l| l.status()),
            Op::ForceOpen => each_lane!(l64, l32, |l| l.force_open()),
            Op::ForceClose => each_lane!(l64, l32, |l| l.force_close()),
            Op::FailureFor { slot, hint: h } => {
                let h = hint(h);
                each_lane!(l64, l32, |l| l.failure_for(slot, h))
            }
            Op::PermitFailureFor { slot, hint: h } => {
                let h = hint(h);
                each_lane!(l64, l32, |l| l.permit_failure_for(slot, h))
            }
            Op::ForceOpenFor(h) => {
                let h = hint(h);
                each_lane!(l64, l32, |l| l.force_open_for(h))
            }
            Op::Clock(step) => {
                let span = |jump: Jump| span(jump, &l64, &l32);
                match step {
                    ClockMove::Tick(n) => clock.advance(n.into()),
                    ClockMove::Back(n) => clock.set(clock.now().wrapping_sub(n.into())),
                    ClockMove::Forward(jump) => clock.advance(span(jump)),
                    ClockMove::Backward(jump) => clock.set(clock.now().wrapping_sub(span(jump))),
                    ClockMove::NearWrap(n) => clock.set(u64::MAX - u64::from(n)),
                    ClockMove::Set(t) => clock.set(t),
                }
                each_lane!(l64, l32, |l| l.idle(&step));
            }
            Op::Repeat { times, burst } => {
                for _ in 0..times {
                    match burst {
                        Burst::ForceClose => each_lane!(l64, l32, |l| l.force_close()),
                        Burst::ForceCycle => each_lane!(l64, l32, |l| {
                            l.force_open();
                            l.force_close()
                        }),
                        Burst::IgnoredProbe => each_lane!(l64, l32, |l| l.ignored_probe()),
                    }
                }
            }
        }
    }
}
