//! The recovery states in the exhaustive search (`docs/spec.md`, "Recovery:
//! several probes and the ramp", I11 and I12): small configs with 2 and 3
//! probes (to close: all, or 2 of 3) and ramps of two stages, on both
//! widths; the edge invariants of a trial's added probe and of the ramp's
//! admissions and rejections; and, once per distinct `Trial` or `Ramp`
//! state, its times checked at exact readings computed from the state (the
//! trial's timeout, each stage's first tick and the ramp's end), the
//! ramp's share over runs of consecutive admissions, and its failure
//! threshold.

use super::{Ev, Explorer, Said, before_counter, decode, pure};
use tripword::word::{Snapshot, State};
use tripword::{Cause, Config, Outcome, Ramp, Status, ValidConfig, Word};
use tripword_verification::model::{Model, ModelConfig, ModelRejected, ModelState};

/// The recovery configs searched: `(threshold, open_for, probe_timeout,
/// horizon, probes, to_close, ramp stages in the ramp's units)`.
type Rec = (u32, u64, u64, Option<u64>, u8, u8, Option<(u64, [u16; 2])>);

fn cases<W: Word>() -> Vec<Rec> {
    let h = if W::LAYOUT.word_bits == 64 {
        None
    } else {
        Some(0)
    };
    vec![
        (1, 1, 1, h, 2, 2, None),
        (2, 2, 3, h, 3, 2, None),
        (1, 1, 1, h, 2, 1, Some((1, [2_500, 5_000]))),
    ]
}

/// The recovery configs of width `W`, checked.
pub(super) fn configs<W: Word>() -> Vec<ValidConfig<W>> {
    let l = W::LAYOUT;
    cases::<W>()
        .into_iter()
        .map(|(n, open_for, probe, horizon, probes, k, ramp)| {
            let mut c = Config::new()
                .failure_threshold(n)
                .open_for(open_for)
                .probe_timeout(probe)
                .probes(probes)
                .probes_to_close(k);
            if let Some(h) = horizon {
                c = c.horizon(h);
            }
            if let Some((units, shares)) = ramp {
                let s = c.check::<W>().expect("in range").time_shift();
                let step = units << (s + l.share_bits + l.ramp_failure_bits);
                c = c.ramp(Ramp::stages(step, &shares));
            }
            c.check::<W>().expect("small recovery configs are in range")
        })
        .collect()
}

/// A recovery config's clock domain, smaller than the others' (the
/// states multiply with the trial's counts and the ramp's credit): small
/// times, the edges of the trial's and the ramp's first coarse units and
/// the ramp's stages (two stages of two units: its end at the fourth),
/// half the ring, the ring and `u64::MAX`. The exact times of each state
/// are checked apart (`node_checks`).
pub(super) fn clock_domain(cfg: &ModelConfig) -> Vec<u64> {
    let mut v: Vec<u64> = (0..=3).collect();
    for extra in [cfg.trial_extra(), cfg.ramp_extra()] {
        let u = 1u64 << (cfg.time_shift + extra);
        v.extend([u - 1, u, u + 1, 2 * u, 3 * u - 1, 4 * u, 5 * u]);
    }
    let ring = u64::try_from(cfg.ring()).expect("the rings searched fit a u64");
    v.extend([ring / 2 - 1, ring / 2, ring - 1, ring, u64::MAX]);
    v.sort_unstable();
    v.dedup();
    v
}

/// An admission in `Ramp` (I12): a plain ticket, in the ramp with its
/// counter and the credit spent, or past its end in `Closed` with the next.
pub(super) fn ramp_admitted(
    pre: &Snapshot,
    post: &Snapshot,
    counter: u32,
    probe: bool,
    ctx: &dyn Fn() -> String,
) {
    assert!(!probe, "I12: a ramp ticket is no probe: {}", ctx());
    match post.state {
        State::Ramp { .. } => assert_eq!(counter, pre.counter, "I12: {}", ctx()),
        State::Closed { failures: 0 } => {
            assert_ne!(
                counter,
                pre.counter,
                "the ramp's end moves the counter: {}",
                ctx()
            );
            assert_eq!(counter, post.counter, "{}", ctx());
        }
        other => panic!("I12: admitted in a ramp, left {other:?}: {}", ctx()),
    }
}

/// A rejection in `Ramp` (I12): cause `Ramp`, a positive wait, no
/// transition; it stores the credit, nothing else.
pub(super) fn ramp_rejected(
    pre: &Snapshot,
    post: &Snapshot,
    r: ModelRejected,
    n: u32,
    ctx: &dyn Fn() -> String,
) {
    assert_eq!(r.cause, Cause::Ramp, "{}", ctx());
    assert!(r.retry_after.is_some_and(|w| w >= 1), "{}", ctx());
    assert_eq!(n, 0, "a ramp's rejection is no transition: {}", ctx());
    let (
        State::Ramp {
            since,
            trips,
            failures,
            credit: c0,
        },
        State::Ramp {
            since: s,
            trips: k,
            failures: f,
            credit: c1,
        },
    ) = (pre.state, post.state)
    else {
        panic!("rejected by a ramp, left {:?}: {}", post.state, ctx());
    };
    assert!(
        (since, trips, failures, pre.counter) == (s, k, f, post.counter) && c1 > c0,
        "a ramp's rejection adds to the credit only: {}",
        ctx()
    );
}

/// Another probe admitted by a trial with room (I11).
pub(super) fn probe_added(
    cfg: &ModelConfig,
    pre: &Snapshot,
    post: &Snapshot,
    probe: bool,
    n: u32,
    ctx: &dyn Fn() -> String,
) {
    let (
        State::Trial {
            running,
            passed,
            failed,
            ..
        },
        State::Trial {
            running: r,
            passed: p,
            failed: f,
            ..
        },
    ) = (pre.state, post.state)
    else {
        panic!("I11: {}", ctx());
    };
    assert!(probe && n == 0, "I11: a probe, no transition: {}", ctx());
    assert_eq!((r, p, f), (running + 1, passed, failed), "I11: {}", ctx());
    assert!(
        r + p + f <= cfg.probes().0,
        "I11: more than n probes: {}",
        ctx()
    );
}

/// Once per distinct `Trial` or `Ramp` state.
pub(super) fn node_checks<W: Word>(x: &mut Explorer<'_, W>, word: W::Raw, model: &Model) {
    match model.state() {
        ModelState::Trial { since, .. } => trial_checks(x, word, model, since),
        ModelState::Ramp { since, .. } => ramp_checks(x, word, model, since),
        _ => unreachable!(),
    }
}

/// The trial's timeout at exact readings (I11, I5): it lasts at least the
/// probe timeout and less than three of its units more; at its first
/// reading an admission starts a new trial (two transitions) and a probe's
/// release is stale; one tick before, a release counts, and an admission
/// is another probe or a rejection whose wait lands on it.
fn trial_checks<W: Word>(x: &mut Explorer<'_, W>, word: W::Raw, model: &Model, since: u64) {
    let cfg = x.mcfg;
    let unit = 1u64 << (cfg.time_shift + cfg.trial_extra());
    let at = cfg.trial_timeout_at(since, since);
    let gap = at.wrapping_sub(since);
    assert!(
        gap >= cfg.probe_timeout && gap < cfg.probe_timeout + 3 * unit,
        "I11: the trial from {since} times out {gap} ticks after it ({cfg:?})"
    );
    let counter = before_counter::<W>(word);
    x.counts.side_checks += 4;
    let (w, _) = x.edge(word, model, Ev::Admit, at);
    let after = decode::<W>(w);
    assert!(
        matches!(
            after.state,
            State::Trial {
                running: 1,
                passed: 0,
                failed: 0,
                ..
            }
        ) && after.counter == W::LAYOUT.next_counter(W::LAYOUT.next_counter(counter)),
        "I11: at the timeout {at} a new trial starts: {after:?}"
    );
    let (w, _) = x.edge(word, model, Ev::Release(0, Outcome::Success), at);
    assert!(
        matches!(decode::<W>(w).state, State::HalfOpen { .. }),
        "I11: a probe released at the timeout is stale and half-opens"
    );
    let before = at.wrapping_sub(1);
    let step = pure::<W>(&x.config, word, Ev::Admit, counter, before);
    match step.said {
        Said::Admitted { counter: c, probe } => assert!(probe && c == counter),
        Said::Rejected(r) => assert_eq!(
            (r.cause, r.retry_after.map(|w| before.wrapping_add(w))),
            (Cause::Probing, Some(at)),
            "a full trial's wait lands on its timeout"
        ),
        other => panic!("a trial answered {other:?}"),
    }
    let (w, _) = x.edge(word, model, Ev::Admit, before);
    let _ = w;
    if let State::Trial { running, .. } = decode::<W>(word).state
        && running > 0
    {
        let step = pure::<W>(
            &x.config,
            word,
            Ev::Release(0, Outcome::Ignored),
            counter,
            before,
        );
        assert_eq!(step.said, Said::Recorded, "a probe in time counts");
    }
}

/// The ramp's stages at exact readings (I12): each stage's first tick
/// reads `Recovering` and a rejection one tick before it waits exactly to
/// it; from this state, `c` consecutive admissions inside a stage admit
/// `⌊c·p⌋` or `⌊c·p⌋ + 1`; the end's first tick reads `Closed` and admits
/// (the next counter), one tick before reads `Recovering`; consecutive
/// failures reopen at `min(threshold, the field's largest)`.
fn ramp_checks<W: Word>(x: &mut Explorer<'_, W>, word: W::Raw, model: &Model, since: u64) {
    let cfg = x.mcfg;
    let l = W::LAYOUT;
    let u = cfg.time_shift + cfg.ramp_extra();
    let stages = cfg.recovery.stages as u64;
    let first = |i: u64| {
        (since >> u)
            .wrapping_add(i * cfg.step_need())
            .wrapping_shl(u)
    };
    let counter = before_counter::<W>(word);
    let status = |x: &mut Explorer<'_, W>, t: u64| {
        x.counts.side_checks += 1;
        let (_, m) = x.edge(word, model, Ev::Status, t);
        let _ = m;
        pure::<W>(&x.config, word, Ev::Status, counter, t).said
    };
    for i in 0..stages {
        let t = first(i);
        assert_eq!(
            status(x, t),
            Said::Status(Status::Recovering),
            "stage {i} at {t}"
        );
        // c consecutive admissions inside stage i, from this word.
        let one = 1u64 << l.share_bits;
        let p = cfg.share_units(i as usize);
        let mut w = word;
        let mut admitted = 0u64;
        for c in 1..=2 * one.min(40) {
            x.counts.side_checks += 1;
            let step = pure::<W>(&x.config, w, Ev::Admit, counter, t);
            w = step.word;
            if matches!(step.said, Said::Admitted { .. }) {
                admitted += 1;
            } else {
                let Said::Rejected(r) = step.said else {
                    panic!("a ramp answered {:?}", step.said)
                };
                assert_eq!(
                    r.retry_after.map(|d| t.wrapping_add(d)),
                    Some(first(i + 1)),
                    "I12: the wait of stage {i} ends at the next stage"
                );
            }
            let floor = c * p / one;
            assert!(
                admitted == floor || admitted == floor + 1,
                "I12: stage {i}, share {p}/{one}: {admitted} of {c} admitted"
            );
        }
        let back = first(i + 1).wrapping_sub(1);
        let step = pure::<W>(&x.config, word, Ev::Admit, counter, back);
        if let Said::Rejected(r) = step.said {
            assert_eq!(
                r.retry_after,
                Some(1),
                "I12: one tick before stage {}",
                i + 1
            );
        }
    }
    let end = first(stages);
    assert_eq!(
        status(x, end.wrapping_sub(1)),
        Said::Status(Status::Recovering),
        "before the end"
    );
    assert_eq!(
        status(x, end),
        Said::Status(Status::Closed),
        "the ramp's end reads Closed"
    );
    x.counts.side_checks += 1;
    let (w, _) = x.edge(word, model, Ev::Admit, end);
    let after = decode::<W>(w);
    assert!(
        after.state == State::Closed { failures: 0 } && after.counter == l.next_counter(counter),
        "I12: past the last stage the next admission stores Closed: {after:?}"
    );
    // Consecutive failures of admitted calls reopen at m.
    let State::Ramp {
        failures, trips, ..
    } = decode::<W>(word).state
    else {
        unreachable!()
    };
    let m = cfg.ramp_failure_threshold();
    let mut w = word;
    let mut model = model.clone();
    for j in u64::from(failures) + 1.. {
        x.counts.side_checks += 1;
        let (next, m2) = x.edge(w, &model, Ev::Release(0, Outcome::Failure), since);
        let state = decode::<W>(next).state;
        if j >= m {
            assert!(
                matches!(state, State::Open { trips: k, .. } if k == (trips + 1).min(l.max_trips())),
                "I12: {j} failures in a ramp (threshold {m}) left {state:?}"
            );
            break;
        }
        assert!(
            matches!(state, State::Ramp { .. }),
            "I12: reopened after {j} of {m} failures"
        );
        w = next;
        model = m2;
    }
}
