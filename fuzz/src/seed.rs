//! The inverse of `arbitrary`'s decoding (version 1.x, derive), for the fuzz
//! inputs only: turns a scenario written as a value into the bytes a fuzz
//! target decodes back into that value, so the seed corpus can be written as
//! readable Rust (`gen_seeds.rs`), which checks every seed round-trips.
//!
//! `arbitrary`'s format: integers little-endian; `bool` one byte (low bit);
//! an enum a `u32` `v` choosing variant `(v * count) >> 32`, then its fields;
//! `Option` a `bool` then the value; a collection a `bool` "one more" before
//! each element; the last field of the top-level input takes the rest of the
//! data (for a collection: no terminator needed).

use crate::config::{Base32, Base64, ConfigCase, Edge32, Edge64};
use crate::differential::{Burst, ClockMove, DiffCase, Hint, Jump, Op, Span};
use crate::input::{ConfigSpec, Out, Pick, RampSpec, RecoverySpec};
use crate::word::{ConfigChoice, EventSpec, StateSpec, TicketSpec, WordCase, WordSpec};

/// Writes a value in `arbitrary`'s format.
pub trait Encode {
    /// Appends the bytes that decode to `self`.
    fn encode(&self, out: &mut Vec<u8>);

    /// The bytes that decode to `self` as a whole fuzz input.
    fn to_input(&self) -> Vec<u8> {
        let mut out = Vec::new();
        self.encode(&mut out);
        out
    }
}

/// Variant `index` of an enum with `count` variants.
fn variant(out: &mut Vec<u8>, index: u64, count: u64) {
    let v = ((index << 32).div_ceil(count)) as u32;
    debug_assert_eq!((u64::from(v) * count) >> 32, index);
    out.extend_from_slice(&v.to_le_bytes());
}

macro_rules! encode_int {
    ($($t:ty),*) => {$(
        impl Encode for $t {
            fn encode(&self, out: &mut Vec<u8>) {
                out.extend_from_slice(&self.to_le_bytes());
            }
        }
    )*};
}
encode_int!(u8, u16, u32, u64, i8);

impl Encode for bool {
    fn encode(&self, out: &mut Vec<u8>) {
        out.push(u8::from(*self));
    }
}

impl<T: Encode> Encode for Option<T> {
    fn encode(&self, out: &mut Vec<u8>) {
        self.is_some().encode(out);
        if let Some(v) = self {
            v.encode(out);
        }
    }
}

/// A collection as the last field of the input (takes the rest).
impl<T: Encode> Encode for Vec<T> {
    fn encode(&self, out: &mut Vec<u8>) {
        for item in self {
            true.encode(out);
            item.encode(out);
        }
    }
}

macro_rules! encode_fields {
    ($out:ident; $($f:expr),*) => {{ $($f.encode($out);)* }};
}

/// Variant `index` of `count`, then its fields.
macro_rules! tagged {
    ($out:ident, $index:expr, $count:expr; $($f:expr),*) => {{
        variant($out, $index, $count);
        $($f.encode($out);)*
    }};
}

impl Encode for Out {
    fn encode(&self, out: &mut Vec<u8>) {
        let i = match self {
            Out::Success => 0,
            Out::Failure => 1,
            Out::Ignored => 2,
        };
        variant(out, i, 3);
    }
}

impl Encode for Pick {
    fn encode(&self, out: &mut Vec<u8>) {
        match self {
            Pick::Min => variant(out, 0, 5),
            Pick::Max => variant(out, 1, 5),
            Pick::Low(d) => tagged!(out, 2, 5; d),
            Pick::High(d) => tagged!(out, 3, 5; d),
            Pick::Any(x) => tagged!(out, 4, 5; x),
        }
    }
}

impl Encode for ConfigSpec {
    fn encode(&self, out: &mut Vec<u8>) {
        encode_fields!(out; self.threshold, self.open_for, self.backoff, self.probe_timeout,
            self.horizon, self.abandon, self.jitter.0, self.jitter.1, self.recovery);
    }
}

impl Encode for RecoverySpec {
    fn encode(&self, out: &mut Vec<u8>) {
        self.probes.is_some().encode(out);
        if let Some((n, k)) = self.probes {
            encode_fields!(out; n, k);
        }
        self.ramp.encode(out);
    }
}

impl Encode for RampSpec {
    fn encode(&self, out: &mut Vec<u8>) {
        encode_fields!(out; self.kind, self.step, self.stages);
        for s in self.shares {
            s.encode(out);
        }
    }
}

impl Encode for DiffCase {
    fn encode(&self, out: &mut Vec<u8>) {
        encode_fields!(out; self.config, self.start, self.ops);
    }
}

impl Encode for Op {
    fn encode(&self, out: &mut Vec<u8>) {
        const N: u64 = 14;
        match self {
            Op::Acquire => variant(out, 0, N),
            Op::Release { slot, outcome } => tagged!(out, 1, N; slot, outcome),
            Op::ReleaseForeign { slot, outcome } => {
                tagged!(out, 2, N; slot, outcome)
            }
            Op::Permit => variant(out, 3, N),
            Op::FinishPermit { slot, outcome } => {
                tagged!(out, 4, N; slot, outcome)
            }
            Op::DropPermit { slot } => tagged!(out, 5, N; slot),
            Op::Status => variant(out, 6, N),
            Op::ForceOpen => variant(out, 7, N),
            Op::ForceClose => variant(out, 8, N),
            Op::Clock(step) => tagged!(out, 9, N; step),
            Op::Repeat { times, burst } => tagged!(out, 10, N; times, burst),
            Op::FailureFor { slot, hint } => tagged!(out, 11, N; slot, hint),
            Op::PermitFailureFor { slot, hint } => tagged!(out, 12, N; slot, hint),
            Op::ForceOpenFor(hint) => tagged!(out, 13, N; hint),
        }
    }
}

impl Encode for Hint {
    fn encode(&self, out: &mut Vec<u8>) {
        const N: u64 = 4;
        match self {
            Hint::Ticks(n) => tagged!(out, 0, N; n),
            Hint::Span(j) => tagged!(out, 1, N; j),
            Hint::Top(n) => tagged!(out, 2, N; n),
            Hint::Any(t) => tagged!(out, 3, N; t),
        }
    }
}

impl Encode for ClockMove {
    fn encode(&self, out: &mut Vec<u8>) {
        const N: u64 = 6;
        match self {
            ClockMove::Tick(n) => tagged!(out, 0, N; n),
            ClockMove::Back(n) => tagged!(out, 1, N; n),
            ClockMove::Forward(j) => tagged!(out, 2, N; j),
            ClockMove::Backward(j) => tagged!(out, 3, N; j),
            ClockMove::NearWrap(n) => tagged!(out, 4, N; n),
            ClockMove::Set(t) => tagged!(out, 5, N; t),
        }
    }
}

impl Encode for Jump {
    fn encode(&self, out: &mut Vec<u8>) {
        encode_fields!(out; self.span, self.wide, self.delta);
    }
}

impl Encode for Span {
    fn encode(&self, out: &mut Vec<u8>) {
        let i = match self {
            Span::OpenFor => 0,
            Span::LongestOpen => 1,
            Span::ProbeTimeout => 2,
            Span::MaxDuration => 3,
            Span::TimeField => 4,
        };
        variant(out, i, 5);
    }
}

impl Encode for Burst {
    fn encode(&self, out: &mut Vec<u8>) {
        let i = match self {
            Burst::ForceClose => 0,
            Burst::ForceCycle => 1,
            Burst::IgnoredProbe => 2,
        };
        variant(out, i, 3);
    }
}

impl Encode for WordCase {
    fn encode(&self, out: &mut Vec<u8>) {
        encode_fields!(out; self.wide, self.word, self.config, self.event, self.now);
    }
}

impl Encode for WordSpec {
    fn encode(&self, out: &mut Vec<u8>) {
        match self {
            WordSpec::Raw(bits) => tagged!(out, 0, 3; bits),
            WordSpec::Encoded(s, c) => tagged!(out, 1, 3; s, c),
            WordSpec::Flipped(s, c, b) => tagged!(out, 2, 3; s, c, b),
        }
    }
}

impl Encode for StateSpec {
    fn encode(&self, out: &mut Vec<u8>) {
        match self {
            StateSpec::Closed(f) => tagged!(out, 0, 6; f),
            StateSpec::Open(s, t) => tagged!(out, 1, 6; s, t),
            StateSpec::HalfOpen(t) => tagged!(out, 2, 6; t),
            StateSpec::Probing(s, t) => tagged!(out, 3, 6; s, t),
            StateSpec::ForcedOpen => variant(out, 4, 6),
            StateSpec::OpenUntil(u, t) => tagged!(out, 5, 6; u, t),
        }
    }
}

impl Encode for ConfigChoice {
    fn encode(&self, out: &mut Vec<u8>) {
        match self {
            ConfigChoice::Valid(spec) => tagged!(out, 0, 2; spec),
            ConfigChoice::Any {
                threshold,
                open_for,
                backoff,
                probe_timeout,
                horizon,
            } => tagged!(out, 1, 2; threshold, open_for, backoff, probe_timeout, horizon),
        }
    }
}

impl Encode for EventSpec {
    fn encode(&self, out: &mut Vec<u8>) {
        match self {
            EventSpec::Admit => variant(out, 0, 7),
            EventSpec::Release(t, o) => tagged!(out, 1, 7; t, o),
            EventSpec::ForceOpen => variant(out, 2, 7),
            EventSpec::ForceClose => variant(out, 3, 7),
            EventSpec::Status => variant(out, 4, 7),
            EventSpec::FailureFor(t, d) => tagged!(out, 5, 7; t, d),
            EventSpec::ForceOpenFor(d) => tagged!(out, 6, 7; d),
        }
    }
}

impl Encode for TicketSpec {
    fn encode(&self, out: &mut Vec<u8>) {
        match self {
            TicketSpec::Current => variant(out, 0, 4),
            TicketSpec::Stored => variant(out, 1, 4),
            TicketSpec::Previous => variant(out, 2, 4),
            TicketSpec::Any(c) => tagged!(out, 3, 4; c),
        }
    }
}

impl Encode for ConfigCase {
    fn encode(&self, out: &mut Vec<u8>) {
        encode_fields!(out; self.threshold, self.open_for, self.backoff, self.probe_timeout,
            self.horizon, self.abandon, self.start, self.ops);
    }
}

impl Encode for Edge32 {
    fn encode(&self, out: &mut Vec<u8>) {
        encode_fields!(out; self.base, self.delta);
    }
}

impl Encode for Base32 {
    fn encode(&self, out: &mut Vec<u8>) {
        match self {
            Base32::Zero => variant(out, 0, 5),
            Base32::MaxW32 => variant(out, 1, 5),
            Base32::MaxW64 => variant(out, 2, 5),
            Base32::Top => variant(out, 3, 5),
            Base32::Any(v) => tagged!(out, 4, 5; v),
        }
    }
}

impl Encode for Edge64 {
    fn encode(&self, out: &mut Vec<u8>) {
        encode_fields!(out; self.base, self.delta);
    }
}

impl Encode for Base64 {
    fn encode(&self, out: &mut Vec<u8>) {
        const N: u64 = 12;
        match self {
            Base64::Zero => variant(out, 0, N),
            Base64::MaxW32 => variant(out, 1, N),
            Base64::MaxW64 => variant(out, 2, N),
            Base64::FieldW32 => variant(out, 3, N),
            Base64::FieldW64 => variant(out, 4, N),
            Base64::Top => variant(out, 5, N),
            Base64::Any(v) => tagged!(out, 6, N; v),
            Base64::RingW32 => variant(out, 7, N),
            Base64::HalfRingW32 => variant(out, 8, N),
            Base64::Limit => variant(out, 9, N),
            Base64::HorizonW32 => variant(out, 10, N),
            Base64::HorizonW64 => variant(out, 11, N),
        }
    }
}
