//! A breaker shared by the main loop and a periodic timer interrupt, on the
//! core's hardware clock ([`crate::HwClock`]): the SysTick exception on
//! Cortex-M, the machine-timer interrupt (CLINT `mtimecmp`) on RISC-V.
//!
//! The interrupt fires every [`HANDLER_PERIOD`] clock ticks (4096 core cycles
//! on Cortex-M, `16 << 10` `mtime` counts, about 1.6 ms, on RISC-V) and runs a
//! few operations on the same `static` breaker the main loop is hammering, so
//! it regularly lands in the middle of a main-loop `acquire`/`release`,
//! between its load and its compare-and-swap. Afterwards the books must
//! balance:
//!
//! - every probe ticket handed out (main + handler) was reported as exactly
//!   one `HalfOpen -> Probing` transition (I1, I7);
//! - probe successes and failures that counted equal the `Probing -> Closed`
//!   and `Probing -> Open` transitions (one ticket per probing state, I1);
//! - the number of transitions reported equals how far the word's counter
//!   moved, and the reported counters are exactly the consecutive values it
//!   took: nothing lost, nothing reported twice (I7, I10);
//! - the clock never went backwards in the main loop;
//! - with the handler quiet, a tripped breaker turns half-open on the real
//!   clock no earlier than its open time and soon after (I4, I5), and its
//!   probe closes it.

use crate::HwClock;
use crate::check::Checks;
use crate::prng::XorShift;
use portable_atomic::{AtomicBool, AtomicU8, AtomicU32, Ordering};
use tripword::__verification::load_word;
use tripword::word::W32;
use tripword::{
    Breaker, Clock, Config, Observer, Outcome, Release, Status, Transition, ValidConfig, Word,
};

/// Timer interrupts the main loop runs alongside, per breaker.
const HANDLER_RUNS: u32 = 1_500;
/// The timer interrupt's period in clock ticks, the same on every core.
pub const HANDLER_PERIOD: u64 = 16;
// On Cortex-M the period is SysTick's reload, set in `hw_clock`.
#[cfg(target_arch = "arm")]
const _: () =
    assert!(1 << (crate::hw_clock::PERIOD_BITS - crate::hw_clock::TICK_SHIFT) == HANDLER_PERIOD);
/// Operations the handler runs each time it fires.
const HANDLER_OPS: u32 = 3;

/// Durations in clock ticks (256 core cycles on Cortex-M, 1024 `mtime` counts
/// on RISC-V); a timer period is [`HANDLER_PERIOD`] (16) ticks. The default
/// horizon: `W32` keeps time in 128-tick units (`s = 7`), so an open time
/// lasts from 160 up to `160 + 3 * 128` ticks; `W64` keeps whole ticks.
const CONFIG: Config = Config::new()
    .failure_threshold(3)
    .open_for(160)
    .probe_timeout(64);
static CONFIG_W32: ValidConfig<W32> = ValidConfig::new(CONFIG);
#[cfg(cs_atomics)]
static CONFIG_W64: ValidConfig<tripword::W64> = ValidConfig::new(CONFIG);

/// Counts what the breaker reports.
pub struct Tally {
    transitions: AtomicU32,
    counter_sum: AtomicU32,
    into_probing: AtomicU32,
    probing_to_closed: AtomicU32,
    probing_to_open: AtomicU32,
    corrupt: AtomicU32,
}

impl Tally {
    pub const fn new() -> Self {
        Tally {
            transitions: AtomicU32::new(0),
            counter_sum: AtomicU32::new(0),
            into_probing: AtomicU32::new(0),
            probing_to_closed: AtomicU32::new(0),
            probing_to_open: AtomicU32::new(0),
            corrupt: AtomicU32::new(0),
        }
    }
}

impl Observer for Tally {
    fn on_transition(&self, t: Transition) {
        self.transitions.fetch_add(1, Ordering::Relaxed);
        self.counter_sum.fetch_add(t.counter, Ordering::Relaxed);
        match (t.from, t.to) {
            (_, Status::Probing) => self.into_probing.fetch_add(1, Ordering::Relaxed),
            (Status::Probing, Status::Closed) => {
                self.probing_to_closed.fetch_add(1, Ordering::Relaxed)
            }
            // Not the operator-held open (`force_open`), which reads as Open.
            (Status::Probing, Status::Open) if !t.forced => {
                self.probing_to_open.fetch_add(1, Ordering::Relaxed)
            }
            _ => 0,
        };
    }

    fn on_corrupt_word(&self, _raw: u64, _counter: u32) {
        self.corrupt.fetch_add(1, Ordering::Relaxed);
    }
}

/// What one context (main loop or handler) did.
pub struct Stats {
    admitted: AtomicU32,
    rejected: AtomicU32,
    probes: AtomicU32,
    probe_successes: AtomicU32,
    probe_failures: AtomicU32,
    stale: AtomicU32,
}

impl Stats {
    pub const fn new() -> Self {
        Stats {
            admitted: AtomicU32::new(0),
            rejected: AtomicU32::new(0),
            probes: AtomicU32::new(0),
            probe_successes: AtomicU32::new(0),
            probe_failures: AtomicU32::new(0),
            stale: AtomicU32::new(0),
        }
    }
    fn get(a: &AtomicU32) -> u32 {
        a.load(Ordering::Relaxed)
    }
}

/// A breaker on the hardware clock whose config stays in flash.
pub type HwBreaker<W> = Breaker<HwClock, W, Tally, &'static ValidConfig<W>>;

/// The breakers the handler and the main loop share.
pub static SHARED_W32: HwBreaker<W32> = Breaker::from_parts(&CONFIG_W32, HwClock, Tally::new());
/// With atomics from a critical section (Cortex-M0) the 64-bit word is as
/// interrupt-safe as the 32-bit one. On Cortex-M3/M4 and on riscv32imac
/// (32-bit atomics only, no `zacas`) it uses portable-atomic's global-lock
/// fallback (a seqlock whose writers spin), which an interrupt handler must
/// not take: it would spin forever on a lock the interrupted code holds. So it
/// is not shared with the handler there.
#[cfg(cs_atomics)]
pub static SHARED_W64: HwBreaker<tripword::W64> =
    Breaker::from_parts(&CONFIG_W64, HwClock, Tally::new());

/// Which breaker the handler exercises: 0 none, 32 or 64.
static HANDLER_TARGET: AtomicU8 = AtomicU8::new(0);
static HANDLER_RUNS_SEEN: AtomicU32 = AtomicU32::new(0);
/// Set while the main loop is inside a breaker call.
static MAIN_IN_CALL: AtomicBool = AtomicBool::new(false);
/// Handler runs that interrupted a main-loop breaker call.
static PREEMPTIONS: AtomicU32 = AtomicU32::new(0);
/// Of those, the runs that changed the word under the interrupted call (which
/// then retries its compare-and-swap if it had already loaded the word).
static CHANGED_UNDER_MAIN: AtomicU32 = AtomicU32::new(0);
/// What the handler did, per breaker (`[W32, W64]`).
static HANDLER_STATS: [Stats; 2] = [Stats::new(), Stats::new()];

/// Called from the timer interrupt every [`HANDLER_PERIOD`] ticks: the SysTick
/// exception on Cortex-M (after the clock has counted the period), the
/// machine-timer interrupt on RISC-V (after it has re-armed `mtimecmp`).
pub fn on_timer_interrupt(rng: &mut XorShift) {
    crate::table_log::on_timer_interrupt();
    let in_call = MAIN_IN_CALL.load(Ordering::Relaxed);
    if in_call {
        PREEMPTIONS.fetch_add(1, Ordering::Relaxed);
    }
    let changed = match HANDLER_TARGET.load(Ordering::Relaxed) {
        32 => handler_ops(&SHARED_W32, rng, &HANDLER_STATS[0]),
        #[cfg(cs_atomics)]
        64 => handler_ops(&SHARED_W64, rng, &HANDLER_STATS[1]),
        _ => return,
    };
    if in_call && changed {
        CHANGED_UNDER_MAIN.fetch_add(1, Ordering::Relaxed);
    }
    HANDLER_RUNS_SEEN.fetch_add(1, Ordering::Relaxed);
}

/// The handler's share; whether it changed the word.
fn handler_ops<W: Word>(b: &HwBreaker<W>, rng: &mut XorShift, stats: &Stats) -> bool {
    let before = load_word(b);
    (0..HANDLER_OPS).for_each(|_| exercise(b, rng, stats, None));
    load_word(b) != before
}

/// One call through the breaker with a random outcome. `hold` is how long the
/// main loop keeps the call running, in ticks (sometimes past the probe
/// timeout); the handler never waits.
fn exercise<W: Word>(b: &HwBreaker<W>, rng: &mut XorShift, stats: &Stats, hold: Option<u64>) {
    if rng.below(8) == 0 {
        let _ = b.status();
        return;
    }
    let Ok(ticket) = b.acquire() else {
        stats.rejected.fetch_add(1, Ordering::Relaxed);
        return;
    };
    stats.admitted.fetch_add(1, Ordering::Relaxed);
    let probe = ticket.is_probe();
    if probe {
        stats.probes.fetch_add(1, Ordering::Relaxed);
    }
    if let Some(ticks) = hold {
        let start = HwClock.now();
        while HwClock.now().wrapping_sub(start) < ticks {}
    }
    let outcome = match rng.below(10) {
        0..=4 => Outcome::Failure,
        5..=8 => Outcome::Success,
        _ => Outcome::Ignored,
    };
    match b.release(ticket, outcome) {
        Release::Stale => {
            stats.stale.fetch_add(1, Ordering::Relaxed);
        }
        Release::Recorded if probe => match outcome {
            Outcome::Success => {
                stats.probe_successes.fetch_add(1, Ordering::Relaxed);
            }
            Outcome::Failure => {
                stats.probe_failures.fetch_add(1, Ordering::Relaxed);
            }
            Outcome::Ignored => {}
        },
        Release::Recorded => {}
    }
}

/// What the timer interrupt is called on this core, for the suite names.
#[cfg(target_arch = "arm")]
const SUITE_W32: &str = "SysTick + main, W32";
#[cfg(target_arch = "riscv32")]
const SUITE_W32: &str = "machine timer + main, W32";

/// Runs the suite; the timer interrupt must already be firing.
pub fn run(c: &mut Checks) {
    c.suite(SUITE_W32);
    shared(c, &SHARED_W32, 32);
    #[cfg(cs_atomics)]
    {
        c.suite("SysTick + main, W64");
        shared(c, &SHARED_W64, 64);
    }
}

fn shared<W: Word>(c: &mut Checks, b: &'static HwBreaker<W>, target: u8) {
    let main_stats = Stats::new();
    let mut rng = XorShift::new(0x5EED_0000 | u32::from(target));
    let start_counter = b.snapshot().map(|s| s.counter).unwrap_or(0);
    let runs_before = HANDLER_RUNS_SEEN.load(Ordering::Relaxed);
    let preemptions_before = PREEMPTIONS.load(Ordering::Relaxed);
    let changed_before = CHANGED_UNDER_MAIN.load(Ordering::Relaxed);
    let mut last = HwClock.now();
    let mut backwards = 0u32;
    let mut calls = 0u32;
    // The documented bounds: a duration of d ticks lasts at least d and
    // less than d + 3 * 2^s ticks.
    let unit = 1u64 << b.config().time_shift();

    HANDLER_TARGET.store(target, Ordering::SeqCst);
    while HANDLER_RUNS_SEEN.load(Ordering::Relaxed) - runs_before < HANDLER_RUNS {
        // One call in 64 outlives the probe timeout, rounding included.
        let hold = if rng.below(64) == 0 {
            Some(b.config().probe_timeout() + 3 * unit + 8)
        } else {
            None
        };
        MAIN_IN_CALL.store(true, Ordering::SeqCst);
        exercise(b, &mut rng, &main_stats, hold);
        MAIN_IN_CALL.store(false, Ordering::SeqCst);
        calls += 1;
        let now = HwClock.now();
        if now < last {
            backwards += 1;
        }
        last = now;
    }
    HANDLER_TARGET.store(0, Ordering::SeqCst);
    // From here on the handler only counts periods: the books are closed.

    let handler = &HANDLER_STATS[usize::from(target == 64)];
    let tally = b.observer();
    let get = Stats::get;
    let probes = get(&main_stats.probes) + get(&handler.probes);
    let successes = get(&main_stats.probe_successes) + get(&handler.probe_successes);
    let failures = get(&main_stats.probe_failures) + get(&handler.probe_failures);
    let transitions = get(&tally.transitions);
    let preempted = PREEMPTIONS.load(Ordering::Relaxed) - preemptions_before;
    let changed_under = CHANGED_UNDER_MAIN.load(Ordering::Relaxed) - changed_before;
    crate::out!(
        "  W{}: main {} calls, handler {} runs ({} interrupted a main-loop call, {} of them changed the word under it), {} transitions, {} probes, {} stale releases",
        W::LAYOUT.word_bits,
        calls,
        HANDLER_RUNS,
        preempted,
        changed_under,
        transitions,
        probes,
        get(&main_stats.stale) + get(&handler.stale),
    );

    c.check(
        preempted > 0,
        "the handler interrupted main-loop breaker calls",
    );
    c.check(changed_under > 0, "and changed the word under some of them");
    c.check(
        get(&handler.admitted) > 0 && get(&handler.rejected) > 0,
        "the handler was both admitted and rejected",
    );
    c.check(probes > 0, "probes were elected");
    c.eq(
        get(&tally.into_probing),
        probes,
        "one Probing transition per probe ticket (I1, I7)",
    );
    c.eq(
        get(&tally.probing_to_closed),
        successes,
        "each probe success that counted closed the breaker once",
    );
    c.eq(
        get(&tally.probing_to_open),
        failures,
        "each probe failure that counted reopened it once",
    );
    c.eq(get(&tally.corrupt), 0, "no corrupt word");

    let layout = W::LAYOUT;
    let end_counter = b.snapshot().map(|s| s.counter).unwrap_or(u32::MAX);
    c.eq(
        end_counter,
        ((u64::from(start_counter) + u64::from(transitions)) & u64::from(layout.max_counter()))
            as u32,
        "transitions reported = counter moves (I7, I10)",
    );
    let want_sum = (1..=transitions).fold(0u32, |sum, k| {
        sum.wrapping_add(
            ((u64::from(start_counter) + u64::from(k)) & u64::from(layout.max_counter())) as u32,
        )
    });
    c.eq(
        get(&tally.counter_sum),
        want_sum,
        "reported counters are the consecutive values, each once",
    );
    c.eq(backwards, 0, "the hardware clock never went backwards");
    #[cfg(target_arch = "arm")]
    crate::out!(
        "    SysTick clock: {} reads so far held at the last value (counter reloaded before the exception pended)",
        crate::hw_clock::SysTickClock::stalls()
    );

    // Liveness on the real clock, handler quiet.
    b.force_close();
    let before = HwClock.now();
    for _ in 0..b.config().failure_threshold() {
        if let Ok(t) = b.acquire() {
            let _ = b.release(t, Outcome::Failure);
        }
    }
    let after = HwClock.now();
    c.eq(b.status(), Status::Open, "tripped");
    // The trip happened in [before, after]; each poll's status read happened
    // in [read_from, read_to]. Those brackets make the checks sound however
    // long the host stalls the emulator between two reads.
    let open_for = b.config().open_for();
    let latest = open_for + 3 * unit - 1;
    let mut open_too_long = 0u32;
    let (status, read_to) = loop {
        let read_from = HwClock.now();
        let status = b.status();
        let read_to = HwClock.now();
        if status != Status::Open || read_from > after + 4 * latest {
            break (status, read_to);
        }
        if read_from - after >= latest {
            open_too_long += 1;
        }
    };
    c.eq(
        status,
        Status::HalfOpen,
        "the open time elapsed on the hardware clock",
    );
    c.check(
        read_to - before >= open_for,
        "not before the open time (I4)",
    );
    c.eq(
        open_too_long,
        0,
        "never read as open once the open time was surely up, rounding included (I5)",
    );
    let probe = b.acquire();
    c.check(
        probe.as_ref().is_ok_and(|t| t.is_probe()),
        "the next caller probes",
    );
    if let Ok(t) = probe {
        let _ = b.release(t, Outcome::Success);
    }
    c.eq(
        b.status(),
        Status::Closed,
        "and its success closes the breaker",
    );
}
