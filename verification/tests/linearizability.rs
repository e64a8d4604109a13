//! Linearizability: real threads (2–4) run random
//! operations on one shared [`Breaker`] and one shared manual clock, record
//! an invoke/return history (stamps from one global `SeqCst` counter), and
//! each history is checked linearizable against the reference
//! [model](tripword_verification::model) with a Wing–Gong search memoized on
//! (operations linearized, model state, tickets held).
//!
//! Operations: acquire, permit (held, then finished or dropped), release of
//! the thread's own ticket with any outcome, a hinted failure of the
//! thread's own ticket or permit (`release_failure_for`,
//! `Permit::failure_for`), status (a read), force open and close,
//! `force_open_for`, with hints of 0–3 ticks, the open time, four times it,
//! `longest_hint`, `u64::MAX` or any, and clock moves (advance by 0–3 ticks or far past any duration; in
//! half of the histories also set backwards by 1–3 ticks). A rejection's
//! result is its cause and wait. `W32` breakers run half the histories in
//! exact ticks (`horizon(0)`, `s = 0`) and half in 4-tick units (`s = 2`). The clock is read slowly
//! (a spin, sometimes a yield) so that threads interleave between a
//! breaker's load and its compare-and-swap.
//!
//! Time: a breaker operation reads the clock somewhere inside its interval,
//! not at its linearization point, so each operation records the clock value
//! it read (its last read: the final compare-and-swap attempt reads last)
//! and the model applies the operation with that value. Clock moves are
//! operations of the run and show through those values; the clock is an
//! atomic, itself linearizable. When the clock never went backwards, an
//! operation that needed the time must not have acted on a timestamp newer
//! than the value it read (the Acquire/Release argument of `docs/design.md`,
//! "Memory orderings"). (An `OpenUntil` word keeps a deadline, not the time
//! it was stamped, so that check covers `Open` and `Probing`; a stale clock
//! reading against a deadline reads as "not yet", and the model, applied
//! with that reading, must still give the recorded result.)
//!
//! An operation's result includes the transitions its observer calls
//! reported on its own thread (SPEC I7: reported by the caller whose
//! compare-and-swap made them), and these must equal the model's at the
//! linearization point. Over the whole history, the reported transitions'
//! counters must be exactly 1..=final counter, each once.
//!
//! `LINEARIZABILITY_HISTORIES` sets the number of histories per word width
//! (default 1,000, so 2,000 in all).

use std::cell::{Cell, RefCell};
use std::collections::HashSet;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Barrier};

use tripword::Jitter;
use tripword::clock::ManualClock;
use tripword::{
    Breaker, Cause, Clock, Config, Observer, Outcome, Permit, Rejected, Release, Status, Ticket,
    Transition, W32, W64, Word,
};
use tripword_verification::harness::{XorShift, transitions_match};
use tripword_verification::model::{Model, ModelConfig, ModelState};

thread_local! {
    static SEEN: RefCell<Vec<Transition>> = const { RefCell::new(Vec::new()) };
    static LAST_READ: Cell<Option<u64>> = const { Cell::new(None) };
}

/// Records transitions on the thread that reports them, and all of them
/// globally.
#[derive(Default)]
struct ThreadRecorder {
    all: std::sync::Mutex<Vec<Transition>>,
}

impl Observer for ThreadRecorder {
    fn on_transition(&self, t: Transition) {
        SEEN.with(|s| s.borrow_mut().push(t));
        self.all.lock().unwrap().push(t);
    }
}

/// The shared manual clock, read slowly: a read spins a little (and now and
/// then yields) so that other threads get between a breaker's load and its
/// compare-and-swap, which is where the races are.
struct SlowClock<'c> {
    clock: &'c ManualClock,
    reads: AtomicU64,
}

impl Clock for SlowClock<'_> {
    fn now(&self) -> u64 {
        let n = self
            .reads
            .fetch_add(1, Ordering::Relaxed)
            .wrapping_mul(0x9E37_79B9_7F4A_7C15);
        let t = self.clock.now();
        LAST_READ.with(|r| r.set(Some(t)));
        if n >> 62 == 0 {
            std::thread::yield_now();
        } else {
            for _ in 0..(n >> 57) * 8 {
                std::hint::spin_loop();
            }
        }
        t
    }
}

/// What a rejection said: its cause and wait.
fn said(r: &Rejected) -> (Cause, Option<u64>) {
    (r.cause(), r.retry_after())
}

fn take_seen() -> Vec<Transition> {
    SEEN.with(|s| std::mem::take(&mut *s.borrow_mut()))
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
enum Op {
    Acquire,
    Permit,
    /// Release the thread's ticket or finish its permit; `None` drops the
    /// permit (the abandon outcome). The counter released is the one the
    /// model gave the thread's admission.
    Release {
        outcome: Option<Outcome>,
    },
    /// Release the thread's ticket, or finish its permit, with a failure
    /// that carries this hint (ticks).
    ReleaseFor(u64),
    Status,
    ForceOpen,
    /// `force_open_for(hint)`.
    ForceOpenFor(u64),
    ForceClose,
    Advance(u64),
    Set(u64),
}

#[derive(Clone, Debug, PartialEq, Eq)]
enum Res {
    /// Admitted with (counter, probe); the counter is `None` for a permit,
    /// whose API does not show it. Or rejected, with the cause and the wait.
    Acquired(Result<(Option<u32>, bool), (Cause, Option<u64>)>),
    /// Recorded or stale; `None` for a dropped permit (no verdict returned).
    Released(Option<bool>),
    Status(Status),
    Done,
}

#[derive(Clone, Debug)]
struct Entry {
    thread: usize,
    op: Op,
    res: Res,
    transitions: Vec<Transition>,
    /// The last clock value the operation read (its final compare-and-swap
    /// attempt reads last), if it read the clock.
    now: Option<u64>,
    invoke: u64,
    ret: u64,
}

enum Held<'b, W: Word> {
    None,
    Ticket(Ticket),
    Permit(Permit<'b, &'b SlowClock<'b>, W, &'b ThreadRecorder>),
}

fn outcome(rng: &mut XorShift) -> Outcome {
    [Outcome::Success, Outcome::Failure, Outcome::Ignored][rng.below(3) as usize]
}

/// `acquire`, holding the ticket if admitted.
fn acquire<'b, W: Word>(
    b: &'b Breaker<&'b SlowClock<'b>, W, &'b ThreadRecorder>,
    held: &mut Held<'b, W>,
) -> (Op, Res) {
    let got = b.acquire();
    let res = Res::Acquired(
        got.as_ref()
            .map(|t| (Some(t.counter()), t.is_probe()))
            .map_err(said),
    );
    if let Ok(t) = got {
        *held = Held::Ticket(t);
    }
    (Op::Acquire, res)
}

/// One thread's run: `ops` random operations, each stamped.
#[allow(clippy::too_many_arguments)]
fn run_thread<'b, W: Word>(
    thread: usize,
    seed: u64,
    ops: usize,
    b: &'b Breaker<&'b SlowClock<'b>, W, &'b ThreadRecorder>,
    clock: &ManualClock,
    seq: &AtomicU64,
    backwards: bool,
    hints: &[u64],
    storm: bool,
) -> Vec<Entry> {
    let mut rng = XorShift::new(seed);
    let mut held: Held<'_, W> = Held::None;
    let mut out = Vec::new();
    let mut i = 0;
    let ops = if storm { ops + (ops & 1) } else { ops };
    while i < ops || matches!(held, Held::Permit(_)) {
        i += 1;
        // Vary the interleaving a little; a storm runs flat out, so that
        // failures' counts lose exchanges to each other.
        if !storm {
            for _ in 0..rng.below(2000) {
                std::hint::spin_loop();
            }
            if rng.below(3) == 0 {
                std::thread::yield_now();
            }
        }
        let r = rng.below(100);
        let must_finish = i > ops;
        let holding = !matches!(held, Held::None);
        let _ = take_seen();
        LAST_READ.with(|r| r.set(None));
        let invoke = seq.fetch_add(1, Ordering::SeqCst);
        let hint = |rng: &mut XorShift| match rng.below(hints.len() as u64 + 1) {
            0 => rng.next_u64(),
            i => hints[i as usize - 1],
        };
        let (op, res) = if storm {
            // Acquire, fail, acquire, fail: the failure count's fast path
            // and, when an exchange is lost, its backoff and reread.
            match std::mem::replace(&mut held, Held::None) {
                Held::Ticket(t) => {
                    let rel = b.release(t, Outcome::Failure);
                    (
                        Op::Release {
                            outcome: Some(Outcome::Failure),
                        },
                        Res::Released(Some(rel == Release::Recorded)),
                    )
                }
                _ => acquire(b, &mut held),
            }
        } else if holding && (must_finish || r < 45) && rng.below(4) == 0 {
            let h = hint(&mut rng);
            let rel = match std::mem::replace(&mut held, Held::None) {
                Held::Ticket(t) => b.release_failure_for(t, h),
                Held::Permit(p) => p.failure_for(h),
                Held::None => unreachable!(),
            };
            (
                Op::ReleaseFor(h),
                Res::Released(Some(rel == Release::Recorded)),
            )
        } else if holding && (must_finish || r < 45) {
            match std::mem::replace(&mut held, Held::None) {
                Held::Ticket(t) => {
                    let o = outcome(&mut rng);
                    let rel = b.release(t, o);
                    (
                        Op::Release { outcome: Some(o) },
                        Res::Released(Some(rel == Release::Recorded)),
                    )
                }
                Held::Permit(p) => {
                    if rng.below(3) == 0 {
                        drop(p);
                        (Op::Release { outcome: None }, Res::Released(None))
                    } else {
                        let o = outcome(&mut rng);
                        let rel = p.finish(o);
                        (
                            Op::Release { outcome: Some(o) },
                            Res::Released(Some(rel == Release::Recorded)),
                        )
                    }
                }
                Held::None => unreachable!(),
            }
        } else if !holding && r < 45 {
            if r < 30 {
                acquire(b, &mut held)
            } else {
                let got = b.permit();
                let res = Res::Acquired(got.as_ref().map(|p| (None, p.is_probe())).map_err(said));
                if let Ok(p) = got {
                    held = Held::Permit(p);
                }
                (Op::Permit, res)
            }
        } else if r < 65 {
            (Op::Status, Res::Status(b.status()))
        } else if r < 68 {
            b.force_open();
            (Op::ForceOpen, Res::Done)
        } else if r < 72 {
            b.force_close();
            (Op::ForceClose, Res::Done)
        } else if r < 75 {
            let h = hint(&mut rng);
            b.force_open_for(h);
            (Op::ForceOpenFor(h), Res::Done)
        } else if r < 96 {
            let d = match rng.below(10) {
                // Far past any duration, landing anywhere in the ring.
                0 => (1 << 40) + rng.below(1 << 20),
                1..=3 => 0,
                _ => rng.below(4),
            };
            clock.advance(d);
            (Op::Advance(d), Res::Done)
        } else if !backwards {
            clock.advance(1);
            (Op::Advance(1), Res::Done)
        } else {
            // Backwards, by a little.
            let t = clock.now().wrapping_sub(1 + rng.below(3));
            clock.set(t);
            (Op::Set(t), Res::Done)
        };
        let ret = seq.fetch_add(1, Ordering::SeqCst);
        out.push(Entry {
            thread,
            op,
            res,
            transitions: take_seen(),
            now: LAST_READ.with(Cell::take),
            invoke,
            ret,
        });
    }
    out
}

/// The search state: the model and the (model) counter of the ticket each
/// thread holds.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
struct Search {
    model: Model,
    held: [Option<u64>; 4],
    /// The clock never went backwards in this history: then no operation
    /// may act on a timestamp newer than the clock it read (the
    /// Acquire/Release argument of docs/design.md, "Memory orderings").
    monotonic: bool,
}

/// Applies one entry to the model, with the clock value the operation
/// read; true when the results agree.
fn step(s: &mut Search, e: &Entry) -> bool {
    let m = &mut s.model;
    m.clear_last();
    let cfg = *m.config();
    // An operation that read no clock gets a value that would show if the
    // model needed one (checked below).
    let now = e.now.unwrap_or(0);
    let before = m.state();
    let same = match e.op {
        Op::Acquire | Op::Permit => {
            let got = m.acquire(now);
            s.held[e.thread] = got.ok().map(|t| t.counter);
            match (&e.res, got) {
                (Res::Acquired(Err(said)), Err(r)) => *said == (r.cause, r.retry_after),
                (Res::Acquired(Ok((c, probe))), Ok(t)) => {
                    *probe == t.probe
                        && c.is_none_or(|c| u64::from(c) == t.counter % cfg.counter_period())
                }
                _ => false,
            }
        }
        Op::Release { outcome } => {
            let Some(counter) = s.held[e.thread].take() else {
                return false;
            };
            let r = m.release(counter, outcome.unwrap_or(cfg.abandon), now);
            match e.res {
                Res::Released(Some(got)) => got == r,
                Res::Released(None) => true,
                _ => false,
            }
        }
        Op::ReleaseFor(hint) => {
            let Some(counter) = s.held[e.thread].take() else {
                return false;
            };
            let r = m.release_failure_for(counter, hint, now);
            e.res == Res::Released(Some(r))
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
        // Clock moves change the clock, not the breaker: what they do to the
        // breaker shows in the values the other operations read.
        Op::Advance(_) | Op::Set(_) => true,
    };
    // With a clock that never went backwards, an operation that needed the
    // clock must not have read one older than the timestamp it acted on.
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

/// Wing–Gong: is there an order of the entries, consistent with real time
/// (an entry that returned before another was invoked comes first), in which
/// the model gives every recorded result? Memoized on the states that failed.
fn linearizable(start: Search, h: &[Entry]) -> bool {
    assert!(h.len() < 64);
    fn dfs(h: &[Entry], done: u64, s: Search, failed: &mut HashSet<(u64, Search)>) -> bool {
        if done == (1u64 << h.len()) - 1 {
            return true;
        }
        if failed.contains(&(done, s.clone())) {
            return false;
        }
        let pending = || (0..h.len()).filter(|&i| done & (1 << i) == 0);
        let min_ret = pending().map(|i| h[i].ret).min().unwrap_or(u64::MAX);
        for i in pending().filter(|&i| h[i].invoke < min_ret) {
            let mut s2 = s.clone();
            if step(&mut s2, &h[i]) && dfs(h, done | 1 << i, s2, failed) {
                return true;
            }
        }
        failed.insert((done, s));
        false
    }
    dfs(h, 0, start, &mut HashSet::new())
}

#[derive(Default)]
struct Totals {
    histories: u64,
    ops: u64,
    overlapping: u64,
    overlap_pairs: u64,
    clock_moves: u64,
    /// Hinted failures and `force_open_for`.
    hinted: u64,
    /// Failure storms, and their failures whose intervals overlap another
    /// thread's failure (the candidates for a lost count).
    storms: u64,
    storm_overlaps: u64,
}

fn histories() -> u64 {
    std::env::var("LINEARIZABILITY_HISTORIES")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(1_000)
}

fn check_width<W: Word>(name: &str, seed: u64) -> Totals {
    let mut rng = XorShift::new(seed);
    let mut totals = Totals::default();
    for h in 0..histories() {
        let threads = 2 + rng.below(3) as usize;
        let ops = 4 + rng.below(6) as usize;
        let open_for = 1 + rng.below(4);
        // One history in four is a failure storm (docs/design.md, "Backoff
        // in the failure count"): a threshold some runs reach and some do
        // not.
        let storm = h % 4 == 3;
        let threshold = if storm {
            2 + rng.below(12) as u32
        } else {
            1 + rng.below(3) as u32
        };
        let mut config = Config::new()
            .failure_threshold(threshold)
            .open_for(open_for)
            .probe_timeout(1 + rng.below(4))
            .abandon_as(outcome(&mut rng));
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
        // W32: exact ticks (s = 0) or 4-tick units (s = 2); W64 keeps s = 0
        // at its default horizon.
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
        let clock = ManualClock::new(start);
        let slow = SlowClock {
            clock: &clock,
            reads: AtomicU64::new(rng.next_u64()),
        };
        let recorder = ThreadRecorder::default();
        let b: Breaker<&SlowClock<'_>, W, &ThreadRecorder> =
            Breaker::from_parts(valid, &slow, &recorder);
        let seq = AtomicU64::new(0);
        let barrier = Arc::new(Barrier::new(threads));
        let seeds: Vec<u64> = (0..threads).map(|_| rng.next_u64()).collect();
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
        let hints = &hints;
        let mut history: Vec<Entry> = std::thread::scope(|s| {
            let handles: Vec<_> = seeds
                .iter()
                .enumerate()
                .map(|(t, &seed)| {
                    let (b, clock, seq, barrier) = (&b, &clock, &seq, barrier.clone());
                    s.spawn(move || {
                        barrier.wait();
                        run_thread::<W>(t, seed, ops, b, clock, seq, backwards, hints, storm)
                    })
                })
                .collect();
            handles
                .into_iter()
                .flat_map(|h| h.join().expect("no thread panics"))
                .collect()
        });
        history.sort_by_key(|e| e.invoke);
        let search = Search {
            model: Model::new(ModelConfig::for_width(&valid)),
            held: [None; 4],
            monotonic: !backwards,
        };
        let clock_moves = history
            .iter()
            .filter(|e| matches!(e.op, Op::Advance(_) | Op::Set(_)))
            .count();
        totals.clock_moves += clock_moves as u64;
        let history: Vec<Entry> = history
            .into_iter()
            .filter(|e| !matches!(e.op, Op::Advance(_) | Op::Set(_)))
            .collect();
        assert!(
            linearizable(search, &history),
            "{name} history {h} (config {config:?}, clock {start}) is not linearizable:\n{}",
            history
                .iter()
                .map(|e| format!("{e:?}\n"))
                .collect::<String>()
        );
        // SPEC I7 over the whole history: each state change reported once.
        let mut counters: Vec<u32> = recorder
            .all
            .lock()
            .unwrap()
            .iter()
            .map(|t| t.counter)
            .collect();
        counters.sort_unstable();
        let last = b.snapshot().expect("valid").counter;
        assert_eq!(
            counters,
            (1..=last).collect::<Vec<_>>(),
            "I7: reported counters"
        );
        totals.histories += 1;
        totals.ops += history.len() as u64;
        totals.hinted += history
            .iter()
            .filter(|e| matches!(e.op, Op::ReleaseFor(_) | Op::ForceOpenFor(_)))
            .count() as u64;
        // `history` is sorted by invocation: count the pairs of operations of
        // different threads whose intervals overlap.
        let overlaps = history
            .iter()
            .enumerate()
            .flat_map(|(i, a)| history[i + 1..].iter().map(move |b| (a, b)))
            .filter(|(a, b)| a.thread != b.thread && b.invoke < a.ret)
            .count() as u64;
        totals.overlap_pairs += overlaps;
        if storm {
            let failure = |e: &Entry| matches!(e.op, Op::Release { .. });
            totals.storms += 1;
            totals.storm_overlaps += history
                .iter()
                .enumerate()
                .flat_map(|(i, a)| history[i + 1..].iter().map(move |b| (a, b)))
                .filter(|(a, b)| {
                    a.thread != b.thread && b.invoke < a.ret && failure(a) && failure(b)
                })
                .count() as u64;
        }
        totals.overlapping += u64::from(overlaps > 0);
    }
    totals
}

#[test]
fn histories_are_linearizable() {
    let start = std::time::Instant::now();
    let a = check_width::<W64>("W64", 7);
    let b = check_width::<W32>("W32", 8);
    let line = format!(
        "linearizability: {} histories ({} W64, {} W32; {} failure storms with {} pairs of overlapping failures), {} operations ({} hinted failures or force_open_for) and {} clock moves, {} with overlapping operations ({} overlapping pairs), 0 violations, {:.1}s",
        a.histories + b.histories,
        a.histories,
        b.histories,
        a.storms + b.storms,
        a.storm_overlaps + b.storm_overlaps,
        a.ops + b.ops,
        a.hinted + b.hinted,
        a.clock_moves + b.clock_moves,
        a.overlapping + b.overlapping,
        a.overlap_pairs + b.overlap_pairs,
        start.elapsed().as_secs_f64()
    );
    println!("{line}");
    let dir = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("verification-counts");
    let _ = std::fs::create_dir_all(&dir);
    let _ = std::fs::write(dir.join("linearizability.txt"), format!("{line}\n"));
}

/// The checker itself: a history where two callers are both elected probe
/// with the same counter is rejected; without the second one it passes.
#[test]
fn checker_rejects_a_double_probe() {
    let config = Config::new()
        .failure_threshold(1)
        .open_for(5)
        .probe_timeout(5);
    let t = |from, to, counter| Transition {
        from,
        to,
        counter,
        forced: false,
    };
    let entry = |thread, op, res, transitions, now, invoke| Entry {
        thread,
        op,
        res,
        transitions,
        now,
        invoke,
        ret: invoke + 1,
    };
    use tripword::Status::{Closed, HalfOpen, Open, Probing};
    let probe = |thread, invoke| {
        entry(
            thread,
            Op::Acquire,
            Res::Acquired(Ok((Some(3), true))),
            vec![t(Open, HalfOpen, 2), t(HalfOpen, Probing, 3)],
            Some(10),
            invoke,
        )
    };
    let mut h = vec![
        entry(
            0,
            Op::Acquire,
            Res::Acquired(Ok((Some(0), false))),
            vec![],
            None,
            0,
        ),
        entry(
            0,
            Op::Release {
                outcome: Some(Outcome::Failure),
            },
            Res::Released(Some(true)),
            vec![t(Closed, Open, 1)],
            Some(0),
            2,
        ),
        probe(1, 4),
    ];
    let search = || Search {
        model: Model::new(ModelConfig::for_width(
            &config.check::<W64>().expect("in range"),
        )),
        held: [None; 4],
        monotonic: true,
    };
    assert!(linearizable(search(), &h));
    h.push(probe(2, 4));
    assert!(!linearizable(search(), &h));
}
