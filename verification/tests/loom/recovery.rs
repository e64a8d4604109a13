//! loom models of the recovery states (`docs/spec.md`, I11 and I12):
//!
//! - `n` probes (2 or 3) raced by 3 or 4 callers on a half-open breaker:
//!   exactly `n` admitted, all probes of one trial (one election
//!   reported, by one of them), the rest rejected with cause `Probing`;
//! - ramp admissions raced by two threads at one stage of known share:
//!   of the `c` asked, `⌊c·p⌋` or `⌊c·p⌋ + 1` admitted, the others
//!   rejected with cause `Ramp` and a wait to the next stage;
//! - the release of a ramp ticket racing the ramp's end (an admission past
//!   its last stage): either the release counts first (a failure reopens)
//!   and the admission is rejected, or the ramp ends first and the
//!   release is stale.
//!
//! Each ends with [`history`] (I7, I10).

use super::{Phase, Shared, breaker, check, config, history, join, spawn, state, trip};
use tripword::word::State;
use tripword::{Cause, Outcome, Ramp, Release, Status, W32, W64, Word};

/// A breaker with `n` probes, tripped at 0, its open time just elapsed.
fn half_open<W: Word>(n: u8) -> Shared<W> {
    let b = breaker::<W>(config(1, 10, 100).probes(n));
    trip(&b);
    b.clock().advance(10);
    b
}

fn n_probes<W: Word>(n: u8, callers: u64) {
    let b = half_open::<W>(n);
    let hs: Vec<_> = (1..=callers)
        .map(|who| {
            let b = b.clone();
            spawn(who, move || b.acquire())
        })
        .collect();
    let mut probes = Vec::new();
    for (who, h) in (1..).zip(hs) {
        match join(h) {
            Ok(t) => {
                assert!(t.is_probe(), "I11: a trial admits probes only");
                probes.push((who, t));
            }
            Err(r) => assert_eq!(r.cause(), Cause::Probing, "I11: the rest wait on the trial"),
        }
    }
    assert_eq!(probes.len(), usize::from(n), "I11: exactly n probes");
    let h = history(&b);
    assert_eq!(
        h.len(),
        3,
        "Closed->Open, Open->HalfOpen, HalfOpen->Probing: {h:?}"
    );
    assert_eq!(h[2].to, Phase::Probing);
    assert!(
        probes.iter().any(|(who, _)| *who == h[2].by),
        "I7: the election by a probe"
    );
    assert!(
        probes.iter().all(|(_, t)| t.counter() == h[2].counter),
        "I11: one trial"
    );
    assert!(matches!(state(&b), State::Trial { running, .. } if running == u32::from(n)));
    assert_eq!(b.status(), Status::Probing);
    for (_, t) in probes {
        assert_eq!(b.release(t, Outcome::Success), Release::Recorded);
    }
    assert_eq!(b.status(), Status::Closed);
}

#[test]
fn i11_two_probes_3_callers_w64() {
    check("i11_two_probes_3_callers_w64", Some(2), || {
        n_probes::<W64>(2, 3)
    });
}

#[test]
fn i11_three_probes_4_callers_w32() {
    check("i11_three_probes_4_callers_w32", Some(1), || {
        n_probes::<W32>(3, 4)
    });
}

/// A `W32` breaker in its ramp: one stage of `bp` basis points (12/32 of
/// a call for 3 750), 2^8 ticks long; entered at 10.
fn ramping(bp: u16, threshold: u32) -> Shared<W32> {
    let b = breaker::<W32>(config(threshold, 10, 100).ramp(Ramp::stages(1 << 8, &[bp])));
    trip(&b);
    b.clock().advance(10);
    let p = b.acquire().expect("the probe");
    assert_eq!(b.release(p, Outcome::Success), Release::Recorded);
    assert_eq!(b.status(), Status::Recovering);
    b
}

fn ramp_share(threads: u64, each: u64) {
    let b = ramping(3_750, 1);
    let hs: Vec<_> = (1..=threads)
        .map(|who| {
            let b = b.clone();
            spawn(who, move || {
                (0..each)
                    .map(|_| match b.acquire() {
                        Ok(t) => {
                            assert!(!t.is_probe());
                            1
                        }
                        Err(r) => {
                            assert_eq!(r.cause(), Cause::Ramp, "I12: the cause");
                            assert!(r.retry_after().is_some_and(|w| w > 0));
                            0
                        }
                    })
                    .sum::<u64>()
            })
        })
        .collect();
    let admitted: u64 = hs.into_iter().map(join).sum();
    let c = threads * each;
    let floor = c * 12 / 32;
    assert!(
        admitted == floor || admitted == floor + 1,
        "I12: {admitted} of {c} admitted at 12/32"
    );
    let h = history(&b);
    assert_eq!(h.last().map(|r| r.to), Some(Phase::Recovering), "{h:?}");
}

#[test]
fn i12_ramp_share_2_threads_3_each() {
    check("i12_ramp_share_2_threads_3_each", None, || ramp_share(2, 3));
}

/// A ramp ticket's failure (threshold 1: it reopens) racing the first
/// admission past the ramp's last stage (it ends the ramp).
fn release_vs_ramp_end() {
    let b = ramping(5_000, 1);
    let t = loop {
        if let Ok(t) = b.acquire() {
            break t;
        }
    };
    b.clock().advance(1 << 9);
    let releaser = {
        let b = b.clone();
        spawn(1, move || b.release(t, Outcome::Failure))
    };
    let caller = {
        let b = b.clone();
        spawn(2, move || b.acquire())
    };
    let released = join(releaser);
    let admitted = join(caller);
    let h = history(&b);
    match (released, admitted) {
        (Release::Recorded, Err(r)) => {
            assert_eq!(r.cause(), Cause::Open);
            assert_eq!(
                h.last().map(|r| (r.from, r.to)),
                Some((Phase::Recovering, Phase::Open))
            );
        }
        (Release::Stale, Ok(t)) => {
            assert!(!t.is_probe());
            assert_eq!(
                h.last().map(|r| (r.from, r.to)),
                Some((Phase::Recovering, Phase::Closed))
            );
            assert_eq!(
                t.counter(),
                h.last().unwrap().counter,
                "admitted in the Closed it stored"
            );
        }
        other => panic!("the release and the ramp's end: {other:?}"),
    }
}

#[test]
fn i12_ramp_ticket_release_vs_ramp_end() {
    check(
        "i12_ramp_ticket_release_vs_ramp_end",
        None,
        release_vs_ramp_end,
    );
}
