//! Linearizability of the async driver: 2–4 tokio tasks on a multi-thread
//! runtime run random operations through `cell::update_async` on one shared
//! async cell and one shared manual clock, record an invoke/return history
//! (stamps from one global `SeqCst` counter), and each history is checked
//! linearizable against the reference [model](tripword_verification::model)
//! with the Wing–Gong search of
//! [`harness::linearizable`](tripword_verification::harness::linearizable),
//! as `tests/linearizability.rs` does for the atomic `Breaker`.
//!
//! The cell is a word in an atomic whose load and compare-and-exchange each
//! yield to the runtime first (so tasks interleave between a load and its
//! exchange, on one worker or several) and whose exchange now and then
//! fails spuriously. Operations: admit (holding the ticket), release of the
//! task's own ticket with any outcome or with a hinted failure, status (a
//! load and `transition::status_at`), force open, force open for, force
//! close, and clock moves (forward by 0–3 ticks or far; in half of the
//! histories also back by 1–3). Half the operations pass a clock reading
//! taken right after their load (`seen_at`). One history in four is a
//! failure storm: each task admits and fails, over and over. `W32` runs
//! half its histories in exact ticks and half in 4-tick units.
//!
//! Each operation records the last clock value it read and the model
//! applies it with that value; an operation's result includes the
//! transitions its own `on_swap` reported, which must equal the model's at
//! the linearization point (spec I7). With a clock that never went back, no
//! operation may act on a timestamp newer than the clock it read (I4).
//! Over the whole history the reported counters are exactly 1..=final
//! counter, each once (I7, I10); single probe (I1) and exact trips (I3)
//! follow from the model's verdicts.
//!
//! `ASYNC_LINEARIZABILITY_HISTORIES` sets the number of histories per word
//! width (default 2,000, so 4,000 in all).

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use tripword::Jitter;
use tripword::cell::{AsyncCell, CasError, update_async};
use tripword::clock::ManualClock;
use tripword::transition::{self, Event, Verdict};
use tripword::word::Snapshot;
use tripword::{Cause, Clock, Config, Outcome, Status, Transition, ValidConfig, W32, W64, Word};
use tripword_verification::harness::{XorShift, linearizable, transitions_match};
use tripword_verification::model::{Model, ModelConfig, ModelState};

/// A word (of either width, widened) in an atomic, answering
/// asynchronously: every operation yields to the runtime before it touches
/// the word, and one exchange in `spurious` fails with the word it finds
/// (possibly unchanged).
struct YieldingAtomic<W: Word> {
    word: AtomicU64,
    exchanges: AtomicU64,
    /// Exchanges lost to another task's write (not the spurious ones).
    lost: AtomicU64,
    spurious: u64,
    width: std::marker::PhantomData<fn() -> W>,
}

impl<W: Word> AsyncCell<W> for YieldingAtomic<W> {
    type Error = std::convert::Infallible;
    async fn load(&self) -> Result<W::Raw, Self::Error> {
        tokio::task::yield_now().await;
        Ok(W::from_u64(self.word.load(Ordering::Acquire)))
    }
    async fn compare_exchange(
        &self,
        current: W::Raw,
        new: W::Raw,
    ) -> Result<(), CasError<W::Raw, Self::Error>> {
        tokio::task::yield_now().await;
        let n = self.exchanges.fetch_add(1, Ordering::Relaxed);
        if n.wrapping_mul(0x9E37_79B9_7F4A_7C15)
            .is_multiple_of(self.spurious)
        {
            return Err(CasError::Changed(W::from_u64(
                self.word.load(Ordering::Acquire),
            )));
        }
        self.word
            .compare_exchange_weak(
                current.into(),
                new.into(),
                Ordering::AcqRel,
                Ordering::Acquire,
            )
            .map(|_| ())
            .map_err(|seen| {
                if seen != current.into() {
                    self.lost.fetch_add(1, Ordering::Relaxed);
                }
                CasError::Changed(W::from_u64(seen))
            })
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
enum Op {
    Acquire,
    /// Release the task's ticket with this outcome.
    Release(Outcome),
    /// Release the task's ticket with a failure carrying this hint (ticks).
    ReleaseFor(u64),
    Status,
    ForceOpen,
    ForceOpenFor(u64),
    ForceClose,
    Advance(u64),
    Set(u64),
}

#[derive(Clone, Debug, PartialEq, Eq)]
enum Res {
    /// Admitted with (counter, probe), or rejected with the cause and wait.
    Acquired(Result<(u32, bool), (Cause, Option<u64>)>),
    /// Recorded (true) or stale.
    Released(bool),
    Status(Status),
    Done,
}

#[derive(Clone, Debug)]
struct Entry {
    task: usize,
    op: Op,
    res: Res,
    /// What this operation's own `on_swap` reported.
    transitions: Vec<Transition>,
    /// The last clock value the operation read (or was given with its
    /// load), if any.
    now: Option<u64>,
    invoke: u64,
    ret: u64,
}

/// What a history's tasks share.
struct Shared<W: Word> {
    cell: YieldingAtomic<W>,
    config: ValidConfig<W>,
    clock: ManualClock,
    seq: AtomicU64,
    /// Every transition reported, by any task.
    all: std::sync::Mutex<Vec<Transition>>,
}

impl<W: Word> Shared<W> {
    /// `event` through `update_async` from a fresh load; `given`: pass a
    /// clock reading taken right after the load. Returns the verdict, the
    /// transitions reported and the last clock value read.
    async fn apply(&self, event: Event, given: bool) -> (Verdict, Vec<Transition>, Option<u64>) {
        let Ok(seen) = self.cell.load().await;
        let mut last = None;
        let seen_at = given.then(|| {
            let t = self.clock.now();
            last = Some(t);
            t
        });
        let mut reported = Vec::new();
        let Ok(applied) = update_async(
            &self.cell,
            &self.config,
            seen,
            event,
            seen_at,
            || {
                let t = self.clock.now();
                last = Some(t);
                t
            },
            |swap| reported.extend(swap.transitions()),
        )
        .await;
        self.all.lock().unwrap().extend(reported.iter().copied());
        (applied.verdict(), reported, last)
    }
}

fn outcome(rng: &mut XorShift) -> Outcome {
    [Outcome::Success, Outcome::Failure, Outcome::Ignored][rng.below(3) as usize]
}

/// One task's run: `ops` random operations, each stamped; a held ticket is
/// released before the end.
async fn run_task<W: Word>(
    task: usize,
    seed: u64,
    ops: usize,
    shared: Arc<Shared<W>>,
    backwards: bool,
    hints: [u64; 8],
    storm: bool,
) -> Vec<Entry> {
    let mut rng = XorShift::new(seed);
    let mut held: Option<u32> = None;
    let mut out = Vec::new();
    let mut i = 0;
    let ops = if storm { ops + (ops & 1) } else { ops };
    while i < ops || held.is_some() {
        i += 1;
        if !storm && rng.below(3) == 0 {
            tokio::task::yield_now().await;
        }
        let r = rng.below(100);
        let must_finish = i > ops;
        let given = rng.below(2) == 0;
        let hint = |rng: &mut XorShift| match rng.below(hints.len() as u64 + 1) {
            0 => rng.next_u64(),
            i => hints[i as usize - 1],
        };
        let s = &*shared;
        let invoke = s.seq.fetch_add(1, Ordering::SeqCst);
        let mut transitions = Vec::new();
        let mut now = None;
        let mut run = async |event: Event| {
            let (verdict, reported, last) = s.apply(event, given).await;
            transitions = reported;
            now = last;
            verdict
        };
        let (op, res) = if let Some(counter) = held.filter(|_| storm || must_finish || r < 45) {
            held = None;
            let op = if storm {
                Op::Release(Outcome::Failure)
            } else if rng.below(4) == 0 {
                Op::ReleaseFor(hint(&mut rng))
            } else {
                Op::Release(outcome(&mut rng))
            };
            let event = match op {
                Op::ReleaseFor(open_for) => Event::FailureFor { counter, open_for },
                Op::Release(outcome) => Event::Release { counter, outcome },
                _ => unreachable!(),
            };
            let verdict = run(event).await;
            assert!(
                matches!(verdict, Verdict::Recorded | Verdict::Stale),
                "a release said {verdict:?}"
            );
            (op, Res::Released(verdict == Verdict::Recorded))
        } else if storm || (held.is_none() && r < 45) {
            let res = match run(Event::Admit).await {
                Verdict::Admitted { counter, probe } => {
                    held = Some(counter);
                    Ok((counter, probe))
                }
                Verdict::Rejected(why) => Err((why.cause(), why.retry_after())),
                v => panic!("an admission said {v:?}"),
            };
            (Op::Acquire, Res::Acquired(res))
        } else if r < 65 {
            let Ok(word) = s.cell.load().await;
            let status = transition::status_at(&s.config, word, || {
                let t = s.clock.now();
                now = Some(t);
                t
            });
            (Op::Status, Res::Status(status))
        } else if r < 68 {
            run(Event::ForceOpen).await;
            (Op::ForceOpen, Res::Done)
        } else if r < 72 {
            run(Event::ForceClose).await;
            (Op::ForceClose, Res::Done)
        } else if r < 75 {
            let h = hint(&mut rng);
            run(Event::ForceOpenFor { open_for: h }).await;
            (Op::ForceOpenFor(h), Res::Done)
        } else if r < 96 || !backwards {
            let d = match rng.below(10) {
                // Far past any duration, landing anywhere in the ring.
                0 => (1 << 40) + rng.below(1 << 20),
                1..=3 => 0,
                _ => rng.below(4),
            };
            s.clock.advance(d);
            (Op::Advance(d), Res::Done)
        } else {
            let t = s.clock.now().wrapping_sub(1 + rng.below(3));
            s.clock.set(t);
            (Op::Set(t), Res::Done)
        };
        let ret = s.seq.fetch_add(1, Ordering::SeqCst);
        out.push(Entry {
            task,
            op,
            res,
            transitions,
            now,
            invoke,
            ret,
        });
    }
    out
}

/// The search state: the model, the (model) counter of the ticket each task
/// holds, and whether the clock never went back in this history.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
struct Search {
    model: Model,
    held: [Option<u64>; 4],
    monotonic: bool,
}

/// Applies one entry to the model with the clock value the operation read;
/// true when the results agree.
fn step(s: &mut Search, e: &Entry) -> bool {
    let m = &mut s.model;
    m.clear_last();
    let cfg = *m.config();
    // An operation that read no clock gets a value that would show if the
    // model needed one (checked below).
    let now = e.now.unwrap_or(0);
    let before = m.state();
    let same = match e.op {
        Op::Acquire => {
            let got = m.acquire(now);
            s.held[e.task] = got.ok().map(|t| t.counter);
            match (&e.res, got) {
                (Res::Acquired(Err(said)), Err(r)) => *said == (r.cause, r.retry_after),
                (Res::Acquired(Ok((c, probe))), Ok(t)) => {
                    *probe == t.probe && u64::from(*c) == t.counter % cfg.counter_period()
                }
                _ => false,
            }
        }
        Op::Release(outcome) => {
            let Some(counter) = s.held[e.task].take() else {
                return false;
            };
            e.res == Res::Released(m.release(counter, outcome, now))
        }
        Op::ReleaseFor(hint) => {
            let Some(counter) = s.held[e.task].take() else {
                return false;
            };
            e.res == Res::Released(m.release_failure_for(counter, hint, now))
        }
        Op::Status => e.res == Res::Status(m.status(now)),
        Op::ForceOpen => {
            m.force_open();
            true
        }
        Op::ForceOpenFor(hint) => {
            m.force_open_for(hint, now);
            true
        }
        Op::ForceClose => {
            m.force_close();
            true
        }
        Op::Advance(_) | Op::Set(_) => true,
    };
    // With a clock that never went back, an operation that needed the clock
    // must not have read one older than the timestamp it acted on.
    let fresh = match (e.now, before) {
        (Some(now), ModelState::Open { since, .. } | ModelState::Probing { since, .. }) => {
            !s.monotonic || !s.model.read_clock() || now.wrapping_sub(since) < 1 << 63
        }
        _ => true,
    };
    let ok = same
        && fresh
        && (e.now.is_some() || !s.model.read_clock())
        && transitions_match(&cfg, e.transitions.iter().copied(), s.model.transitions());
    s.model.clear_last();
    ok
}

fn histories() -> u64 {
    std::env::var("ASYNC_LINEARIZABILITY_HISTORIES")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(2_000)
}

#[derive(Default)]
struct Totals {
    histories: u64,
    ops: u64,
    overlapping: u64,
    exchanges: u64,
    lost: u64,
}

fn check_width<W: Word>(name: &str, seed: u64, rt: &tokio::runtime::Runtime) -> Totals {
    let mut rng = XorShift::new(seed);
    let mut totals = Totals::default();
    for h in 0..histories() {
        let tasks = 2 + rng.below(3) as usize;
        let ops = 4 + rng.below(6) as usize;
        let open_for = 1 + rng.below(4);
        let storm = h % 4 == 3;
        let threshold = if storm {
            2 + rng.below(12) as u32
        } else {
            1 + rng.below(3) as u32
        };
        let mut config = Config::new()
            .failure_threshold(threshold)
            .open_for(open_for)
            .probe_timeout(1 + rng.below(4));
        if rng.below(2) == 0 {
            config = config.exponential_backoff(open_for * 4);
        }
        config = config.jitter(match rng.below(3) {
            0 => Jitter::None,
            1 => Jitter::Equal {
                seed: rng.below(1 << 32) as u32,
            },
            _ => Jitter::Full {
                seed: rng.below(1 << 32) as u32,
            },
        });
        if W::LAYOUT.word_bits == 32 {
            config = config.horizon(if rng.below(2) == 0 { 0 } else { 100_000 });
        }
        let valid = config.check::<W>().expect("small configs are valid");
        let backwards = rng.below(2) == 0;
        let start = match rng.below(3) {
            0 => 0,
            1 => u64::MAX - 3,
            _ => rng.next_u64(),
        };
        let shared = Arc::new(Shared {
            cell: YieldingAtomic::<W> {
                word: AtomicU64::new(0),
                exchanges: AtomicU64::new(0),
                lost: AtomicU64::new(0),
                spurious: 3 + rng.below(8),
                width: std::marker::PhantomData,
            },
            config: valid,
            clock: ManualClock::new(start),
            seq: AtomicU64::new(0),
            all: std::sync::Mutex::new(Vec::new()),
        });
        let hints = [
            0,
            1,
            2,
            3,
            open_for,
            4 * open_for,
            valid.longest_hint(),
            u64::MAX,
        ];
        let seeds: Vec<u64> = (0..tasks).map(|_| rng.next_u64()).collect();
        let mut history: Vec<Entry> = rt.block_on(async {
            let barrier = Arc::new(tokio::sync::Barrier::new(tasks));
            let handles: Vec<_> = seeds
                .iter()
                .enumerate()
                .map(|(t, &seed)| {
                    let (shared, barrier) = (shared.clone(), barrier.clone());
                    tokio::spawn(async move {
                        barrier.wait().await;
                        run_task::<W>(t, seed, ops, shared, backwards, hints, storm).await
                    })
                })
                .collect();
            let mut all = Vec::new();
            for h in handles {
                all.extend(h.await.expect("no task panics"));
            }
            all
        });
        history.sort_by_key(|e| e.invoke);
        let history: Vec<Entry> = history
            .into_iter()
            .filter(|e| !matches!(e.op, Op::Advance(_) | Op::Set(_)))
            .collect();
        let search = Search {
            model: Model::new(ModelConfig::for_width(&valid)),
            held: [None; 4],
            monotonic: !backwards,
        };
        assert!(
            linearizable(search, &history, |e| (e.invoke, e.ret), step),
            "{name} history {h} (config {config:?}, clock {start}) is not linearizable:\n{}",
            history
                .iter()
                .map(|e| format!("{e:?}\n"))
                .collect::<String>()
        );
        // I7 over the whole history: each state change reported once.
        let mut counters: Vec<u32> = shared
            .all
            .lock()
            .unwrap()
            .iter()
            .map(|t| t.counter)
            .collect();
        counters.sort_unstable();
        let word = W::from_u64(shared.cell.word.load(Ordering::SeqCst));
        let last = Snapshot::decode::<W>(word)
            .expect("the word stays valid")
            .counter;
        assert_eq!(
            counters,
            (1..=last).collect::<Vec<_>>(),
            "I7: reported counters"
        );
        totals.histories += 1;
        totals.ops += history.len() as u64;
        totals.exchanges += shared.cell.exchanges.load(Ordering::Relaxed);
        totals.lost += shared.cell.lost.load(Ordering::Relaxed);
        totals.overlapping += u64::from(history.iter().enumerate().any(|(i, a)| {
            history[i + 1..]
                .iter()
                .any(|b| a.task != b.task && b.invoke < a.ret)
        }));
    }
    totals
}

/// The histories of both widths are linearizable; the counts of histories
/// with overlapping operations and of exchanges lost to another task show
/// the tasks did interleave and contend.
#[test]
fn async_histories_are_linearizable() {
    let started = std::time::Instant::now();
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(4)
        .build()
        .expect("a runtime");
    let a = check_width::<W64>("W64", 17, &rt);
    let b = check_width::<W32>("W32", 18, &rt);
    println!(
        "async linearizability: {} histories, {} operations, {} exchanges ({} lost to another task), {} with overlapping operations, 0 violations, {:.1}s",
        a.histories + b.histories,
        a.ops + b.ops,
        a.exchanges + b.exchanges,
        a.lost + b.lost,
        a.overlapping + b.overlapping,
        started.elapsed().as_secs_f64()
    );
    assert!(
        a.overlapping + b.overlapping > 0 && a.lost + b.lost > 0,
        "no overlapping operations or no lost exchange: the check saw no contention"
    );
}

/// The checker itself: a history where two tasks are both elected probe
/// with the same counter is rejected; without the second one it passes.
#[test]
fn checker_rejects_a_double_probe() {
    let config = Config::new()
        .failure_threshold(1)
        .open_for(5)
        .probe_timeout(5)
        .check::<W64>()
        .expect("in range");
    let t = |from, to, counter| Transition {
        from,
        to,
        counter,
        forced: false,
    };
    let entry = |task, op, res, transitions, now, invoke| Entry {
        task,
        op,
        res,
        transitions,
        now,
        invoke,
        ret: invoke + 1,
    };
    use Status::{Closed, HalfOpen, Open, Probing};
    let probe = |task, invoke| {
        entry(
            task,
            Op::Acquire,
            Res::Acquired(Ok((3, true))),
            vec![t(Open, HalfOpen, 2), t(HalfOpen, Probing, 3)],
            Some(10),
            invoke,
        )
    };
    let mut h = vec![
        entry(
            0,
            Op::Acquire,
            Res::Acquired(Ok((0, false))),
            vec![],
            None,
            0,
        ),
        entry(
            0,
            Op::Release(Outcome::Failure),
            Res::Released(true),
            vec![t(Closed, Open, 1)],
            Some(0),
            2,
        ),
        probe(1, 4),
    ];
    let search = || Search {
        model: Model::new(ModelConfig::for_width(&config)),
        held: [None; 4],
        monotonic: true,
    };
    let check = |h: &[Entry]| linearizable(search(), h, |e| (e.invoke, e.ret), step);
    assert!(check(&h), "one probe is linearizable");
    h.push(probe(2, 4));
    assert!(!check(&h), "two probes with one counter are not");
}
