//! The paths of an admission and a release, the compare-and-set loop in
//! Redis, the watcher's refresh and pub/sub delivery (`engine/mod.rs`).

use crate::model::*;
use tripword::Outcome;
use tripword::Status;
use tripword::W64;
use tripword::transition::{Event, Verdict, apply};
use tripword::word::{Snapshot, State};

impl Fleet {
    /// `Inner::acquire`: the fast path, then `acquire_prepare`, then
    /// `acquire_remote`.
    pub(crate) fn start_acquire(&self, s: &mut FleetState, i: usize) {
        let mirror = s.instances[i].mirror;
        if !s.instances[i].attached {
            if s.instances[i].following && status_of(mirror) != Status::Closed {
                // `fleet_holds`: the fleet's word rejects a follower.
                return;
            }
            return self.local_acquire(s, i);
        }
        if self.parts.quorum > 1
            && status_of(mirror) == Status::Closed
            && self.local_status(s, i) != Status::Closed
        {
            // The fleet is closed, this instance is held off by its own
            // failures: its local breaker decides (and probes) for it (the
            // mirror's fast path is off too: `Mirror::set_own`).
            return self.local_acquire(s, i);
        }
        if self.parts.recovery && self.recovery_prepare(s, i) {
            return;
        }
        // The fast path: a closed admission that stores nothing.
        let fast = apply(&self.config, mirror, Event::Admit, || 0);
        if fast.word == mirror
            && let Verdict::Admitted {
                counter,
                probe: false,
            } = fast.verdict
        {
            let epoch = s.instances[i].mirror_epoch;
            s.instances[i].ticket = Some(Ticket {
                counter,
                probe: false,
                local: false,
                epoch,
            });
            return self.admitted(s, i);
        }
        // A rejection the mirror makes at the (estimated) server time.
        let clock = s.clock;
        if let Verdict::Rejected(_) = apply(&self.config, mirror, Event::Admit, || clock).verdict {
            return;
        }
        if self.partitioned(s, i) {
            self.detach(s, i);
            return self.local_acquire(s, i);
        }
        let (word, missing) = self.read(s, i);
        if !missing {
            self.note_seen(&mut s.instances[i], word);
            s.instances[i].fresh = true;
        }
        s.instances[i].op = Some(Op {
            kind: OpKind::Acquire,
            expected: word,
            expected_epoch: s.epoch,
            changed: false,
            generation: s.instances[i].generation,
            retried: false,
        });
    }

    pub(crate) fn start_release(&self, s: &mut FleetState, i: usize, outcome: Outcome) {
        let Some(ticket) = s.instances[i].ticket.take() else {
            return;
        };
        if ticket.local {
            if self.parts.quorum > 1 {
                return self.own_release(s, i, ticket.counter, outcome);
            }
            let event = Event::Release {
                counter: ticket.counter,
                outcome,
            };
            self.local_apply(s, i, event);
            return;
        }
        let inst = &s.instances[i];
        let mirror = inst.mirror;
        // The release fast path: a success (or an ignored outcome) the
        // mirror shows changes nothing.
        if inst.attached && counter(mirror) == ticket.counter && self.quiet(mirror, outcome) {
            return;
        }
        if self.parts.quorum > 1
            && self.bug != Bug::QuorumBypassed
            && inst.attached
            && status_of(mirror) == Status::Closed
            && counter(mirror) == ticket.counter
        {
            // The fleet is closed: the outcome is this instance's own, for
            // its local breaker to judge (`Inner::own_outcome`).
            return self.own_outcome(s, i, outcome);
        }
        if mirror_ahead(mirror, ticket.counter) {
            return;
        }
        if !inst.attached {
            return self.unreported(s, i, outcome);
        }
        if self.partitioned(s, i) {
            self.detach(s, i);
            return self.unreported(s, i, outcome);
        }
        let epoch = inst.mirror_epoch;
        s.instances[i].op = Some(Op {
            kind: OpKind::Release { ticket, outcome },
            expected: mirror,
            expected_epoch: epoch,
            changed: false,
            generation: s.instances[i].generation,
            retried: false,
        });
    }

    /// One attempt of instance `i`'s compare-and-set loop in Redis
    /// (`cell::update` over `RemoteCell::compare_exchange`); with
    /// `replicas(1)`, `acked`: whether the replica acknowledged a word it
    /// stored in time (`check_acknowledged`). A vote or a withdrawal is one
    /// step of its own (`parts.rs`).
    pub(crate) fn redis_step(&self, s: &mut FleetState, i: usize, acked: bool) {
        let Some(mut op) = s.instances[i].op else {
            return;
        };
        if matches!(op.kind, OpKind::Vote | OpKind::Withdraw) {
            return self.ballot(s, i, op.kind);
        }
        if self.partitioned(s, i) {
            s.instances[i].op = None;
            self.detach(s, i);
            return self.failed(s, i, op.kind);
        }
        if self.parts.recovery && op.kind == OpKind::Acquire && self.found_ramp(s, i, op) {
            return;
        }
        let event = match op.kind {
            OpKind::Release { ticket, outcome } => Event::Release {
                counter: ticket.counter,
                outcome,
            },
            _ => Event::Admit,
        };
        let clock = s.clock;
        let step = apply(&self.config, op.expected, event, || clock);
        if step.word == op.expected {
            // Decided on the word read: nothing to store.
            if let OpKind::Release { ticket, .. } = op.kind
                && step.verdict == Verdict::Stale
                && ticket.epoch == s.epoch
            {
                s.stale_refused = true;
            }
            let epoch = op.expected_epoch;
            let inst = &mut s.instances[i];
            inst.op = None;
            self.offer(inst, Some(!op.changed), op.expected, epoch);
            if let Verdict::Admitted { counter, probe } = step.verdict {
                inst.ticket = Some(Ticket {
                    counter,
                    probe,
                    local: false,
                    epoch,
                });
                self.admitted(s, i);
            }
            return;
        }
        let (current, missing) = self.read(s, i);
        if current != op.expected && self.bug != Bug::BlindSet {
            // Lost: retry from the word the compare-and-set returned.
            if !missing {
                self.note_seen(&mut s.instances[i], current);
                s.instances[i].fresh = true;
            }
            op.expected = current;
            op.expected_epoch = s.epoch;
            op.retried |= self.parts.recovery;
            s.instances[i].op = Some(op);
            return;
        }
        // Stored (and published).
        if let OpKind::Release { ticket, .. } = op.kind
            && (ticket.epoch != s.epoch || ticket.counter != counter(current))
        {
            s.stale_write = true;
        }
        let new = step.word;
        if self.parts.recovery {
            self.recovery_write(s, op.kind, current, new, step.verdict, op.retried);
        }
        let acked = !self.parts.replicas || acked;
        self.store(s, i, current, new, &step.transitions, acked, op.generation);
        let epoch = s.epoch;
        let inst = &mut s.instances[i];
        inst.op = None;
        self.note_seen(inst, new);
        inst.fresh = true;
        if !acked {
            // Not known to survive a failover: not made. The operation
            // fails as on any error (`acquire_remote`, `release_remote`).
            self.detach(s, i);
            return self.failed(s, i, op.kind);
        }
        self.offer(&mut s.instances[i], Some(!op.changed), new, epoch);
        if let Verdict::Admitted { counter, probe } = step.verdict {
            // A trial's probes share its counter: its first is recorded
            // here, all of them by the recovery part's (k).
            if probe && taken(current).is_none() {
                record(&mut s.probes, &mut s.dup_probes, counter);
            }
            s.instances[i].ticket = Some(Ticket {
                counter,
                probe,
                local: false,
                epoch,
            });
            self.admitted(s, i);
        }
    }

    /// What an operation that failed falls back to: an admission to the
    /// local breaker, a release to `unreported`.
    pub(crate) fn failed(&self, s: &mut FleetState, i: usize, kind: OpKind) {
        match kind {
            OpKind::Acquire => self.local_acquire(s, i),
            OpKind::Release { outcome, .. } => self.unreported(s, i, outcome),
            OpKind::Vote | OpKind::Withdraw => {}
        }
    }

    /// A word `new` stored over `old` by instance `i` (taken as made by it
    /// when `acked`; `generation`: the config generation it had read when
    /// its operation began): published to the instances subscribed on the
    /// node that served it, its transitions reported when made.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn store(
        &self,
        s: &mut FleetState,
        i: usize,
        old: u64,
        new: u64,
        transitions: &tripword::transition::Transitions,
        acked: bool,
        generation: u8,
    ) {
        let on_b = self.served_on_b(s);
        s.parts.key_on_b |= on_b;
        if self.parts.quorum > 1
            && status_of(old) == Status::Closed
            && status_of(new) == Status::Open
            && !matches!(
                Snapshot::decode::<W64>(new),
                Ok(Snapshot {
                    state: State::ForcedOpen | State::OpenUntil { .. },
                    ..
                })
            )
            && s.parts.opened.count_ones() < u32::from(self.parts.quorum)
        {
            s.parts.trip_short = true;
        }
        let inst = &s.instances[i];
        if inst.print != s.parts.print && generation == s.parts.generation {
            s.parts.follower_wrote = true;
        }
        s.writes += 1;
        s.prev = Some(s.stored);
        s.stored = Some(new);
        s.parts.replicated = acked && self.bug != Bug::NoWait;
        s.parts.last_acked = acked;
        if !acked {
            s.parts.unacked = true;
        }
        s.last_reported.clear();
        for t in transitions.iter() {
            if t.to == Status::Open {
                s.tripped = true;
            }
            if acked {
                record(&mut s.reports, &mut s.dup_reports, t.counter);
                s.last_reported.push(t.counter);
            }
        }
        for j in 0..self.instances {
            // The writer's own copy brings what its reply brings.
            if j == i || self.partitioned(s, j) || !s.instances[j].made {
                continue;
            }
            if s.instances[j].on_b != on_b {
                // Sharded pub/sub: a message stays on the node's shard.
                s.instances[j].clean = false;
                s.parts.missed_on_a = true;
                continue;
            }
            let msg = Msg {
                to: j as u8,
                word: new,
                epoch: s.epoch,
                orphan: false,
            };
            insert_sorted(&mut s.bag, msg);
        }
    }

    /// The watcher's periodic read of the word (`Inner::refreshed`), which
    /// also attaches a fallen-back instance; a failure detaches it.
    pub(crate) fn refresh(&self, s: &mut FleetState, i: usize) {
        if self.partitioned(s, i) {
            return self.detach(s, i);
        }
        let (word, missing) = self.read(s, i);
        let orphans = s.bag.iter().any(|m| m.to as usize == i && m.orphan);
        // A reply still to come may carry a word read before the refresh.
        let replying = s.instances[i].op.is_some();
        let epoch = s.epoch;
        let inst = &mut s.instances[i];
        if !missing {
            self.note_seen(inst, word);
            inst.fresh = true;
        }
        self.offer(inst, Some(true), word, epoch);
        inst.clean = !missing && !orphans && !replying;
        // `Inner::attach` and `judge`: the fleet's fingerprint read (every
        // refresh here; one in `CONFIG_CHECK_EVERY` in the adapter).
        inst.generation = s.parts.generation;
        if inst.print != s.parts.print && self.bug != Bug::FollowerJoins {
            // Follows the word: admits only while it is `Closed`, never
            // writes it.
            inst.following = true;
            inst.attached = false;
            return;
        }
        inst.following = false;
        inst.attached = true;
        inst.hold = false;
        if let Some((by, until, reach)) = s.parts.hold
            && by as usize == i
        {
            // A force that reached only the local breaker ends as the
            // instance rejoins (`Inner::force`); one that reached Redis
            // while it was local binds it from now on.
            s.parts.hold = match reach {
                Reach::LocalOnly => None,
                _ => Some((by, until, Reach::Shared)),
            };
        }
    }

    pub(crate) fn deliver(&self, s: &mut FleetState, at: usize) {
        let msg = s.bag.remove(at);
        let current = msg.epoch == s.epoch && !msg.orphan;
        let inst = &mut s.instances[msg.to as usize];
        if self.note_seen(inst, msg.word) {
            inst.fresh = current;
        }
        self.offer(inst, None, msg.word, msg.epoch);
    }
}
