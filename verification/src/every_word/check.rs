//! One word, every event, every reading that matters: the core's pure layer
//! and its breaker (fast paths included) against the reference model.

use tripword::transition::{Event, Verdict};
use tripword::word::Snapshot;
use tripword::{Config, ConfigError, Jitter, Outcome, Transition, ValidConfig, Word};

use super::lean::{Seen, status_both, through_breaker, through_pure};
use crate::harness::{counter_matches, rejection_matches, state_mismatch};
use crate::model::{Model, ModelConfig, ModelState, ModelTransition};

/// An event, with a release's ticket counter relative to the word's own
/// counter field (`-1` stale, `0` its own, `+1` one ahead).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Ev {
    /// An admission.
    Admit,
    /// A release of a ticket with the word's counter plus the delta.
    Release(i8, Outcome),
    /// `failure_for` with the word's counter plus the delta and a hint
    /// (ticks).
    FailureFor(i8, u64),
    /// A status read.
    Status,
    /// `force_open`.
    ForceOpen,
    /// `force_open_for` a hint (ticks).
    ForceOpenFor(u64),
    /// `force_close`.
    ForceClose,
}

/// A disagreement: the word, the event, the clock reading, and both
/// answers.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Disagreement {
    /// The raw word.
    pub word: u64,
    /// The event.
    pub event: Ev,
    /// The clock reading.
    pub now: u64,
    /// Who disagreed, and on what.
    pub what: &'static str,
    /// The core's answer.
    pub core: String,
    /// The other answer (the model's, or the pure layer's for the breaker).
    pub other: String,
}

impl core::fmt::Display for Disagreement {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        write!(
            f,
            "word {:#x}, {:?} at {}: {}\n    core:  {}\n    other: {}",
            self.word, self.event, self.now, self.what, self.core, self.other
        )
    }
}

/// What a run counted, and the first disagreements.
#[derive(Clone, Debug, Default)]
pub struct Tally {
    /// Words checked.
    pub words: u64,
    /// Comparisons made (each event at each reading, each side).
    pub checks: u64,
    /// Disagreements found.
    pub disagreements: u64,
    /// The first few of them.
    pub first: Vec<Disagreement>,
}

/// How many disagreements a tally keeps in full.
pub const KEEP: usize = 8;

impl Tally {
    /// Adds `other` into `self`, keeping the first few disagreements.
    pub fn merge(&mut self, other: Tally) {
        self.words += other.words;
        self.checks += other.checks;
        self.disagreements += other.disagreements;
        for d in other.first {
            if self.first.len() < KEEP {
                self.first.push(d);
            }
        }
    }

    fn disagree(&mut self, d: Disagreement) {
        self.disagreements += 1;
        if self.first.len() < KEEP {
            self.first.push(d);
        }
    }
}

/// The check of one config on word width `W`.
#[derive(Clone, Debug)]
pub struct Checker<W: Word> {
    /// The config's name in reports.
    pub name: &'static str,
    valid: ValidConfig<W>,
    mcfg: ModelConfig,
    hints: [u64; 3],
}

/// The events tried on every word.
fn events(hints: &[u64]) -> Vec<Ev> {
    let mut v = vec![Ev::Admit, Ev::Status];
    for d in [0, -1, 1] {
        for o in [Outcome::Success, Outcome::Failure, Outcome::Ignored] {
            v.push(Ev::Release(d, o));
        }
        for &h in hints {
            v.push(Ev::FailureFor(d, h));
        }
    }
    v.push(Ev::ForceOpen);
    for &h in hints {
        v.push(Ev::ForceOpenFor(h));
    }
    v.push(Ev::ForceClose);
    v
}

/// What the model answers, in the core's terms where they are plain.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Said {
    Admitted { counter: u32, probe: bool },
    Rejected(crate::model::ModelRejected),
    Recorded,
    Stale,
    Done,
}

impl<W: Word> Checker<W> {
    /// The check of `config` on `W`, named `name` in reports.
    ///
    /// # Errors
    /// When the core rejects the config.
    pub fn new(name: &'static str, config: Config) -> Result<Self, ConfigError> {
        let valid = config.check::<W>()?;
        let mcfg = ModelConfig::for_width(&valid);
        // Hints: none, one not on a unit's edge, and one past the clamp.
        let hints = [0, valid.open_for() + 1, u64::MAX];
        Ok(Checker {
            name,
            valid,
            mcfg,
            hints,
        })
    }

    /// The validated config.
    pub fn valid(&self) -> &ValidConfig<W> {
        &self.valid
    }

    /// The model's config.
    pub fn model_config(&self) -> &ModelConfig {
        &self.mcfg
    }

    /// The model a word loads as, and whether the word is corrupt: decode
    /// it with the core and load the state into the model, which says
    /// whether it can be in it; a word that does not decode, or that the
    /// model cannot be in, is corrupt and starts as the model's repair.
    pub fn start(&self, raw: u64) -> (Model, bool) {
        let w = W::from_u64(raw);
        match Snapshot::decode::<W>(w)
            .ok()
            .and_then(|s| Model::from_snapshot(self.mcfg, &s))
        {
            Some(m) => (m, false),
            None => {
                let c = Snapshot::counter_bits::<W>(w);
                (Model::repaired(self.mcfg, u64::from(c)), true)
            }
        }
    }

    /// The clock readings where `model`'s answers can change: fixed ones
    /// (0, 1, the first unit's edge, the ring's edges, the clock's end, a
    /// reading past `2^32`) and, for a timed state, its timestamp, a unit
    /// and a tick before it (a clock gone backwards), the ring's edges from
    /// it, and each deadline (the model's, the one without jitter, a
    /// deadline's half-field limit, a trial's timeout and a ramp's stages,
    /// each also a coarse unit before and after) with its neighbours: -1,
    /// 0, +1 in ticks and -1, +1 in units, and a ring and `2^32` ticks
    /// later.
    pub fn readings(&self, model: &Model) -> Vec<u64> {
        let c = &self.mcfg;
        let u = c.unit();
        let ring = c.ring() as u64; // 0 when the ring is 2^64: a wrap
        let mut v = vec![
            0,
            1,
            u - 1,
            u,
            ring.wrapping_sub(1),
            ring,
            u64::MAX,
            0x1_2345_6789,
        ];
        let mut edges = Vec::new();
        let mut base = None;
        match model.state() {
            ModelState::Open { since, trips } => {
                let plain = c.with_jitter(Jitter::None).open_need(trips, 0);
                let need = model.timed().map_or(plain, |t| t.1);
                edges.extend([
                    since.wrapping_add(need.wrapping_mul(u)),
                    since.wrapping_add(plain.wrapping_mul(u)),
                ]);
                base = Some(since);
            }
            ModelState::Probing { since, .. } => {
                edges.push(since.wrapping_add(c.probe_need().wrapping_mul(u)));
                base = Some(since);
            }
            ModelState::OpenUntil { until, .. } => {
                edges.extend([
                    until,
                    until.wrapping_add(c.max_hint_units().wrapping_mul(u)),
                ]);
                base = Some(until);
            }
            ModelState::Trial { since, .. } => {
                // The trial's timeout, in its coarser units.
                let coarse = u << c.trial_extra();
                let d = c.trial_timeout_at(since, since);
                edges.extend([d, d.wrapping_sub(coarse), d.wrapping_add(coarse)]);
                base = Some(since);
            }
            ModelState::Ramp { since, .. } if c.has_ramp() => {
                // Each stage's first reading, and the ramp's end.
                let coarse = u << c.ramp_extra();
                let mut t = since;
                while let Some((_, _, next)) = c.ramp_stage(since, t) {
                    edges.extend([next, next.wrapping_sub(coarse), next.wrapping_add(coarse)]);
                    t = next;
                    if edges.len() > 3 * 9 {
                        break;
                    }
                }
                base = Some(since);
            }
            _ => {}
        }
        if let Some(s) = base {
            v.extend([
                s,
                s.wrapping_sub(1),
                s.wrapping_sub(u),
                s.wrapping_add(ring),
                s.wrapping_add(ring).wrapping_sub(u),
            ]);
        }
        for d in edges {
            v.extend([
                d.wrapping_sub(1),
                d,
                d.wrapping_add(1),
                d.wrapping_sub(u),
                d.wrapping_add(u),
                d.wrapping_add(ring),
                d.wrapping_add(1 << 32),
                d.wrapping_add(1 << 32).wrapping_sub(1),
            ]);
        }
        v.sort_unstable();
        v.dedup();
        v
    }

    /// Every event on `raw` at every reading of [`readings`](Self::readings)
    /// (an event that reads no clock on either side at the first reading
    /// cannot depend on it, and runs once), through the pure layer and the
    /// breaker, compared with the model; plus the decode's round trip.
    pub fn word(&self, raw: u64, tally: &mut Tally) {
        let (model, corrupt) = self.start(raw);
        let w = W::from_u64(raw);
        tally.words += 1;
        // The decoder reports what it cannot decode, and a word it decodes
        // is exactly its encoding: no bit is dropped.
        tally.checks += 1;
        if let Ok(s) = Snapshot::decode::<W>(w)
            && s.encode::<W>().into() != raw
        {
            tally.disagree(Disagreement {
                word: raw,
                event: Ev::Status,
                now: 0,
                what: "decode drops bits",
                core: format!("{s:?} encodes as {:#x}", s.encode::<W>().into()),
                other: format!("{raw:#x}"),
            });
        }
        let readings = self.readings(&model);
        for ev in events(&self.hints) {
            for (i, &now) in readings.iter().enumerate() {
                let clocked = self.event(raw, &model, corrupt, ev, now, tally);
                if i == 0 && !clocked {
                    break;
                }
            }
        }
    }

    /// `ev` on `raw` at `now`: returns whether anyone read the clock.
    fn event(
        &self,
        raw: u64,
        model: &Model,
        corrupt: bool,
        ev: Ev,
        now: u64,
        tally: &mut Tally,
    ) -> bool {
        let w = W::from_u64(raw);
        let mut m = model.clone();
        let mut checks = 0;
        let mut out = |what: &'static str, core: String, other: String| {
            tally.disagree(Disagreement {
                word: raw,
                event: ev,
                now,
                what,
                core,
                other,
            });
        };
        if ev == Ev::Status {
            let (breaker, pure, quiet) = status_both(&self.valid, w, now);
            let said = m.status(now);
            if breaker != pure || !quiet {
                out(
                    "breaker's status vs the pure layer's (status, clock reads)",
                    format!("{breaker:?}, stored or reported nothing: {quiet}"),
                    format!("{pure:?}"),
                );
            }
            if pure.0 != said || (pure.1 > 0) != m.read_clock() {
                out(
                    "status vs the model (status, read the clock)",
                    format!("{:?}, {}", pure.0, pure.1 > 0),
                    format!("{said:?}, {}", m.read_clock()),
                );
            }
            tally.checks += 2;
            return pure.1 > 0 || breaker.1 > 0 || m.read_clock();
        }
        let period = self.mcfg.counter_period();
        let own = u64::from(Snapshot::counter_bits::<W>(w));
        let ticket = |d: i8| ((own + period).wrapping_add_signed(i64::from(d)) % period) as u32;
        let event = match ev {
            Ev::Admit => Event::Admit,
            Ev::Release(d, outcome) => Event::Release {
                counter: ticket(d),
                outcome,
            },
            Ev::FailureFor(d, open_for) => Event::FailureFor {
                counter: ticket(d),
                open_for,
            },
            Ev::ForceOpen => Event::ForceOpen,
            Ev::ForceOpenFor(open_for) => Event::ForceOpenFor { open_for },
            Ev::ForceClose => Event::ForceClose,
            Ev::Status => unreachable!("handled above"),
        };
        let pure = through_pure(&self.valid, w, event, now);
        let mut clocked = pure.reads > 0;
        // The breaker, with an ordinary ticket and, for a release, a probe's.
        let probes: &[bool] = match ev {
            Ev::Release(..) | Ev::FailureFor(..) => &[false, true],
            _ => &[false],
        };
        for &probe in probes {
            let breaker = through_breaker(&self.valid, w, event, now, probe);
            checks += 1;
            clocked |= breaker.reads > 0;
            if breaker != pure {
                out(
                    if probe {
                        "breaker (a probe's ticket) vs the pure layer"
                    } else {
                        "breaker vs the pure layer"
                    },
                    format!("{breaker:?}"),
                    format!("{pure:?}"),
                );
            }
        }
        let said = model_step(&mut m, ev, ticket, now);
        checks += 1;
        clocked |= m.read_clock();
        if let Some(what) = self.mismatch(&pure, &m, said, corrupt, raw) {
            out(
                what,
                format!("{pure:?}"),
                format!(
                    "{said:?}, {:?} counter {}, transitions {:?}, read the clock {}, corrupt {corrupt}",
                    m.state(),
                    m.counter(),
                    m.transitions(),
                    m.read_clock()
                ),
            );
        }
        tally.checks += checks;
        clocked
    }

    /// How the pure layer's step differs from the model's, if it does.
    fn mismatch(
        &self,
        pure: &Seen,
        m: &Model,
        said: Said,
        corrupt: bool,
        raw: u64,
    ) -> Option<&'static str> {
        let verdict = match (pure.verdict, said) {
            (
                Verdict::Admitted { counter, probe },
                Said::Admitted {
                    counter: c,
                    probe: p,
                },
            ) => counter == c && probe == p,
            (Verdict::Rejected(r), Said::Rejected(mr)) => rejection_matches(&r, &mr),
            (Verdict::Recorded, Said::Recorded)
            | (Verdict::Stale, Said::Stale)
            | (Verdict::Done, Said::Done) => true,
            _ => false,
        };
        if !verdict {
            return Some("verdict vs the model");
        }
        if (pure.reads > 0) != m.read_clock() {
            return Some("clock read vs the model");
        }
        // `harness::transitions_match`, without collecting.
        let same = |c: Transition, m: &ModelTransition| {
            c.from == m.from.status()
                && c.to == m.to.status()
                && c.forced == m.forced()
                && counter_matches(&self.mcfg, m.counter, c.counter)
        };
        if pure.count as usize != m.transitions().len()
            || !pure
                .transitions()
                .zip(m.transitions())
                .all(|(c, m)| same(c, m))
        {
            return Some("transitions vs the model");
        }
        if pure.corrupt != corrupt.then_some(raw) || pure.corrupt_reports > 1 {
            return Some("corrupt-word report vs the model's verdict on the word");
        }
        match Snapshot::decode::<W>(W::from_u64(pure.word)) {
            Ok(s) if state_mismatch(&s, m).is_none() => None,
            _ => Some("word left vs the model's state"),
        }
    }
}

/// `ev` on the model; a ticket's counter is the word's plus the delta.
fn model_step(m: &mut Model, ev: Ev, ticket: impl Fn(i8) -> u32, now: u64) -> Said {
    let p = m.config().counter_period();
    let recorded = |r: bool| if r { Said::Recorded } else { Said::Stale };
    match ev {
        Ev::Admit => match m.acquire(now) {
            Ok(t) => Said::Admitted {
                counter: (t.counter % p) as u32,
                probe: t.probe,
            },
            Err(r) => Said::Rejected(r),
        },
        Ev::Release(d, outcome) => recorded(m.release(u64::from(ticket(d)), outcome, now)),
        Ev::FailureFor(d, hint) => recorded(m.release_failure_for(u64::from(ticket(d)), hint, now)),
        Ev::ForceOpen => {
            m.force_open();
            Said::Done
        }
        Ev::ForceOpenFor(hint) => {
            m.force_open_for(hint, now);
            Said::Done
        }
        Ev::ForceClose => {
            m.force_close();
            Said::Done
        }
        Ev::Status => unreachable!("a read, not an event"),
    }
}
