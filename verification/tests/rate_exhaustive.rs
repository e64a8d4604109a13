//! Exhaustive search of the failure-rate policy: every
//! state a small `RateBreaker` reaches (2 buckets of 1 tick, 50 %, at least
//! 2 calls, open 2 ticks, probe timeout 1; up to 2 tickets held; the clock
//! up to 14 ticks; up to 16 events deep) is built from its raw word and
//! buckets, and every event from it (acquire, release of each held ticket
//! as success, failure or ignored, clock moves of 1 and 2) runs through the
//! real code and through the rate reference model, which must agree on the
//! verdict, the status, the transitions and the window. States are deduplicated on
//! the breaker's raw words, the clock, the tickets held and the model's
//! state and window, for both word widths.

use std::collections::{HashSet, VecDeque};

use tripword::__verification::{rate_breaker_with, rate_buckets, ticket};
use tripword::clock::ManualClock;
use tripword::rate::{Rate, ValidRate};
use tripword::{Config, Outcome, Release, Status, ValidConfig, W32, W64, Word};
use tripword_verification::model::{Model, ModelConfig, ModelState};
use tripword_verification::rate_model::RateModel;

const N: usize = 2;
const MAX_NOW: u64 = 14;
const MAX_DEPTH: u32 = 16;

#[derive(Clone, Copy, Debug)]
enum Event {
    Acquire,
    Release(usize, Outcome),
    Advance(u64),
}

#[derive(Clone)]
struct Node {
    word: u64,
    buckets: [u64; N],
    now: u64,
    /// Held tickets: (real counter, model counter, probe).
    held: Vec<(u32, u64, bool)>,
    model: RateModel,
    depth: u32,
}

type Key = (
    u64,
    [u64; N],
    u64,
    Vec<(u32, bool)>,
    ModelState,
    u64,
    Vec<(u64, bool)>,
);

fn key(n: &Node) -> Key {
    let c = n.model.model.counter();
    let mut window: Vec<(u64, bool)> = n
        .model
        .log
        .iter()
        .filter(|&&(s, lc, _)| lc == c && s + N as u64 > n.now)
        .map(|&(s, _, f)| (s, f))
        .collect();
    window.sort_unstable();
    (
        n.word,
        n.buckets,
        n.now,
        n.held.iter().map(|&(r, _, p)| (r, p)).collect(),
        n.model.model.state(),
        c,
        window,
    )
}

fn step<W: Word>(
    config: ValidConfig<W>,
    rate: ValidRate<W, N>,
    n: &Node,
    e: Event,
) -> Result<Node, String> {
    let clock = ManualClock::new(n.now);
    let b = rate_breaker_with(config, rate, &clock, (), W::from_u64(n.word), n.buckets);
    let mut next = n.clone();
    next.depth += 1;
    match e {
        Event::Acquire => {
            let got = b.acquire();
            let want = next.model.model.acquire(n.now);
            match (got, want) {
                (Ok(t), Ok(w)) => {
                    if t.is_probe() != w.probe {
                        return Err(format!("probe {} vs {}", t.is_probe(), w.probe));
                    }
                    // Kept as its counter; forged again for its release.
                    next.held.push((t.counter(), w.counter, w.probe));
                }
                (Err(_), Err(_)) => {}
                (g, w) => return Err(format!("acquire: {:?} vs {:?}", g.is_ok(), w.is_ok())),
            }
        }
        Event::Release(i, outcome) => {
            let (real, counter, probe) = next.held.remove(i);
            let t = ticket(b.breaker(), real, probe);
            let got = b.release(t, outcome) == Release::Recorded;
            let want = next
                .model
                .release_at(counter, probe, outcome, n.now, 1, N as u64);
            if got != want {
                return Err(format!(
                    "release {outcome:?} (probe {probe}): {got} vs {want}"
                ));
            }
        }
        Event::Advance(d) => {
            next.now += d;
            clock.set(next.now);
        }
    }
    let status = b.status();
    let want = next.model.model.clone().status(next.now);
    if status != want {
        return Err(format!("status {status:?} vs {want:?}"));
    }
    let snap = b.breaker().snapshot().map_err(|e| format!("{e}"))?;
    if u64::from(snap.counter) != next.model.model.counter() % (1 << W::LAYOUT.counter_bits) {
        return Err(format!(
            "counter {} vs {}",
            snap.counter,
            next.model.model.counter()
        ));
    }
    if status == Status::Closed {
        let c = next.model.model.counter();
        let got = b.window_counts(next.now, snap.counter);
        let want = next.model.window_of(next.now, c, N as u64);
        if got != want {
            return Err(format!("window {got:?} vs {want:?}"));
        }
    }
    next.word = tripword::__verification::load_word(b.breaker()).into();
    next.buckets = rate_buckets(&b);
    Ok(next)
}

fn explore<W: Word>() -> (usize, usize) {
    let config = Config::new()
        .open_for(2)
        .probe_timeout(1)
        .horizon(0)
        .check::<W>()
        .unwrap();
    let rate = Rate::new()
        .failure_rate(50)
        .minimum_calls(2)
        .window(N as u64)
        .check::<W, N>()
        .unwrap();
    assert_eq!(rate.slice_shift(), 0);
    let mcfg = ModelConfig::for_width(
        &Config::new()
            .failure_threshold(1)
            .open_for(2)
            .probe_timeout(1)
            .horizon(0)
            .check::<W>()
            .unwrap(),
    );
    let start = Node {
        word: 0,
        buckets: [0; N],
        now: 0,
        held: Vec::new(),
        model: RateModel::new::<W>(Model::new(mcfg), 50, 2),
        depth: 0,
    };
    let mut seen: HashSet<Key> = HashSet::new();
    seen.insert(key(&start));
    let mut queue = VecDeque::from([start]);
    let (mut states, mut transitions, mut trips) = (0usize, 0usize, 0usize);
    while let Some(n) = queue.pop_front() {
        states += 1;
        if n.depth >= MAX_DEPTH {
            continue;
        }
        let mut events = Vec::new();
        if n.held.len() < 2 {
            events.push(Event::Acquire);
        }
        for i in 0..n.held.len() {
            for o in [Outcome::Success, Outcome::Failure, Outcome::Ignored] {
                events.push(Event::Release(i, o));
            }
        }
        for d in [1, 2] {
            if n.now + d <= MAX_NOW {
                events.push(Event::Advance(d));
            }
        }
        for e in events {
            transitions += 1;
            let next = step::<W>(config, rate, &n, e).unwrap_or_else(|err| {
                panic!(
                    "W{}: {e:?} from now {}, word {:#x}, buckets {:x?}, held {:?}, model {:?}: {err}",
                    W::LAYOUT.word_bits, n.now, n.word, n.buckets, n.held, n.model.model.state()
                )
            });
            if next.model.model.counter() > n.model.model.counter()
                && matches!(next.model.model.state(), ModelState::Open { .. })
                && matches!(n.model.model.state(), ModelState::Closed { .. })
            {
                trips += 1;
            }
            if seen.insert(key(&next)) {
                queue.push_back(next);
            }
        }
    }
    println!(
        "rate exhaustive W{}: {states} states, {transitions} transitions, {trips} trips",
        W::LAYOUT.word_bits
    );
    assert!(trips > 100, "the search must reach trips");
    (states, transitions)
}

#[test]
fn rate_exhaustive_w64() {
    explore::<W64>();
}

#[test]
fn rate_exhaustive_w32() {
    explore::<W32>();
}
