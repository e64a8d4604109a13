//! One breaker shared by several instances through a real redis-server:
//! the closed path stays local, a trip reaches every instance, failures and
//! probe results go to Redis, stale results change nothing, corrupt values
//! are repaired (spec I8).

mod common;

use common::*;
use tripword::Outcome;
use tripword_redis::{Mode, Release};

#[test]
fn closed_calls_never_touch_the_network() {
    let Some(server) = server() else { return };
    let b = builder(&server, "k", config(5, 1_000_000, 1_000_000))
        .build()
        .unwrap();
    assert_eq!(b.mode(), Mode::Shared);
    let before = b.stats().call_round_trips;
    for _ in 0..10_000 {
        let t = b.acquire().expect("closed");
        assert_eq!(b.release(t, Outcome::Success), Release::Recorded);
        let t = b.acquire().expect("closed");
        assert_eq!(b.release(t, Outcome::Ignored), Release::Recorded);
    }
    assert_eq!(
        b.stats().call_round_trips,
        before,
        "no round trip in Closed"
    );
}
