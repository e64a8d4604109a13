//! Exhaustive exploration: a breadth-first search over every
//! reachable state of the pure transition function
//! ([`tripword::transition::apply`], and [`tripword::transition::status_at`]
//! for status reads) and the reference model together, for small configs
//! (thresholds 1–3, several durations including the longest, backoff on and
//! off, both word widths; `W32` both in exact ticks, `horizon(0)` so `s = 0`,
//! and in units of 4 and 8 ticks, `s = 2` and `s = 3`), checking SPEC I1–I10
//! in every state and on every edge.
//!
//! A node is (word, model, clock). From each node the search applies every
//! event — admit; release with the current counter and with stale ones (one
//! and two states old) and a future one, each with every outcome; force open;
//! force close; status; and the hinted failure (`Event::FailureFor`,
//! with the current counter) and `force_open_for`, each with the hints 0, 1,
//! the open time, `longest_hint - 1`, `longest_hint` (the clamp) and
//! `u64::MAX`, and a stale hinted failure (one state old) — and every clock
//! move within a finite clock domain
//! `S` per config (small times 0..=6, the unit's edges, and clusters around
//! half the ring, the ring, the ring minus the open time, the old `2^15`-tick
//! horizon and `u64::MAX`), so the moves include +0, +1, backwards, huge jumps
//! and the `u64` wrap. Nodes are deduplicated on (word with the counter field
//! cleared, model state, clock): the machine is invariant under a shift of
//! the counter (the core only compares and increments it), and the counter is
//! checked against the model's on every node instead. The search starts two
//! states before the counter wraps, so transitions across the wrap are
//! explored too.
//!
//! So `OpenUntil` words (tag 5) are among the reachable states: every
//! deadline those hints set from every clock of the domain. Once per
//! distinct `OpenUntil` state the search checks its deadline at exact times:
//! the first reading at the deadline elects the probe and one tick before is
//! rejected, a rejection's wait lands on the deadline, a caller up to half
//! the ring past the deadline probes and one exactly half the ring past reads
//! as before it (the documented limit), a clock stepped back by more than
//! half the ring probes, and callers spaced around the ring, half the ring
//! and the old `2^15` horizon are rejected before the deadline and the first
//! one at or after it probes.
//!
//! On every node it also checks, outside the graph, corrupt words derived
//! from the node's word (I8: tags 6 and 7 are corrupt, tag 5 is
//! `OpenUntil`, valid with any payload), and, once per distinct timed state
//! (`Open` or `Probing` with its timestamp), the time bounds at exact times computed
//! from the state (I4, I5, I6): the first lapsing reading is never before `d`
//! ticks and never later than `d + 3 * 2^s` (with backoff below the cap,
//! `(open_for + 3 * 2^s) * 2^(k-1)`: `harness::time_bounds`), it elects
//! the probe and one tick earlier is rejected, a rejection's wait lands on
//! it; and the adversaries of time in units: sparse and periodic callers
//! spaced around the ring minus the open time, multiples of the ring and of
//! `2^15`, after a trip or after a lost probe (`Probing`, probe timeouts of 1
//! tick included), each compared with the model, the first call at or after
//! the deadline electing the probe whenever it is below the ring less one
//! unit.
//!
//! Several probes and the ramp (I11, I12): three more configs per width,
//! with 2 and 3 probes and a ramp of two stages, on a clock domain of
//! their own (`exhaustive/recovery.rs`), the trial's timeout and the
//! ramp's stages checked at exact times once per distinct state.

use std::cell::Cell;
use std::collections::{HashSet, VecDeque};
use std::time::Instant;

use tripword::Jitter;
use tripword::transition::{Event, Step, Verdict, apply, status_at};
use tripword::word::{Snapshot, State, TAG_BITS};
use tripword::{Cause, Config, Outcome, Status, Transition, ValidConfig, W32, W64, Word};
use tripword_verification::harness::{
    XorShift, counter_matches, hint_deadline_mismatch, state_mismatch, time_bounds,
    transitions_match,
};
use tripword_verification::model::{Model, ModelConfig, ModelRejected, ModelState};

#[path = "exhaustive/recovery.rs"]
mod recovery;

const OUTCOMES: [Outcome; 3] = [Outcome::Success, Outcome::Failure, Outcome::Ignored];
/// Release counters relative to the current one: current, one and two states
/// old, one ahead (a ticket no state issued yet).
const DELTAS: [i64; 4] = [0, -1, -2, 1];
/// Hints a stale hinted failure (a ticket one state old) is tried with: it
/// must change nothing whatever the hint, so two suffice.
const STALE_HINTS: [u64; 2] = [0, u64::MAX];
/// The old `W32` horizon: `2^15` ticks, the time field's range at `s = 0`.
const OLD_HORIZON: u64 = 1 << 15;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
enum Ev {
    Admit,
    Release(i64, Outcome),
    ForceOpen,
    ForceClose,
    Status,
    /// A failure with a hint (ticks), the counter relative to the current.
    FailureFor(i64, u64),
    /// `force_open_for` with a hint (ticks).
    ForceOpenFor(u64),
}

/// The hints searched for a config: 0, 1, the open time, `longest_hint -
/// 1`, `longest_hint` (the clamp) and `u64::MAX` (clamped too).
fn hints(cfg: &ModelConfig) -> Vec<u64> {
    let longest = cfg.longest_hint();
    let mut v = vec![0, 1, cfg.open_for, longest - 1, longest, u64::MAX];
    v.sort_unstable();
    v.dedup();
    v
}

fn all_events(hints: &[u64]) -> Vec<Ev> {
    let mut v = vec![Ev::Admit, Ev::ForceOpen, Ev::ForceClose, Ev::Status];
    for d in DELTAS {
        for o in OUTCOMES {
            v.push(Ev::Release(d, o));
        }
    }
    for &h in hints {
        v.push(Ev::FailureFor(0, h));
        v.push(Ev::ForceOpenFor(h));
    }
    for h in STALE_HINTS {
        v.push(Ev::FailureFor(-1, h));
    }
    v
}

/// The event for the pure layer, on a word whose counter is `counter`
/// (`None` for a status read, which is not an event).
fn pure_event(ev: Ev, counter: u32, period: u64) -> Option<Event> {
    Some(match ev {
        Ev::Admit => Event::Admit,
        Ev::Release(d, outcome) => Event::Release {
            counter: (i128::from(counter) + i128::from(d)).rem_euclid(i128::from(period)) as u32,
            outcome,
        },
        Ev::ForceOpen => Event::ForceOpen,
        Ev::ForceClose => Event::ForceClose,
        Ev::Status => return None,
        Ev::FailureFor(d, open_for) => Event::FailureFor {
            counter: (i128::from(counter) + i128::from(d)).rem_euclid(i128::from(period)) as u32,
            open_for,
        },
        Ev::ForceOpenFor(open_for) => Event::ForceOpenFor { open_for },
    })
}

/// What an event answered, in terms both the core and the model give.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Said {
    Admitted { counter: u32, probe: bool },
    Rejected(ModelRejected),
    Recorded,
    Stale,
    Done,
    Status(Status),
}

impl From<Verdict> for Said {
    fn from(v: Verdict) -> Said {
        match v {
            Verdict::Admitted { counter, probe } => Said::Admitted { counter, probe },
            Verdict::Rejected(r) => Said::Rejected(ModelRejected {
                cause: r.cause(),
                retry_after: r.retry_after(),
            }),
            Verdict::Recorded => Said::Recorded,
            Verdict::Stale => Said::Stale,
            Verdict::Done => Said::Done,
        }
    }
}

/// Applies `ev` to the model; returns what the core must answer.
fn model_step(m: &mut Model, ev: Ev, now: u64) -> Said {
    let p = m.config().counter_period();
    match ev {
        Ev::Admit => match m.acquire(now) {
            Ok(t) => Said::Admitted {
                counter: (t.counter % p) as u32,
                probe: t.probe,
            },
            Err(r) => Said::Rejected(r),
        },
        Ev::Release(d, outcome) => {
            if m.release(m.counter().wrapping_add_signed(d), outcome, now) {
                Said::Recorded
            } else {
                Said::Stale
            }
        }
        Ev::ForceOpen => {
            m.force_open();
            Said::Done
        }
        Ev::ForceClose => {
            m.force_close();
            Said::Done
        }
        Ev::Status => Said::Status(m.status(now)),
        Ev::FailureFor(d, hint) => {
            if m.release_failure_for(m.counter().wrapping_add_signed(d), hint, now) {
                Said::Recorded
            } else {
                Said::Stale
            }
        }
        Ev::ForceOpenFor(hint) => {
            m.force_open_for(hint, now);
            Said::Done
        }
    }
}

/// One step of the core's pure layer: an event through `apply`, or a status
/// read through `status_at` (which leaves the word as it is).
struct CoreStep<R> {
    word: R,
    said: Said,
    transitions: Vec<Transition>,
    repaired: Option<R>,
    reads: u32,
}

/// Applies `ev` to a word through the pure layer, counting clock reads.
fn pure<W: Word>(
    config: &ValidConfig<W>,
    word: W::Raw,
    ev: Ev,
    counter: u32,
    now: u64,
) -> CoreStep<W::Raw> {
    let reads = Cell::new(0u32);
    let clock = || {
        reads.set(reads.get() + 1);
        now
    };
    let period = 1u64 << W::LAYOUT.counter_bits;
    match pure_event(ev, counter, period) {
        Some(event) => {
            let step: Step<W::Raw> = apply::<W>(config, word, event, clock);
            CoreStep {
                word: step.word,
                said: step.verdict.into(),
                transitions: step.transitions.iter().collect(),
                repaired: step.repaired,
                reads: reads.get(),
            }
        }
        None => {
            let status = status_at::<W>(config, word, clock);
            CoreStep {
                word,
                said: Said::Status(status),
                transitions: Vec::new(),
                repaired: None,
                reads: reads.get(),
            }
        }
    }
}

#[derive(Default, Debug)]
struct Counts {
    /// Distinct `OpenUntil` states whose deadline was checked.
    deadline_states: u64,
    states: u64,
    edges: u64,
    side_checks: u64,
    corrupt_words: u64,
    timed_states: u64,
    sparse_callers: u64,
    /// Distinct `Trial` and `Ramp` states whose times were checked.
    recovery_states: u64,
}

struct Explorer<'a, W: Word> {
    config: ValidConfig<W>,
    mcfg: ModelConfig,
    clocks: &'a [u64],
    events: Vec<Ev>,
    counts: Counts,
    corrupt_seen: HashSet<u64>,
    timed_seen: HashSet<(u64, ModelState)>,
    /// Compare with the model (off with `EXHAUSTIVE_WITHOUT_MODEL=1`, to see
    /// what the invariant checks catch on their own).
    compare_model: bool,
}

fn decode<W: Word>(word: W::Raw) -> Snapshot {
    Snapshot::decode::<W>(word).expect("reachable words decode")
}

/// The state's name as a transition reports it: its status, and whether it
/// is the operator-held open.
fn named(state: &State) -> (Status, bool) {
    (state.status(), state.is_forced_open())
}

impl<W: Word> Explorer<'_, W> {
    fn period(&self) -> u64 {
        self.mcfg.counter_period()
    }

    fn counter_field(&self) -> u64 {
        (self.period() - 1) << TAG_BITS
    }

    fn key(&self, word: W::Raw, model: &Model, now: u64) -> (u64, ModelState, u64) {
        (word.into() & !self.counter_field(), model.state(), now)
    }

    /// One edge: applies `ev` at `now` to the core's word and the model,
    /// compares them, checks the invariants, returns the successor.
    fn edge(&mut self, word: W::Raw, model: &Model, ev: Ev, now: u64) -> (W::Raw, Model) {
        self.counts.edges += 1;
        let pre = decode::<W>(word);
        let step = pure::<W>(&self.config, word, ev, pre.counter, now);
        let mut m = model.clone();
        let want = model_step(&mut m, ev, now);
        let ctx = || {
            format!(
                "{:?} at {now} on {pre:?} (model {:?}, config {:?})",
                ev,
                model.state(),
                self.config
            )
        };
        assert!(
            step.repaired.is_none(),
            "a reachable word read as corrupt: {}",
            ctx()
        );
        let post = decode::<W>(step.word);
        assert!(
            step.reads <= 1,
            "clock read {} times: {}",
            step.reads,
            ctx()
        );
        if self.compare_model {
            assert_eq!(step.said, want, "verdict: {}", ctx());
            if let Some(diff) = state_mismatch(&post, &m) {
                panic!("state: {diff}: {}", ctx());
            }
            assert!(
                transitions_match(
                    &self.mcfg,
                    step.transitions.iter().copied(),
                    m.transitions()
                ),
                "transitions {:?} vs model {:?}: {}",
                step.transitions,
                m.transitions(),
                ctx()
            );
            assert_eq!(step.reads == 1, m.read_clock(), "clock read: {}", ctx());
        }
        self.invariants(&pre, ev, now, &step, &post, word, &ctx);
        m.clear_last();
        (step.word, m)
    }

    /// SPEC invariants on one edge, stated directly (independently of the
    /// model comparison above).
    #[allow(clippy::too_many_arguments)]
    fn invariants(
        &self,
        pre: &Snapshot,
        ev: Ev,
        now: u64,
        step: &CoreStep<W::Raw>,
        post: &Snapshot,
        word: W::Raw,
        ctx: &dyn Fn() -> String,
    ) {
        let l = W::LAYOUT;
        let n = step.transitions.len() as u32;
        let reads = step.reads;
        let unchanged = step.word == word;
        // I10: the counter moves by exactly the number of transitions.
        let mut c = pre.counter;
        for _ in 0..n {
            c = l.next_counter(c);
        }
        assert_eq!(
            post.counter,
            c,
            "I10: counter {} -> {} with {n} transitions: {}",
            pre.counter,
            post.counter,
            ctx()
        );
        // I7: the transitions form a chain from the old state to the new one,
        // each with the counter of the state it entered, `forced` exactly when
        // the state left or entered is the operator-held open.
        let (mut from, mut from_forced) = named(&pre.state);
        let mut c = pre.counter;
        for (i, t) in step.transitions.iter().enumerate() {
            c = l.next_counter(c);
            let last = i + 1 == step.transitions.len();
            let to_forced = last && post.state.is_forced_open();
            assert_eq!(
                (t.from, t.counter, t.forced),
                (from, c, from_forced || to_forced),
                "I7: chain broken: {}",
                ctx()
            );
            from = t.to;
            from_forced = to_forced;
        }
        assert_eq!(
            from,
            post.state.status(),
            "I7: chain does not end in the new state: {}",
            ctx()
        );
        assert!(n <= 2, "at most two transitions per event: {}", ctx());
        match ev {
            Ev::Admit => match (pre.state, step.said) {
                // I9: admission in Closed is a load: no clock, no store.
                (State::Closed { .. }, v) => {
                    assert_eq!(
                        v,
                        Said::Admitted {
                            counter: pre.counter,
                            probe: false
                        },
                        "{}",
                        ctx()
                    );
                    assert!(
                        reads == 0 && unchanged,
                        "I9: admission in Closed: {}",
                        ctx()
                    );
                }
                // I12: the ramp admits plain calls, in the ramp (same
                // counter) or past its end (Closed, the next counter).
                (State::Ramp { .. }, Said::Admitted { counter, probe }) => {
                    recovery::ramp_admitted(pre, post, counter, probe, ctx);
                }
                // I11: another probe of a trial with room: the trial's
                // counter, one more running, never more than n.
                (State::Trial { .. }, Said::Admitted { counter, probe })
                    if counter == pre.counter =>
                {
                    recovery::probe_added(&self.mcfg, pre, post, probe, n, ctx);
                }
                // I1: an admission outside Closed is the single probe of a
                // fresh state (or a trial's first): its counter is new, and
                // no other ticket can carry it.
                (_, Said::Admitted { counter, probe }) => {
                    assert!(probe, "I1: non-probe admitted outside Closed: {}", ctx());
                    assert!(
                        matches!(
                            post.state,
                            State::Probing { .. }
                                | State::Trial {
                                    running: 1,
                                    passed: 0,
                                    failed: 0,
                                    ..
                                }
                        ),
                        "I1: {}",
                        ctx()
                    );
                    assert_eq!(counter, post.counter, "I1: {}", ctx());
                    assert_ne!(
                        counter,
                        pre.counter,
                        "I1: probe ticket reuses a counter: {}",
                        ctx()
                    );
                    assert_eq!(
                        step.transitions.last().map(|t| t.to),
                        Some(Status::Probing),
                        "{}",
                        ctx()
                    );
                }
                (State::Ramp { .. }, Said::Rejected(r)) => {
                    recovery::ramp_rejected(pre, post, r, n, ctx);
                }
                (_, Said::Rejected(r)) => {
                    assert!(unchanged, "a rejection stores nothing: {}", ctx());
                    assert_eq!(n, 0, "a rejection changes nothing: {}", ctx());
                    // The cause names the state; only a timer has a wait,
                    // and a positive one.
                    let cause = match pre.state {
                        State::Open { .. } | State::OpenUntil { .. } => Cause::Open,
                        State::Probing { .. } | State::Trial { .. } => Cause::Probing,
                        State::ForcedOpen => Cause::ForcedOpen,
                        _ => panic!("rejected in {:?}: {}", pre.state, ctx()),
                    };
                    assert_eq!(r.cause, cause, "{}", ctx());
                    assert_eq!(
                        r.retry_after.is_some_and(|w| w >= 1),
                        cause != Cause::ForcedOpen,
                        "{}",
                        ctx()
                    );
                    // I4: an Open breaker rejects only before its time is up.
                    if let State::Open { since, trips } = pre.state {
                        let elapsed = l.elapsed(since, self.mcfg.units(now));
                        assert!(
                            elapsed
                                < self
                                    .mcfg
                                    .open_need(u64::from(trips), u64::from(pre.counter)),
                            "I4/I5: {}",
                            ctx()
                        );
                    }
                    // An OpenUntil rejects only before its deadline: at
                    // least half the field of units short of it.
                    if let State::OpenUntil { until, .. } = pre.state {
                        let past = l.elapsed(until, self.mcfg.units(now));
                        assert!(
                            past >= l.max_units(),
                            "OpenUntil rejected {past} units past its deadline: {}",
                            ctx()
                        );
                    }
                }
                (_, v) => panic!("admission answered {v:?}: {}", ctx()),
            },
            Ev::Release(d, outcome) => {
                // I2: a ticket from another state changes nothing and reads no clock.
                if d != 0 {
                    assert_eq!(step.said, Said::Stale, "I2: {}", ctx());
                    assert!(
                        unchanged && n == 0 && reads == 0,
                        "I2: stale release acted: {}",
                        ctx()
                    );
                }
                // I1: only the probe (current counter of Probing) can change a
                // non-closed state by a release.
                if step.said == Said::Recorded && !matches!(pre.state, State::Closed { .. }) {
                    assert!(
                        d == 0
                            && matches!(
                                pre.state,
                                State::Probing { .. } | State::Trial { .. } | State::Ramp { .. }
                            ),
                        "I1: {}",
                        ctx()
                    );
                }
                if matches!(
                    pre.state,
                    State::Open { .. }
                        | State::HalfOpen { .. }
                        | State::ForcedOpen
                        | State::OpenUntil { .. }
                ) {
                    assert_eq!(
                        step.said,
                        Said::Stale,
                        "no ticket carries this counter: {}",
                        ctx()
                    );
                    assert!(unchanged, "{}", ctx());
                }
                // I3: a failed probe counts one more trip (saturating), once.
                if let (State::Probing { trips, .. }, Said::Recorded, Outcome::Failure) =
                    (pre.state, step.said, outcome)
                {
                    let want = (trips + 1).min(l.max_trips());
                    assert!(
                        matches!(post.state, State::Open { trips: k, .. } if k == want),
                        "I3: a failed probe must count one trip: {}",
                        ctx()
                    );
                    assert_eq!(n, 1, "I3: one transition: {}", ctx());
                }
                if let (0, State::Closed { failures }) = (d, pre.state) {
                    let threshold = self.config.failure_threshold();
                    match outcome {
                        // I3: the N-th consecutive failure trips, once.
                        Outcome::Failure if failures + 1 == threshold => {
                            assert_eq!(n, 1, "I3: {}", ctx());
                            assert!(
                                matches!(post.state, State::Open { trips: 1, .. }),
                                "I3: {}",
                                ctx()
                            );
                        }
                        Outcome::Failure => {
                            assert_eq!(n, 0, "I3: {}", ctx());
                            assert_eq!(
                                post.state,
                                State::Closed {
                                    failures: failures + 1
                                },
                                "I3: {}",
                                ctx()
                            );
                        }
                        // I3: a success resets the run; I9: with nothing
                        // counted it stores nothing.
                        Outcome::Success => {
                            assert_eq!(post.state, State::Closed { failures: 0 }, "I3: {}", ctx());
                            assert_eq!(reads, 0, "I9: {}", ctx());
                            if failures == 0 {
                                assert!(unchanged, "I9: success with no failures wrote: {}", ctx());
                            }
                        }
                        Outcome::Ignored => assert!(unchanged && reads == 0, "{}", ctx()),
                    }
                }
            }
            Ev::FailureFor(d, hint) => self.hinted_failure(pre, d, hint, now, step, post, ctx),
            Ev::ForceOpenFor(hint) => {
                // From any state: OpenUntil, the trips of a timed or
                // half-open state kept (at least 1), else 1; one transition,
                // two when an elapsed timed state lapses first; the clock
                // read once; the deadline within the hint's bounds.
                assert_eq!(step.said, Said::Done, "{}", ctx());
                assert_eq!(reads, 1, "force_open_for reads the clock: {}", ctx());
                let State::OpenUntil { until, trips } = post.state else {
                    panic!("force_open_for left {:?}: {}", post.state, ctx());
                };
                let want = match pre.state {
                    State::Closed { .. } | State::ForcedOpen => 1,
                    State::Open { trips, .. }
                    | State::HalfOpen { trips }
                    | State::Probing { trips, .. }
                    | State::OpenUntil { trips, .. }
                    | State::Trial { trips, .. }
                    | State::Ramp { trips, .. } => trips.max(1),
                };
                assert_eq!(trips, want, "force_open_for trips: {}", ctx());
                let timed = matches!(
                    pre.state,
                    State::Open { .. }
                        | State::Probing { .. }
                        | State::OpenUntil { .. }
                        | State::Trial { .. }
                );
                assert!(
                    n == 1 || (n == 2 && timed),
                    "force_open_for made {n} transitions: {}",
                    ctx()
                );
                // Reported as Open, forced only when leaving the
                // operator-held open.
                let last = step.transitions.last().expect("at least one");
                assert_eq!(
                    (last.to, last.forced),
                    (Status::Open, pre.state.is_forced_open()),
                    "reported as Open, not forced: {}",
                    ctx()
                );
                if let Some(diff) = hint_deadline_mismatch(&self.mcfg, until, now, hint) {
                    panic!("{diff}: {}", ctx());
                }
            }
            Ev::Status => {
                // A status is a read: it never writes nor reports; it reads
                // the clock only for a timed state.
                assert!(unchanged && n == 0, "status wrote: {}", ctx());
                let timed = matches!(
                    pre.state,
                    State::Open { .. }
                        | State::Probing { .. }
                        | State::OpenUntil { .. }
                        | State::Trial { .. }
                        | State::Ramp { .. }
                );
                assert_eq!(reads == 1, timed, "I9: status clock read: {}", ctx());
                let Said::Status(st) = step.said else {
                    panic!("status answered {:?}: {}", step.said, ctx());
                };
                if let State::Trial { .. } = pre.state {
                    assert!(
                        matches!(st, Status::HalfOpen | Status::Probing),
                        "{}",
                        ctx()
                    );
                } else if let State::Ramp { .. } = pre.state {
                    assert!(
                        matches!(st, Status::Recovering | Status::Closed),
                        "{}",
                        ctx()
                    );
                } else if !timed {
                    assert_eq!(st, pre.state.status(), "{}", ctx());
                } else {
                    assert!(
                        st == Status::HalfOpen || st == pre.state.status(),
                        "{}",
                        ctx()
                    );
                }
            }
            Ev::ForceOpen => {
                assert_eq!(post.state, State::ForcedOpen, "{}", ctx());
                assert_eq!(reads, 0, "{}", ctx());
            }
            Ev::ForceClose => {
                assert_eq!(post.state, State::Closed { failures: 0 }, "{}", ctx());
                assert_eq!(n, 1, "force_close is always a transition: {}", ctx());
            }
        }
    }

    /// The hinted failure on one edge, stated directly: stale with
    /// another counter (no clock, no change); with the current one, exactly
    /// a plain failure unless it trips (the N-th consecutive failure in
    /// `Closed`, or the probe's failure in time), which opens until a
    /// deadline within the hint's bounds, with one trip, or the probe's
    /// trips plus one (saturating), as one transition reported as `Open`.
    #[allow(clippy::too_many_arguments)]
    fn hinted_failure(
        &self,
        pre: &Snapshot,
        d: i64,
        hint: u64,
        now: u64,
        step: &CoreStep<W::Raw>,
        post: &Snapshot,
        ctx: &dyn Fn() -> String,
    ) {
        let n = step.transitions.len();
        let unchanged = step.word == pre.encode::<W>();
        if d != 0 {
            assert_eq!(step.said, Said::Stale, "I2: {}", ctx());
            assert!(
                unchanged && n == 0 && step.reads == 0,
                "I2: a stale hinted failure acted: {}",
                ctx()
            );
            return;
        }
        // The same event without its hint, from the same word.
        let plain = pure::<W>(
            &self.config,
            pre.encode::<W>(),
            Ev::Release(0, Outcome::Failure),
            pre.counter,
            now,
        );
        let trips_to = match pre.state {
            State::Closed { failures } if failures + 1 == self.config.failure_threshold() => {
                Some(1)
            }
            State::Probing { .. } if plain.said == Said::Recorded => {
                let State::Open { trips, .. } = decode::<W>(plain.word).state else {
                    panic!("a failed probe did not reopen: {}", ctx());
                };
                Some(trips)
            }
            // A trial's or a ramp's failure that reopens (I11, I12).
            State::Trial { .. } | State::Ramp { .. } => match decode::<W>(plain.word).state {
                State::Open { trips, .. } if plain.said == Said::Recorded => Some(trips),
                _ => None,
            },
            _ => None,
        };
        match trips_to {
            None => {
                // Not a trip: a plain failure, to the bit.
                assert_eq!(
                    (step.word, step.said, &step.transitions, step.reads),
                    (plain.word, plain.said, &plain.transitions, plain.reads),
                    "a hinted failure that does not trip is a plain failure: {}",
                    ctx()
                );
            }
            Some(k) => {
                assert_eq!(step.said, Said::Recorded, "{}", ctx());
                assert_eq!(
                    (n, step.reads),
                    (1, 1),
                    "one trip, one clock read: {}",
                    ctx()
                );
                let t = step.transitions[0];
                assert_eq!(
                    (t.to, t.forced),
                    (Status::Open, false),
                    "reported as Open, not forced: {}",
                    ctx()
                );
                let State::OpenUntil { until, trips } = post.state else {
                    panic!("a hinted trip left {:?}: {}", post.state, ctx());
                };
                assert_eq!(trips, k, "I3: trips as after a plain trip: {}", ctx());
                if let Some(diff) = hint_deadline_mismatch(&self.mcfg, until, now, hint) {
                    panic!("{diff}: {}", ctx());
                }
            }
        }
    }

    /// Whether an admission at `t` from this node elects a new probe.
    fn elected(&mut self, word: W::Raw, model: &Model, t: u64) -> bool {
        self.counts.side_checks += 1;
        let before = decode::<W>(word);
        let (w, _) = self.edge(word, model, Ev::Admit, t);
        let after = decode::<W>(w);
        matches!(after.state, State::Probing { .. } | State::Trial { .. })
            && after.counter != before.counter
    }

    /// Checks at times computed from the node's state, off the graph:
    /// liveness at exact deadlines (I5), rejection before them (I4), the
    /// documented bounds, the time-fault rules (I6) and the sparse callers.
    fn node_checks(&mut self, word: W::Raw, model: &Model, now: u64) {
        let before = decode::<W>(word);
        match before.state {
            State::Open { .. } | State::Probing { .. } => {
                // These depend on the word and the model's state only: once
                // per distinct pair.
                let raw: u64 = word.into();
                if self
                    .timed_seen
                    .insert((raw & !self.counter_field(), model.state()))
                {
                    self.counts.timed_states += 1;
                    self.timed_checks(word, model);
                }
            }
            State::ForcedOpen => {
                // Only force_open keeps a breaker rejecting, at any time.
                for &t in self.clocks {
                    self.counts.side_checks += 1;
                    let (w, _) = self.edge(word, model, Ev::Admit, t);
                    assert_eq!(w, word, "forced open changed on an admission");
                }
            }
            State::OpenUntil { .. } => {
                let raw: u64 = word.into();
                if self
                    .timed_seen
                    .insert((raw & !self.counter_field(), model.state()))
                {
                    self.counts.deadline_states += 1;
                    self.until_checks(word, model);
                }
            }
            State::Closed { .. } | State::HalfOpen { .. } => {
                // Admitted at once, whatever the time.
                self.counts.side_checks += 1;
                let (w, _) = self.edge(word, model, Ev::Admit, now);
                let _ = w;
            }
            // The trial's timeout and the ramp's stages at exact times
            // computed from the state, once per distinct state.
            State::Trial { .. } | State::Ramp { .. } => {
                let raw: u64 = word.into();
                if self
                    .timed_seen
                    .insert((raw & !self.counter_field(), model.state()))
                {
                    self.counts.recovery_states += 1;
                    recovery::node_checks(self, word, model);
                }
            }
        }
    }

    /// An `OpenUntil` state's deadline, at exact times computed
    /// from it (independently of the model's rule, which `edge` compares
    /// on every admission here too).
    fn until_checks(&mut self, word: W::Raw, model: &Model) {
        let cfg = self.mcfg;
        let u = cfg.unit();
        let half = u64::try_from(cfg.ring() / 2).expect("half the ring fits a u64");
        let until = model.until().expect("an OpenUntil model state");
        assert_eq!(until % u, 0, "a deadline starts a unit");
        // The first reading at the deadline probes; one tick before, not.
        assert!(
            self.elected(word, model, until),
            "I5: no probe at the deadline {until}"
        );
        assert!(
            !self.elected(word, model, until.wrapping_sub(1)),
            "I4: admitted one tick before the deadline {until}"
        );
        // A rejection's wait lands on the deadline, from just before it, a
        // unit before, and half the ring before (the farthest a deadline
        // lies ahead).
        for back in [1, 2, u, u + 1, 3 * u - 1, half - 1, half] {
            let t = until.wrapping_sub(back);
            self.counts.side_checks += 1;
            let step = pure::<W>(&self.config, word, Ev::Admit, before_counter::<W>(word), t);
            let Said::Rejected(r) = step.said else {
                panic!("admitted at {t}, {back} ticks before the deadline {until}");
            };
            assert_eq!(
                (r.cause, r.retry_after),
                (Cause::Open, Some(back)),
                "the wait from {t} does not land on the deadline {until}"
            );
        }
        // Gaps up to half the ring past the deadline are measured exactly;
        // half the ring past it reads as before it (the documented limit).
        assert!(
            self.elected(word, model, until.wrapping_add(half - 1)),
            "a caller half the ring less a tick past the deadline did not probe"
        );
        assert!(
            !self.elected(word, model, until.wrapping_add(half)),
            "half the ring past the deadline must read as before it"
        );
        // I6: a clock stepped back by more than half the ring reads as past
        // the deadline.
        assert!(
            self.elected(word, model, until.wrapping_sub(half + u)),
            "a clock more than half the ring back did not probe"
        );
        // Callers every `gap` ticks from half the ring before the deadline
        // (the farthest a hint puts it): rejected before it, the first one
        // at or after it probes (it is less than half the ring past).
        let t0 = until.wrapping_sub(half);
        let mut gaps: Vec<u64> = [1, u, u + 1, 3 * u, half / 3, half - 1, half, OLD_HORIZON]
            .into_iter()
            .chain([OLD_HORIZON + 1, 2 * OLD_HORIZON - 1])
            .filter(|&g| g > 0 && g <= half)
            .collect();
        gaps.sort_unstable();
        gaps.dedup();
        for gap in gaps {
            // The first caller at or after the deadline is the k-th.
            let k_first = half.div_ceil(gap);
            let from = k_first.saturating_sub(2).max(1);
            for k in from..=k_first {
                self.counts.sparse_callers += 1;
                let x = gap * k;
                let elected = self.elected(word, model, t0.wrapping_add(x));
                assert_eq!(
                    elected,
                    x >= half,
                    "a caller every {gap} ticks from half the ring before the deadline, \
                     {x} ticks after it (the deadline at {half})"
                );
            }
        }
    }

    fn timed_checks(&mut self, word: W::Raw, model: &Model) {
        let cfg = self.mcfg;
        let u = cfg.unit();
        let ring = cfg.ring();
        let (t0, need, trips) = model.timed().expect("a timed model state");
        let open = matches!(model.state(), ModelState::Open { .. });
        let d = if open && cfg.jitter != Jitter::None {
            // The jittered units `need`, from wherever in its unit the
            // timestamp falls.
            need * u - (u - 1)
        } else if open {
            cfg.open_duration(trips)
        } else {
            cfg.probe_timeout
        };
        let (_, _, latest) = time_bounds(&cfg, &model.state()).expect("timed");
        // The first reading that lapses the state: the start of unit
        // units(t0) + need. The documented bounds: never before d ticks,
        // never d + 3 * 2^s or later.
        let at = cfg.first_lapse_at(t0, need, t0);
        let gap = at.wrapping_sub(t0);
        assert!(
            gap >= d,
            "never early: lapses {gap} ticks after the timestamp, duration {d} ({:?}, {cfg:?})",
            model.state()
        );
        assert!(
            gap <= latest,
            "never late: lapses {gap} ticks after the timestamp, latest {latest}, duration {d} ({:?}, {cfg:?})",
            model.state()
        );
        // I5: the first caller at the deadline becomes the probe (a lost
        // probe blocks for at most the probe timeout); I4: one tick earlier,
        // and d - 1 ticks after the timestamp, it is rejected.
        assert!(
            self.elected(word, model, at),
            "I5: no probe at the deadline"
        );
        assert!(
            !self.elected(word, model, at.wrapping_sub(1)),
            "I4: admitted before the deadline"
        );
        assert!(
            !self.elected(word, model, t0.wrapping_add(d - 1)),
            "I4: admitted before d ticks"
        );
        assert!(
            self.elected(word, model, t0.wrapping_add(latest)),
            "I5: not admitted by the latest deadline"
        );
        // A rejection's wait lands on the deadline, from every tick of the
        // open time's first unit and the one before the deadline.
        let first_unit = (0..u.min(8))
            .filter(|&i| i < gap)
            .map(|i| t0.wrapping_add(i));
        for t in first_unit.chain([at.wrapping_sub(1)]) {
            self.counts.side_checks += 1;
            let step = pure::<W>(&self.config, word, Ev::Admit, before_counter::<W>(word), t);
            let Said::Rejected(r) = step.said else {
                panic!("admitted at {t}, before the deadline {at}");
            };
            assert_eq!(
                r.retry_after.map(|w| t.wrapping_add(w)),
                Some(at),
                "the wait from {t} does not land on the deadline"
            );
        }
        // Gaps below the ring less one unit are measured exactly: the
        // largest such caller probes.
        let far = (ring - u128::from(u) - 1) as u64;
        assert!(
            self.elected(word, model, t0.wrapping_add(far)),
            "a caller {far} ticks after the timestamp (the ring less a unit) did not probe"
        );
        // I6: a clock that went backwards by a unit or more reads as a long
        // elapsed time: fails towards probing. By half the ring (the longest
        // duration's units) too. Less than a unit back may stay in the same
        // unit: that reads as no time, as the model says.
        assert!(
            self.elected(word, model, t0.wrapping_sub(u)),
            "I6: backwards by a unit did not probe"
        );
        assert!(
            self.elected(word, model, t0.wrapping_sub((ring / 2) as u64)),
            "I6: backwards by half the ring did not probe"
        );
        let back_one = self.elected(word, model, t0.wrapping_sub(1));
        assert_eq!(
            back_one,
            t0 % u == 0,
            "I6: backwards by 1 tick probes exactly when it crosses into the unit before"
        );
        // I6: nobody called for exactly the ring: the breaker rejects again,
        // and for at most the latest deadline more.
        let wrapped = t0.wrapping_add(ring as u64);
        if ring < 1 << 64 {
            assert!(
                !self.elected(word, model, wrapped),
                "I6: documented wrap rejection"
            );
            assert!(
                self.elected(word, model, wrapped.wrapping_add(latest)),
                "I6: bound exceeded"
            );
        }
        if !open {
            // A probe that reports at its timeout is stale and half-opens;
            // one tick before, it counts.
            self.counts.side_checks += 2;
            let late = Ev::Release(0, Outcome::Success);
            let (w, _) = self.edge(word, model, late, at);
            assert!(
                matches!(decode::<W>(w).state, State::HalfOpen { .. }),
                "late probe"
            );
            let (w, _) = self.edge(word, model, late, at.wrapping_sub(1));
            let state = decode::<W>(w).state;
            assert!(
                state == State::Closed { failures: 0 }
                    || (cfg.has_ramp()
                        && matches!(
                            state,
                            State::Ramp {
                                credit: 0,
                                failures: 0,
                                ..
                            }
                        )),
                "probe in time: {state:?}"
            );
        }
        self.sparse_callers(word, model, t0, d, latest);
    }

    /// Callers every `gap` ticks after the timestamp `t0` (after a
    /// trip, or after a probe that was lost), for gaps around the ring minus
    /// the open time, multiples of the ring and of the old `2^15` horizon.
    /// Rejected calls leave the word as it is, so the k-th caller meets this
    /// node's word. Each is compared with the model (in `edge`); the first
    /// one admitted is never before `d` ticks, and, when it is below the
    /// ring less one unit, is the first caller at or after the latest
    /// deadline or earlier.
    fn sparse_callers(&mut self, word: W::Raw, model: &Model, t0: u64, d: u64, latest: u64) {
        let cfg = self.mcfg;
        let u = cfg.unit() as i128;
        let ring = cfg.ring() as i128;
        let mut gaps: Vec<u64> = Vec::new();
        let bases = [
            ring - i128::from(d),
            ring - i128::from(latest),
            ring,
            2 * ring,
            i128::from(OLD_HORIZON),
            2 * i128::from(OLD_HORIZON),
            3 * i128::from(OLD_HORIZON),
            i128::from(latest),
        ];
        for base in bases {
            for delta in [-u, -1, 0, 1, u] {
                if let Ok(g) = u64::try_from(base + delta)
                    && g > 0
                {
                    gaps.push(g);
                }
            }
        }
        gaps.sort_unstable();
        gaps.dedup();
        const CALLS: u64 = 6;
        for gap in gaps {
            for k in 1..=CALLS {
                self.counts.sparse_callers += 1;
                let Some(x) = u128::from(gap).checked_mul(u128::from(k)) else {
                    break;
                };
                let t = t0.wrapping_add(x as u64);
                if self.elected(word, model, t) {
                    assert!(
                        x >= u128::from(d),
                        "sparse caller {k} every {gap} ticks admitted {x} ticks after the timestamp, before {d}"
                    );
                    if x + (u as u128) < ring as u128 {
                        assert!(
                            k == 1 || x - u128::from(gap) < u128::from(latest),
                            "sparse caller {k} every {gap} ticks: caller {} at {} ticks was already past the latest deadline {latest}",
                            k - 1,
                            x - u128::from(gap)
                        );
                    }
                    break;
                }
                assert!(
                    x + (u as u128) >= ring as u128 || x < u128::from(latest),
                    "sparse caller {k} every {gap} ticks rejected {x} ticks after the timestamp, past the latest deadline {latest}, below the ring"
                );
            }
        }
    }

    /// SPEC I8: words made corrupt from this reachable one (an unknown tag,
    /// stray bits, a failure count at or over the threshold) decode without
    /// panic, are repaired to `Closed` with the next counter and reported,
    /// and then the event applies as the model says it does from there. A
    /// status read of a corrupt word reads `Closed` and repairs nothing.
    fn corrupt_checks(&mut self, word: W::Raw, now: u64) {
        let l = W::LAYOUT;
        let raw: u64 = word.into();
        let counter_field = self.counter_field();
        if !self.corrupt_seen.insert(raw & !counter_field) {
            return;
        }
        let keep = raw & counter_field;
        let payload = TAG_BITS + l.counter_bits;
        let top = 1u64 << (l.word_bits - 1);
        let threshold = u64::from(self.config.failure_threshold());
        // Tag 5 is OpenUntil: every payload valid, as for the
        // other timed tags.
        let open_until = W::from_u64((raw & !7) | 5);
        assert!(
            matches!(
                Snapshot::decode::<W>(open_until),
                Ok(Snapshot {
                    state: State::OpenUntil { .. },
                    ..
                })
            ),
            "tag 5 with any payload is OpenUntil: {:#x}",
            (raw & !7) | 5
        );
        // Tags 6 and 7 are Ramp and Trial (the recovery feature), every
        // payload valid too.
        for (tag, trial) in [(6, false), (7, true)] {
            let w = W::from_u64((raw & !7) | tag);
            assert!(
                matches!(
                    Snapshot::decode::<W>(w).map(|s| s.state),
                    Ok(State::Trial { .. }) if trial
                ) || matches!(
                    Snapshot::decode::<W>(w).map(|s| s.state),
                    Ok(State::Ramp { .. }) if !trial
                ),
                "tag {tag} with any payload is valid: {:#x}",
                (raw & !7) | tag
            );
        }
        let variants = [
            keep | (threshold << payload),
            keep | (u64::from(l.max_failures()) << payload),
            keep | top,
            keep | 2 | top,
            keep | 4 | (1 << payload),
        ];
        let events = [
            Ev::Admit,
            Ev::Status,
            Ev::ForceOpen,
            Ev::ForceClose,
            Ev::Release(0, Outcome::Success),
            Ev::Release(0, Outcome::Failure),
            Ev::Release(0, Outcome::Ignored),
            Ev::Release(-1, Outcome::Failure),
            Ev::FailureFor(0, self.config.open_for()),
            Ev::ForceOpenFor(1),
        ];
        for bad in variants {
            let bad_w = W::from_u64(bad);
            assert!(
                Snapshot::decode::<W>(bad_w).is_err()
                    || matches!(Snapshot::decode::<W>(bad_w), Ok(Snapshot { state: State::Closed { failures }, .. }) if u64::from(failures) >= threshold),
                "I8: {bad:#x} is not corrupt"
            );
            self.counts.corrupt_words += 1;
            let repaired = l.next_counter(Snapshot::counter_bits::<W>(bad_w));
            for ev in events {
                self.counts.side_checks += 1;
                let step = pure::<W>(&self.config, bad_w, ev, repaired, now);
                if ev == Ev::Status {
                    assert_eq!(
                        (step.said, step.reads, step.word),
                        (Said::Status(Status::Closed), 0, bad_w),
                        "I8: status of corrupt {bad:#x}"
                    );
                    continue;
                }
                assert_eq!(
                    step.repaired,
                    Some(bad_w),
                    "I8: corrupt {bad:#x} not reported on {ev:?}"
                );
                let post = Snapshot::decode::<W>(step.word).expect("I8: the repair decodes");
                if !self.compare_model {
                    continue;
                }
                let mut m = Model::with_counter(self.mcfg, u64::from(repaired));
                let want = model_step(&mut m, ev, now);
                assert_eq!(step.said, want, "I8: {bad:#x} {ev:?}");
                if let Some(diff) = state_mismatch(&post, &m) {
                    panic!("I8: {bad:#x} {ev:?}: {diff}");
                }
                assert!(
                    transitions_match(
                        &self.mcfg,
                        step.transitions.iter().copied(),
                        m.transitions()
                    ),
                    "I8: {bad:#x} {ev:?}"
                );
                assert_eq!(step.reads == 1, m.read_clock(), "I8: {bad:#x} {ev:?} clock");
            }
        }
    }

    /// The breadth-first search from `Closed` two states before the counter
    /// wraps.
    fn explore(&mut self) {
        let seed = self.period() - 2;
        let word0 = Snapshot {
            state: State::Closed { failures: 0 },
            counter: seed as u32,
        }
        .encode::<W>();
        let model0 = Model::with_counter(self.mcfg, seed);
        let now0 = self.clocks[0];
        let mut visited = HashSet::new();
        let mut queue = VecDeque::new();
        visited.insert(self.key(word0, &model0, now0));
        queue.push_back((word0, model0, now0));
        let events = self.events.clone();
        while let Some((word, model, now)) = queue.pop_front() {
            self.counts.states += 1;
            assert!(
                !self.compare_model
                    || counter_matches(&self.mcfg, model.counter(), decode::<W>(word).counter),
                "the core's counter is the model's (modulo the period)"
            );
            self.node_checks(word, &model, now);
            self.corrupt_checks(word, now);
            for &ev in &events {
                self.counts.edges += 1;
                let (w, m) = self.edge(word, &model, ev, now);
                if visited.insert(self.key(w, &m, now)) {
                    queue.push_back((w, m, now));
                }
            }
            for &t in self.clocks {
                if t != now {
                    self.counts.edges += 1;
                    if visited.insert(self.key(word, &model, t)) {
                        queue.push_back((word, model.clone(), t));
                    }
                }
            }
        }
    }
}

/// The counter carried by a word.
fn before_counter<W: Word>(word: W::Raw) -> u32 {
    Snapshot::counter_bits::<W>(word)
}

/// The finite clock domain of a config: small times, the edges of the first
/// units, and clusters around half the ring, the ring, the ring minus the
/// open time, the old `2^15` horizon and `u64::MAX`.
fn clock_domain(cfg: &ModelConfig) -> Vec<u64> {
    let u = cfg.unit();
    let ring = u64::try_from(cfg.ring()).expect("the rings searched fit a u64");
    let mut v: Vec<u64> = (0..=6).collect();
    if u > 1 {
        v.extend([u - 1, u, u + 1, 2 * u, 3 * u - 1, 3 * u]);
    }
    let cluster = |c: u64| [c - 1, c, c + 1];
    v.extend(cluster(ring / 2));
    v.extend(cluster(ring));
    v.extend(cluster(ring - cfg.open_for));
    v.extend(cluster(OLD_HORIZON));
    v.extend([u64::MAX - 1, u64::MAX]);
    v.sort_unstable();
    v.dedup();
    v
}

/// One searched config: threshold, open_for, probe_timeout, backoff cap,
/// horizon, and the time shift it must give.
type Case = (u32, u64, u64, Option<u64>, Option<u64>, u32);

/// Thresholds 1–3, small durations with and without backoff (the cap
/// reached after one or two doublings, and not within the clock domain), and
/// the longest durations the shift allows. The threshold only shapes
/// `Closed`, so it is varied across the timings rather than crossed with
/// them. `W32` is searched in exact ticks (`horizon(0)`, `s = 0`) and in
/// units of 4 and 8 ticks (`s = 2`, `s = 3`), with probe timeouts of one
/// tick among them.
fn configs<W: Word>() -> Vec<Case> {
    let small = |m: u64, horizon: Option<u64>, s: u32| -> Vec<Case> {
        vec![
            (1, 1, 1, None, horizon, s),
            (2, 2, 3, None, horizon, s),
            (3, 1, 2, Some(4), horizon, s),
            (2, 2, 1, Some(8), horizon, s),
            (3, 3, 3, Some((1 << 20u64).min(m)), horizon, s),
            (1, m / 2, m, Some(m), horizon, s),
        ]
    };
    if W::LAYOUT.word_bits == 64 {
        small(1 << 33, None, 0)
            .into_iter()
            .chain([(1, 7, 2, Some(28), None, 0), (2, 6, 1, None, None, 0)])
            .collect()
    } else {
        let mut cases = small(1 << 14, Some(0), 0);
        cases.extend([
            (1, 1, 1, None, Some(100_000), 2),
            (2, 3, 1, Some(12), Some(100_000), 2),
            (3, 2, 5, Some(20), Some(200_000), 3),
            (1, 15_528, 31_056, Some(31_056), Some(100_000), 2),
            (1, 7, 2, Some(28), Some(0), 0),
            (2, 6, 1, None, Some(0), 0),
            (1, 40, 1, Some(80), Some(100_000), 2),
        ]);
        cases
    }
}

fn config_of<W: Word>(case: &Case) -> ValidConfig<W> {
    let &(n, open_for, probe, cap, horizon, s) = case;
    let mut c = Config::new()
        .failure_threshold(n)
        .open_for(open_for)
        .probe_timeout(probe);
    if let Some(cap) = cap {
        c = c.exponential_backoff(cap);
    }
    if let Some(h) = horizon {
        c = c.horizon(h);
    }
    // Jitter on the cases added for it: open times of
    // 6 and 7 units and more, where the draw shortens them.
    c = match (n, open_for, probe) {
        (1, 7, 2) => c.jitter(Jitter::Equal { seed: 5 }),
        (2, 6, 1) => c.jitter(Jitter::Full { seed: 9 }),
        (1, 40, 1) => c.jitter(Jitter::Full { seed: 0xfeed }),
        _ => c,
    };
    let valid = c.check::<W>().expect("small configs are in range");
    assert_eq!(valid.time_shift(), s, "{c:?}: the shift searched");
    valid
}

fn run_width<W: Word>(name: &str) -> Counts {
    let mut total = Counts::default();
    let mut shifts = Vec::new();
    let start = Instant::now();
    let cases: Vec<ValidConfig<W>> = configs::<W>()
        .iter()
        .map(config_of::<W>)
        .chain(recovery::configs::<W>())
        .collect();
    for &config in &cases {
        let mcfg = ModelConfig::for_width(&config);
        let clocks = if mcfg.probes().0 > 1 || mcfg.has_ramp() {
            recovery::clock_domain(&mcfg)
        } else {
            clock_domain(&mcfg)
        };
        let mut x = Explorer::<W> {
            config,
            mcfg,
            clocks: &clocks,
            events: all_events(&hints(&mcfg)),
            counts: Counts::default(),
            corrupt_seen: HashSet::new(),
            timed_seen: HashSet::new(),
            compare_model: std::env::var_os("EXHAUSTIVE_WITHOUT_MODEL").is_none(),
        };
        x.explore();
        println!(
            "{name} threshold={} open_for={} probe_timeout={} backoff={:?} probes={}/{} ramp stages={} s={} (clock domain of {}): {} states, {} transitions, {} timed states, {} open-until states, {} trial and ramp states, {} sparse callers",
            config.failure_threshold(),
            config.open_for(),
            config.probe_timeout(),
            config.backoff_cap(),
            config.probes_to_close(),
            config.probes(),
            config.ramp().stages_count(),
            config.time_shift(),
            clocks.len(),
            x.counts.states,
            x.counts.edges,
            x.counts.timed_states,
            x.counts.deadline_states,
            x.counts.recovery_states,
            x.counts.sparse_callers,
        );
        shifts.push(config.time_shift());
        total.states += x.counts.states;
        total.edges += x.counts.edges;
        total.side_checks += x.counts.side_checks;
        total.corrupt_words += x.counts.corrupt_words;
        total.timed_states += x.counts.timed_states;
        total.deadline_states += x.counts.deadline_states;
        total.sparse_callers += x.counts.sparse_callers;
        total.recovery_states += x.counts.recovery_states;
    }
    shifts.sort_unstable();
    shifts.dedup();
    let line = format!(
        "exhaustive {name}: {} configs (time shifts {shifts:?}; {} with several probes or a ramp), {} states, {} transitions, {} side checks ({} timed states, {} open-until states, {} trial and ramp states, {} sparse callers), {} corrupt words, {:.1}s",
        cases.len(),
        recovery::configs::<W>().len(),
        total.states,
        total.edges,
        total.side_checks,
        total.timed_states,
        total.deadline_states,
        total.recovery_states,
        total.sparse_callers,
        total.corrupt_words,
        start.elapsed().as_secs_f64()
    );
    println!("{line}");
    record(&format!("exhaustive-{name}"), &line);
    total
}

/// Leaves the counts where the CI stage reads them.
fn record(name: &str, line: &str) {
    let dir = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("verification-counts");
    let _ = std::fs::create_dir_all(&dir);
    let _ = std::fs::write(dir.join(format!("{name}.txt")), format!("{line}\n"));
}

#[test]
fn exhaustive_w64() {
    let c = run_width::<W64>("W64");
    assert!(c.states > 10_000);
}

#[test]
fn exhaustive_w32() {
    let c = run_width::<W32>("W32");
    assert!(c.states > 10_000);
}

/// SPEC I8 beyond the derived words: pseudo-random bit patterns (fully
/// random, and random payloads under each tag) never panic, are repaired
/// and reported exactly when they are not a valid state, and valid ones
/// round-trip. Half the `W32` words run at `s = 7` (the default horizon).
fn random_words<W: Word>(seed: u64, count: u64, config: Config) {
    let config = config.check::<W>().expect("in range");
    let mut rng = XorShift::new(seed);
    let events = all_events(&hints(&ModelConfig::for_width(&config)));
    for i in 0..count {
        let r = rng.next_u64();
        let raw = if i % 2 == 0 {
            r
        } else {
            (r & !7) | (i / 2 % 8)
        };
        let w = W::from_u64(raw);
        let decoded = Snapshot::decode::<W>(w);
        let corrupt = match decoded {
            Err(_) => true,
            Ok(Snapshot {
                state: State::Closed { failures },
                ..
            }) => failures >= config.failure_threshold(),
            Ok(_) => false,
        };
        if let Ok(s) = decoded {
            assert_eq!(s.encode::<W>(), w, "valid words are canonical");
        }
        let ev = events[rng.below(events.len() as u64) as usize];
        let step = pure::<W>(
            &config,
            w,
            ev,
            Snapshot::counter_bits::<W>(w),
            rng.next_u64(),
        );
        if ev == Ev::Status {
            assert!(
                step.repaired.is_none() && step.word == w,
                "a status is a read"
            );
            continue;
        }
        assert_eq!(step.repaired.is_some(), corrupt, "I8: {raw:#x}");
        assert!(
            Snapshot::decode::<W>(step.word).is_ok(),
            "I8: the result decodes"
        );
    }
}

#[test]
fn random_words_never_panic_and_corrupt_ones_are_repaired() {
    let config = Config::new()
        .failure_threshold(3)
        .open_for(5)
        .probe_timeout(5)
        .exponential_backoff(40);
    random_words::<W64>(1, 200_000, config);
    random_words::<W32>(2, 100_000, config.horizon(0));
    random_words::<W32>(3, 100_000, config);
}
