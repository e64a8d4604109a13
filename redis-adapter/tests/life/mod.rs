//! A fleet's whole life, shared by the tests that run it over another
//! transport or as another user (tests/tls.rs, tests/acl.rs).

use crate::common::{LONG, eventually};
use tripword::{Outcome, Status};
use tripword_redis::{Mode, RedisBreaker, Release, Scope};

/// The open time of the configs the life runs with (microseconds).
pub const OPEN_FOR: u64 = 2_000_000;

/// Whether the instance reads the shared word.
pub fn shared(b: &RedisBreaker) -> bool {
    b.sync().is_ok() && b.mode() == Mode::Shared
}

/// The fleet's life on `instances` (each its own hub, as processes): one
/// failure trips it (config threshold 1), every instance rejects, and
/// after the open time one probe is elected fleet-wide, whose success
/// closes it on every instance. The open time ([`OPEN_FOR`]) must outlast
/// the rejections' checks: generous, as every bound of these tests.
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
    let tripped = a.word();
    for (i, b) in instances.iter().enumerate() {
        assert!(
            eventually(LONG, || b.word() == tripped),
            "instance {i} does not see the trip: {:?} {:x} (tripped {tripped:x}), {:?}",
            b.mode(),
            b.word(),
            b.sync()
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
