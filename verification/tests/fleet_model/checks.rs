//! The checks of the parts around the word (`Parts`): for each, the
//! protocol as built keeps every property in its own configuration (two
//! instances, as in `main.rs`), and a planted bug is caught.

use crate::model::*;
use crate::{NO_FAULTS, check, fleet, holds};
use stateright::Checker;

/// The configuration of `fleet(faults, writes, bug)` with `parts` on.
fn with(parts: Parts, faults: Faults, writes: u8, bug: Bug) -> Fleet {
    let mut model = fleet(faults, writes, bug);
    model.parts = parts;
    model
}

/// Asserts that the checker finds a counterexample to `property` in
/// `model` (a planted bug).
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

const QUORUM: Parts = Parts {
    quorum: 2,
    replicas: false,
    forces: 0,
    configs: false,
    slot_move: false,
    recovery: false,
};

/// `quorum(2)`, 3 writes: one instance's failures open its own breaker
/// and cast its vote; the word trips on the second instance's.
#[test]
fn a_quorum_trips_the_word_only_with_its_votes() {
    holds(
        "quorum 2",
        with(QUORUM, NO_FAULTS, 3, Bug::None),
        &["a quorum trip", "a probe elected"],
    );
}

/// A vote cast before its instance fell back is not withdrawn when the
/// instance's local probe closes its breaker (it is local:
/// `Follow::Nothing`), and counts until the quorum's window ends (not
/// modelled here: a vote counts until withdrawn): within it, the other
/// instance's vote alone trips the word. The model shows it (`quorum(2)`,
/// a partition, 1 write, the clock up to 1 tick); the quorum's check above
/// has no partition.
#[test]
fn a_vote_left_by_a_fallback_counts_until_its_window_ends() {
    let property = "a trip of the closed word has a quorum";
    let faults = Faults {
        partition: true,
        ..NO_FAULTS
    };
    let mut model = with(QUORUM, faults, 1, Bug::None);
    model.max_time = 1;
    let checker = check("quorum 2, a partition", model, &[property]);
    let path = checker.discovery(property).expect("the example");
    println!("{:?}", path.into_actions());
}

#[test]
fn a_failure_bypassing_the_quorum_is_caught() {
    found(
        with(QUORUM, NO_FAULTS, 3, Bug::QuorumBypassed),
        "a trip of the closed word has a quorum",
    );
}

const REPLICAS: Parts = Parts {
    replicas: true,
    ..QUORUM_OFF
};

const QUORUM_OFF: Parts = Parts {
    quorum: 0,
    ..QUORUM
};

const FAILOVER: Faults = Faults {
    failover: true,
    ..NO_FAULTS
};

/// `replicas(1)` with a failover, 2 writes, the clock up to 1 tick: a
/// write the replica did not acknowledge in time is lost by the failover,
/// and only such a write; with it, the strong forms of (a) and (c) hold
/// (nothing reported twice, no probe elected twice).
fn replicas(bug: Bug) -> Fleet {
    let mut model = with(REPLICAS, FAILOVER, 2, bug);
    model.max_time = 1;
    model
}

#[test]
fn with_replicas_a_failover_loses_no_acknowledged_write() {
    holds(
        "replicas 1, a failover",
        replicas(Bug::None),
        &["an unacknowledged write", "a write lost", "a trip"],
    );
}

#[test]
fn a_write_taken_before_its_replica_has_it_is_caught() {
    found(replicas(Bug::NoWait), "no acknowledged write is lost");
}

/// One force (`force_open`, `force_open_for`, `force_close`, or a
/// prefix's open or close; instance 1's breaker made later), a partition,
/// 1 write.
fn one_force(faults: Faults, bug: Bug) -> Fleet {
    let parts = Parts {
        forces: 1,
        ..QUORUM_OFF
    };
    with(parts, faults, 1, bug)
}

const PARTITION: Faults = Faults {
    partition: true,
    ..NO_FAULTS
};

/// One force and a partition: an operator's hold holds the instance that
/// made it, through a fallback too (the local breaker held).
#[test]
fn an_operators_force_holds_through_a_fallback() {
    holds(
        "a force, a partition",
        one_force(PARTITION, Bug::None),
        &["a fallback held by a force", "a trip"],
    );
}

/// Two forces, 2 writes, no fault: a prefix held open and closed, keys
/// made under it, forces through the breaker in any order.
#[test]
fn an_operators_forces_hold_in_any_order() {
    let parts = Parts {
        forces: 2,
        ..QUORUM_OFF
    };
    holds(
        "two forces",
        with(parts, NO_FAULTS, 2, Bug::None),
        &["a trip", "a probe elected"],
    );
}

/// A force open made by an instance in `Mode::Local` (Redis back, its
/// next refresh not yet come) reaches the shared word, and `Inner::force`
/// returns `Ok`, but the instance stays local until that refresh: its
/// local breaker, not forced, admits calls meanwhile (at most one refresh
/// period). The model shows it; (h) binds such an instance from its next
/// refresh.
#[test]
fn a_force_made_while_local_binds_from_the_next_refresh() {
    let property = "a local instance admits past its own force until it rejoins";
    let checker = check(
        "a force while local",
        one_force(PARTITION, Bug::None),
        &[property],
    );
    let path = checker.discovery(property).expect("the example");
    println!("{:?}", path.into_actions());
}

#[test]
fn a_hold_tripped_on_a_fallback_is_caught() {
    found(
        one_force(PARTITION, Bug::HoldTripped),
        "an operator's hold holds",
    );
}

#[test]
fn a_timed_hold_tripped_on_a_fallback_is_caught() {
    found(
        one_force(PARTITION, Bug::TimedHoldTripped),
        "an operator's hold holds",
    );
}

#[test]
fn a_key_made_under_a_held_prefix_and_not_forced_is_caught() {
    found(
        one_force(NO_FAULTS, Bug::PrefixMissesNewKey),
        "an operator's hold holds",
    );
}

const CONFIGS: Parts = Parts {
    configs: true,
    ..QUORUM_OFF
};

/// Two configs, 3 writes: instance 1 follows the fleet's word until it
/// publishes its own config; instance 0 then follows.
#[test]
fn a_follower_never_writes_the_word() {
    holds(
        "two configs",
        with(CONFIGS, NO_FAULTS, 3, Bug::None),
        &["a published config joined", "a trip"],
    );
}

#[test]
fn a_follower_joining_the_word_is_caught() {
    found(
        with(CONFIGS, NO_FAULTS, 3, Bug::FollowerJoins),
        "a follower neither writes the word nor admits past it",
    );
}

const SLOT_MOVE: Parts = Parts {
    slot_move: true,
    ..QUORUM_OFF
};

/// The key's slot moves from node A to node B, 3 writes: a change made on
/// B while the watchers are still on A is not missed.
#[test]
fn a_slot_move_loses_no_change() {
    holds(
        "a slot move",
        with(SLOT_MOVE, NO_FAULTS, 3, Bug::None),
        &["a write missed on the old node", "a trip"],
    );
}

#[test]
fn a_resubscription_without_a_read_is_caught() {
    found(
        with(SLOT_MOVE, NO_FAULTS, 3, Bug::ResubscribeWithoutRead),
        "mirrors converge after a slot move",
    );
}
