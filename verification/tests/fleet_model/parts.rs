//! The parts of the protocol around the shared word's compare-and-set,
//! each as the adapter does it: the quorum's votes (`engine/quorum.rs`,
//! `Inner::own_outcome`, `own_release`, `vote`, `withdraw`), the
//! operators' forces (`Inner::force`, `Fleet::force_prefix`), the config
//! follower (`engine/config.rs`, `Inner::publish_config`) and a slot's
//! move between two cluster nodes (`transport/cluster.rs`). `replicas(n)`
//! is in the compare-and-set itself (`Fleet::store`).

use crate::model::*;
use tripword::transition::{Event, Verdict, apply};
use tripword::{Outcome, Status};

impl Fleet {
    /// `Inner::own_outcome`: with a quorum, the outcome of a call the
    /// closed fleet admitted, recorded in the local breaker while that is
    /// closed (a probe it elects settles as `Ignored`).
    pub(crate) fn own_outcome(&self, s: &mut FleetState, i: usize, outcome: Outcome) {
        if outcome == Outcome::Ignored || self.local_status(s, i) != Status::Closed {
            return;
        }
        match self.local_apply(s, i, Event::Admit) {
            Verdict::Admitted {
                counter,
                probe: false,
            } => self.own_release(s, i, counter, outcome),
            Verdict::Admitted {
                counter,
                probe: true,
            } => {
                let outcome = Outcome::Ignored;
                self.local_apply(s, i, Event::Release { counter, outcome });
            }
            _ => {}
        }
    }

    /// `Inner::own_release`: a release to the local breaker; while
    /// attached, a trip (or a failed local probe) votes, a local probe's
    /// success withdraws the vote (`Follow`), if one may be in the set
    /// (`Votes::take_voted`).
    pub(crate) fn own_release(&self, s: &mut FleetState, i: usize, counter: u32, outcome: Outcome) {
        let before = self.local_status(s, i);
        self.local_apply(s, i, Event::Release { counter, outcome });
        let after = self.local_status(s, i);
        let bit = 1u8 << i;
        if before == after {
            return;
        }
        let attached = s.instances[i].attached;
        let kind = match after {
            Status::Open if attached => {
                s.parts.opened |= bit;
                OpKind::Vote
            }
            Status::Closed => {
                let voted = s.parts.voted & bit != 0;
                if !attached || !voted {
                    // It judges the dependency down no more (a ghost). Not
                    // attached: `Follow::Nothing`, a vote it cast stays in
                    // the set until the window ends.
                    s.parts.opened &= !bit;
                    return;
                }
                // Down until its withdrawal is made (a ghost).
                s.parts.voted &= !bit;
                OpKind::Withdraw
            }
            _ => return,
        };
        let inst = &s.instances[i];
        s.instances[i].op = Some(Op {
            kind,
            expected: inst.mirror,
            expected_epoch: inst.mirror_epoch,
            changed: false,
            generation: inst.generation,
            retried: false,
        });
    }

    /// A vote (`Votes::cast`: the `VOTE` script adds this instance to
    /// `<key>:votes` and reads the word; while the votes reach the quorum
    /// and the word is `Closed`, `QUORUM_TRIP` stores the kit's trip,
    /// [`trip`]) or a withdrawal (`ZREM`), as one step: each script checks
    /// the votes and the word it replaces itself. A failure detaches.
    pub(crate) fn ballot(&self, s: &mut FleetState, i: usize, kind: OpKind) {
        let op = s.instances[i].op.take().expect("an operation");
        let bit = 1u8 << i;
        if kind == OpKind::Withdraw {
            // Down no more (a ghost), the withdrawal made or not.
            s.parts.opened &= !bit;
        }
        if self.partitioned(s, i) {
            // Not cast, or not withdrawn (the vote then ages out of the
            // window): the instance falls back to its local breaker.
            return self.detach(s, i);
        }
        if kind == OpKind::Withdraw {
            s.parts.votes &= !bit;
            return;
        }
        s.parts.votes |= bit;
        s.parts.voted |= bit;
        let (word, missing) = self.read(s, i);
        if !missing {
            self.note_seen(&mut s.instances[i], word);
            s.instances[i].fresh = true;
        }
        let mut now = word;
        if s.parts.votes.count_ones() >= u32::from(self.parts.quorum)
            && status_of(word) == Status::Closed
            && let Some(step) = self.trip(word, s.clock)
        {
            self.store(
                s,
                i,
                word,
                step.word,
                &step.transitions,
                true,
                op.generation,
            );
            s.parts.quorum_tripped = true;
            self.note_seen(&mut s.instances[i], step.word);
            s.instances[i].fresh = true;
            now = step.word;
        }
        let epoch = s.epoch;
        self.offer(&mut s.instances[i], Some(!op.changed), now, epoch);
    }

    /// `quorum::trip`: the failures of a run applied to `word` one by one
    /// until it leaves `Closed`.
    fn trip(&self, word: u64, now: u64) -> Option<tripword::transition::Step<u64>> {
        let mut w = word;
        for _ in 0..self.config.failure_threshold() {
            let counter = counter(w);
            let outcome = Outcome::Failure;
            let step = apply(&self.config, w, Event::Release { counter, outcome }, || now);
            if status_of(step.word) != Status::Closed {
                return Some(step);
            }
            w = step.word;
        }
        None
    }

    /// `Inner::force`: an operator's force applied to the shared word with
    /// the kit's compare-and-set loop (one step here), with a quorum a
    /// close dropping the votes; a follower forces only its local breaker;
    /// on an error the instance falls back and forces its local breaker.
    /// The ghost `hold` notes the operator's last force open.
    pub(crate) fn force(&self, s: &mut FleetState, i: usize, event: Event) {
        let reach = if s.instances[i].following || self.partitioned(s, i) {
            Reach::LocalOnly
        } else if !s.instances[i].attached {
            Reach::Unattached
        } else {
            Reach::Shared
        };
        s.parts.hold = match event {
            Event::ForceOpen => Some((i as u8, None, reach)),
            Event::ForceOpenFor { open_for } => Some((i as u8, Some(s.clock + open_for), reach)),
            _ => None,
        };
        if s.instances[i].following {
            self.local_apply(s, i, event);
            return;
        }
        if self.partitioned(s, i) {
            self.detach(s, i);
            self.local_apply(s, i, event);
            return;
        }
        let (word, missing) = self.read(s, i);
        if !missing {
            self.note_seen(&mut s.instances[i], word);
            s.instances[i].fresh = true;
        }
        let clock = s.clock;
        let step = apply(&self.config, word, event, || clock);
        if step.word != word {
            let generation = s.instances[i].generation;
            self.store(s, i, word, step.word, &step.transitions, true, generation);
            self.note_seen(&mut s.instances[i], step.word);
            s.instances[i].fresh = true;
        }
        if self.parts.quorum > 1 && event == Event::ForceClose {
            s.parts.votes = 0;
        }
        let epoch = s.epoch;
        self.offer(&mut s.instances[i], Some(true), step.word, epoch);
    }

    /// `Fleet::force_open_prefix`, `force_open_prefix_for` (`hold`: until
    /// a time) and `force_close_prefix` (`hold` `None`) in instance `i`
    /// (`Fleet::force_prefix`): the prefix held (or not) for keys made
    /// later, and the key forced if its breaker is made.
    pub(crate) fn prefix(&self, s: &mut FleetState, i: usize, hold: Option<Option<u64>>) {
        s.instances[i].prefix_hold = hold;
        let event = match hold {
            Some(None) => Event::ForceOpen,
            Some(Some(until)) => Event::ForceOpenFor {
                open_for: until - s.clock,
            },
            None => Event::ForceClose,
        };
        if s.instances[i].made {
            return self.force(s, i, event);
        }
        s.parts.hold = hold.map(|until| (i as u8, until, Reach::Shared));
    }

    /// The first lookup of the key in instance `i` (`Fleet::get` under the
    /// prefix forces' lock): the breaker joins (one read of the word) and,
    /// under a held prefix, is forced before any lookup finds it: open, or
    /// open for what is left of a timed hold (`Members::hold`).
    pub(crate) fn make(&self, s: &mut FleetState, i: usize) {
        s.instances[i].made = true;
        self.refresh(s, i);
        if self.bug == Bug::PrefixMissesNewKey {
            return;
        }
        match s.instances[i].prefix_hold {
            Some(None) => self.force(s, i, Event::ForceOpen),
            Some(Some(until)) if s.clock < until => {
                let open_for = until - s.clock;
                self.force(s, i, Event::ForceOpenFor { open_for });
            }
            _ => {}
        }
    }

    /// `Inner::publish_config` by instance `i`: its fingerprint stored
    /// under `<key>:config` with the next generation, then a fresh read of
    /// the word (which joins it).
    pub(crate) fn publish(&self, s: &mut FleetState, i: usize) {
        if self.partitioned(s, i) {
            return;
        }
        s.parts.print = s.instances[i].print;
        s.parts.generation += 1;
        self.refresh(s, i);
    }

    /// Whether a script on the key runs on node B: the key is there, the
    /// slot is B's (`MOVED`), or the slot migrates and the key is not on
    /// A (`ASK`, then `ASKING` on B).
    pub(crate) fn served_on_b(&self, s: &FleetState) -> bool {
        self.parts.slot_move
            && (s.parts.key_on_b
                || s.parts.phase == 3
                || (s.parts.phase >= 1 && s.stored.is_none()))
    }

    /// The slot's next step: `SETSLOT IMPORTING`/`MIGRATING`, `MIGRATE`
    /// of the key (atomic), `SETSLOT NODE` (A then drops its shard
    /// channels' subscribers).
    pub(crate) fn slot_step(&self, s: &mut FleetState) {
        s.parts.phase += 1;
        if s.parts.phase == 2 {
            s.parts.key_on_b = true;
        }
    }

    /// Instance `i`'s watcher, unsubscribed by A, reads the slot map,
    /// subscribes on B and reads every word once.
    pub(crate) fn resubscribe(&self, s: &mut FleetState, i: usize) {
        s.instances[i].on_b = true;
        if self.bug != Bug::ResubscribeWithoutRead {
            self.refresh(s, i);
        }
    }
}
