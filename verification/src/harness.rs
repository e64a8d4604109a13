//! Test plumbing shared by the techniques: a clock
//! that counts its reads, an observer that records every report, and the
//! comparisons between the core's answers and the [model](crate::model)'s.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};

use tripword::clock::ManualClock;
use tripword::word::{Snapshot, State};
use tripword::{Clock, Jitter, Observer, Rejected, Transition};

use crate::model::{Model, ModelConfig, ModelRejected, ModelState, ModelTransition};

/// A [`ManualClock`] that counts how often it is read (SPEC I9: admission in
/// `Closed` never reads the clock).
#[derive(Debug)]
pub struct CountingClock {
    clock: ManualClock,
    reads: AtomicU64,
}

impl Default for CountingClock {
    fn default() -> Self {
        Self::new(0)
    }
}

impl CountingClock {
    /// A clock reading `ticks`.
    pub fn new(ticks: u64) -> Self {
        CountingClock {
            clock: ManualClock::new(ticks),
            reads: AtomicU64::new(0),
        }
    }
    /// Sets the time (forwards, backwards, anywhere).
    pub fn set(&self, ticks: u64) {
        self.clock.set(ticks);
    }
    /// Moves the time forward by `ticks`, wrapping at `u64::MAX`.
    pub fn advance(&self, ticks: u64) {
        self.clock.advance(ticks);
    }
    /// The time, without counting a read.
    pub fn peek(&self) -> u64 {
        self.clock.now()
    }
    /// How many times the breaker read the clock so far.
    pub fn reads(&self) -> u64 {
        self.reads.load(Ordering::SeqCst)
    }
}

impl Clock for CountingClock {
    fn now(&self) -> u64 {
        self.reads.fetch_add(1, Ordering::SeqCst);
        self.clock.now()
    }
}

/// A shared handle on a [`CountingClock`], so a breaker can own its clock
/// while the test moves it.
#[derive(Clone, Debug)]
pub struct SharedClock(pub Arc<CountingClock>);

impl Clock for SharedClock {
    fn now(&self) -> u64 {
        self.0.now()
    }
}

impl std::ops::Deref for SharedClock {
    type Target = CountingClock;
    fn deref(&self) -> &CountingClock {
        &self.0
    }
}

/// An observer that records every transition and corrupt-word report.
#[derive(Debug, Default)]
pub struct Recorder {
    transitions: Mutex<Vec<Transition>>,
    corrupt: Mutex<Vec<(u64, u32)>>,
}

impl Recorder {
    /// Takes the transitions reported so far.
    pub fn take(&self) -> Vec<Transition> {
        std::mem::take(
            &mut *self
                .transitions
                .lock()
                .unwrap_or_else(PoisonError::into_inner),
        )
    }
    /// Takes the corrupt-word reports so far (raw word, counter of the repair).
    pub fn take_corrupt(&self) -> Vec<(u64, u32)> {
        std::mem::take(&mut *self.corrupt.lock().unwrap_or_else(PoisonError::into_inner))
    }
}

impl Observer for Recorder {
    fn on_transition(&self, transition: Transition) {
        self.transitions
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .push(transition);
    }
    fn on_corrupt_word(&self, raw: u64, counter: u32) {
        self.corrupt
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .push((raw, counter));
    }
}

/// An `Arc`'d [`Recorder`], so a breaker can own its observer while the test
/// reads it.
#[derive(Clone, Debug, Default)]
pub struct SharedRecorder(pub Arc<Recorder>);

impl Observer for SharedRecorder {
    fn on_transition(&self, transition: Transition) {
        self.0.on_transition(transition)
    }
    fn on_corrupt_word(&self, raw: u64, counter: u32) {
        self.0.on_corrupt_word(raw, counter)
    }
}

/// Whether the model's (unbounded) counter and the core's agree modulo the
/// counter period.
pub fn counter_matches(config: &ModelConfig, model: u64, core: u32) -> bool {
    model % config.counter_period() == u64::from(core)
}

/// Whether the core's transitions are the model's, in order (counters modulo
/// the period).
pub fn transitions_match(
    config: &ModelConfig,
    core: impl IntoIterator<Item = Transition>,
    model: &[ModelTransition],
) -> bool {
    let core: Vec<Transition> = core.into_iter().collect();
    core.len() == model.len()
        && core.iter().zip(model).all(|(c, m)| {
            c.from == m.from.status()
                && c.to == m.to.status()
                && c.forced == m.forced()
                && counter_matches(config, m.counter, c.counter)
        })
}

/// Whether the core's rejection is the model's: the same cause and the same
/// wait.
pub fn rejection_matches(core: &Rejected, model: &ModelRejected) -> bool {
    core.cause() == model.cause && core.retry_after() == model.retry_after
}

/// Whether a decoded word holds the model's state: the same state, failure
/// count and trips, the word's timestamp the model's clock reading in units
/// (`(t >> s) mod 2^T`), the counter equal modulo its period. `None` when
/// they agree, else a description of the difference.
pub fn state_mismatch(snapshot: &Snapshot, model: &Model) -> Option<String> {
    let cfg = model.config();
    let time = |t: u64| cfg.units(t);
    let same = match (snapshot.state, model.state()) {
        (State::Closed { failures }, ModelState::Closed { failures: f }) => failures == f,
        (State::Open { since, trips }, ModelState::Open { since: s, trips: k })
        | (State::Probing { since, trips }, ModelState::Probing { since: s, trips: k }) => {
            since == time(s) && u64::from(trips) == k
        }
        (State::HalfOpen { trips }, ModelState::HalfOpen { trips: k }) => u64::from(trips) == k,
        (State::ForcedOpen, ModelState::ForcedOpen) => true,
        (State::OpenUntil { until, trips }, ModelState::OpenUntil { until: u, trips: k }) => {
            until == time(u) && u64::from(trips) == k
        }
        (
            State::Trial {
                since,
                trips,
                running,
                passed,
                failed,
            },
            ModelState::Trial {
                since: s,
                trips: k,
                running: r,
                passed: p,
                failed: f,
            },
        ) => {
            since == cfg.coarse(s, cfg.trial_extra())
                && u64::from(trips) == k
                && (running, passed, failed) == (r, p, f)
        }
        (
            State::Ramp {
                since,
                trips,
                credit,
                failures,
            },
            ModelState::Ramp {
                since: s,
                trips: k,
                credit: c,
                failures: f,
            },
        ) => {
            since == cfg.coarse(s, cfg.ramp_extra())
                && u64::from(trips) == k
                && u64::from(credit) == c
                && failures == f
        }
        _ => false,
    };
    if same && counter_matches(cfg, model.counter(), snapshot.counter) {
        None
    } else {
        Some(format!(
            "core word {:?} but model {:?} counter {}",
            snapshot,
            model.state(),
            model.counter()
        ))
    }
}

/// The documented time bounds of a timed model state: `(since, d, latest)`
/// for `Open` and `Probing`, `None` otherwise. `since` is the timestamp (a
/// clock reading), `d` the duration as set (`ValidConfig::open_duration`
/// for the trip count, or the probe timeout), `latest` the latest deadline:
/// a caller `latest` ticks after `since` or later, while below the ring less
/// one unit, is admitted; one fewer than `d` ticks after is not.
///
/// `latest` is `d + 3 * 2^s - 1` (`docs/spec.md`, "Time": a duration lasts
/// less than `d + 3 * 2^s` ticks), except for a doubled open time, which
/// the word doubles in units, rounding included: after the k-th trip it is
/// `min((open_for + 3 * 2^s) * 2^(k-1), cap + 3 * 2^s) - 1`, that is less
/// than `d + 3 * 2^(s+k-1)`, and the cap's own `3 * 2^s` once the cap is
/// reached (`tests/sparse_callers.rs`, `backoff_rounding_doubles`).
pub fn time_bounds(cfg: &ModelConfig, state: &ModelState) -> Option<(u64, u64, u64)> {
    let u = cfg.unit();
    match *state {
        ModelState::Probing { since, .. } => {
            Some((since, cfg.probe_timeout, cfg.probe_timeout + 3 * u - 1))
        }
        ModelState::Open { since, trips } => {
            // Jitter only shortens the open time: to more than
            // half its units (equal) or at least one unit (full). The
            // first reading past `j` units from `since` is at least
            // `(j - 1) 2^s + 1` ticks after it. The exact jittered time
            // is the model's; these are the documented bounds.
            let base = cfg.with_jitter(Jitter::None).open_need(trips, 0);
            let d = match cfg.jitter {
                Jitter::None => cfg.open_duration(trips),
                Jitter::Equal { .. } => (base.div_ceil(2) - 1) * u + 1,
                Jitter::Full { .. } => 1,
            };
            let latest = match cfg.backoff_cap {
                Some(cap) if trips > 1 => {
                    let doublings = trips.min(cfg.max_trips()) - 1;
                    let doubled = u128::from(cfg.open_for + 3 * u) << doublings;
                    (doubled.min(u128::from(cap + 3 * u)) - 1) as u64
                }
                _ => cfg.open_duration(trips) + 3 * u - 1,
            };
            Some((since, d, latest))
        }
        _ => None,
    }
}

/// Checks the documented time bounds directly (not through the model):
/// `admitted` is whether an admission at `now` from the model state
/// `before` went through (or a status read at `now` read `HalfOpen`).
/// Nothing is admitted before `d` ticks have passed since the timestamp;
/// a caller at or past the latest deadline and below the ring less one unit
/// is admitted ([`time_bounds`]). From `OpenUntil`, in ticks
/// from its deadline: nobody is admitted before it, and the first caller
/// at or after it, up to half the ring past it, is.
///
/// # Panics
/// When a bound does not hold, saying which, with `what`.
pub fn check_time_bounds(
    cfg: &ModelConfig,
    before: &ModelState,
    now: u64,
    admitted: bool,
    what: &str,
) {
    if let ModelState::OpenUntil { until, .. } = *before {
        // Ticks from the deadline to `now`, modulo the ring (the deadline
        // starts a unit, so the ring in ticks is the field in units).
        let past = u128::from(now.wrapping_sub(until)) % cfg.ring();
        let reached = past < cfg.ring() / 2;
        assert_eq!(
            admitted,
            reached,
            "{what}: {} {past} ticks past the deadline modulo the ring {} (half the ring              past it is the gap bound), from {before:?}, config {cfg:?}",
            if admitted { "admitted" } else { "rejected" },
            cfg.ring()
        );
        return;
    }
    let Some((since, d, latest)) = time_bounds(cfg, before) else {
        return;
    };
    let gap = now.wrapping_sub(since);
    assert!(
        gap >= d || !admitted,
        "{what}: admitted {gap} ticks after the timestamp, before the duration of {d} ticks \
         (never early), from {before:?}, config {cfg:?}"
    );
    if u128::from(gap) + u128::from(cfg.unit()) < cfg.ring() && gap >= latest {
        assert!(
            admitted,
            "{what}: rejected {gap} ticks after the timestamp, past the latest deadline \
             {latest} (d = {d}) and below the ring less one unit, from {before:?}, config {cfg:?}"
        );
    }
}

/// The documented bounds of a hint: a hint of `d` ticks given
/// at clock reading `t0` sets a deadline `lo..=hi` ticks after `t0`. With
/// `e = min(d, longest_hint)`: at most `e + 2 * (2^s - 1)` (below the
/// spec's `d + 3 * 2^s` for any duration); at least `d` when the hint's
/// units fit half the field (`d <= (2^(T-1) - 1) * 2^s + 1`, every hint up
/// to `longest_hint` when `s = 0`), else, clamped to the field, at least
/// `longest_hint - (2^s - 1)`: the clamp is in units, so a clamped hint
/// given inside a unit ends up to `2^s - 1` ticks before `t0 +
/// longest_hint`.
pub fn hint_bounds(cfg: &ModelConfig, d: u64) -> (u64, u64) {
    let u = cfg.unit();
    let longest = cfg.longest_hint();
    let e = d.min(longest);
    let fits = u128::from(d) <= u128::from(cfg.max_hint_units() - 1) * u128::from(u) + 1;
    let lo = if fits { d } else { longest - (u - 1) };
    (lo, e + 2 * (u - 1))
}

/// Whether a deadline the core stored for a hint is within [`hint_bounds`]:
/// `until_units` is the word's deadline field, `t0` the clock reading of
/// the event, `d` the hint. `None` when it is, else what is wrong.
pub fn hint_deadline_mismatch(
    cfg: &ModelConfig,
    until_units: u64,
    t0: u64,
    d: u64,
) -> Option<String> {
    let (lo, hi) = hint_bounds(cfg, d);
    // The deadline's distance from t0 in ticks, modulo the ring.
    let until = u128::from(until_units) << cfg.time_shift;
    let ahead = (until + cfg.ring() - u128::from(t0) % cfg.ring()) % cfg.ring();
    (!(u128::from(lo)..=u128::from(hi)).contains(&ahead)).then(|| {
        format!(
            "a hint of {d} ticks at {t0} set a deadline {ahead} ticks ahead, outside \
             {lo}..={hi}, config {cfg:?}"
        )
    })
}

/// [`hint_deadline_mismatch`], as an assertion.
///
/// # Panics
/// When the deadline is outside the bounds, with `what`.
pub fn check_hint_deadline(cfg: &ModelConfig, until_units: u64, t0: u64, d: u64, what: &str) {
    if let Some(diff) = hint_deadline_mismatch(cfg, until_units, t0, d) {
        panic!("{what}: {diff}");
    }
}

/// A small deterministic pseudo-random generator (xorshift64*), for tests
/// that must not depend on a crate.
#[derive(Clone, Debug)]
pub struct XorShift(u64);

impl XorShift {
    /// A generator from `seed` (0 is replaced by a fixed odd constant).
    pub fn new(seed: u64) -> Self {
        XorShift(if seed == 0 {
            0x9E37_79B9_7F4A_7C15
        } else {
            seed
        })
    }
    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        self.0 = x;
        x.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    /// A number in `0..n` (`n > 0`).
    pub fn below(&mut self, n: u64) -> u64 {
        self.next_u64() % n
    }
}

/// What one event did to a word, as the breaker can tell it: the verdict
/// (a release only says recorded or stale, a force nothing), the word left,
/// the clock reads, the transitions reported and the corrupt word reported.
/// The comparison of the breaker with the pure layer: [`through_breaker`]
/// against [`through_pure`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Seen {
    /// What the caller was told.
    pub verdict: tripword::transition::Verdict,
    /// The word after the event.
    pub word: u64,
    /// How often the clock was read.
    pub reads: u64,
    /// The transitions reported, in order.
    pub transitions: Vec<Transition>,
    /// The corrupt word reported, if any.
    pub corrupt: Option<u64>,
}

/// `event` on `raw` at `now` through the pure layer (`transition::apply`),
/// told as the breaker would tell it.
pub fn through_pure<W: tripword::Word>(
    valid: &tripword::ValidConfig<W>,
    raw: W::Raw,
    event: tripword::transition::Event,
    now: u64,
) -> Seen {
    use tripword::transition::{Event, Verdict, apply};
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
    Seen {
        verdict,
        word: step.word.into(),
        reads,
        transitions: step.transitions.iter().collect(),
        corrupt: step.repaired.map(Into::into),
    }
}

/// `event` on `raw` at `now` through a `Breaker` seeded with `raw` (its
/// fast paths included), a release carrying a forged ticket with the
/// event's counter, a probe's if `probe`.
pub fn through_breaker<W: tripword::Word>(
    valid: &tripword::ValidConfig<W>,
    raw: W::Raw,
    event: tripword::transition::Event,
    now: u64,
    probe: bool,
) -> Seen {
    use tripword::__verification::{breaker_with_word, load_word, ticket};
    use tripword::Release;
    use tripword::transition::{Event, Verdict};
    let clock = CountingClock::new(now);
    let recorder = Recorder::default();
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
    let corrupt = recorder.take_corrupt();
    assert!(corrupt.len() <= 1, "a corrupt word is reported once");
    Seen {
        verdict,
        word: load_word(&b).into(),
        reads: clock.reads(),
        transitions: recorder.take(),
        corrupt: corrupt.first().map(|&(raw, _)| raw),
    }
}

/// A status read of `raw` at `now` through a seeded `Breaker` and through
/// `transition::status_at`: both answers, the two clock read counts, and
/// whether the breaker stored or reported anything (it must not).
pub fn status_both<W: tripword::Word>(
    valid: &tripword::ValidConfig<W>,
    raw: W::Raw,
    now: u64,
) -> ((tripword::Status, u64), (tripword::Status, u64), bool) {
    use tripword::__verification::{breaker_with_word, load_word};
    let clock = CountingClock::new(now);
    let recorder = Recorder::default();
    let b = breaker_with_word(*valid, &clock, &recorder, raw);
    let mut reads = 0;
    let pure = tripword::transition::status_at(valid, raw, || {
        reads += 1;
        now
    });
    let got = b.status();
    let quiet =
        load_word(&b) == raw && recorder.take().is_empty() && recorder.take_corrupt().is_empty();
    ((got, clock.reads()), (pure, reads), quiet)
}

/// The Wing–Gong search over a recorded concurrent history: is there an
/// order of `history`, consistent with real time (an operation that
/// returned before another was invoked comes first), in which `step`
/// accepts every operation? `interval` gives an operation's invocation and
/// return stamps (from one global counter); `step` applies one operation to
/// the search state (the reference model and whatever the checker tracks
/// beside it) and says whether the recorded result is the model's. The
/// search is memoized on the (operations linearized, state) pairs that
/// failed, so `S` should compare equal for states reached by different
/// paths. At most 63 operations.
///
/// The generic form of the checker in `tests/linearizability.rs`, for
/// suites that record histories of their own.
///
/// # Panics
/// When the history holds more than 63 operations.
pub fn linearizable<S: Clone + Eq + std::hash::Hash, E>(
    start: S,
    history: &[E],
    interval: impl Fn(&E) -> (u64, u64),
    step: impl Fn(&mut S, &E) -> bool,
) -> bool {
    assert!(history.len() < 64, "at most 63 operations");
    struct Search<'h, E, I, F> {
        history: &'h [E],
        interval: I,
        step: F,
    }
    fn dfs<
        S: Clone + Eq + std::hash::Hash,
        E,
        I: Fn(&E) -> (u64, u64),
        F: Fn(&mut S, &E) -> bool,
    >(
        search: &Search<'_, E, I, F>,
        done: u64,
        state: S,
        failed: &mut std::collections::HashSet<(u64, S)>,
    ) -> bool {
        let h = search.history;
        if done == (1u64 << h.len()) - 1 {
            return true;
        }
        if failed.contains(&(done, state.clone())) {
            return false;
        }
        let pending = || (0..h.len()).filter(|&i| done & (1 << i) == 0);
        let min_ret = pending()
            .map(|i| (search.interval)(&h[i]).1)
            .min()
            .unwrap_or(u64::MAX);
        for i in pending().filter(|&i| (search.interval)(&h[i]).0 < min_ret) {
            let mut next = state.clone();
            if (search.step)(&mut next, &h[i]) && dfs(search, done | 1 << i, next, failed) {
                return true;
            }
        }
        failed.insert((done, state));
        false
    }
    let search = Search {
        history,
        interval,
        step,
    };
    dfs(&search, 0, start, &mut std::collections::HashSet::new())
}
