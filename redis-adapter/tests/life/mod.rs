//! A fleet's whole life, shared by the tests that run it over another
//! transport or as another user (tests/tls.rs, tests/acl.rs).

use crate::common::{LONG, eventually};
use tripword::{Outcome, Status};
use tripword_redis::{Mode, RedisBreaker, Release, Scope};

/// Whether the instance reads the shared word.
pub fn shared(b: &RedisBreaker) -> bool {
    b.sync().is_ok() && b.mode() == Mode::Shared
}

/// The fleet's life on `instances` (each its own hub, as processes): one
/// failure trips it (config threshold 1), every instance rejects, and
/// after the open time one probe is elected fleet-wide, whose success
/// closes it on every instance.
pub fn trip_reject_probe_recover(instances: &[RedisBreaker]) {
    assert!(
        eventually(LONG, || instances.iter().all(shared)),
        "every instance joins the shared word"
    );
    let a = &instances[0];
    let t = a.acquire().unwrap();
    assert_eq!(t.scope(), Scope::Shared);
    assert_eq!(a.release(t, Outcome::Failure), Release::Recorded);
    assert_eq!(a.status(), Status::Open);
    for b in instances {
        assert!(
            eventually(LONG, || b.status() == Status::Open),
            "each instance sees the trip"
        );
        assert!(b.acquire().is_err(), "rejected while open");
    }
    // After the open time: one probe in the whole fleet.
    let mut probe = None;
    assert!(
        eventually(LONG, || {
            probe = a.acquire().ok();
            probe.is_some()
        }),
        "a probe after the open time"
    );
    let probe = probe.unwrap();
    assert!(probe.is_probe() && probe.scope() == Scope::Shared);
    for b in &instances[1..] {
        assert!(b.sync().is_ok());
        assert!(b.acquire().is_err(), "one probe for the fleet");
    }
    assert_eq!(a.release(probe, Outcome::Success), Release::Recorded);
    for b in instances {
        assert!(
            eventually(LONG, || b.status() == Status::Closed),
            "each instance sees the recovery"
        );
        let t = b.acquire().unwrap();
        assert_eq!(b.release(t, Outcome::Success), Release::Recorded);
    }
}
