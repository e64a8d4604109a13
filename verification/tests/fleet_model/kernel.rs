//! The model as `stateright` explores it: the initial state, the actions
//! enabled in a state, each action's step, and the properties.

use crate::model::*;
use stateright::{Model, Property};
use tripword::Outcome;
use tripword::transition::Event;

impl Model for Fleet {
    type State = FleetState;
    type Action = Action;

    fn init_states(&self) -> Vec<FleetState> {
        let instance = |i: usize| {
            // With two configs, instance 1 joined a fleet whose fingerprint
            // (claimed by instance 0) is not its own: it follows.
            let other = self.parts.configs && i == 1;
            Instance {
                mirror: 0,
                mirror_epoch: 0,
                seen: None,
                fresh: false,
                attached: !other,
                local: 0,
                op: None,
                ticket: None,
                clean: true,
                hold: false,
                print: u8::from(other),
                following: other,
                generation: 0,
                on_b: false,
                made: !(self.parts.forces > 0 && i == 1),
                prefix_hold: None,
                credit: 0,
                tally: None,
            }
        };
        let mut state = FleetState {
            instances: (0..self.instances).map(instance).collect(),
            stored: None,
            epoch: 0,
            clock: 0,
            prev: None,
            restarted: false,
            failed_over: false,
            partitioned_once: false,
            partition: None,
            bag: Vec::new(),
            drops: 0,
            dups: 0,
            probes: Vec::new(),
            dup_probes: Vec::new(),
            reports: Vec::new(),
            dup_reports: Vec::new(),
            last_reported: Vec::new(),
            lost: Vec::new(),
            stale_write: false,
            stale_refused: false,
            local_overadmit: false,
            local_probe: false,
            tripped: false,
            writes: 0,
            parts: PartsState::default(),
        };
        if self.parts.recovery {
            self.tripped(&mut state);
        }
        vec![state]
    }

    fn actions(&self, s: &FleetState, actions: &mut Vec<Action>) {
        for (i, inst) in s.instances.iter().enumerate() {
            self.part_actions(s, i, actions);
            if !inst.made {
                continue;
            }
            if let Some(op) = inst.op {
                actions.push(Action::Redis(i));
                if self.parts.replicas
                    && matches!(op.kind, OpKind::Acquire | OpKind::Release { .. })
                {
                    actions.push(Action::RedisUnacked(i));
                }
            } else if inst.ticket.is_some() {
                actions.push(Action::Release(i, Outcome::Success));
                actions.push(Action::Release(i, Outcome::Failure));
                if self.parts.recovery && inst.ticket.is_some_and(|t| t.probe) {
                    actions.push(Action::Release(i, Outcome::Ignored));
                }
            } else {
                actions.push(Action::Acquire(i));
            }
            actions.push(Action::Refresh(i));
        }
        for (at, msg) in s.bag.iter().enumerate() {
            if at > 0 && s.bag[at - 1] == *msg {
                continue;
            }
            actions.push(Action::Deliver(at));
            if s.drops < self.max_drops {
                actions.push(Action::Drop(at));
            }
            if s.dups < self.max_dups {
                actions.push(Action::Duplicate(at));
            }
        }
        if s.clock < self.max_time {
            actions.push(Action::Tick);
        }
        let all_seen = s.instances.iter().all(|inst| inst.fresh);
        if self.faults.restart
            && !s.restarted
            && s.stored.is_some()
            && (all_seen || self.faults.restart_unseen)
        {
            actions.push(Action::Restart);
        }
        // A failover that loses the key's first write loses the key.
        let loses_key = s.prev == Some(None);
        // With `replicas(1)` a failover promotes the replica: it loses a
        // write only while the replica does not have it.
        let unreplicated = !self.parts.replicas || !s.parts.replicated;
        if self.parts.replicas && !s.parts.replicated && s.prev.is_some() {
            actions.push(Action::Replicate);
        }
        if self.faults.failover
            && !s.failed_over
            && s.prev.is_some()
            && unreplicated
            && (!loses_key || all_seen || self.faults.restart_unseen)
        {
            actions.push(Action::Failover);
        }
        if self.faults.partition {
            if !s.partitioned_once {
                for i in 0..self.instances {
                    actions.push(Action::Partition(i));
                }
            } else if s.partition.is_some() {
                actions.push(Action::Heal);
            }
        }
    }

    fn next_state(&self, last: &FleetState, action: Action) -> Option<FleetState> {
        let mut s = last.clone();
        match action {
            Action::Acquire(i) => self.start_acquire(&mut s, i),
            Action::Release(i, outcome) => self.start_release(&mut s, i, outcome),
            Action::Redis(i) => self.redis_step(&mut s, i, true),
            Action::RedisUnacked(i) => self.redis_step(&mut s, i, false),
            Action::Replicate => s.parts.replicated = true,
            Action::ForceOpen(i) => self.counted_force(&mut s, i, Event::ForceOpen),
            Action::ForceOpenFor(i) => {
                let event = Event::ForceOpenFor { open_for: 2 };
                self.counted_force(&mut s, i, event);
            }
            Action::ForceClose(i) => self.counted_force(&mut s, i, Event::ForceClose),
            Action::PrefixOpen(i) => {
                s.parts.forces += 1;
                self.prefix(&mut s, i, Some(None));
            }
            Action::PrefixOpenFor(i) => {
                s.parts.forces += 1;
                let until = s.clock + 2;
                self.prefix(&mut s, i, Some(Some(until)));
            }
            Action::PrefixClose(i) => {
                s.parts.forces += 1;
                self.prefix(&mut s, i, None);
            }
            Action::Make(i) => self.make(&mut s, i),
            Action::Publish(i) => self.publish(&mut s, i),
            Action::SlotStep => self.slot_step(&mut s),
            Action::Resubscribe(i) => self.resubscribe(&mut s, i),
            Action::Refresh(i) => self.refresh(&mut s, i),
            Action::Deliver(at) => self.deliver(&mut s, at),
            Action::Drop(at) => {
                let msg = s.bag.remove(at);
                s.instances[msg.to as usize].clean = false;
                s.drops += 1;
            }
            Action::Duplicate(at) => {
                let msg = s.bag[at];
                insert_sorted(&mut s.bag, msg);
                s.dups += 1;
            }
            Action::Tick => s.clock += self.tick,
            Action::Restart => {
                s.stored = None;
                s.epoch += 1;
                s.prev = None;
                s.restarted = true;
                for inst in &mut s.instances {
                    inst.clean = false;
                    inst.fresh = false;
                }
            }
            Action::Failover => {
                let lost = s.stored;
                s.parts.acked_lost |= self.parts.replicas && s.parts.last_acked;
                s.parts.replicated = true;
                if s.prev == Some(None) {
                    // The key is lost again: a later loss resumes from
                    // what each instance saw before this one.
                    for inst in &mut s.instances {
                        inst.fresh = false;
                    }
                }
                s.stored = s.prev.take().flatten();
                s.failed_over = true;
                s.lost = core::mem::take(&mut s.last_reported);
                for msg in &mut s.bag {
                    if Some(msg.word) == lost {
                        msg.orphan = true;
                    }
                }
                s.bag.sort();
                for inst in &mut s.instances {
                    inst.clean = false;
                }
            }
            Action::Partition(i) => {
                s.partition = Some(i as u8);
                s.partitioned_once = true;
                s.bag.retain(|m| m.to as usize != i);
                s.instances[i].clean = false;
            }
            Action::Heal => s.partition = None,
        }
        Some(s)
    }

    fn within_boundary(&self, s: &FleetState) -> bool {
        s.writes <= self.max_writes
            && s.instances
                .iter()
                .all(|inst| inst.tally.is_none_or(|t| t.asks <= crate::recovery::ASKS))
    }

    fn properties(&self) -> Vec<Property<Self>> {
        let mut properties = vec![
            // (a) One probe per counter (per open period); with a lost write,
            // only a counter the lost write carried may be elected again.
            Property::always("one probe per open period", |_: &Fleet, s: &FleetState| {
                s.dup_probes.iter().all(|c| s.lost.contains(c))
            }),
            // (b) A release whose ticket's counter is not the word's, or
            // that was issued before the key was lost, stores nothing.
            Property::always(
                "no stale release changes the word",
                |_: &Fleet, s: &FleetState| !s.stale_write,
            ),
            // (c) Each transition is reported by exactly one instance (the one
            // whose compare-and-set made it); with a lost write, only the
            // transitions it carried may be reported again.
            Property::always(
                "each transition reported once",
                |_: &Fleet, s: &FleetState| s.dup_reports.iter().all(|c| s.lost.contains(c)),
            ),
            // (d) Pub/sub converges the mirrors: an attached instance that
            // refreshed since the last loss, restart or dropped message, with
            // nothing left on its way to it, holds the stored word's state
            // (its counter). Not always the word itself: failures counted in
            // `Closed` keep the counter, and a word published with the
            // mirror's counter is left to the next refresh.
            Property::always("mirrors converge", |m: &Fleet, s: &FleetState| {
                (0..m.instances).all(|i| {
                    let inst = &s.instances[i];
                    let quiet = inst.attached
                        && inst.made
                        && inst.clean
                        && !s.bag.iter().any(|msg| msg.to as usize == i);
                    !quiet || counter(inst.mirror) == counter(m.read(s, i).0)
                })
            }),
            // (e) The local fallback admits no more than a lone breaker: a
            // closed admission only while closed, and none from the moment
            // an instance falls back from a fleet that is not closed until
            // its local probe closes it.
            Property::always(
                "the fallback admits no more than a local breaker",
                |_: &Fleet, s: &FleetState| !s.local_overadmit,
            ),
            Property::sometimes(
                "a probe elected again after a lost write",
                |_: &Fleet, s: &FleetState| !s.dup_probes.is_empty(),
            ),
            Property::sometimes("a trip", |_: &Fleet, s: &FleetState| s.tripped),
            Property::sometimes("a probe elected", |_: &Fleet, s: &FleetState| {
                !s.probes.is_empty()
            }),
            Property::sometimes("a stale release refused", |_: &Fleet, s: &FleetState| {
                s.stale_refused
            }),
            Property::sometimes("a restart", |_: &Fleet, s: &FleetState| s.restarted),
            Property::sometimes("a write lost", |_: &Fleet, s: &FleetState| s.failed_over),
            Property::sometimes("a fallback probe", |_: &Fleet, s: &FleetState| {
                s.local_probe
            }),
            Property::sometimes(
                "a partitioned instance rejoined",
                |_: &Fleet, s: &FleetState| {
                    s.partitioned_once
                        && s.partition.is_none()
                        && s.instances.iter().all(|inst| inst.attached)
                },
            ),
        ];
        properties.extend(part_properties());
        properties.extend(crate::recovery::properties());
        properties
    }
}

/// The properties of the parts beyond the compare-and-set (see [`Parts`]).
fn part_properties() -> Vec<Property<Fleet>> {
    vec![
        // (f) With `quorum(q)`, the closed word trips only when q instances'
        // own breakers opened (their votes not withdrawn): no instance's
        // failures reach the shared word alone.
        Property::always(
            "a trip of the closed word has a quorum",
            |_: &Fleet, s: &FleetState| !s.parts.trip_short,
        ),
        // (g) With `replicas(1)`, a failover loses no write its writer took
        // as made (so no reported transition, no elected probe).
        Property::always(
            "no acknowledged write is lost",
            |_: &Fleet, s: &FleetState| !s.parts.acked_lost,
        ),
        // (h) An operator's force open (`force_open`, `force_open_for`, a
        // prefix's, a key made under a held prefix) holds the instance that
        // made it until a force close or its end, a fallback included.
        Property::always("an operator's hold holds", |_: &Fleet, s: &FleetState| {
            !s.parts.hold_broken
        }),
        // (i) An instance that read the fleet's config as not its own
        // writes no word, and admits only while its mirror is `Closed`.
        Property::always(
            "a follower neither writes the word nor admits past it",
            |_: &Fleet, s: &FleetState| !s.parts.follower_wrote && !s.parts.follower_admitted,
        ),
        // (j) After a slot's move, once every watcher subscribed on the new
        // owner, with nothing in flight, every mirror holds the stored
        // word's counter: a change made on the new node while the watchers
        // were on the old one is not missed.
        Property::always(
            "mirrors converge after a slot move",
            |m: &Fleet, s: &FleetState| {
                let moved = s.parts.phase == 3
                    && s.bag.is_empty()
                    && s.instances
                        .iter()
                        .all(|inst| inst.on_b && inst.attached && inst.op.is_none());
                !moved
                    || (0..m.instances)
                        .all(|i| counter(s.instances[i].mirror) == counter(m.read(s, i).0))
            },
        ),
        Property::sometimes(
            "a local instance admits past its own force until it rejoins",
            |_: &Fleet, s: &FleetState| s.parts.unattached_admit,
        ),
        Property::sometimes("a quorum trip", |_: &Fleet, s: &FleetState| {
            s.parts.quorum_tripped
        }),
        Property::sometimes("an unacknowledged write", |_: &Fleet, s: &FleetState| {
            s.parts.unacked
        }),
        Property::sometimes("a fallback held by a force", |_: &Fleet, s: &FleetState| {
            s.parts.held_fallback
        }),
        Property::sometimes("a published config joined", |_: &Fleet, s: &FleetState| {
            s.parts.generation > 0 && s.instances.get(1).is_some_and(|inst| inst.attached)
        }),
        Property::sometimes(
            "a write missed on the old node",
            |_: &Fleet, s: &FleetState| s.parts.missed_on_a,
        ),
    ]
}

impl Fleet {
    /// The actions of the parts for instance `i`.
    fn part_actions(&self, s: &FleetState, i: usize, actions: &mut Vec<Action>) {
        let inst = &s.instances[i];
        if self.parts.forces > s.parts.forces {
            if inst.made && inst.op.is_none() {
                actions.push(Action::ForceOpen(i));
                actions.push(Action::ForceOpenFor(i));
                actions.push(Action::ForceClose(i));
            }
            if inst.prefix_hold.is_some() {
                actions.push(Action::PrefixClose(i));
            } else {
                actions.push(Action::PrefixOpen(i));
                actions.push(Action::PrefixOpenFor(i));
            }
        }
        if !inst.made {
            actions.push(Action::Make(i));
            return;
        }
        if self.parts.configs && s.parts.generation == 0 && inst.op.is_none() {
            actions.push(Action::Publish(i));
        }
        if self.parts.slot_move && s.parts.phase == 3 && !inst.on_b {
            actions.push(Action::Resubscribe(i));
        }
        if i == 0 && self.parts.slot_move && s.parts.phase < 3 {
            actions.push(Action::SlotStep);
        }
    }

    /// A force through the breaker (`force_open`, `force_open_for`,
    /// `force_close`), counted.
    fn counted_force(&self, s: &mut FleetState, i: usize, event: Event) {
        s.parts.forces += 1;
        self.force(s, i, event);
    }
}
