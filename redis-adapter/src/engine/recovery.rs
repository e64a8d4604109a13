//! The admissions Redis decides, and the recovery states on the shared
//! word (`docs/spec.md`, "Recovery: several probes and the ramp";
//! `docs/distributed.md`, "The ramp in a fleet").
//!
//! - A trial's probes are elected in Redis: each is the kit's admission,
//!   a compare-and-set of the trial's counts, so the fleet admits exactly
//!   `n` probes however many instances ask (spec I11). The mirror rejects
//!   with no network only a trial it holds full and in time, as it does a
//!   running single probe; a trial with room goes to Redis.
//! - The ramp's share is admitted per instance: each instance admits its
//!   share of its own calls, by the core's credit rule (each call adds the
//!   stage's share, a call that makes a whole one is admitted and spends
//!   it) on a credit of its own beside the mirror
//!   ([`Mirror::credit`](super::mirror::Mirror::credit)), at the stage the
//!   shared word's `since` and the config give for the estimated server
//!   time. Neither an admission nor a rejection in the ramp writes Redis,
//!   but for one race: an admission whose compare-and-set on a trial loses
//!   to the ramp's start retries in the kit's loop on the ramp's word and
//!   stores the credit it moved (once per admission caught in it;
//!   `docs/distributed.md`).
//!   Releases go to the shared word as in every state: ramp failures are
//!   counted there and reopen the whole fleet. The ramp's end (`Closed`
//!   with the next counter) is stored by the first instance that finds
//!   the last stage over at the server's time.

use super::Inner;
use super::ticket::Ticket;
use super::words::probing;
use crate::transport::Member;
use std::sync::atomic::{AtomicU32, Ordering};
use tripword::cell;
use tripword::transition::{self, Decision, Event, Verdict};
use tripword::word::{Snapshot, State};
use tripword::{Rejected, ValidConfig, W64, Word};

/// What an instance's share of the ramp answers at one reading.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Share {
    /// Admitted, under the ramp's counter.
    Admitted(u32),
    /// Refused by the ramp (cause `Ramp`, a wait until the next stage).
    Rejected(Rejected),
    /// The last stage is over: the next admission stores `Closed`.
    Over,
}

/// The stage of the `Ramp` word `word` at the server time `now`: its share
/// in credit units (`2^-share_bits` calls) and the rejection a call it
/// refuses gets, or `None` once the last stage is over (and when `word` is
/// not a `Ramp`). The core's own decision, on the word with no credit:
/// every share is less than a whole call, so it refuses, with the stage's
/// share as the credit it leaves and the wait until the next stage.
pub(crate) fn stage(config: &ValidConfig<W64>, word: u64, now: u64) -> Option<(u32, Rejected)> {
    let Ok(Snapshot {
        state:
            State::Ramp {
                since,
                trips,
                failures,
                ..
            },
        counter,
    }) = Snapshot::decode::<W64>(word)
    else {
        return None;
    };
    let state = State::Ramp {
        since,
        trips,
        credit: 0,
        failures,
    };
    let bare = Snapshot { state, counter }.encode::<W64>();
    let step = transition::apply(config, bare, Event::Admit, || now);
    match (step.verdict, Snapshot::decode::<W64>(step.word)) {
        (
            Verdict::Rejected(why),
            Ok(Snapshot {
                state: State::Ramp { credit, .. },
                ..
            }),
        ) => Some((credit, why)),
        _ => None,
    }
}

/// The instance's share of the `Ramp` word `word` at the server time
/// `now`, on its `credit`: the core's credit rule, so of any `c`
/// consecutive calls of this instance at one stage of share `p`, `⌊c·p⌋`
/// or `⌊c·p⌋ + 1` are admitted. `None` when `word` is not a `Ramp`.
pub(crate) fn share(
    config: &ValidConfig<W64>,
    word: u64,
    now: u64,
    credit: &AtomicU32,
) -> Option<Share> {
    if !super::words::ramp(word) {
        return None;
    }
    let Some((share, why)) = stage(config, word, now) else {
        return Some(Share::Over);
    };
    let one = 1u32 << W64::LAYOUT.share_bits;
    let mut admitted = false;
    // The closure's last run is the one stored.
    let _ = credit.fetch_update(Ordering::AcqRel, Ordering::Acquire, |c| {
        let c = c.min(one - 1) + share;
        admitted = c >= one;
        Some(if admitted { c - one } else { c })
    });
    Some(if admitted {
        Share::Admitted(Snapshot::counter_bits::<W64>(word))
    } else {
        Share::Rejected(why)
    })
}

/// What an admission Redis decides found: the kit's admission applied
/// (and the server time of the last reply), or a ramp in a stage at the
/// server's time, for the instance's share to decide with no write.
pub(crate) enum Found {
    /// The kit's admission, applied.
    Applied(cell::Applied<W64>, u64),
    /// A `Ramp` word read, in a stage at the server time read with it.
    Ramp(u64, u64),
}

impl Inner {
    /// The ramp's answer to an admission on the mirror's `word`, with no
    /// network: `None` when `word` is not a `Ramp`; `Some(None)` when Redis
    /// must be asked (no estimate of the server's time, or the last stage
    /// is over at it: the instance that finds it over stores the end).
    pub(super) fn ramp_prepare(&self, word: u64) -> Option<Option<Result<Ticket, Rejected>>> {
        if !super::words::ramp(word) {
            return None;
        }
        let Some(now) = self.estimate() else {
            return Some(None);
        };
        Some(self.shared(word, now))
    }

    /// The instance's share of the `Ramp` word `word` at `now`: the answer,
    /// or `None` once the last stage is over.
    fn shared(&self, word: u64, now: u64) -> Option<Result<Ticket, Rejected>> {
        match share(&self.config, word, now, self.mirror.credit())? {
            Share::Admitted(counter) => Some(Ok(self.ticket(counter, false))),
            Share::Rejected(why) => Some(Err(why)),
            Share::Over => None,
        }
    }

    /// An admission Redis decides, from the mirror's `base`: the word read
    /// and the admission applied by the kit's compare-and-swap loop; a
    /// ramp the server's time finds in a stage is this instance's share to
    /// decide, with nothing written.
    #[inline(never)]
    pub(crate) fn acquire_remote(&self, base: u64) -> Result<Ticket, Rejected> {
        let found = self.remote(true, |cell| {
            let (seen, at) = cell.fetch()?;
            if stage(&self.config, seen, at).is_some() {
                return Ok(Found::Ramp(seen, at));
            }
            let report = |swap| self.report(swap);
            let applied = cell::update(
                cell,
                &self.config,
                seen,
                Event::Admit,
                Some(at),
                || cell.now(),
                report,
            )?;
            Ok(Found::Applied(applied, cell.latest().map_or(0, |(t, _)| t)))
        });
        match found {
            Ok(found) => self.found(base, found),
            Err(_) => {
                self.detach();
                self.acquire_local()
            }
        }
    }

    /// The answer of an admission Redis decided, from an operation of
    /// [`base`](super::mirror::Mirror::base) `base`.
    pub(crate) fn found(&self, base: u64, found: Found) -> Result<Ticket, Rejected> {
        match found {
            Found::Applied(applied, at) => self.admission(base, applied, at),
            Found::Ramp(word, at) => {
                self.mirror.offer(&self.config, Some(base), word);
                // In a stage at `at` (not reached otherwise: Redis would
                // have been asked to end it).
                self.shared(word, at)
                    .unwrap_or_else(|| self.acquire_local())
            }
        }
    }

    /// The answer of an admission Redis decided (`applied`, at server time
    /// `at`), from an operation of [`base`](super::mirror::Mirror::base)
    /// `base`.
    pub(crate) fn admission(
        &self,
        base: u64,
        applied: cell::Applied<W64>,
        at: u64,
    ) -> Result<Ticket, Rejected> {
        self.mirror.offer(&self.config, Some(base), applied.word);
        match applied.decision {
            Decision::Admitted => {
                // The single probe, or one of a trial's.
                let probe = probing(applied.word);
                let counter = Snapshot::counter_bits::<W64>(applied.word);
                Ok(self.ticket(counter, probe))
            }
            // A ramp's refusal (the kit's, on a ramp it found in a stage
            // when its compare-and-set was lost): its cause and wait. The
            // word stored has the credit it moved, so the admission is not
            // made on it again.
            _ if let Some((_, why)) = stage(&self.config, applied.word, at) => Err(why),
            // The rejection (cause and wait) the word makes at the server
            // time the decision read: the pure layer again.
            _ => match transition::apply(&self.config, applied.word, Event::Admit, || at).verdict {
                Verdict::Rejected(why) => Err(why),
                _ => self.acquire_local(),
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::config::{fingerprint, fleet_holds, follower_status};
    use crate::engine::mirror::{Mirror, NONE};
    use crate::engine::quorum::Quorum;
    use tripword::{Cause, Config, Ramp, Status};

    const STEP: u64 = 1 << 20;

    fn ramp_config() -> ValidConfig<W64> {
        Config::new()
            .failure_threshold(3)
            .ramp(Ramp::stages(STEP, &[10, 2_500, 5_000]))
            .check()
            .unwrap()
    }

    /// A stage's length in ticks, as the core keeps it: the first stage's
    /// whole wait (at least `STEP`, less than three ramp units more).
    fn len(config: &ValidConfig<W64>) -> u64 {
        let (_, why) = stage(config, ramp(0, 1, 0), 0).unwrap();
        let len = why.retry_after().unwrap();
        assert!((STEP..STEP + (3 << 14)).contains(&len), "{len}");
        len
    }

    fn ramp(since_ticks: u64, counter: u32, failures: u32) -> u64 {
        let l = W64::LAYOUT;
        let state = State::Ramp {
            since: since_ticks >> (l.share_bits + l.ramp_failure_bits),
            trips: 1,
            credit: 0,
            failures,
        };
        Snapshot { state, counter }.encode::<W64>()
    }

    /// Each stage's share, as the core rounds it (units of 2^-10 calls:
    /// 0.1 % is 1, 25 % is 256, 50 % is 512),
    /// and the instance's credit rule: of `c` consecutive calls at one
    /// stage, `⌊c·p⌋` or `⌊c·p⌋ + 1` admitted; every other call refused
    /// with cause `Ramp` and the wait until the next stage; past the last
    /// stage, `Over`.
    #[test]
    fn each_instance_admits_its_share_of_each_stage() {
        let config = ramp_config();
        assert_eq!(config.time_shift(), 0);
        let word = ramp(0, 9, 0);
        let len = len(&config);
        let credit = AtomicU32::new(0);
        for (i, p) in [(0u64, 1u64), (1, 256), (2, 512)] {
            // Every share of the stage's calls, from any credit.
            for c in [1u64, 7, 100, 1_000, 4_099] {
                let now = i * len + len / 2;
                let mut admitted = 0;
                for _ in 0..c {
                    match share(&config, word, now, &credit) {
                        Some(Share::Admitted(counter)) => {
                            assert_eq!(counter, 9, "the ramp's counter");
                            admitted += 1;
                        }
                        Some(Share::Rejected(why)) => {
                            assert_eq!(why.cause(), Cause::Ramp);
                            assert_eq!(why.retry_after(), Some((i + 1) * len - now));
                        }
                        other => panic!("stage {i}: {other:?}"),
                    }
                }
                let least = c * p / 1024;
                assert!(
                    (least..=least + 1).contains(&admitted),
                    "stage {i}: {admitted} of {c} at {p}/1024"
                );
            }
        }
        assert_eq!(share(&config, word, 3 * len, &credit), Some(Share::Over));
        assert_eq!(stage(&config, word, 3 * len), None);
        assert!(stage(&config, word, 3 * len - 1).is_some());
        let closed = Snapshot::INITIAL.encode::<W64>();
        assert_eq!(share(&config, closed, 0, &credit), None, "not a ramp");
        assert_eq!(stage(&config, closed, 0), None);
    }

    /// From no credit, the first call of a stage of share `p` is admitted
    /// only when `p` makes a whole call: at 25 %, calls 4, 8, 12, ...
    #[test]
    fn the_credit_starts_at_none_and_admits_every_fourth_at_a_quarter() {
        let config = ramp_config();
        let word = ramp(0, 1, 0);
        let credit = AtomicU32::new(0);
        let now = len(&config);
        let admitted: Vec<bool> = (0..8)
            .map(|_| matches!(share(&config, word, now, &credit), Some(Share::Admitted(_))))
            .collect();
        assert_eq!(
            admitted,
            [false, false, false, true, false, false, false, true]
        );
    }

    /// The mirror's credit starts again at none for a new ramp (another
    /// counter), not when the same ramp counts a failure; a `Ramp` with no
    /// failures makes a success quiet, and never an admission one load.
    #[test]
    fn the_mirror_keeps_a_credit_per_ramp_and_quiet_successes() {
        let config = ramp_config();
        let m = Mirror::new();
        m.set_attached(&config, true);
        let first = ramp(0, 1, 0);
        m.offer(&config, Some(m.base()), first);
        assert_eq!((m.admit(), m.quiet()), (NONE, first));
        let _ = share(&config, first, len(&config), m.credit());
        assert_eq!(m.credit().load(Ordering::Relaxed), 256);
        let failing = ramp(0, 1, 1);
        m.offer(&config, None, failing);
        assert_eq!(m.word(), failing, "a failure of one counter: taken");
        assert_eq!(
            (m.admit(), m.quiet()),
            (NONE, NONE),
            "a success ends the run"
        );
        assert_eq!(m.credit().load(Ordering::Relaxed), 256, "the same ramp");
        m.offer(&config, None, first);
        assert_eq!(m.word(), failing, "of unknown order: the failures kept");
        let next = ramp(0, 3, 0);
        m.offer(&config, None, next);
        assert_eq!(m.credit().load(Ordering::Relaxed), 0, "a new ramp");
        assert_eq!(m.quiet(), next);
    }

    /// Of one trial, the mirror takes a word with more free places (an
    /// ignored probe's), not one with fewer of unknown order: it never
    /// holds the trial full while Redis has room.
    #[test]
    fn the_mirror_takes_a_trials_freed_place() {
        let config = Config::new().probes(3).check().unwrap();
        let trial = |running, passed| {
            let state = State::Trial {
                since: 0,
                trips: 1,
                running,
                passed,
                failed: 0,
            };
            Snapshot { state, counter: 5 }.encode::<W64>()
        };
        let m = Mirror::new();
        m.set_attached(&config, true);
        m.offer(&config, Some(m.base()), trial(3, 0));
        m.offer(&config, None, trial(2, 0));
        assert_eq!(m.word(), trial(2, 0), "a place freed: taken");
        m.offer(&config, None, trial(3, 0));
        assert_eq!(m.word(), trial(2, 0), "fewer places, of unknown order");
        m.offer(&config, None, trial(1, 1));
        assert_eq!(m.word(), trial(2, 0), "as many places");
        m.offer(&config, Some(m.base()), trial(3, 0));
        assert_eq!(m.word(), trial(3, 0), "read after: taken");
        assert_eq!((m.admit(), m.quiet()), (NONE, NONE));
    }

    /// A follower is held off by a trial as by a running probe, and by a
    /// ramp with cause `Ramp`; the fingerprint names the recovery options
    /// only when set.
    #[test]
    fn followers_and_fingerprints_know_the_recovery_states() {
        let config = ramp_config();
        let word = ramp(0, 1, 0);
        let why = fleet_holds(&config, word, Some(STEP / 2)).unwrap();
        assert_eq!(why.cause(), Cause::Ramp);
        assert_eq!(why.retry_after(), Some(len(&config) - STEP / 2));
        assert_eq!(follower_status(&config, word), Some(Status::Recovering));
        let state = State::Trial {
            since: 0,
            trips: 1,
            running: 1,
            passed: 0,
            failed: 0,
        };
        let trial = Snapshot { state, counter: 1 }.encode::<W64>();
        assert_eq!(
            fleet_holds(&config, trial, None).unwrap().cause(),
            Cause::Probing
        );
        assert_eq!(follower_status(&config, trial), Some(Status::Probing));
        let plain = Config::new().failure_threshold(3).check().unwrap();
        let quorum = Quorum::ONE;
        assert!(!fingerprint(&plain, &quorum).contains("probes"));
        assert!(!fingerprint(&plain, &quorum).contains("ramp"));
        let probes = Config::new().probes(3).probes_to_close(2).check().unwrap();
        assert!(fingerprint(&probes, &quorum).contains(" probes=3 probes_to_close=2"));
        assert!(
            fingerprint(&config, &quorum)
                .contains(&format!(" ramp_step={STEP} ramp_shares=10,2500,5000"))
        );
    }
}
