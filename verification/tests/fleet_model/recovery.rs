//! The recovery states on the shared word (`Parts::recovery`), as
//! `tripword-redis` does them (`engine/recovery.rs`, `engine/mirror.rs`):
//! a trial's probes elected in Redis by the kit's compare-and-set of its
//! counts, the mirror rejecting only a trial it holds full, and the ramp
//! admitted per instance by its own credit, with no write; failures in
//! the ramp go to the shared word, and the ramp's end is stored by the
//! instance that finds its last stage over, through Redis.

use crate::model::*;
use stateright::Property;
use tripword::transition::{Event, Verdict, apply};
use tripword::word::{Snapshot, State};
use tripword::{Config, Outcome, Ramp, Status, W64, Word};

/// One tick of the recovery part's clock: one ramp unit at time shift 0
/// (`share_bits + ramp_failure_bits` = 14 bits coarser than a tick).
pub(crate) const TICK: u64 = 1 << 14;

/// The trial's probes (`Config::probes`).
pub(crate) const PROBES: u8 = 2;

/// The asks explored per instance at one stage of one ramp.
pub(crate) const ASKS: u8 = 3;

/// The ghost of an instance's asks at one stage of one ramp: the ramp's
/// counter, the stage's end, whether it is the ramp's first, its share
/// (in `2^-share_bits` calls), the asks and the admissions.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(crate) struct Tally {
    pub(crate) counter: u32,
    pub(crate) end: u64,
    pub(crate) first: bool,
    pub(crate) share: u32,
    pub(crate) asks: u8,
    pub(crate) admitted: u8,
}

/// `recovery::stage`: the stage of the `Ramp` word `word` at `now`, as its
/// share and the time left in it, or `None` when `word` is not a `Ramp` in
/// a stage. The core's own decision on the word with no credit.
pub(crate) fn stage(
    config: &tripword::ValidConfig<W64>,
    word: u64,
    now: u64,
) -> Option<(u32, u64)> {
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
    let step = apply(config, bare, Event::Admit, || now);
    match (step.verdict, Snapshot::decode::<W64>(step.word)) {
        (
            Verdict::Rejected(why),
            Ok(Snapshot {
                state: State::Ramp { credit, .. },
                ..
            }),
        ) => Some((credit, why.retry_after().unwrap_or(0))),
        _ => None,
    }
}

impl Fleet {
    /// Two instances, the key stored `Open` (tripped at time 0),
    /// `failure_threshold(1)` (one ramp failure reopens),
    /// `open_for` one tick, `probes(2)`, a probe timeout of 2 ticks (not
    /// reached), a ramp of one stage of one tick at 50 %, the clock up to 2
    /// ticks, at most `writes` stored words, no fault; the trial closes on
    /// `to_close` successes.
    pub(crate) fn recovering(writes: u8, to_close: u8, bug: Bug) -> Fleet {
        let faults = Faults {
            restart: false,
            restart_unseen: false,
            failover: false,
            partition: false,
        };
        let mut model = Fleet::new(2, 1, 2 * TICK, faults, bug);
        model.tick = TICK;
        model.max_writes = writes;
        model.parts.recovery = true;
        // A stage of one ramp unit, one tick: the core rounds a step up to
        // the units that cover both truncations, so a step of `TICK`
        // ticks would last two.
        model.config = Config::new()
            .failure_threshold(1)
            .open_for(TICK)
            .probe_timeout(2 * TICK)
            .horizon(0)
            .probes(PROBES)
            .probes_to_close(to_close)
            .ramp(Ramp::stages(1, &[5_000]))
            .check::<W64>()
            .expect("a valid config");
        model
    }

    /// The recovery part's start: the key stored `Open` at time 0 (the
    /// kit's trip of the initial word), every instance's mirror holding it.
    pub(crate) fn tripped(&self, s: &mut FleetState) {
        let event = Event::Release {
            counter: 0,
            outcome: Outcome::Failure,
        };
        let open = apply(&self.config, 0, event, || 0).word;
        s.stored = Some(open);
        s.tripped = true;
        for inst in &mut s.instances {
            inst.mirror = open;
            inst.seen = Some(open);
            inst.fresh = true;
        }
    }

    /// `recovery::share` on instance `i`'s credit: `None` when `word` is
    /// not a `Ramp` in a stage at `now` (Redis is asked: it ends the ramp),
    /// else whether the call is admitted; the ghost tally counts it.
    pub(crate) fn share(&self, s: &mut FleetState, i: usize, word: u64, now: u64) -> Option<bool> {
        let (share, left) = stage(&self.config, word, now)?;
        let one = 1u32 << W64::LAYOUT.share_bits;
        let inst = &mut s.instances[i];
        let c = inst.credit.min(one - 1) + share;
        let admitted = c >= one;
        inst.credit = if admitted && self.bug != Bug::CreditNotSpent {
            c - one
        } else {
            c.min(one - 1)
        };
        let key = (counter(word), now + left);
        // The ramp's start (time shift 0): its stage there is the first.
        let start = match Snapshot::decode::<W64>(word) {
            Ok(Snapshot {
                state: State::Ramp { since, .. },
                ..
            }) => since << (W64::LAYOUT.share_bits + W64::LAYOUT.ramp_failure_bits),
            _ => now,
        };
        let first = stage(&self.config, word, start).map(|(_, l)| start + l) == Some(key.1);
        let mut tally = match inst.tally {
            Some(t) if (t.counter, t.end) == key => t,
            _ => Tally {
                counter: key.0,
                end: key.1,
                first,
                share,
                asks: 0,
                admitted: 0,
            },
        };
        tally.asks += 1;
        tally.admitted += u8::from(admitted);
        inst.tally = Some(tally);
        if admitted {
            s.parts.ramp_admitted = true;
            let epoch = s.instances[i].mirror_epoch;
            s.instances[i].ticket = Some(Ticket {
                counter: counter(word),
                probe: false,
                local: false,
                epoch,
            });
            self.admitted(s, i);
        } else {
            s.parts.ramp_refused = true;
        }
        Some(admitted)
    }

    /// `acquire_prepare`'s part in the recovery states, on the mirror's
    /// word: the instance's share of a ramp in a stage at the (exact)
    /// server time; with `Bug::MirrorAdmitsFullTrial`, a probe of a full
    /// trial admitted from the mirror. Whether it answered.
    pub(crate) fn recovery_prepare(&self, s: &mut FleetState, i: usize) -> bool {
        let mirror = s.instances[i].mirror;
        let clock = s.clock;
        if self.bug == Bug::MirrorAdmitsFullTrial && taken(mirror) >= Some(u32::from(PROBES)) {
            let epoch = s.instances[i].mirror_epoch;
            s.instances[i].ticket = Some(Ticket {
                counter: counter(mirror),
                probe: true,
                local: false,
                epoch,
            });
            self.trial_place(s, counter(mirror), true);
            return true;
        }
        self.bug != Bug::RampWritten && self.share(s, i, mirror, clock).is_some()
    }

    /// `Found::Ramp` in `acquire_remote`: on the first read of an
    /// admission, a ramp in a stage at the server time is offered to the
    /// mirror and decided by the instance's share, with no write.
    pub(crate) fn found_ramp(&self, s: &mut FleetState, i: usize, op: Op) -> bool {
        if op.retried || self.bug == Bug::RampWritten {
            return false;
        }
        let (word, missing) = self.read(s, i);
        let clock = s.clock;
        if stage(&self.config, word, clock).is_none() {
            return false;
        }
        let epoch = s.epoch;
        let inst = &mut s.instances[i];
        inst.op = None;
        if !missing {
            self.note_seen(inst, word);
            inst.fresh = true;
        }
        self.offer(inst, Some(!op.changed), word, epoch);
        self.share(s, i, word, clock);
        true
    }

    /// The ghost of a trial's places: one more taken (a probe admitted), or
    /// one freed (a probe's release `Ignored` recorded).
    pub(crate) fn trial_place(&self, s: &mut FleetState, c: u32, more: bool) {
        let trials = &mut s.parts.trials;
        let at = trials.partition_point(|(k, _)| *k < c);
        if trials.get(at).is_none_or(|(k, _)| *k != c) {
            trials.insert(at, (c, 0));
        }
        let places = &mut trials[at].1;
        if more {
            *places += 1;
        } else {
            *places = places.saturating_sub(1);
            s.parts.place_freed = true;
        }
    }

    /// The ghosts of a write of `new` over `old` by an operation `kind`.
    pub(crate) fn recovery_write(
        &self,
        s: &mut FleetState,
        kind: OpKind,
        old: u64,
        new: u64,
        verdict: Verdict,
        retried: bool,
    ) {
        if kind == OpKind::Acquire && stage(&self.config, old, s.clock).is_some() {
            // On a retry, the kit's admission on a ramp its lost
            // compare-and-set found (`admission`): the credit it moved is
            // stored.
            if retried {
                s.parts.ramp_race = true;
            } else {
                s.parts.ramp_written = true;
            }
        }
        if ramp(old) && status_of(new) == Status::Open {
            s.parts.ramp_reopened = true;
        }
        if ramp(old) && status_of(new) == Status::Closed {
            s.parts.ramp_ended = true;
        }
        match (kind, verdict) {
            (
                _,
                Verdict::Admitted {
                    counter,
                    probe: true,
                },
            ) if taken(new).is_some() => {
                self.trial_place(s, counter, true);
            }
            (
                OpKind::Release {
                    ticket,
                    outcome: Outcome::Ignored,
                },
                Verdict::Recorded,
            ) if ticket.probe && taken(old).is_some() => {
                self.trial_place(s, ticket.counter, false);
            }
            _ => {}
        }
    }

    /// Whether a release of `outcome` with the mirror's counter is settled
    /// by the mirror (`Mirror::quiet`, `release_quietly`): a success on
    /// `Closed` with no failures or `Ramp` with no ramp failures; an
    /// ignored outcome there or on any closed word of the fast path.
    pub(crate) fn quiet(&self, mirror: u64, outcome: Outcome) -> bool {
        let admit = apply(&self.config, mirror, Event::Admit, || 0);
        let closed =
            admit.word == mirror && matches!(admit.verdict, Verdict::Admitted { probe: false, .. });
        let counter = counter(mirror);
        let event = Event::Release {
            counter,
            outcome: Outcome::Success,
        };
        let success = apply(&self.config, mirror, event, || 0);
        let quiet = (closed || (self.parts.recovery && ramp(mirror)))
            && success.word == mirror
            && success.verdict == Verdict::Recorded;
        match outcome {
            Outcome::Success => quiet,
            Outcome::Ignored => closed || quiet,
            Outcome::Failure => false,
        }
    }
}

/// The properties of the recovery part.
pub(crate) fn properties() -> Vec<Property<Fleet>> {
    vec![
        // (k) At most `n` probes per trial fleet-wide: the places taken in
        // a trial (probes admitted, less those released `Ignored`) never
        // pass `probes(n)`.
        Property::always("at most n probes per trial", |_: &Fleet, s: &FleetState| {
            s.parts.trials.iter().all(|(_, p)| *p <= PROBES)
        }),
        // (l) No admission or refusal in a ramp's stage writes Redis: the
        // instance's share decides them. One exception, shown by
        // `a_compare_and_set_lost_to_the_ramps_start_writes_its_credit`:
        // an admission begun on the trial whose compare-and-set lost to the
        // ramp's start is the kit's admission on the ramp, and stores the
        // credit it moved (once per such admission).
        Property::always(
            "no write for a ramp admission or refusal",
            |_: &Fleet, s: &FleetState| !s.parts.ramp_written,
        ),
        // (m) Of its own `c` asks at one stage of one ramp, each instance
        // admits ⌊c·p⌋ or ⌊c·p⌋ + 1; at the ramp's first stage (the credit
        // starting at none), exactly ⌊c·p⌋.
        Property::always(
            "each instance admits its share of a stage",
            |_: &Fleet, s: &FleetState| {
                let one = 1u32 << W64::LAYOUT.share_bits;
                s.instances.iter().filter_map(|inst| inst.tally).all(|t| {
                    let least = u32::from(t.asks) * t.share / one;
                    let admitted = u32::from(t.admitted);
                    (least..=least + 1).contains(&admitted) && (!t.first || admitted == least)
                })
            },
        ),
        Property::sometimes("a trial full", |_: &Fleet, s: &FleetState| {
            s.parts.trials.iter().any(|(_, p)| *p == PROBES)
        }),
        Property::sometimes("a trial's place freed", |_: &Fleet, s: &FleetState| {
            s.parts.place_freed
        }),
        Property::sometimes("a ramp admission", |_: &Fleet, s: &FleetState| {
            s.parts.ramp_admitted
        }),
        Property::sometimes("a ramp refusal", |_: &Fleet, s: &FleetState| {
            s.parts.ramp_refused
        }),
        Property::sometimes("the ramp ended", |_: &Fleet, s: &FleetState| {
            s.parts.ramp_ended
        }),
        Property::sometimes("a reopen from the ramp", |_: &Fleet, s: &FleetState| {
            s.parts.ramp_reopened
        }),
        Property::sometimes(
            "a lost compare-and-set writes a ramp's credit",
            |_: &Fleet, s: &FleetState| s.parts.ramp_race,
        ),
    ]
}

/// The checks of the recovery part: the protocol as built keeps every
/// property, and each planted bug is caught.
#[cfg(test)]
mod checks {
    use super::*;
    use crate::{check, holds};
    use stateright::Checker;

    /// Asserts that the checker finds a counterexample to `property` in
    /// `model`.
    fn found(model: Fleet, property: &'static str) {
        let name = format!("{:?}", model.bug);
        let checker = check(&name, model, &[property]);
        let path = checker.discovery(property);
        assert!(path.is_some(), "{name} was not caught by {property:?}");
        println!(
            "{name} caught by {property:?}: {:?}",
            path.unwrap().into_actions()
        );
    }

    /// The default check: a trial of 2 probes that closes on the first
    /// success, a ramp of one stage at 50 %, 4 writes: the trial fills,
    /// frees a place, passes; each instance admits its share of the ramp
    /// with no write; a failure reopens the fleet, or the ramp's end is
    /// stored.
    #[test]
    fn the_recovery_states_keep_every_property() {
        holds(
            "recovery, closing on 1 of 2",
            Fleet::recovering(4, 1, Bug::None),
            &[
                "a trial full",
                "a trial's place freed",
                "a ramp admission",
                "a ramp refusal",
                "the ramp ended",
                "a reopen from the ramp",
            ],
        );
    }

    /// A trial closing on both probes' successes, 5 writes: run with
    /// `--ignored`.
    #[test]
    #[ignore]
    fn the_recovery_states_keep_every_property_closing_on_both_probes() {
        holds(
            "recovery, closing on 2 of 2",
            Fleet::recovering(5, 2, Bug::None),
            &[
                "a trial full",
                "a ramp admission",
                "the ramp ended",
                "a reopen from the ramp",
            ],
        );
    }

    /// An admission begun on the trial whose compare-and-set loses to the
    /// success that starts the ramp retries with the kit's admission on
    /// the ramp (`admission`), which stores the credit it moved: one write
    /// the ramp makes for a call (the adapter's check for a ramp is on the
    /// operation's first read). The model shows it.
    #[test]
    fn a_compare_and_set_lost_to_the_ramps_start_writes_its_credit() {
        let property = "a lost compare-and-set writes a ramp's credit";
        let checker = check(
            "a race with the ramp's start",
            Fleet::recovering(4, 1, Bug::None),
            &[property],
        );
        let path = checker.discovery(property).expect("the example");
        println!("{:?}", path.into_actions());
    }

    #[test]
    fn a_mirror_admitting_in_a_full_trial_is_caught() {
        found(
            Fleet::recovering(4, 1, Bug::MirrorAdmitsFullTrial),
            "at most n probes per trial",
        );
    }

    #[test]
    fn a_ramp_admission_written_to_redis_is_caught() {
        found(
            Fleet::recovering(4, 1, Bug::RampWritten),
            "no write for a ramp admission or refusal",
        );
    }

    #[test]
    fn a_credit_not_spent_is_caught() {
        found(
            Fleet::recovering(4, 1, Bug::CreditNotSpent),
            "each instance admits its share of a stage",
        );
    }
}
