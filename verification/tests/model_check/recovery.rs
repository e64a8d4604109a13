//! The recovery options drawn for the model check (`docs/spec.md`,
//! "Recovery: several probes and the ramp"): a quarter of the sequences
//! with several probes (`2..=max`, `probes_to_close` unset or `1..=n`), a
//! quarter with a ramp (seatbelt's progressive stages, a linear ramp of
//! 1–8 stages, or 1–8 rising shares of any size), half of those after
//! several probes too; the rest with neither. Stages last one to three of
//! the ramp's units (its time is `share_bits + ramp_failure_bits` bits
//! coarser than the config's), so that a sequence's clock moves (to the
//! next stage's first tick, one before and one after: `edge`) reach every
//! stage and the ramp's end.

use proptest::prelude::*;
use tripword::{Config, Ramp, Word};
use tripword_verification::model::{Model, ModelState};

/// The recovery options of one drawn config.
#[derive(Clone, Debug)]
pub struct Drawn {
    probes: Option<(u8, Option<u8>)>,
    ramp: Option<RampDraw>,
}

#[derive(Clone, Debug)]
enum RampDraw {
    Progressive {
        units: u64,
        off: u64,
    },
    Linear {
        units: u64,
        off: u64,
        stages: u8,
    },
    Stages {
        units: u64,
        off: u64,
        shares: Vec<u16>,
    },
}

fn probes<W: Word>() -> BoxedStrategy<(u8, Option<u8>)> {
    let max = ((1u32 << W::LAYOUT.probe_bits) - 1) as u8;
    (2..=max)
        .prop_flat_map(|n| (Just(n), proptest::option::of(1..=n)))
        .boxed()
}

fn ramp() -> BoxedStrategy<RampDraw> {
    let units = 1u64..=3;
    let off = prop_oneof![Just(0u64), Just(1u64), Just(u64::MAX)];
    prop_oneof![
        (units.clone(), off.clone()).prop_map(|(units, off)| RampDraw::Progressive { units, off }),
        (units.clone(), off.clone(), 1u8..=8).prop_map(|(units, off, stages)| RampDraw::Linear {
            units,
            off,
            stages
        }),
        (
            units,
            off,
            proptest::collection::btree_set(1u16..=9_999, 1..=8)
        )
            .prop_map(|(units, off, shares)| RampDraw::Stages {
                units,
                off,
                shares: shares.into_iter().collect(),
            }),
    ]
    .boxed()
}

/// Half with neither option, a quarter with several probes, a quarter
/// with a ramp (half of them after several probes).
pub fn strategy<W: Word>() -> BoxedStrategy<Drawn> {
    prop_oneof![
        2 => Just(Drawn { probes: None, ramp: None }),
        1 => probes::<W>().prop_map(|p| Drawn { probes: Some(p), ramp: None }),
        1 => (proptest::option::of(probes::<W>()), ramp())
            .prop_map(|(probes, r)| Drawn { probes, ramp: Some(r) }),
    ]
    .boxed()
}

/// `c` with the drawn options; a stage of `units` of the ramp's units at
/// the config's shift, less `off` ticks (0, 1, or half a unit).
pub fn apply<W: Word>(c: Config, d: &Drawn) -> Config {
    let mut c = c;
    if let Some((n, k)) = d.probes {
        c = c.probes(n);
        if let Some(k) = k {
            c = c.probes_to_close(k);
        }
    }
    let Some(r) = &d.ramp else { return c };
    let Ok(valid) = c.check::<W>() else { return c };
    let l = W::LAYOUT;
    let u = valid.time_shift() + l.share_bits + l.ramp_failure_bits;
    let step = |units: u64, off: u64| {
        let off = if off == u64::MAX {
            1u64 << (u - 1)
        } else {
            off
        };
        (units << u) - off
    };
    c.ramp(match r {
        RampDraw::Progressive { units, off } => Ramp::progressive(step(*units, *off)),
        RampDraw::Linear { units, off, stages } => {
            Ramp::linear(step(*units, *off) * u64::from(*stages), *stages)
        }
        RampDraw::Stages { units, off, shares } => Ramp::stages(step(*units, *off), shares),
    })
}

/// The next reading at or after `now` where a recovery state's answer can
/// change: a trial's timeout, or the ramp's next stage (its end included).
pub fn edge(model: &Model, now: u64) -> Option<u64> {
    if let Some(at) = model.trial_timeout(now) {
        return Some(at);
    }
    let ModelState::Ramp { since, .. } = model.state() else {
        return None;
    };
    model
        .config()
        .ramp_stage(since, now)
        .map(|(_, _, next)| next)
}
