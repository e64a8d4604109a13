//! Workloads: what the callers ask of the breaker, as a value.
//!
//! A [`Workload`] says how the protected dependency behaves (the share of
//! calls that fail, whether failures come in bursts, the share of calls that
//! are slow and how slow, how many keys a registry spreads the calls over)
//! and how the breaker is set up for it ([`Setup`]). Every worker turns it
//! into a [`Plan`]: the [`Call`]s it makes, each with its planned outcome,
//! handed to the subject one by one.
//!
//! Three workloads are built in ([`Workload::builtin`]): `closed`,
//! `failure_storm` and `half_open_storm`. Any other is written on the
//! command line as `NAME:key=value,…` (see [`Workload::parse`]), e.g.
//! `flaky:fail=0.1,burst=8,slow=0.01,slow_us=50`.

use std::fmt::Write as _;
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};

/// How many calls a [`Plan`] holds before it repeats (and how many calls a
/// timed worker makes between two looks at the stop flag).
pub const CHUNK: usize = 1024;

/// How the breaker is set up for a workload.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Setup {
    /// Trips as a breaker in production would (the built-in subjects: after
    /// 5 consecutive failures, or a 50% failure rate over 100 calls; open
    /// 10 ms).
    Trips,
    /// Never trips during the run (a threshold it cannot reach): every
    /// failure is recorded and every call admitted.
    NeverTrips,
    /// Tripped before the run and open for the shortest time it allows, so
    /// callers race to be the probe.
    Tripped,
}

impl Setup {
    /// The name on the command line and in outputs.
    pub const fn name(self) -> &'static str {
        match self {
            Setup::Trips => "trips",
            Setup::NeverTrips => "never_trips",
            Setup::Tripped => "tripped",
        }
    }
}

/// What callers ask of the breaker, and how the breaker is set up for it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Workload {
    /// The name in every table, file and `--only`.
    pub name: String,
    /// The share of calls whose dependency fails, 0 to 1.
    pub failure_share: f64,
    /// Failures come in runs of this many consecutive calls (1: spread out).
    pub burst: u32,
    /// The share of calls whose dependency is slow, 0 to 1.
    pub slow_share: f64,
    /// How long a slow call keeps its caller busy (a spin, between admission
    /// and report), in microseconds.
    pub slow_us: u32,
    /// How many keys the calls are spread over (for registries of breakers;
    /// a single breaker ignores it).
    pub keys: u32,
    /// How the breaker is set up.
    pub setup: Setup,
}

impl Workload {
    /// A healthy dependency: every call succeeds; the breaker would trip
    /// after a few failures but never sees one.
    pub fn closed() -> Workload {
        Workload::named("closed", 0.0, Setup::Trips)
    }

    /// Every call fails and the breaker never trips: every release writes.
    pub fn failure_storm() -> Workload {
        Workload::named("failure_storm", 1.0, Setup::NeverTrips)
    }

    /// The dependency stays down; the breaker is tripped before the run and
    /// half-open every microsecond, so callers race to be the probe.
    pub fn half_open_storm() -> Workload {
        Workload::named("half_open_storm", 1.0, Setup::Tripped)
    }

    /// The three built-in workloads, in report order.
    pub fn builtin() -> Vec<Workload> {
        vec![
            Workload::closed(),
            Workload::failure_storm(),
            Workload::half_open_storm(),
        ]
    }

    /// A workload with no slow calls, one key and failures spread out.
    pub fn named(name: &str, failure_share: f64, setup: Setup) -> Workload {
        Workload {
            name: name.to_string(),
            failure_share,
            burst: 1,
            slow_share: 0.0,
            slow_us: 0,
            keys: 1,
            setup,
        }
    }

    /// Parses `NAME` (a built-in workload) or `NAME:key=value,…`, starting
    /// from the built-in of that name if there is one, else from a healthy
    /// dependency that trips. Keys: `fail` (failure share), `burst`, `slow`
    /// (slow share), `slow_us`, `keys`, `setup` (`trips`, `never_trips`,
    /// `tripped`).
    ///
    /// ```
    /// use tripword_lab::{Setup, Workload};
    /// let w = Workload::parse("flaky:fail=0.1,burst=8,slow=0.01,slow_us=50").unwrap();
    /// assert_eq!((w.failure_share, w.burst, w.slow_us, w.setup), (0.1, 8, 50, Setup::Trips));
    /// assert_eq!(Workload::parse("closed").unwrap(), Workload::closed());
    /// assert!(Workload::parse("nope").is_err());
    /// ```
    pub fn parse(text: &str) -> Result<Workload, String> {
        let (name, params) = match text.split_once(':') {
            Some((n, p)) => (n.trim(), Some(p)),
            None => (text.trim(), None),
        };
        if name.is_empty() || !name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
            return Err(format!(
                "workload name {name:?}: use letters, digits and _ only"
            ));
        }
        let builtin = Workload::builtin().into_iter().find(|w| w.name == name);
        let Some(params) = params else {
            return builtin.ok_or_else(|| {
                format!(
                    "unknown workload {name:?}: the built-in ones are closed, failure_storm, \
                     half_open_storm; a new one needs parameters (NAME:fail=0.1,burst=8,…)"
                )
            });
        };
        let mut w = builtin.unwrap_or_else(|| Workload::named(name, 0.0, Setup::Trips));
        for pair in params.split(',').filter(|p| !p.trim().is_empty()) {
            let (k, v) = pair
                .split_once('=')
                .ok_or_else(|| format!("workload {name}: {pair:?} is not key=value"))?;
            let (k, v) = (k.trim(), v.trim());
            let bad = |e: &dyn std::fmt::Display| format!("workload {name}: {k}={v}: {e}");
            match k {
                "fail" => w.failure_share = share(v).map_err(|e| bad(&e))?,
                "burst" => w.burst = v.parse::<u32>().map_err(|e| bad(&e))?.max(1),
                "slow" => w.slow_share = share(v).map_err(|e| bad(&e))?,
                "slow_us" => w.slow_us = v.parse().map_err(|e| bad(&e))?,
                "keys" => w.keys = v.parse::<u32>().map_err(|e| bad(&e))?.max(1),
                "setup" => {
                    w.setup = [Setup::Trips, Setup::NeverTrips, Setup::Tripped]
                        .into_iter()
                        .find(|s| s.name() == v)
                        .ok_or_else(|| bad(&"one of trips, never_trips, tripped"))?;
                }
                _ => {
                    return Err(format!(
                        "workload {name}: unknown key {k:?} (fail, burst, slow, slow_us, keys, setup)"
                    ));
                }
            }
        }
        w.name = name.to_string();
        Ok(w)
    }

    /// One line saying what the workload is, for headers and reports.
    pub fn describe(&self) -> String {
        let mut s = format!(
            "{}: {:.0}% of calls fail",
            self.name,
            self.failure_share * 100.0
        );
        if self.burst > 1 {
            let _ = write!(s, " (in bursts of {})", self.burst);
        }
        if self.slow_share > 0.0 && self.slow_us > 0 {
            let _ = write!(
                s,
                ", {:.1}% are slow ({} µs)",
                self.slow_share * 100.0,
                self.slow_us
            );
        }
        if self.keys > 1 {
            let _ = write!(s, ", {} keys", self.keys);
        }
        let _ = write!(s, "; breaker set up: {}", self.setup.name());
        s
    }

    /// Whether every call of the workload is the same call.
    pub fn is_uniform(&self) -> bool {
        (self.failure_share == 0.0 || self.failure_share == 1.0)
            && (self.slow_share == 0.0 || self.slow_share >= 1.0 || self.slow_us == 0)
            && self.keys == 1
    }

    /// The calls of worker `index`: the same for every subject, so every
    /// subject is asked for the same outcomes (a fixed pseudo-random pattern
    /// of [`CHUNK`] calls, seeded by the index, repeated).
    pub fn plan(&self, index: usize) -> Plan {
        let slow = if self.slow_share > 0.0 {
            self.slow_us
        } else {
            0
        };
        if self.is_uniform() {
            return Plan::Uniform(Call {
                ok: self.failure_share < 1.0,
                slow_us: if self.slow_share >= 1.0 { slow } else { 0 },
                key: 0,
            });
        }
        let mut rng =
            Rng(0x9e37_79b9_7f4a_7c15 ^ (index as u64 + 1).wrapping_mul(0xbf58_476d_1ce4_e5b9));
        // A burst starts with probability share / burst, so that about
        // `failure_share` of the calls fail whatever the burst length.
        let start = self.failure_share / f64::from(self.burst);
        let mut left_in_burst = 0u32;
        let calls = (0..CHUNK)
            .map(|_| {
                if left_in_burst == 0 && rng.unit() < start {
                    left_in_burst = self.burst;
                }
                let ok = if left_in_burst > 0 {
                    left_in_burst -= 1;
                    false
                } else {
                    true
                };
                let slow_us = if rng.unit() < self.slow_share {
                    slow
                } else {
                    0
                };
                let key = (rng.next() % u64::from(self.keys)) as u32;
                Call { ok, slow_us, key }
            })
            .collect();
        Plan::Pattern(calls)
    }
}

fn share(v: &str) -> Result<f64, String> {
    match v.parse::<f64>() {
        Ok(x) if (0.0..=1.0).contains(&x) => Ok(x),
        Ok(_) => Err("a share between 0 and 1".to_string()),
        Err(e) => Err(e.to_string()),
    }
}

/// splitmix64: plans are reproducible, and need no dependency.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }
    fn unit(&mut self) -> f64 {
        (self.next() >> 11) as f64 / (1u64 << 53) as f64
    }
}

/// One planned call: what the dependency will do if the call is admitted.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Call {
    /// Whether the dependency succeeds.
    pub ok: bool,
    /// How long the dependency keeps the caller busy, in microseconds (0:
    /// answers at once).
    pub slow_us: u32,
    /// Which key (of [`Workload::keys`]) the call is for.
    pub key: u32,
}

impl Call {
    /// A call that succeeds at once, on key 0.
    pub const SUCCESS: Call = Call {
        ok: true,
        slow_us: 0,
        key: 0,
    };
    /// A call that fails at once, on key 0.
    pub const FAILURE: Call = Call {
        ok: false,
        slow_us: 0,
        key: 0,
    };

    /// Runs the dependency: spins for [`slow_us`](Self::slow_us) if the call
    /// is slow, then returns whether it succeeded. Call it between admission
    /// and report. The outcome is not hidden from the optimizer: a uniform
    /// workload's constant call folds, as a hand-written loop would.
    #[inline(always)]
    pub fn perform(self) -> bool {
        if self.slow_us > 0 {
            spin(self.slow_us);
        }
        self.ok
    }
}

/// A slow call's wait, out of line so that [`Call::perform`] stays small
/// enough to inline into every worker's loop: the harness must not add
/// calls of its own to what it measures (`benches/per-call.sh`).
#[cold]
#[inline(never)]
fn spin(us: u32) {
    let until = Instant::now() + Duration::from_micros(u64::from(us));
    while Instant::now() < until {
        std::hint::spin_loop();
    }
}

/// A call that answers at once, succeeding if `ok`, on key 0.
impl From<bool> for Call {
    fn from(ok: bool) -> Call {
        if ok { Call::SUCCESS } else { Call::FAILURE }
    }
}

/// The calls one worker makes, in order, repeated.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Plan {
    /// The same call every time (the built-in workloads): the loop is the
    /// same as a loop around a constant call.
    Uniform(Call),
    /// A pattern of [`CHUNK`] calls.
    Pattern(Vec<Call>),
}

impl Plan {
    /// The `i`-th call.
    #[inline]
    pub fn at(&self, i: usize) -> Call {
        match self {
            Plan::Uniform(c) => *c,
            Plan::Pattern(p) => p[i % p.len()],
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn builtins_are_uniform_and_named() {
        let names: Vec<String> = Workload::builtin().into_iter().map(|w| w.name).collect();
        assert_eq!(names, ["closed", "failure_storm", "half_open_storm"]);
        assert_eq!(Workload::closed().plan(3), Plan::Uniform(Call::SUCCESS));
        assert_eq!(
            Workload::failure_storm().plan(0),
            Plan::Uniform(Call::FAILURE)
        );
    }

    #[test]
    fn a_plan_has_the_failure_share_and_bursts_asked_for() {
        let w = Workload::parse("flaky:fail=0.25,burst=4,keys=8").unwrap();
        let Plan::Pattern(calls) = w.plan(1) else {
            panic!("not uniform")
        };
        let failures = calls.iter().filter(|c| !c.ok).count() as f64 / CHUNK as f64;
        assert!((0.15..0.35).contains(&failures), "{failures}");
        // Failures come in runs of at least 4 (a run may join the next).
        let mut runs = Vec::new();
        let mut run = 0;
        for c in &calls {
            if c.ok {
                if run > 0 {
                    runs.push(run);
                }
                run = 0;
            } else {
                run += 1;
            }
        }
        assert!(runs.iter().all(|r| *r >= 4), "{runs:?}");
        assert!(calls.iter().all(|c| c.key < 8));
        assert_ne!(w.plan(1), w.plan(2), "each worker its own pattern");
        assert_eq!(w.plan(1), w.plan(1), "reproducible");
    }

    #[test]
    fn parsing_rejects_what_it_cannot_read() {
        assert!(Workload::parse("x:fail=2").is_err());
        assert!(Workload::parse("x:fail").is_err());
        assert!(Workload::parse("x:colour=red").is_err());
        assert!(Workload::parse("bad name").is_err());
        let w = Workload::parse("closed:slow=1,slow_us=3").unwrap();
        assert!(
            w.plan(0)
                == Plan::Uniform(Call {
                    ok: true,
                    slow_us: 3,
                    key: 0
                }),
            "every call slow: one call"
        );
        assert!(w.describe().contains("slow (3 µs)"), "{}", w.describe());
        assert_eq!(
            Workload::parse("h:setup=tripped,fail=1").unwrap().setup,
            Setup::Tripped
        );
    }
}
