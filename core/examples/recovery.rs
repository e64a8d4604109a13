//! A dependency coming back from an outage, driven through four recovery
//! policies: one probe then all traffic (the default), several probes, a
//! progressive ramp, and both. Deterministic: a `ManualClock` in
//! microseconds, many callers taking turns, no threads, no randomness.
//!
//! ```sh
//! cargo run --release -p tripword --features recovery --example recovery
//! ```
//!
//! **The dependency.** Down (every call fails) for the first 10 s. Then it
//! restarts cold: its capacity grows linearly from 0 to 1 500 calls/s over
//! 20 s (caches, connection pools, JIT). If, within any 100 ms window, it is
//! sent more calls than its capacity allows, it falls again: every call
//! fails for 5 s while it restarts, and its capacity grows from 0 again.
//!
//! **The load.** 200 callers, each calling every 200 ms (1 000 calls/s in
//! all), the first call of each at a different offset; a call the breaker
//! rejects is not sent.
//!
//! **Reported**, per policy: how often the dependency fell again after the
//! outage, when it served every call again (the start of the first 10 s
//! with no failure and no rejection), and the calls that failed or were
//! rejected over the two simulated minutes.

use tripword::clock::ManualClock;
use tripword::{Breaker, Cause, Config, Outcome, Ramp};

const MS: u64 = 1_000;
const S: u64 = 1_000_000;
const OUTAGE: u64 = 10 * S;
const WARMUP: u64 = 20 * S;
const CAPACITY: u64 = 1_500; // calls per second, when warm
const RESTART: u64 = 5 * S;
const WINDOW: u64 = 100 * MS;
const CALLERS: u64 = 200;
const PERIOD: u64 = 200 * MS;
const HORIZON: u64 = 120 * S;

/// The dependency's capacity model.
struct Dependency {
    /// Every call fails until then.
    down_until: u64,
    /// Its capacity grows from here.
    warm_from: u64,
    /// Calls received in the current window, and the window's start.
    window: (u64, u64),
    falls: u32,
}

impl Dependency {
    fn capacity_per_window(&self, now: u64) -> u64 {
        let warm = now.saturating_sub(self.warm_from).min(WARMUP);
        CAPACITY * warm / WARMUP * WINDOW / S
    }

    /// One call at `now`: whether it succeeds.
    fn call(&mut self, now: u64) -> bool {
        if now < self.down_until {
            return false;
        }
        if now - self.window.1 >= WINDOW {
            self.window = (0, now - (now - self.window.1) % WINDOW);
        }
        self.window.0 += 1;
        if self.window.0 > self.capacity_per_window(now).max(1) {
            // Overloaded while cold: it falls, and restarts from cold.
            self.falls += 1;
            self.down_until = now + RESTART;
            self.warm_from = self.down_until;
            return false;
        }
        true
    }
}

struct Run {
    falls: u32,
    served_from: Option<u64>,
    failed: u64,
    rejected: u64,
    ramp_rejections: u64,
    probes: u64,
}

fn simulate(name: &str, config: Config) -> Run {
    let clock = ManualClock::new(0);
    let breaker = Breaker::new(config, &clock);
    let mut dep = Dependency {
        down_until: OUTAGE,
        warm_from: OUTAGE,
        window: (0, 0),
        falls: 0,
    };
    let (mut failed, mut rejected, mut ramp_rejections, mut probes) = (0, 0, 0, 0);
    // The start of the current run of calls with no failure and no
    // rejection, after the outage.
    let mut clean_since: Option<u64> = None;
    let mut served_from = None;
    // Callers take turns: caller i calls at i * PERIOD / CALLERS + k * PERIOD.
    let step = PERIOD / CALLERS;
    let mut now = 0;
    while now < HORIZON {
        clock.set(now);
        match breaker.acquire() {
            Ok(ticket) => {
                probes += u64::from(ticket.is_probe());
                if dep.call(now) {
                    breaker.release(ticket, Outcome::Success);
                    if now >= OUTAGE {
                        clean_since.get_or_insert(now);
                    }
                } else {
                    breaker.release(ticket, Outcome::Failure);
                    failed += 1;
                    clean_since = None;
                }
            }
            Err(r) => {
                rejected += 1;
                ramp_rejections += u64::from(r.cause() == Cause::Ramp);
                clean_since = None;
            }
        }
        if let Some(since) = clean_since
            && served_from.is_none()
            && now - since >= 10 * S
        {
            served_from = Some(since);
        }
        now += step;
    }
    let _ = name;
    Run {
        falls: dep.falls,
        served_from,
        failed,
        rejected,
        ramp_rejections,
        probes,
    }
}

fn main() {
    let base = Config::new()
        .failure_threshold(5)
        .open_for(S)
        .exponential_backoff(8 * S)
        .probe_timeout(2 * S);
    let policies = [
        ("one probe, then all traffic", base),
        ("5 probes (4 to close)", base.probes(5).probes_to_close(4)),
        (
            "one probe, then a progressive ramp (3 s stages)",
            base.ramp(Ramp::progressive(3 * S)),
        ),
        (
            "5 probes, then a linear ramp over 24 s (8 stages)",
            base.probes(5)
                .probes_to_close(4)
                .ramp(Ramp::linear(24 * S, 8)),
        ),
    ];
    println!(
        "dependency: down {} s, then capacity 0 -> {CAPACITY} calls/s over {} s; \
         overload within {} ms restarts it ({} s down, cold again)",
        OUTAGE / S,
        WARMUP / S,
        WINDOW / MS,
        RESTART / S
    );
    println!(
        "load: {CALLERS} callers, one call each every {} ms ({} calls/s); {} s simulated\n",
        PERIOD / MS,
        CALLERS * S / PERIOD,
        HORIZON / S
    );
    println!(
        "| policy | falls again | every call served from | failed calls | rejected calls (by the ramp) | probes |"
    );
    println!("|---|---:|---:|---:|---:|---:|");
    for (name, config) in policies {
        let r = simulate(name, config);
        let served = match r.served_from {
            Some(t) => format!("{:.1} s", t as f64 / S as f64),
            None => "never".to_string(),
        };
        println!(
            "| {name} | {} | {served} | {} | {} ({}) | {} |",
            r.falls, r.failed, r.rejected, r.ramp_rejections, r.probes
        );
    }
}
