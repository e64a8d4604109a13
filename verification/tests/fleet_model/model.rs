//! The model's parameters, its state, and the adapter's rules on words and
//! on the local breaker that every path shares.

use tripword::transition::{Event, Verdict, apply, status_at};
use tripword::word::{Snapshot, State};
use tripword::{Config, Outcome, Status, ValidConfig, W64, Word};

pub(crate) use crate::recovery::Tally;

/// How far the counter moves on when a key that held a word is found
/// missing (`tripword-redis`'s `RESUME`).
pub(crate) const RESUME: u32 = 1 << 12;

/// A protocol bug planted in the model, to show that the properties catch
/// it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Bug {
    /// The protocol as built.
    None,
    /// The mirror takes every word offered, an older counter included.
    OlderWord,
    /// The compare-and-set is a blind `SET`: it stores whatever the word was.
    BlindSet,
    /// A missing key reads as `Closed` with the counter of the last word
    /// seen, not moved on.
    StandInWithoutResume,
    /// An instance that falls back while the shared word is not `Closed`
    /// keeps its local breaker closed.
    DetachWithoutTrip,
    /// The word noted as last seen stored is every word found, an older
    /// one (a message delivered late) included: the resume point can move
    /// back (how `Inner::stored` was before this model found it).
    SeenGoesBack,
    /// The initial word found stored reads as "nothing seen": a key lost
    /// after a success stored it again starts over at the initial word
    /// (how `resumed` was before this model found it).
    InitialWordIsNothingSeen,
    /// With a quorum, the failure of a call the closed fleet admitted goes
    /// to the shared word as without a quorum (`Inner::release_settle`
    /// skipping `own_outcome`).
    QuorumBypassed,
    /// With `replicas(n)`, a change is taken as made on the primary's reply,
    /// before the replica has it (`RemoteCell::compare_exchange` without
    /// `check_acknowledged`).
    NoWait,
    /// A fallback from an operator's hold (`ForcedOpen`) trips the local
    /// breaker as from any open word (`keep_hold` without its first arm):
    /// the local breaker probes after its open time.
    HoldTripped,
    /// A fallback from a timed open (`OpenUntil`, `force_open_for`) trips
    /// the local breaker (`keep_hold` without its second arm): the local
    /// breaker probes after its own open time, before the force ends.
    TimedHoldTripped,
    /// A key made under a prefix held open (`Fleet::force_open_prefix`) is
    /// not forced open when it is made.
    PrefixMissesNewKey,
    /// An instance whose config is not the fleet's joins the shared word
    /// anyway (`ConfigCheck::judge` always agreeing).
    FollowerJoins,
    /// After a slot moved, the watcher subscribes on the new owner without
    /// reading the words once (`transport/watch/cluster`).
    ResubscribeWithoutRead,
    /// The mirror admits a probe of a trial it holds full, with no round
    /// trip (`acquire_prepare` taking a full trial for one with room).
    MirrorAdmitsFullTrial,
    /// A ramp's admissions go to Redis as the kit's admission (a credit
    /// move written per call), not to the instance's share.
    RampWritten,
    /// The instance's share admits a call without spending the credit.
    CreditNotSpent,
}

/// Which faults may happen (each at most once).
#[derive(Clone, Copy, Debug)]
pub(crate) struct Faults {
    pub(crate) restart: bool,
    /// The key may be lost before every instance has seen it stored since
    /// it was last lost (or, if it never was, at all).
    pub(crate) restart_unseen: bool,
    pub(crate) failover: bool,
    pub(crate) partition: bool,
}

/// The parts of the protocol beyond the shared word's compare-and-set,
/// each off by default (every part off: the model as first built).
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Parts {
    /// `quorum(q)`: the instances' votes that trip the closed word; 0: none.
    pub(crate) quorum: u8,
    /// `replicas(1)`: each change waits for a replica (`WAIT`); a failover
    /// promotes the replica.
    pub(crate) replicas: bool,
    /// Operators' forces: at most this many, through the breaker or a
    /// prefix of the fleet; instance 1 is made later (a key made under a
    /// held prefix).
    pub(crate) forces: u8,
    /// Two configs: instance 1's fingerprint is not the fleet's until it
    /// publishes its own (at most once).
    pub(crate) configs: bool,
    /// The key's slot moves from node A to node B once.
    pub(crate) slot_move: bool,
    /// The recovery states: a trial of 2 probes, then a ramp of one stage
    /// at 50 % (`recovery.rs`); the clock moves on by one ramp unit a tick.
    pub(crate) recovery: bool,
}

/// The model's parameters.
pub(crate) struct Fleet {
    pub(crate) instances: usize,
    pub(crate) config: ValidConfig<W64>,
    /// The clock stops here.
    pub(crate) max_time: u64,
    /// Messages that may be dropped, and duplicated, in a run.
    pub(crate) max_drops: u8,
    pub(crate) max_dups: u8,
    /// Writes (stored compare-and-sets) explored in a run.
    pub(crate) max_writes: u8,
    pub(crate) faults: Faults,
    pub(crate) parts: Parts,
    pub(crate) bug: Bug,
    /// How far a `Tick` moves the clock on (1 but with the recovery part).
    pub(crate) tick: u64,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(crate) enum OpKind {
    Acquire,
    Release {
        ticket: Ticket,
        outcome: Outcome,
    },
    /// A quorum's vote (`Votes::cast`), made after the release that opened
    /// the instance's own breaker.
    Vote,
    /// The withdrawal of the vote (`Votes::withdraw`), after a success of
    /// the instance's own breaker's probe.
    Withdraw,
}

/// A round trip in flight: the compare-and-set loop's expected word (and
/// the restart generation it was read in), and whether the mirror changed
/// since the operation began (`Mirror::base`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(crate) struct Op {
    pub(crate) kind: OpKind,
    pub(crate) expected: u64,
    pub(crate) expected_epoch: u8,
    pub(crate) changed: bool,
    /// Ghost: the config generation the instance had read when it began.
    pub(crate) generation: u8,
    /// With the recovery part, the compare-and-set was lost once (the
    /// adapter's check for a ramp is on its first read only).
    pub(crate) retried: bool,
}

/// A ticket: its counter, whether it is a probe, which breaker issued it,
/// and (a ghost) the restart generation of the word it was issued on.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(crate) struct Ticket {
    pub(crate) counter: u32,
    pub(crate) probe: bool,
    pub(crate) local: bool,
    pub(crate) epoch: u8,
}

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub(crate) struct Instance {
    pub(crate) mirror: u64,
    /// Ghost: the restart generation of the mirror's word.
    pub(crate) mirror_epoch: u8,
    /// The newest word seen stored in Redis (what a lost key resumes
    /// from), `None` before any: `Inner::stored`.
    pub(crate) seen: Option<u64>,
    /// Ghost: `seen` was stored after the key was last lost.
    pub(crate) fresh: bool,
    pub(crate) attached: bool,
    pub(crate) local: u64,
    pub(crate) op: Option<Op>,
    pub(crate) ticket: Option<Ticket>,
    /// Ghost: refreshed since the stored word last changed other than by a
    /// published compare-and-set, with the key present and no message of a
    /// lost write on its way here, and no message to it dropped since.
    pub(crate) clean: bool,
    /// Ghost: fell back while its mirror said the fleet was not `Closed`,
    /// and its local breaker has not closed since.
    pub(crate) hold: bool,
    /// Its config's fingerprint (0 or 1), and whether it follows the word
    /// (the fleet's fingerprint is another: `ConfigCheck::following`).
    pub(crate) print: u8,
    pub(crate) following: bool,
    /// Ghost: the config generation it last read.
    pub(crate) generation: u8,
    /// Subscribed on node B (else A), with a slot move.
    pub(crate) on_b: bool,
    /// Whether its breaker for the key is made (with forces, instance 1's
    /// is made later), and whether it holds the key's prefix open: `None`
    /// not, `Some(None)` until a close, `Some(Some(t))` until time `t`
    /// (`Members::held`).
    pub(crate) made: bool,
    pub(crate) prefix_hold: Option<Option<u64>>,
    /// Its ramp credit (`Mirror::credit`), and (a ghost) its asks and
    /// admissions at one stage of one ramp: `(counter, stage, asks,
    /// admitted)`.
    pub(crate) credit: u32,
    pub(crate) tally: Option<Tally>,
}

/// A published word on its way to instance `to` (`orphan`: the word of a
/// write a failover lost).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub(crate) struct Msg {
    pub(crate) to: u8,
    pub(crate) word: u64,
    pub(crate) epoch: u8,
    pub(crate) orphan: bool,
}

/// Where an operator's force open reached, for the instance that made it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(crate) enum Reach {
    /// The shared word, the instance attached.
    Shared,
    /// Only the local breaker (Redis failed, or a follower's force): it
    /// ends as the instance rejoins.
    LocalOnly,
    /// The shared word, the instance local: it binds the instance from its
    /// next refresh (which attaches it).
    Unattached,
}

/// The state of the parts beyond the compare-and-set (see [`Parts`]).
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub(crate) struct PartsState {
    /// The voters in `<key>:votes` (a bit each), and the instances whose
    /// own breaker opened and whose vote is not withdrawn (a ghost).
    pub(crate) votes: u8,
    pub(crate) opened: u8,
    /// The instances whose vote may be in the set (`Votes::voted`).
    pub(crate) voted: u8,
    /// Ghost: the closed word tripped with fewer than a quorum's instances
    /// judging the dependency down; a quorum's trip made.
    pub(crate) trip_short: bool,
    pub(crate) quorum_tripped: bool,
    /// With replicas: the replica has the last write; the last write was
    /// taken as made by its writer (ghost); an acknowledged write lost.
    pub(crate) replicated: bool,
    pub(crate) last_acked: bool,
    pub(crate) acked_lost: bool,
    pub(crate) unacked: bool,
    /// Forces made; the last force open by an operator and not closed
    /// since: its instance, the server time it ends (`None`: held), and
    /// whether it reached only the local breaker (Redis failed: the
    /// operator got the error, and the instance obeys the force until it
    /// rejoins).
    pub(crate) forces: u8,
    pub(crate) hold: Option<(u8, Option<u64>, Reach)>,
    /// Ghost: an admission by a local instance whose own force open
    /// reached Redis while it was local (before its next refresh).
    pub(crate) unattached_admit: bool,
    /// Ghost: an admission by the instance whose force holds the key.
    pub(crate) hold_broken: bool,
    pub(crate) held_fallback: bool,
    /// The fleet's fingerprint under `<key>:config`, its generation.
    pub(crate) print: u8,
    pub(crate) generation: u8,
    /// Ghost: a write by an instance that knew the fleet's config was not
    /// its own; an admission by a follower past the fleet's word.
    pub(crate) follower_wrote: bool,
    pub(crate) follower_admitted: bool,
    pub(crate) follower_joined: bool,
    /// The slot's move: 0 stable on A, 1 `MIGRATING`/`IMPORTING` with the
    /// key on A, 2 the key migrated to B (`ASK`), 3 the slot given to B
    /// (`MOVED`).
    pub(crate) phase: u8,
    /// The key is on node B.
    pub(crate) key_on_b: bool,
    /// Ghost: a write served by B while an instance was subscribed on A.
    pub(crate) missed_on_a: bool,
    /// Ghost, the recovery part: the places taken in each trial (by
    /// counter: probes admitted less those released `Ignored`); a write of
    /// a ramp admission or rejection; a ramp admission, a refusal, an end,
    /// a reopen from the ramp, a trial's place freed.
    pub(crate) trials: Vec<(u32, u8)>,
    pub(crate) ramp_written: bool,
    pub(crate) ramp_race: bool,
    pub(crate) ramp_admitted: bool,
    pub(crate) ramp_refused: bool,
    pub(crate) ramp_ended: bool,
    pub(crate) ramp_reopened: bool,
    pub(crate) place_freed: bool,
}

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub(crate) struct FleetState {
    pub(crate) instances: Vec<Instance>,
    /// The word under the key; `None`: missing.
    pub(crate) stored: Option<u64>,
    /// Ghost: the number of times the key was lost.
    pub(crate) epoch: u8,
    pub(crate) clock: u64,
    /// The value before the last write (what a failover reverts to).
    pub(crate) prev: Option<Option<u64>>,
    pub(crate) restarted: bool,
    pub(crate) failed_over: bool,
    pub(crate) partitioned_once: bool,
    pub(crate) partition: Option<u8>,
    /// In flight, kept sorted (a multiset).
    pub(crate) bag: Vec<Msg>,
    pub(crate) drops: u8,
    pub(crate) dups: u8,
    /// Ghost: counters elected probe; those elected twice.
    pub(crate) probes: Vec<u32>,
    pub(crate) dup_probes: Vec<u32>,
    /// Ghost: counters of transitions reported; those reported twice.
    pub(crate) reports: Vec<u32>,
    pub(crate) dup_reports: Vec<u32>,
    /// Ghost: transitions of the last write, and of a write a failover lost.
    pub(crate) last_reported: Vec<u32>,
    pub(crate) lost: Vec<u32>,
    /// Ghost: a stale release changed the stored word.
    pub(crate) stale_write: bool,
    /// Ghost: a stale release reached Redis and was refused.
    pub(crate) stale_refused: bool,
    /// Ghost: a local breaker admitted a call it should not have.
    pub(crate) local_overadmit: bool,
    /// Ghost: a fallen-back instance's local breaker admitted a probe.
    pub(crate) local_probe: bool,
    pub(crate) tripped: bool,
    /// Compare-and-sets that stored a word.
    pub(crate) writes: u8,
    pub(crate) parts: PartsState,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(crate) enum Action {
    Acquire(usize),
    Release(usize, Outcome),
    Redis(usize),
    /// A compare-and-set whose `WAIT` the replica does not answer in time.
    RedisUnacked(usize),
    Refresh(usize),
    Deliver(usize),
    Drop(usize),
    Duplicate(usize),
    Tick,
    Restart,
    Failover,
    Partition(usize),
    Heal,
    /// The replica catches up with the primary.
    Replicate,
    ForceOpen(usize),
    ForceOpenFor(usize),
    ForceClose(usize),
    PrefixOpen(usize),
    /// `force_open_prefix_for` (2 ticks).
    PrefixOpenFor(usize),
    PrefixClose(usize),
    /// The first lookup of the key in instance `i` makes its breaker.
    Make(usize),
    /// `publish_config` by instance `i`.
    Publish(usize),
    /// The slot's next step (`SETSLOT`, `MIGRATE`, `SETSLOT NODE`).
    SlotStep,
    /// Instance `i`'s watcher, unsubscribed by the old owner, subscribes
    /// on the new one.
    Resubscribe(usize),
}

pub(crate) fn counter(word: u64) -> u32 {
    Snapshot::counter_bits::<W64>(word)
}

pub(crate) fn status_of(word: u64) -> Status {
    match Snapshot::decode::<W64>(word) {
        Ok(s) => s.state.status(),
        Err(_) => Status::Closed,
    }
}

/// Whether `a`'s counter is at or past `b`'s, within half the counter period
/// (the word noted as seen stored only moves forward).
pub(crate) fn not_behind(a: u64, b: u64) -> bool {
    let max = W64::LAYOUT.max_counter();
    let d = counter(a).wrapping_sub(counter(b)) & max;
    d <= max / 2
}

/// Whether `word` is `Closed` with failures counted, or `Ramp` with ramp
/// failures counted (`mirror::failing`).
fn failing(word: u64) -> bool {
    matches!(
        Snapshot::decode::<W64>(word),
        Ok(Snapshot {
            state: State::Closed { failures: 1.. } | State::Ramp { failures: 1.., .. },
            ..
        })
    )
}

/// Whether `word` is `Closed` with no failures, or `Ramp` with no ramp
/// failures (`mirror::clear`).
fn clear(word: u64) -> bool {
    matches!(
        Snapshot::decode::<W64>(word),
        Ok(Snapshot {
            state: State::Closed { failures: 0 } | State::Ramp { failures: 0, .. },
            ..
        })
    )
}

/// The places a `Trial` word has taken (`mirror::taken`).
pub(crate) fn taken(word: u64) -> Option<u32> {
    match Snapshot::decode::<W64>(word) {
        Ok(Snapshot {
            state:
                State::Trial {
                    running,
                    passed,
                    failed,
                    ..
                },
            ..
        }) => Some(running + passed + failed),
        _ => None,
    }
}

/// Whether `word` is a `Ramp`.
pub(crate) fn ramp(word: u64) -> bool {
    matches!(
        Snapshot::decode::<W64>(word),
        Ok(Snapshot {
            state: State::Ramp { .. },
            ..
        })
    )
}

/// `mirror::safer`: of one counter, a word of unknown order is taken when
/// it counts failures over one with none, or when it is a trial's with
/// more free places.
fn safer(word: u64, current: u64) -> bool {
    counter(word) == counter(current)
        && ((failing(word) && clear(current))
            || matches!((taken(word), taken(current)), (Some(w), Some(c)) if w < c))
}

/// Whether the mirror's counter is past `c` (a ticket of `c` is stale).
pub(crate) fn mirror_ahead(word: u64, c: u32) -> bool {
    let max = W64::LAYOUT.max_counter();
    let d = counter(word).wrapping_sub(c) & max;
    d != 0 && d <= max / 2
}

pub(crate) fn insert_sorted<T: Ord>(v: &mut Vec<T>, x: T) {
    let at = v.partition_point(|y| *y < x);
    v.insert(at, x);
}

/// Records `c` in `seen`, or in `dups` when it is there already.
pub(crate) fn record(seen: &mut Vec<u32>, dups: &mut Vec<u32>, c: u32) {
    if seen.contains(&c) {
        if !dups.contains(&c) {
            insert_sorted(dups, c);
        }
    } else {
        insert_sorted(seen, c);
    }
}

impl Fleet {
    pub(crate) fn new(
        instances: usize,
        threshold: u32,
        max_time: u64,
        faults: Faults,
        bug: Bug,
    ) -> Self {
        let config = Config::new()
            .failure_threshold(threshold)
            .open_for(1)
            .probe_timeout(2)
            .horizon(0)
            .check::<W64>()
            .expect("a valid config");
        Fleet {
            instances,
            config,
            max_time,
            max_drops: 0,
            max_dups: 0,
            max_writes: 4,
            faults,
            parts: Parts::default(),
            bug,
            tick: 1,
        }
    }

    /// Notes `word` as found stored (`Inner::stored`): only forward, by
    /// counter. Returns whether it was taken.
    pub(crate) fn note_seen(&self, inst: &mut Instance, word: u64) -> bool {
        let taken = match inst.seen {
            None => true,
            Some(old) => self.bug == Bug::SeenGoesBack || not_behind(word, old),
        };
        if taken {
            inst.seen = Some(word);
        }
        taken
    }

    /// The word a lost key reads as for an instance that last saw `seen`
    /// stored (`resumed`).
    pub(crate) fn stand_in(&self, seen: Option<u64>) -> u64 {
        let Some(seen) = seen else {
            return 0;
        };
        if seen == 0 && self.bug == Bug::InitialWordIsNothingSeen {
            return 0;
        }
        let step = if self.bug == Bug::StandInWithoutResume {
            0
        } else {
            RESUME
        };
        let max = W64::LAYOUT.max_counter();
        Snapshot {
            state: State::Closed { failures: 0 },
            counter: counter(seen).wrapping_add(step) & max,
        }
        .encode::<W64>()
    }

    /// What instance `i` reads under the key, and whether it is missing.
    pub(crate) fn read(&self, s: &FleetState, i: usize) -> (u64, bool) {
        match s.stored {
            Some(w) => (w, false),
            None => (self.stand_in(s.instances[i].seen), true),
        }
    }

    /// `Mirror::offer`: `unchanged`, whether the mirror did not change
    /// since the operation that brought the word began (`None`: a message).
    /// Taken when its counter is ahead, when the mirror did not change, or
    /// when it is `Closed` with failures of the mirror's counter and the
    /// mirror's word `Closed` with none.
    pub(crate) fn offer(&self, inst: &mut Instance, unchanged: Option<bool>, word: u64, epoch: u8) {
        if inst.mirror == word {
            return;
        }
        if self.bug == Bug::OlderWord
            || unchanged == Some(true)
            || mirror_ahead(word, counter(inst.mirror))
            || safer(word, inst.mirror)
        {
            if ramp(word) && !(ramp(inst.mirror) && counter(word) == counter(inst.mirror)) {
                // A new ramp: this instance's share starts with no credit.
                inst.credit = 0;
            }
            inst.mirror = word;
            inst.mirror_epoch = epoch;
            if let Some(op) = inst.op.as_mut() {
                op.changed = true;
            }
        }
    }

    pub(crate) fn local_status(&self, s: &FleetState, i: usize) -> Status {
        status_at(&self.config, s.instances[i].local, || s.clock)
    }

    /// One event on instance `i`'s local breaker.
    pub(crate) fn local_apply(&self, s: &mut FleetState, i: usize, event: Event) -> Verdict {
        let clock = s.clock;
        let inst = &mut s.instances[i];
        let before = status_of(inst.local);
        let step = apply(&self.config, inst.local, event, || clock);
        inst.local = step.word;
        if step.transitions.iter().any(|t| t.to == Status::Closed) && before != Status::Closed {
            inst.hold = false;
        }
        step.verdict
    }

    /// An admission by the local breaker (for a call).
    pub(crate) fn local_acquire(&self, s: &mut FleetState, i: usize) {
        let was = self.local_status(s, i);
        let inst = &s.instances[i];
        let held_off = inst.following && status_of(inst.mirror) != Status::Closed;
        if let Verdict::Admitted { counter, probe } = self.local_apply(s, i, Event::Admit) {
            // A follower admits only while the fleet's word is `Closed`.
            s.parts.follower_admitted |= held_off;
            self.admitted(s, i);
            let inst = &s.instances[i];
            if !probe && (inst.hold || was != Status::Closed) {
                s.local_overadmit = true;
            }
            if probe {
                s.local_probe = true;
            }
            s.instances[i].ticket = Some(Ticket {
                counter,
                probe,
                local: true,
                epoch: 0,
            });
        }
    }

    /// `Inner::unreported`: an outcome Redis did not get, recorded in the
    /// local breaker while that is closed.
    pub(crate) fn unreported(&self, s: &mut FleetState, i: usize, outcome: Outcome) {
        if self.local_status(s, i) == Status::Closed
            && let Verdict::Admitted { counter, probe } = self.local_apply(s, i, Event::Admit)
        {
            let outcome = if probe { Outcome::Ignored } else { outcome };
            self.local_apply(s, i, Event::Release { counter, outcome });
        }
    }

    /// `Inner::detach` (`Member::detach`): a follower stops following;
    /// the local breaker keeps what the mirror's word said (`keep_hold`).
    pub(crate) fn detach(&self, s: &mut FleetState, i: usize) {
        let following = core::mem::take(&mut s.instances[i].following);
        if !s.instances[i].attached && !following {
            return;
        }
        let down = status_of(s.instances[i].mirror) != Status::Closed;
        self.keep_hold(s, i);
        let inst = &mut s.instances[i];
        inst.hold = down;
        inst.attached = false;
        inst.clean = false;
    }

    /// `Inner::keep_hold`: an operator's hold (`ForcedOpen`) holds the
    /// local breaker, an open with an end (`OpenUntil`) opens it for what
    /// is left of it at the server time, any other state but `Closed`
    /// trips it (`failure_threshold` failures through its API).
    pub(crate) fn keep_hold(&self, s: &mut FleetState, i: usize) {
        let Ok(shared) = Snapshot::decode::<W64>(s.instances[i].mirror) else {
            return;
        };
        let clock = s.clock;
        match shared.state {
            State::ForcedOpen if self.bug != Bug::HoldTripped => {
                s.parts.held_fallback = true;
                self.local_apply(s, i, Event::ForceOpen);
                return;
            }
            State::OpenUntil { .. } if self.bug != Bug::TimedHoldTripped => {
                let word = s.instances[i].mirror;
                if let Verdict::Rejected(why) =
                    apply(&self.config, word, Event::Admit, || clock).verdict
                    && let Some(open_for) = why.retry_after()
                {
                    self.local_apply(s, i, Event::ForceOpenFor { open_for });
                    return;
                }
            }
            _ => {}
        }
        let down = shared.state.status() != Status::Closed;
        if down && self.local_status(s, i) == Status::Closed && self.bug != Bug::DetachWithoutTrip {
            for _ in 0..self.config.failure_threshold() {
                if let Verdict::Admitted { counter, .. } = self.local_apply(s, i, Event::Admit) {
                    let outcome = Outcome::Failure;
                    self.local_apply(s, i, Event::Release { counter, outcome });
                }
            }
        }
    }

    /// Ghost check of an admission by instance `i`: an operator's force
    /// open by `i` not closed since and not over.
    pub(crate) fn admitted(&self, s: &mut FleetState, i: usize) {
        if let Some((by, until, reach)) = s.parts.hold
            && by as usize == i
            && until.is_none_or(|u| s.clock < u)
        {
            if reach == Reach::Unattached && !s.instances[i].attached {
                s.parts.unattached_admit = true;
            } else {
                s.parts.hold_broken = true;
            }
        }
    }

    pub(crate) fn partitioned(&self, s: &FleetState, i: usize) -> bool {
        s.partition == Some(i as u8)
    }
}
