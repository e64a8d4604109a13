//! Exhaustive exploration (issue 3, item 3): a breadth-first search over every
//! reachable state of the pure transition function
//! ([`tripword::transition::apply`]) and the reference model together, for
//! small configs (thresholds 1–3, several durations including the maximum,
//! backoff on and off, both word widths), checking SPEC I1–I10 in every state
//! and on every edge.
//!
//! A node is (word, model, clock). From each node the search applies every
//! event — admit; release with the current counter and with stale ones (one
//! and two states old) and a future one, each with every outcome; force open;
//! force close; status — and every clock move within a finite clock domain
//! `S` (small times 0..=8 and clusters around half the maximum duration, the
//! maximum duration, the time field's period `2^T` and `u64::MAX`), so the
//! moves include +0, +1, backwards, exactly to a deadline and one before,
//! huge jumps and the `u64` wrap. Nodes are deduplicated on (word with the
//! counter field cleared, model state, clock): the machine is invariant under
//! a shift of the counter (the core only compares and increments it), and the
//! counter is checked against the model's on every node instead. The search
//! starts two states before the counter wraps, so transitions across the wrap
//! are explored too.
//!
//! On every node it also checks, outside the graph: liveness and the time
//! bounds at exact deadlines computed from the state (I4, I5, I6), and
//! corrupt words derived from the node's word (I8).

use std::cell::Cell;
use std::collections::{HashSet, VecDeque};
use std::time::Instant;

use tripword::transition::{Event, Step, Verdict, apply};
use tripword::word::{Phase, Snapshot, State, TAG_BITS};
use tripword::{Config, Outcome, W32, W64, Word};
use tripword_verification::harness::{
    XorShift, counter_matches, state_mismatch, transitions_match,
};
use tripword_verification::model::{Model, ModelConfig, ModelState};

const OUTCOMES: [Outcome; 3] = [Outcome::Success, Outcome::Failure, Outcome::Ignored];
/// Release counters relative to the current one: current, one and two states
/// old, one ahead (a ticket no state issued yet).
const DELTAS: [i64; 4] = [0, -1, -2, 1];

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
enum Ev {
    Admit,
    Release(i64, Outcome),
    ForceOpen,
    ForceClose,
    Status,
}

fn all_events() -> Vec<Ev> {
    let mut v = vec![Ev::Admit, Ev::ForceOpen, Ev::ForceClose, Ev::Status];
    for d in DELTAS {
        for o in OUTCOMES {
            v.push(Ev::Release(d, o));
        }
    }
    v
}

/// The event for the pure layer, on a word whose counter is `counter`.
fn pure_event(ev: Ev, counter: u32, period: u64) -> Event {
    match ev {
        Ev::Admit => Event::Admit,
        Ev::Release(d, outcome) => Event::Release {
            counter: (i128::from(counter) + i128::from(d)).rem_euclid(i128::from(period)) as u32,
            outcome,
        },
        Ev::ForceOpen => Event::ForceOpen,
        Ev::ForceClose => Event::ForceClose,
        Ev::Status => Event::Status,
    }
}

/// Applies `ev` to the model; returns the verdict the core must give.
fn model_step(m: &mut Model, ev: Ev, now: u64) -> Verdict {
    let p = m.config().counter_period();
    match ev {
        Ev::Admit => match m.acquire(now) {
            Some(t) => Verdict::Admitted {
                counter: (t.counter % p) as u32,
                probe: t.probe,
            },
            None => Verdict::Rejected,
        },
        Ev::Release(d, outcome) => {
            if m.release(m.counter().wrapping_add_signed(d), outcome, now) {
                Verdict::Recorded
            } else {
                Verdict::Stale
            }
        }
        Ev::ForceOpen => {
            m.force_open();
            Verdict::Done
        }
        Ev::ForceClose => {
            m.force_close();
            Verdict::Done
        }
        Ev::Status => Verdict::Status(m.status(now)),
    }
}

/// Applies an event to a word through the pure layer, counting clock reads.
fn pure<W: Word>(config: &Config, word: W::Raw, event: Event, now: u64) -> (Step<W::Raw>, u32) {
    let reads = Cell::new(0u32);
    let step = apply::<W>(config, word, event, || {
        reads.set(reads.get() + 1);
        now
    });
    (step, reads.get())
}

#[derive(Default, Debug)]
struct Counts {
    states: u64,
    edges: u64,
    side_checks: u64,
    corrupt_words: u64,
}

struct Explorer<'a, W: Word> {
    config: Config,
    mcfg: ModelConfig,
    clocks: &'a [u64],
    events: Vec<Ev>,
    counts: Counts,
    corrupt_seen: HashSet<u64>,
    /// Compare with the model (off with `EXHAUSTIVE_WITHOUT_MODEL=1`, to see
    /// what the invariant checks catch on their own).
    compare_model: bool,
    _w: std::marker::PhantomData<W>,
}

fn decode<W: Word>(word: W::Raw) -> Snapshot {
    Snapshot::decode::<W>(word).expect("reachable words decode")
}

impl<W: Word> Explorer<'_, W> {
    fn period(&self) -> u64 {
        self.mcfg.counter_period()
    }

    fn key(&self, word: W::Raw, model: &Model, now: u64) -> (u64, ModelState, u64) {
        let counter_field = (self.period() - 1) << TAG_BITS;
        (word.into() & !counter_field, model.state(), now)
    }

    /// One edge: applies `ev` at `now` to the core's word and the model,
    /// compares them, checks the invariants, returns the successor.
    fn edge(&mut self, word: W::Raw, model: &Model, ev: Ev, now: u64) -> (W::Raw, Model) {
        self.counts.edges += 1;
        let pre = decode::<W>(word);
        let (step, reads) = pure::<W>(
            &self.config,
            word,
            pure_event(ev, pre.counter, self.period()),
            now,
        );
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
        assert!(reads <= 1, "clock read {reads} times: {}", ctx());
        if self.compare_model {
            assert_eq!(step.verdict, want, "verdict: {}", ctx());
            if let Some(diff) = state_mismatch(&post, &m) {
                panic!("state: {diff}: {}", ctx());
            }
            assert!(
                transitions_match(&self.mcfg, step.transitions, m.transitions()),
                "transitions {:?} vs model {:?}: {}",
                step.transitions.iter().collect::<Vec<_>>(),
                m.transitions(),
                ctx()
            );
            assert_eq!(reads == 1, m.read_clock(), "clock read: {}", ctx());
        }
        let unchanged = step.word == word;
        self.invariants(&pre, ev, now, &step, &post, reads, unchanged, &ctx);
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
        step: &Step<W::Raw>,
        post: &Snapshot,
        reads: u32,
        unchanged: bool,
        ctx: &dyn Fn() -> String,
    ) {
        let l = W::LAYOUT;
        let n = step.transitions.len() as u32;
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
        // each with the counter of the state it entered.
        let mut from = pre.state.phase();
        let mut c = pre.counter;
        for t in step.transitions {
            c = l.next_counter(c);
            assert_eq!(
                (t.from, t.counter),
                (from, c),
                "I7: chain broken: {}",
                ctx()
            );
            from = t.to;
        }
        assert_eq!(
            from,
            post.state.phase(),
            "I7: chain does not end in the new state: {}",
            ctx()
        );
        assert!(n <= 2, "at most two transitions per event: {}", ctx());
        match ev {
            Ev::Admit => match (pre.state, step.verdict) {
                // I9: admission in Closed is a load: no clock, no store.
                (State::Closed { .. }, v) => {
                    assert_eq!(
                        v,
                        Verdict::Admitted {
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
                // I1: an admission outside Closed is the single probe of a
                // fresh state: its counter is new, and no other ticket can
                // carry it.
                (_, Verdict::Admitted { counter, probe }) => {
                    assert!(probe, "I1: non-probe admitted outside Closed: {}", ctx());
                    assert_eq!(post.state.phase(), Phase::Probing, "I1: {}", ctx());
                    assert_eq!(counter, post.counter, "I1: {}", ctx());
                    assert_ne!(
                        counter,
                        pre.counter,
                        "I1: probe ticket reuses a counter: {}",
                        ctx()
                    );
                    assert_eq!(
                        step.transitions.iter().last().map(|t| t.to),
                        Some(Phase::Probing),
                        "{}",
                        ctx()
                    );
                }
                (_, Verdict::Rejected) => {
                    assert!(
                        unchanged
                            || matches!(pre.state, State::Open { .. } | State::Probing { .. }),
                        "{}",
                        ctx()
                    );
                    assert_eq!(n, 0, "a rejection changes nothing: {}", ctx());
                    // I4: an Open breaker rejects only before its time is up.
                    if let State::Open { since, trips } = pre.state {
                        assert!(
                            l.elapsed(since, now) < self.config.open_duration(trips),
                            "I4/I5: {}",
                            ctx()
                        );
                    }
                }
                (_, v) => panic!("admission answered {v:?}: {}", ctx()),
            },
            Ev::Release(d, outcome) => {
                // I2: a ticket from another state changes nothing and reads no clock.
                if d != 0 {
                    assert_eq!(step.verdict, Verdict::Stale, "I2: {}", ctx());
                    assert!(
                        unchanged && n == 0 && reads == 0,
                        "I2: stale release acted: {}",
                        ctx()
                    );
                }
                // I1: only the probe (current counter of Probing) can change a
                // non-closed state by a release.
                if step.verdict == Verdict::Recorded && !matches!(pre.state, State::Closed { .. }) {
                    assert!(
                        d == 0 && matches!(pre.state, State::Probing { .. }),
                        "I1: {}",
                        ctx()
                    );
                }
                if matches!(
                    pre.state,
                    State::Open { .. } | State::HalfOpen { .. } | State::ForcedOpen
                ) {
                    assert_eq!(
                        step.verdict,
                        Verdict::Stale,
                        "no ticket carries this counter: {}",
                        ctx()
                    );
                    assert!(unchanged, "{}", ctx());
                }
                // I3: a failed probe counts one more trip (saturating), once.
                if let (State::Probing { trips, .. }, Verdict::Recorded, Outcome::Failure) =
                    (pre.state, step.verdict, outcome)
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
                    let threshold = self.config.get_failure_threshold();
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
            Ev::Status => {
                if matches!(
                    pre.state,
                    State::Closed { .. } | State::HalfOpen { .. } | State::ForcedOpen
                ) {
                    assert!(
                        unchanged && reads == 0,
                        "I9: status wrote or read the clock: {}",
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

    /// Checks at times computed from the node's state (the core's word),
    /// off the graph: liveness at exact deadlines (I5), rejection before
    /// them (I4), and the time-fault rules (I6).
    fn node_checks(&mut self, word: W::Raw, model: &Model, now: u64) {
        let l = W::LAYOUT;
        let max = l.max_duration();
        let field = 1u64 << l.time_bits;
        let before = decode::<W>(word);
        // Whether an admission at `t` elects a new probe.
        let elected = |this: &mut Self, t: u64| {
            this.counts.side_checks += 1;
            let (w, _) = this.edge(word, model, Ev::Admit, t);
            let after = decode::<W>(w);
            matches!(after.state, State::Probing { .. }) && after.counter != before.counter
        };
        match before.state {
            State::Open { since, trips } | State::Probing { since, trips } => {
                let open = matches!(before.state, State::Open { .. });
                let d = if open {
                    self.mcfg.open_duration(u64::from(trips))
                } else {
                    self.mcfg.probe_timeout
                };
                // `since` is the stored timestamp (modulo 2^T); times built
                // from it are exact modulo 2^T, which is all the core sees.
                // I5: the first caller at the deadline becomes the probe (a
                // lost probe blocks for at most the probe timeout); I4: one
                // tick earlier it is rejected.
                assert!(
                    elected(self, since.wrapping_add(d)),
                    "I5: no probe at the deadline"
                );
                assert!(
                    !elected(self, since.wrapping_add(d - 1)),
                    "I4: admitted before the deadline"
                );
                // I6: a clock that went backwards (by one tick, or by the
                // maximum duration) reads as elapsed: fails towards probing.
                assert!(
                    elected(self, since.wrapping_sub(1)),
                    "I6: backwards by 1 did not probe"
                );
                assert!(
                    elected(self, since.wrapping_sub(max)),
                    "I6: backwards by max did not probe"
                );
                // I6: nobody called for exactly one time-field period: the
                // breaker rejects again, but for at most `d` more ticks.
                assert!(
                    !elected(self, since.wrapping_add(field)),
                    "I6: documented wrap rejection"
                );
                assert!(
                    elected(self, since.wrapping_add(field).wrapping_add(d)),
                    "I6: bound exceeded"
                );
                if !open {
                    // A probe that reports at its timeout is stale and
                    // half-opens; one tick before, it counts.
                    self.counts.side_checks += 2;
                    let late = Ev::Release(0, Outcome::Success);
                    let (w, _) = self.edge(word, model, late, since.wrapping_add(d));
                    assert!(
                        matches!(decode::<W>(w).state, State::HalfOpen { .. }),
                        "late probe"
                    );
                    let (w, _) = self.edge(word, model, late, since.wrapping_add(d - 1));
                    assert_eq!(
                        decode::<W>(w).state,
                        State::Closed { failures: 0 },
                        "probe in time"
                    );
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
            State::Closed { .. } | State::HalfOpen { .. } => {
                // Admitted at once, whatever the time.
                self.counts.side_checks += 1;
                let (w, _) = self.edge(word, model, Ev::Admit, now);
                let _ = w;
            }
        }
    }

    /// SPEC I8: words made corrupt from this reachable one (an unknown tag,
    /// stray bits, a failure count at or over the threshold) decode without
    /// panic, are repaired to `Closed` with the next counter and reported,
    /// and then the event applies as the model says it does from there.
    fn corrupt_checks(&mut self, word: W::Raw, now: u64) {
        let l = W::LAYOUT;
        let raw: u64 = word.into();
        let counter_field = (self.period() - 1) << TAG_BITS;
        if !self.corrupt_seen.insert(raw & !counter_field) {
            return;
        }
        let keep = raw & counter_field;
        let payload = TAG_BITS + l.counter_bits;
        let top = 1u64 << (l.word_bits - 1);
        let threshold = u64::from(self.config.get_failure_threshold());
        let variants = [
            (raw & !7) | 5,
            (raw & !7) | 6,
            (raw & !7) | 7,
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
                let (step, reads) = pure::<W>(
                    &self.config,
                    bad_w,
                    pure_event(ev, repaired, self.period()),
                    now,
                );
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
                assert_eq!(step.verdict, want, "I8: {bad:#x} {ev:?}");
                if let Some(diff) = state_mismatch(&post, &m) {
                    panic!("I8: {bad:#x} {ev:?}: {diff}");
                }
                assert!(
                    transitions_match(&self.mcfg, step.transitions, m.transitions()),
                    "I8: {bad:#x} {ev:?}"
                );
                assert_eq!(reads == 1, m.read_clock(), "I8: {bad:#x} {ev:?} clock");
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

/// The finite clock domain: small times and clusters around the interesting
/// large ones.
fn clock_domain<W: Word>() -> Vec<u64> {
    let l = W::LAYOUT;
    let m = l.max_duration();
    let p = 1u64 << l.time_bits;
    let mut v: Vec<u64> = (0..=6).collect();
    v.extend([
        m / 2 - 1,
        m / 2,
        m / 2 + 1,
        m - 1,
        m,
        m + 1,
        p - 1,
        p,
        p + 1,
    ]);
    v.extend([u64::MAX - 1, u64::MAX]);
    v.sort_unstable();
    v.dedup();
    v
}

/// Thresholds 1–3, small durations with and without backoff (the cap
/// reached after one or two doublings, and not within the clock domain), and
/// the maximum durations. The threshold only shapes `Closed`, so it is varied
/// across the timings rather than crossed with them.
fn configs<W: Word>() -> Vec<Config> {
    let m = W::LAYOUT.max_duration();
    let cases: [(u32, u64, u64, Option<u64>); 6] = [
        (1, 1, 1, None),
        (2, 2, 3, None),
        (3, 1, 2, Some(4)),
        (2, 2, 1, Some(8)),
        (3, 3, 3, Some(1 << 20)),
        (1, m / 2, m, Some(m)),
    ];
    cases
        .into_iter()
        .map(|(n, open_for, probe, cap)| {
            let c = Config::new()
                .failure_threshold(n)
                .open_for(open_for)
                .probe_timeout(probe);
            match cap {
                Some(cap) => c.exponential_backoff(cap.min(m)),
                None => c,
            }
        })
        .collect()
}

fn run_width<W: Word>(name: &str) -> Counts {
    let clocks = clock_domain::<W>();
    let mut total = Counts::default();
    let start = Instant::now();
    for config in configs::<W>() {
        let config = config.validate::<W>().expect("small configs are in range");
        let mut x = Explorer::<W> {
            config,
            mcfg: ModelConfig::for_width::<W>(&config),
            clocks: &clocks,
            events: all_events(),
            counts: Counts::default(),
            corrupt_seen: HashSet::new(),
            compare_model: std::env::var_os("EXHAUSTIVE_WITHOUT_MODEL").is_none(),
            _w: std::marker::PhantomData,
        };
        x.explore();
        println!(
            "{name} threshold={} open_for={} probe_timeout={} backoff={:?}: {} states, {} transitions",
            config.get_failure_threshold(),
            config.get_open_for(),
            config.get_probe_timeout(),
            config.get_backoff_cap(),
            x.counts.states,
            x.counts.edges
        );
        total.states += x.counts.states;
        total.edges += x.counts.edges;
        total.side_checks += x.counts.side_checks;
        total.corrupt_words += x.counts.corrupt_words;
    }
    let line = format!(
        "exhaustive {name}: {} configs, clock domain of {} values, {} states, {} transitions, {} side checks, {} corrupt words, {:.1}s",
        configs::<W>().len(),
        clocks.len(),
        total.states,
        total.edges,
        total.side_checks,
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
/// round-trip.
fn random_words<W: Word>(seed: u64, count: u64) {
    let config = Config::new()
        .failure_threshold(3)
        .open_for(5)
        .probe_timeout(5)
        .exponential_backoff(40);
    let mut rng = XorShift::new(seed);
    let events = all_events();
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
            }) => failures >= config.get_failure_threshold(),
            Ok(_) => false,
        };
        if let Ok(s) = decoded {
            assert_eq!(s.encode::<W>(), w, "valid words are canonical");
        }
        let ev = events[rng.below(events.len() as u64) as usize];
        let (step, _) = pure::<W>(
            &config,
            w,
            pure_event(
                ev,
                Snapshot::counter_bits::<W>(w),
                1 << W::LAYOUT.counter_bits,
            ),
            rng.next_u64(),
        );
        assert_eq!(step.repaired.is_some(), corrupt, "I8: {raw:#x}");
        assert!(
            Snapshot::decode::<W>(step.word).is_ok(),
            "I8: the result decodes"
        );
    }
}

#[test]
fn random_words_never_panic_and_corrupt_ones_are_repaired() {
    random_words::<W64>(1, 200_000);
    random_words::<W32>(2, 200_000);
}
