//! `Rejected::new`: the public constructor for breakers with a state
//! machine of their own.

extern crate std;

use super::*;
use crate::clock::ManualClock;
use crate::{Breaker, Config, Outcome};

const MOST: u64 = (usize::MAX >> 2) as u64;

#[test]
fn new_keeps_the_cause_and_the_wait() {
    for (cause, wait) in [
        (Cause::Open, 0),
        (Cause::Open, 1),
        (Cause::Open, 250),
        (Cause::Probing, 0),
        (Cause::Probing, 7),
        (Cause::Open, MOST),
        (Cause::Probing, MOST - 1),
    ] {
        let r = Rejected::new(cause, Some(wait));
        assert_eq!((r.cause(), r.retry_after()), (cause, Some(wait)));
    }
    let r = Rejected::new(Cause::ForcedOpen, None);
    assert_eq!((r.cause(), r.retry_after()), (Cause::ForcedOpen, None));
}

/// What the cause forbids is normalized, never carried: an operator's hold
/// has no wait, an open or probing breaker always has one.
#[test]
fn new_normalizes_what_the_cause_forbids() {
    for wait in [0, 1, 99, MOST, u64::MAX] {
        let r = Rejected::new(Cause::ForcedOpen, Some(wait));
        assert_eq!(r.retry_after(), None, "{wait}");
        assert_eq!(r, Rejected::new(Cause::ForcedOpen, None));
    }
    for cause in [Cause::Open, Cause::Probing] {
        let r = Rejected::new(cause, None);
        assert_eq!((r.cause(), r.retry_after()), (cause, Some(0)));
        assert_eq!(r, Rejected::new(cause, Some(0)));
    }
}

#[test]
fn new_saturates_a_wait_too_long_for_the_word() {
    for (wait, kept) in [(MOST, MOST), (MOST + 1, MOST), (u64::MAX, MOST)] {
        for cause in [Cause::Open, Cause::Probing] {
            let r = Rejected::new(cause, Some(wait));
            assert_eq!((r.cause(), r.retry_after()), (cause, Some(kept)));
        }
    }
}

/// `new(r.cause(), r.retry_after())` is `r`, for the rejections the core
/// makes itself: the two are one representation.
#[test]
fn new_rebuilds_the_rejections_the_core_makes() {
    let clock = ManualClock::new(0);
    let b = Breaker::new(
        Config::new()
            .failure_threshold(1)
            .open_for(100)
            .probe_timeout(40),
        &clock,
    );
    b.release(b.acquire().unwrap(), Outcome::Failure);
    clock.advance(30);
    let open = b.acquire().unwrap_err();
    assert_eq!(open.cause(), Cause::Open);
    assert_eq!(Rejected::new(Cause::Open, Some(70)), open);
    clock.advance(70);
    let _probe = b.acquire().unwrap();
    let probing = b.acquire().unwrap_err();
    assert_eq!(probing.cause(), Cause::Probing);
    b.force_open();
    let forced = b.acquire().unwrap_err();
    for r in [open, probing, forced] {
        assert_eq!(Rejected::new(r.cause(), r.retry_after()), r, "{r:?}");
    }
}

#[test]
fn new_is_const_copy_and_one_word() {
    const R: Rejected = Rejected::new(Cause::Probing, Some(3));
    let copy = R;
    assert_eq!(copy, R);
    assert_eq!(
        core::mem::size_of::<Rejected>(),
        core::mem::size_of::<usize>()
    );
    assert_eq!(
        core::mem::size_of::<Result<crate::Ticket, Rejected>>(),
        2 * core::mem::size_of::<usize>()
    );
    assert_eq!(
        std::format!("{R}"),
        "circuit probing: call not admitted (retry after 3 ticks)"
    );
}
