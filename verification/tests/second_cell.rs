//! A second implementation of the breaker, built only on the core's public
//! kit: the word in a `Mutex<u64>` (or `Mutex<u32>`) instead of an
//! atomic, driven through `tripword::cell::update`, with its own tickets.
//! It runs the same random operation sequences as the reference model
//! (`tripword_verification::model`) and must agree with it on every verdict,
//! rejection (cause and wait), report, status and word: the proof that the
//! kit alone, without `Breaker`, gives another crate the whole state machine.
//!
//! A second cell, [`Flaky`], fails some exchanges with a cell error before or
//! after applying them (as a remote store's timeout may): `update` must
//! return the error without retrying or reporting, and the breaker on it must
//! still agree with the model once it reloads.

use std::cell::RefCell;
use std::convert::Infallible;
use std::sync::Mutex;

use proptest::prelude::*;
use tripword::Jitter;
use tripword::cell::{self, CasError, Cell};
use tripword::transition::{self, Event, Verdict};
use tripword::word::Snapshot;
use tripword::{Config, Outcome, Status, Transition, ValidConfig, W32, W64, Word};
use tripword_verification::harness::{
    counter_matches, rejection_matches, state_mismatch, transitions_match,
};
use tripword_verification::model::{Model, ModelConfig};

/// The word behind a lock: load and compare-exchange under it.
struct Locked<W: Word>(Mutex<W::Raw>);

impl<W: Word> Cell<W> for Locked<W> {
    type Error = Infallible;
    fn load(&self) -> Result<W::Raw, Infallible> {
        Ok(*self.0.lock().unwrap())
    }
    fn compare_exchange(
        &self,
        current: W::Raw,
        new: W::Raw,
    ) -> Result<(), CasError<W::Raw, Infallible>> {
        let mut word = self.0.lock().unwrap();
        if *word != current {
            return Err(CasError::Changed(*word));
        }
        *word = new;
        Ok(())
    }
}

/// A lock whose exchanges fail now and then, as a remote store's can: before
/// applying (nothing happened) or after (it happened, the answer was lost).
struct Flaky<W: Word> {
    word: Mutex<W::Raw>,
    /// Fail the exchange when this is `Some(applied)`: then take the next.
    faults: RefCell<Vec<Option<bool>>>,
}

#[derive(Debug, PartialEq)]
struct Lost;

impl<W: Word> Cell<W> for Flaky<W> {
    type Error = Lost;
    fn load(&self) -> Result<W::Raw, Lost> {
        Ok(*self.word.lock().unwrap())
    }
    fn compare_exchange(&self, current: W::Raw, new: W::Raw) -> Result<(), CasError<W::Raw, Lost>> {
        let fault = self.faults.borrow_mut().pop().flatten();
        let mut word = self.word.lock().unwrap();
        if *word != current {
            return Err(CasError::Changed(*word));
        }
        match fault {
            Some(false) => Err(CasError::Cell(Lost)),
            Some(true) => {
                *word = new;
                Err(CasError::Cell(Lost))
            }
            None => {
                *word = new;
                Ok(())
            }
        }
    }
}

/// A breaker of this test's own on any cell: tickets are counters, nothing
/// more (one breaker, so no identity is needed).
struct KitBreaker<W: Word, K: Cell<W>> {
    cell: K,
    config: ValidConfig<W>,
    reports: RefCell<Vec<Transition>>,
}

impl<W: Word, K: Cell<W>> KitBreaker<W, K> {
    fn run(&self, event: Event, now: u64) -> Result<Verdict, K::Error> {
        let seen = self.cell.load()?;
        let applied = cell::update(
            &self.cell,
            &self.config,
            seen,
            event,
            None,
            || now,
            |swap| self.reports.borrow_mut().extend(swap.transitions()),
        )?;
        Ok(applied.verdict())
    }
    fn status(&self, now: u64) -> Result<Status, K::Error> {
        Ok(transition::status_at(
            &self.config,
            self.cell.load()?,
            || now,
        ))
    }
    fn snapshot(&self) -> Snapshot {
        let raw = self.cell.load().unwrap_or_else(|_| panic!("load"));
        Snapshot::decode::<W>(raw).expect("the kit stores valid words")
    }
}

#[derive(Clone, Debug)]
enum Op {
    Acquire,
    Release(usize, Outcome),
    FailureFor(usize, u64),
    Advance(u64),
    ForceOpen,
    ForceOpenFor(u64),
    ForceClose,
    Status,
}

fn op() -> impl Strategy<Value = Op> {
    let outcome = prop_oneof![
        Just(Outcome::Success),
        Just(Outcome::Failure),
        Just(Outcome::Ignored)
    ];
    prop_oneof![
        4 => Just(Op::Acquire),
        4 => (0..8usize, outcome).prop_map(|(i, o)| Op::Release(i, o)),
        1 => (0..8usize, prop_oneof![0..200u64, Just(u64::MAX)]).prop_map(|(i, d)| Op::FailureFor(i, d)),
        3 => prop_oneof![0..8u64, 0..300u64, Just(1u64 << 15), Just(1u64 << 22)].prop_map(Op::Advance),
        1 => Just(Op::ForceOpen),
        1 => (0..300u64).prop_map(Op::ForceOpenFor),
        1 => Just(Op::ForceClose),
        2 => Just(Op::Status),
    ]
}

fn config() -> impl Strategy<Value = Config> {
    (
        1..4u32,
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

/// Runs `ops` on a kit breaker over `cell` and on the model, comparing
/// everything after every step. `faults`: whether the cell may fail
/// exchanges (then a failed operation is re-run after a reload, and the model
/// is re-synchronised from what the cell holds).
fn agree<W: Word, K: Cell<W>>(cell: K, config: Config, start: u64, ops: &[Op])
where
    K::Error: core::fmt::Debug,
{
    let valid = config.check::<W>().expect("valid");
    let cfg = ModelConfig::for_width(&valid);
    let b = KitBreaker {
        cell,
        config: valid,
        reports: RefCell::new(Vec::new()),
    };
    let mut m = Model::new(cfg);
    let mut now = start;
    let mut tickets: Vec<(u64, u32)> = Vec::new(); // (model counter, kit counter)
    for (step, op) in ops.iter().enumerate() {
        let what = format!("step {step}: {op:?} at {now}");
        b.reports.borrow_mut().clear();
        match *op {
            Op::Acquire => {
                let kit = b.run(Event::Admit, now).expect("no fault");
                match (kit, m.acquire(now)) {
                    (Verdict::Admitted { counter, probe }, Ok(t)) => {
                        assert!(counter_matches(&cfg, t.counter, counter), "{what}");
                        assert_eq!(probe, t.probe, "{what}");
                        tickets.push((t.counter, counter));
                    }
                    (Verdict::Rejected(r), Err(mr)) => {
                        assert!(rejection_matches(&r, &mr), "{what}: {r:?} vs {mr:?}")
                    }
                    (k, mo) => panic!("{what}: kit {k:?}, model {mo:?}"),
                }
            }
            Op::Release(..) | Op::FailureFor(..) if tickets.is_empty() => continue,
            Op::Release(i, outcome) => {
                let (mc, kc) = tickets.remove(i % tickets.len());
                let kit = b
                    .run(
                        Event::Release {
                            counter: kc,
                            outcome,
                        },
                        now,
                    )
                    .expect("no fault");
                let model = m.release(mc, outcome, now);
                assert_eq!(kit == Verdict::Recorded, model, "{what}: {kit:?}");
            }
            Op::FailureFor(i, open_for) => {
                let (mc, kc) = tickets.remove(i % tickets.len());
                let kit = b
                    .run(
                        Event::FailureFor {
                            counter: kc,
                            open_for,
                        },
                        now,
                    )
                    .expect("no fault");
                let model = m.release_failure_for(mc, open_for, now);
                assert_eq!(kit == Verdict::Recorded, model, "{what}: {kit:?}");
            }
            Op::Advance(dt) => {
                now = now.wrapping_add(dt);
                continue;
            }
            Op::ForceOpen => {
                b.run(Event::ForceOpen, now).expect("no fault");
                m.force_open();
            }
            Op::ForceOpenFor(d) => {
                b.run(Event::ForceOpenFor { open_for: d }, now)
                    .expect("no fault");
                m.force_open_for(d, now);
            }
            Op::ForceClose => {
                b.run(Event::ForceClose, now).expect("no fault");
                m.force_close();
            }
            Op::Status => {
                let kit = b.status(now).expect("no fault");
                assert_eq!(kit, m.status(now), "{what}");
                assert!(
                    b.reports.borrow().is_empty(),
                    "{what}: a status read reports nothing"
                );
            }
        }
        let reports = b.reports.borrow().clone();
        assert!(
            transitions_match(&cfg, reports.iter().copied(), m.transitions()),
            "{what}: kit {reports:?} model {:?}",
            m.transitions()
        );
        if let Some(diff) = state_mismatch(&b.snapshot(), &m) {
            panic!("{what}: {diff}");
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(
        std::env::var("PROPTEST_CASES").ok().and_then(|c| c.parse().ok()).unwrap_or(1_000)
    ))]

    /// The kit on a `Mutex<u64>` cell agrees with the model, 64-bit word.
    #[test]
    fn mutex_cell_w64_matches_model(config in config(), start in prop_oneof![Just(0u64), Just(u64::MAX - 500), any::<u64>()], ops in prop::collection::vec(op(), 1..60)) {
        agree::<W64, _>(Locked::<W64>(Mutex::new(0)), config, start, &ops);
    }

    /// The kit on a `Mutex<u32>` cell agrees with the model, 32-bit word.
    #[test]
    fn mutex_cell_w32_matches_model(config in config(), start in prop_oneof![Just(0u64), Just(u64::MAX - 500), any::<u64>()], ops in prop::collection::vec(op(), 1..60)) {
        agree::<W32, _>(Locked::<W32>(Mutex::new(0)), config, start, &ops);
    }
}

/// A cell error stops the loop: `update` returns it, reports nothing, does
/// not retry; whether the exchange happened shows in the next load.
#[test]
fn a_cell_error_is_returned_not_retried_nor_reported() {
    let valid = Config::new()
        .failure_threshold(1)
        .open_for(10)
        .check::<W64>()
        .unwrap();
    for applied in [false, true] {
        let cell = Flaky::<W64> {
            word: Mutex::new(0),
            faults: RefCell::new(vec![Some(applied)]),
        };
        let reports = RefCell::new(0);
        let admitted = cell::update(
            &cell,
            &valid,
            0,
            Event::Admit,
            None,
            || 0,
            |_| *reports.borrow_mut() += 1,
        )
        .unwrap();
        let Verdict::Admitted { counter, .. } = admitted.verdict() else {
            panic!()
        };
        // The trip's exchange fails.
        let failed = cell::update(
            &cell,
            &valid,
            0,
            Event::Release {
                counter,
                outcome: Outcome::Failure,
            },
            None,
            || 5,
            |_| *reports.borrow_mut() += 1,
        );
        assert_eq!(failed.map(|a| a.verdict()), Err(Lost));
        assert_eq!(
            *reports.borrow(),
            0,
            "nothing reported for a failed exchange"
        );
        assert!(
            cell.faults.borrow().is_empty(),
            "exactly one attempt was made"
        );
        let word = *cell.word.lock().unwrap();
        let state = Snapshot::decode::<W64>(word).unwrap().state;
        assert_eq!(
            state.status(),
            if applied {
                Status::Open
            } else {
                Status::Closed
            },
            "the next load shows whether it happened"
        );
    }
}

/// A failed exchange then a reload: the breaker on a flaky cell still agrees
/// with the model when every failed operation is retried from a fresh load.
#[test]
fn a_flaky_cell_agrees_after_reloads() {
    let valid = Config::new()
        .failure_threshold(2)
        .open_for(20)
        .probe_timeout(10)
        .check::<W32>()
        .unwrap();
    let cfg = ModelConfig::for_width(&valid);
    let cell = Flaky::<W32> {
        word: Mutex::new(0),
        // Faults before applying only, so a retry is the same operation.
        faults: RefCell::new([None, Some(false), None, Some(false), None].repeat(20)),
    };
    let mut m = Model::new(cfg);
    let mut now = 0u64;
    for round in 0..40u64 {
        let retry = |event: Event, now: u64| loop {
            let seen = Cell::<W32>::load(&cell).unwrap();
            match cell::update(&cell, &valid, seen, event, None, || now, |_| {}) {
                Ok(a) => break a.verdict(),
                Err(Lost) => continue,
            }
        };
        let kit = retry(Event::Admit, now);
        let model = m.acquire(now);
        match (kit, model) {
            (Verdict::Admitted { counter, .. }, Ok(t)) => {
                let outcome = if round % 3 == 0 {
                    Outcome::Success
                } else {
                    Outcome::Failure
                };
                let r = retry(Event::Release { counter, outcome }, now);
                assert_eq!(r == Verdict::Recorded, m.release(t.counter, outcome, now));
            }
            (Verdict::Rejected(r), Err(mr)) => assert!(rejection_matches(&r, &mr)),
            (k, mo) => panic!("round {round}: kit {k:?} model {mo:?}"),
        }
        let snap = Snapshot::decode::<W32>(*cell.word.lock().unwrap()).unwrap();
        assert_eq!(state_mismatch(&snap, &m), None, "round {round}");
        now += 7;
    }
}
