//! The recovery rules of the model on hand-computed cases.

use crate::model::{Model, ModelConfig, ModelPhase, ModelState};
use tripword::{Cause, Config, Outcome, Ramp, Status, W32, W64, Word};

fn cfg<W: Word>(c: Config) -> ModelConfig {
    ModelConfig::for_width(&c.check::<W>().expect("valid"))
}

#[test]
fn a_trial_admits_n_closes_on_k_reopens_on_n_minus_k_plus_one() {
    let c = cfg::<W64>(
        Config::new()
            .failure_threshold(1)
            .open_for(10)
            .probe_timeout(1 << 20)
            .probes(3)
            .probes_to_close(2),
    );
    assert_eq!((c.trial_extra(), c.trial_need()), (12, 257));
    let mut m = Model::new(c);
    let t = m.acquire(0).unwrap();
    assert!(m.release(t.counter, Outcome::Failure, 0));
    let p: Vec<_> = (0..3).map(|_| m.acquire(10).unwrap()).collect();
    assert!(p.iter().all(|t| t.probe && t.counter == 3));
    assert_eq!(m.status(10), Status::Probing);
    let r = m.acquire(10).unwrap_err();
    assert_eq!(
        (r.cause, r.retry_after),
        (Cause::Probing, Some((257 << 12) - 10))
    );
    // An ignored probe frees a place; one failure is allowed (n - k = 1).
    assert!(m.release(3, Outcome::Ignored, 11));
    assert_eq!(m.status(11), Status::HalfOpen);
    assert!(m.acquire(11).unwrap().probe);
    assert!(m.release(3, Outcome::Failure, 12));
    assert!(matches!(
        m.state(),
        ModelState::Trial {
            running: 2,
            failed: 1,
            ..
        }
    ));
    assert!(m.release(3, Outcome::Success, 12));
    assert!(m.release(3, Outcome::Success, 13));
    assert_eq!(m.state(), ModelState::Closed { failures: 0 });
    assert_eq!(m.transitions()[0].from, ModelPhase::Trial);
}

#[test]
fn a_timed_out_trial_is_given_up() {
    let c = cfg::<W32>(
        Config::new()
            .failure_threshold(1)
            .open_for(4)
            .probe_timeout(100)
            .probes(2),
    );
    let mut m = Model::new(c);
    let t = m.acquire(0).unwrap();
    m.release(t.counter, Outcome::Failure, 0);
    let p = m.acquire(1 << 10).unwrap();
    let at = m.trial_timeout(1 << 10).unwrap();
    assert!(at - (1 << 10) >= 100);
    assert!(!m.clone().release(p.counter, Outcome::Success, at));
    let q = m.acquire(at).unwrap();
    assert_eq!((q.counter, m.transitions().len()), (p.counter + 2, 2));
}

#[test]
fn the_ramp_admits_its_share_then_closes() {
    let c = cfg::<W64>(
        Config::new()
            .failure_threshold(2)
            .open_for(10)
            .ramp(Ramp::stages(1 << 14, &[2_500, 5_000])),
    );
    assert_eq!(
        (c.share_units(0), c.share_units(1), c.step_need()),
        (256, 512, 2)
    );
    let mut m = Model::new(c);
    m.force_open_for(0, 0);
    let p = m.acquire(0).unwrap();
    assert!(m.release(p.counter, Outcome::Success, 0));
    assert!(matches!(m.state(), ModelState::Ramp { .. }));
    assert_eq!(m.status(0), Status::Recovering);
    let admitted = (0..8).filter(|_| m.acquire(1).is_ok()).count();
    assert_eq!(admitted, 2);
    let r = m.acquire(1).unwrap_err();
    assert_eq!((r.cause, r.retry_after), (Cause::Ramp, Some((2 << 14) - 1)));
    assert_eq!((0..8).filter(|_| m.acquire(2 << 14).is_ok()).count(), 4);
    // Two failures in a row reopen (m = min(2, 15)).
    let t = loop {
        if let Ok(t) = m.acquire(2 << 14) {
            break t;
        }
    };
    assert!(m.release(t.counter, Outcome::Failure, 5));
    assert!(m.release(t.counter, Outcome::Failure, 6));
    assert_eq!(m.state(), ModelState::Open { since: 6, trips: 2 });
}

#[test]
fn past_its_last_stage_the_ramp_closes_on_the_next_admission() {
    let c = cfg::<W32>(
        Config::new()
            .horizon(0)
            .failure_threshold(1)
            .open_for(4)
            .ramp(Ramp::linear(256, 2)),
    );
    let mut m = Model::new(c);
    m.force_open_for(0, 0);
    let p = m.acquire(0).unwrap();
    m.release(p.counter, Outcome::Success, 0);
    let end = (2 * c.step_need()) << c.ramp_extra();
    assert_eq!(m.status(end - 1), Status::Recovering);
    assert_eq!(m.status(end), Status::Closed);
    let t = m.acquire(end).unwrap();
    assert_eq!(m.state(), ModelState::Closed { failures: 0 });
    assert_eq!(t.counter, m.counter());
}
