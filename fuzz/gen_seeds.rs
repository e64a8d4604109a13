//! Writes the seed corpus: `fuzz/corpus/<target>/seed-<name>`, one file per
//! scenario below, each checked to decode back into the scenario it encodes.
//!
//! Run from `fuzz/`: `cargo run --example gen_seeds` (each seed also runs
//! through its target's checks). Existing `seed-*` files
//! of the three targets are replaced; other corpus files are left alone.

use std::fmt::Debug;
use std::path::Path;

use arbitrary::{Arbitrary, Unstructured};
use tripword_fuzz::config::{Base32, Base64, ConfigCase, Edge32, Edge64};
use tripword_fuzz::differential::{Burst, ClockMove, DiffCase, Hint, Jump, Op, Span};
use tripword_fuzz::input::{ConfigSpec, Out, Pick, RampSpec, RecoverySpec};
use tripword_fuzz::seed::Encode;
use tripword_fuzz::word::{ConfigChoice, EventSpec, StateSpec, TicketSpec, WordCase, WordSpec};

use Op::*;
use Out::{Failure, Ignored, Success};

/// Threshold 2, open for 100 ticks, probe timeout 50, no backoff, horizon 0
/// (whole ticks on both widths).
const SMALL: ConfigSpec = ConfigSpec {
    threshold: Pick::Low(1),
    open_for: Pick::Low(99),
    backoff: None,
    probe_timeout: Pick::Low(49),
    horizon: Some(Pick::Min),
    abandon: Failure,
    jitter: (0, 0),
    recovery: RecoverySpec::NONE,
};

/// [`SMALL`] with the widths' default horizons: the 32-bit word keeps
/// 128-tick units.
const SMALL_DEFAULT: ConfigSpec = ConfigSpec {
    horizon: None,
    ..SMALL
};

/// [`SMALL`] with the largest horizon each width allows: the largest time
/// shifts (30 and 17).
const SMALL_COARSE: ConfigSpec = ConfigSpec {
    horizon: Some(Pick::Max),
    ..SMALL
};

fn fwd(span: Span, delta: i8) -> Op {
    Clock(ClockMove::Forward(Jump {
        span,
        wide: true,
        delta,
    }))
}

fn release(slot: u8, outcome: Out) -> Op {
    Release { slot, outcome }
}

fn diff(config: ConfigSpec, start: u64, ops: Vec<Op>) -> DiffCase {
    DiffCase { config, start, ops }
}

#[rustfmt::skip]
fn differential() -> Vec<(&'static str, DiffCase)> {
    let one = ConfigSpec {
        threshold: Pick::Min,
        ..SMALL
    };
    let trip1 = [Acquire, release(0, Failure)];
    // Three probes, two to close; and two probes then a linear ramp of
    // three stages, each the shortest.
    let trial = ConfigSpec {
        recovery: RecoverySpec { probes: Some((Pick::Low(2), Some(Pick::Low(1)))), ramp: None },
        ..one
    };
    let ramp = ConfigSpec {
        recovery: RecoverySpec {
            probes: Some((Pick::Low(1), None)),
            ramp: Some(RampSpec { kind: 1, step: Pick::Min, stages: 2, shares: [0; 8] }),
        },
        ..one
    };
    vec![
        (
            "trial-three-probes",
            diff(trial, 0, [&trip1[..], &[
                fwd(Span::OpenFor, 0), Acquire, Acquire, Acquire, Acquire, Status,
                release(0, Failure), release(0, Success), Acquire, release(0, Success), Status,
            ]].concat()),
        ),
        (
            "ramp-linear",
            diff(ramp, 0, [&trip1[..], &[
                fwd(Span::OpenFor, 0), Acquire, Acquire, release(0, Success), release(0, Success),
                Acquire, Acquire, Acquire, Status, Clock(ClockMove::Tick(200)), Acquire, Acquire,
                Clock(ClockMove::Tick(250)), Clock(ClockMove::Tick(250)), Acquire, Status,
            ]].concat()),
        ),
        (
            "trip-probe-close",
            diff(SMALL, 0, vec![
                Acquire, Acquire, release(0, Failure), release(0, Failure), Acquire, Status,
                fwd(Span::OpenFor, -1), Acquire, Clock(ClockMove::Tick(1)), Acquire, Acquire,
                release(0, Success), Status,
            ]),
        ),
        (
            "slow-call-after-trip",
            diff(SMALL, 7, vec![
                Acquire, Acquire, Acquire, release(0, Failure), release(0, Failure),
                release(0, Failure), Status,
            ]),
        ),
        (
            "probe-timeout",
            diff(one, 0, [&trip1[..], &[
                fwd(Span::OpenFor, 0), Permit, fwd(Span::ProbeTimeout, 0), Acquire,
                FinishPermit { slot: 0, outcome: Success }, release(0, Success), Status,
            ]].concat()),
        ),
        (
            "clock-wrap-backoff",
            diff(ConfigSpec { backoff: Some(Pick::Max), ..one }, u64::MAX - 10, [&trip1[..], &[
                Clock(ClockMove::Tick(200)), Acquire, release(0, Failure), Status,
                fwd(Span::OpenFor, 0), Acquire, fwd(Span::OpenFor, 100), Acquire,
                release(0, Success),
            ]].concat()),
        ),
        (
            "clock-backwards",
            diff(one, 1000, [&trip1[..], &[
                Clock(ClockMove::Back(1)), Status, Acquire, Clock(ClockMove::Backward(Jump {
                    span: Span::MaxDuration, wide: false, delta: 0,
                })), Status, release(0, Ignored),
            ]].concat()),
        ),
        (
            "forced-and-foreign",
            diff(SMALL, 0, vec![
                Acquire, Permit, ReleaseForeign { slot: 0, outcome: Failure }, Acquire,
                ForceOpen, ForceOpen, Status, fwd(Span::MaxDuration, 1), Acquire,
                release(0, Success), ForceClose, DropPermit { slot: 0 }, Acquire, Status,
            ]),
        ),
        (
            "counter-wrap-w32",
            diff(SMALL, 0, vec![
                Acquire, Repeat { times: 255, burst: Burst::ForceCycle },
                Repeat { times: 255, burst: Burst::ForceCycle },
                Repeat { times: 2, burst: Burst::ForceCycle }, release(0, Failure), Status,
            ]),
        ),
        (
            "ignored-probes",
            diff(one, 0, [&trip1[..], &[
                fwd(Span::OpenFor, 0), Repeat { times: 40, burst: Burst::IgnoredProbe }, Permit,
                DropPermit { slot: 0 }, Status,
            ]].concat()),
        ),
        (
            "backoff-saturates",
            diff(
                ConfigSpec { open_for: Pick::Min, backoff: Some(Pick::Max), ..one },
                0,
                [&trip1[..], &[fwd(Span::LongestOpen, 0), Acquire, release(0, Failure)].repeat(32)]
                    .concat(),
            ),
        ),
        (
            "time-field-alias",
            diff(one, 0, [&trip1[..], &[
                Clock(ClockMove::Forward(Jump { span: Span::TimeField, wide: false, delta: 0 })),
                Acquire, Status,
            ]].concat()),
        ),
        (
            "units-default-horizon",
            diff(ConfigSpec { threshold: Pick::Min, ..SMALL_DEFAULT }, 1000, [&trip1[..], &[
                Clock(ClockMove::Tick(100)), Acquire, Status,
                Clock(ClockMove::Forward(Jump { span: Span::OpenFor, wide: false, delta: 0 })),
                Clock(ClockMove::Tick(255)), Acquire, Status, Acquire, release(0, Failure),
                Clock(ClockMove::Tick(127)), Acquire, Clock(ClockMove::Tick(255)),
                Clock(ClockMove::Tick(255)), Acquire, release(0, Success), Status,
            ]].concat()),
        ),
        (
            "hinted-trip",
            diff(SMALL, 0, vec![
                Acquire, Acquire, FailureFor { slot: 0, hint: Hint::Ticks(250) },
                FailureFor { slot: 0, hint: Hint::Ticks(250) }, Status, fwd(Span::OpenFor, 0),
                Acquire, Clock(ClockMove::Tick(150)), Acquire, Permit,
                PermitFailureFor { slot: 0, hint: Hint::Span(Jump { span: Span::OpenFor, wide: true, delta: 7 }) },
                Status, fwd(Span::OpenFor, 6), Acquire, fwd(Span::OpenFor, 1), Acquire, release(0, Failure),
                Status,
            ]),
        ),
        (
            "hint-clamp",
            diff(ConfigSpec { threshold: Pick::Min, ..SMALL_DEFAULT }, 1_000, [&trip1[..], &[
                fwd(Span::OpenFor, 0), Permit, PermitFailureFor { slot: 0, hint: Hint::Top(0) },
                Acquire, Clock(ClockMove::Forward(Jump { span: Span::MaxDuration, wide: false, delta: -1 })),
                Acquire, Status, Clock(ClockMove::Tick(1)), Acquire, Status,
                FailureFor { slot: 0, hint: Hint::Span(Jump { span: Span::MaxDuration, wide: true, delta: 0 }) },
                Status,
            ]].concat()),
        ),
        (
            "force-open-for",
            diff(SMALL, 5, vec![
                Acquire, ForceOpenFor(Hint::Ticks(30)), release(0, Success), Acquire,
                Clock(ClockMove::Tick(29)), Acquire, Clock(ClockMove::Tick(1)), Acquire,
                ForceOpenFor(Hint::Ticks(0)), release(0, Failure), Acquire, ForceOpen,
                ForceOpenFor(Hint::Any(1 << 40)), Status, Clock(ClockMove::Back(3)), Acquire,
                ForceClose, ForceOpenFor(Hint::Span(Jump { span: Span::TimeField, wide: false, delta: 0 })),
                Acquire, Status,
            ]),
        ),
        (
            "units-coarse",
            diff(ConfigSpec { threshold: Pick::Min, ..SMALL_COARSE }, u64::MAX - 5, [&trip1[..], &[
                Status, Clock(ClockMove::Set(1 << 40)), Acquire, Status,
                Clock(ClockMove::Forward(Jump { span: Span::TimeField, wide: true, delta: 0 })),
                Acquire, Clock(ClockMove::Forward(Jump { span: Span::MaxDuration, wide: false, delta: 1 })),
                Acquire, release(0, Failure), Status,
            ]].concat()),
        ),
    ]
}

fn word_case(wide: bool, word: WordSpec, event: EventSpec, now: u64) -> WordCase {
    WordCase {
        wide,
        word,
        config: ConfigChoice::Valid(SMALL),
        event,
        now,
    }
}

#[rustfmt::skip]
fn word() -> Vec<(&'static str, WordCase)> {
    use EventSpec::*;
    use StateSpec as S;
    use WordSpec::{Encoded, Flipped, Raw};
    let current = |o| Release(TicketSpec::Current, o);
    vec![
        ("zero-admit", word_case(true, Raw(0), Admit, 0)),
        ("closed-trips", word_case(false, Encoded(S::Closed(1), 1023), current(Failure), 5)),
        ("open-elapsed", word_case(true, Encoded(S::Open(10, 1), 7), Admit, 110)),
        ("open-not-yet", word_case(false, Encoded(S::Open(10, 3), 7), Status, 109)),
        ("probe-in-time", word_case(true, Encoded(S::Probing(5, 2), 9), current(Success), 54)),
        ("probe-timed-out", word_case(false, Encoded(S::Probing(5, 2), 9), current(Failure), 55)),
        ("half-open-admit", word_case(true, Encoded(S::HalfOpen(4), 3), Admit, 1 << 40)),
        ("forced-status", word_case(false, Encoded(S::ForcedOpen, 2), Status, 0)),
        ("stale-release", word_case(true, Encoded(S::Closed(0), 4), Release(TicketSpec::Previous, Failure), 0)),
        ("unknown-tag", word_case(true, Raw(0x2e), Admit, 0)),
        ("tag-5-is-open-until", word_case(true, Raw(0x2d), Admit, 0)),
        ("open-until-before", word_case(false, Encoded(S::OpenUntil(300, 2), 7), Admit, 299)),
        ("open-until-reached", word_case(true, Encoded(S::OpenUntil(300, 2), 7), Admit, 300)),
        ("open-until-status", word_case(false, Encoded(S::OpenUntil(300, 2), 7), Status, 300)),
        ("open-until-clock-back", word_case(true, Encoded(S::OpenUntil(300, 2), 7), Admit, 1 << 60)),
        ("open-until-stale", word_case(false, Encoded(S::OpenUntil(300, 2), 7), FailureFor(TicketSpec::Current, 5), 0)),
        ("failure-for-trips", word_case(true, Encoded(S::Closed(1), 4), FailureFor(TicketSpec::Current, 500), 9)),
        ("failure-for-counts", word_case(false, Encoded(S::Closed(0), 4), FailureFor(TicketSpec::Current, 500), 9)),
        ("failure-for-stale", word_case(true, Encoded(S::Closed(1), 4), FailureFor(TicketSpec::Previous, 500), 9)),
        ("failure-for-probe", word_case(false, Encoded(S::Probing(5, 15), 9), FailureFor(TicketSpec::Current, u64::MAX), 54)),
        ("failure-for-late-probe", word_case(true, Encoded(S::Probing(5, 2), 9), FailureFor(TicketSpec::Current, 7), 55)),
        ("force-open-for-closed", word_case(false, Encoded(S::Closed(1), 3), ForceOpenFor(0), 77)),
        ("force-open-for-elapsed", word_case(true, Encoded(S::Open(10, 3), 3), ForceOpenFor(40), 110)),
        ("force-open-for-forced", word_case(false, Encoded(S::ForcedOpen, 3), ForceOpenFor(u64::MAX), 1)),
        ("unknown-tag-w32", word_case(false, Raw(u64::MAX), current(Failure), 0)),
        ("stray-bits", word_case(true, Flipped(S::HalfOpen(1), 5, 63), Release(TicketSpec::Stored, Success), 0)),
        ("over-threshold", word_case(false, Encoded(S::Closed(2), 1023), Admit, 0)),
        ("force-close-corrupt", word_case(true, Raw(6), ForceClose, 0)),
        ("open-wait", word_case(false, Encoded(S::Open(10, 1), 7), Admit, 60)),
        ("probing-wait", word_case(true, Encoded(S::Probing(5, 2), 9), Admit, 20)),
        ("forced-admit", word_case(true, Encoded(S::ForcedOpen, 2), Admit, 0)),
        ("open-status-elapsed", word_case(true, Encoded(S::Open(10, 1), 7), Status, 110)),
        ("corrupt-status", word_case(false, Raw(u64::MAX), Status, 0)),
        (
            "refused-config",
            WordCase {
                wide: true,
                word: Encoded(S::Open(0, 31), 0),
                config: ConfigChoice::Any {
                    threshold: 0, open_for: 0, backoff: Some(0), probe_timeout: u64::MAX, horizon: None,
                },
                event: Admit,
                now: 0,
            },
        ),
        (
            "units-w32-default",
            WordCase {
                wide: false,
                word: Encoded(S::Open(3, 2), 11),
                config: ConfigChoice::Valid(SMALL_DEFAULT),
                event: Admit,
                now: 5 << 7 | 99,
            },
        ),
        (
            "units-coarse-w64",
            WordCase {
                wide: true,
                word: Encoded(S::Probing(1, 1), 5),
                config: ConfigChoice::Any {
                    threshold: 3, open_for: 1000, backoff: Some(8000), probe_timeout: 500, horizon: Some(1 << 63),
                },
                event: Release(TicketSpec::Current, Success),
                now: 1 << 30,
            },
        ),
    ]
}

fn edge32(base: Base32, delta: i8) -> Edge32 {
    Edge32 { base, delta }
}

fn edge64(base: Base64, delta: i8) -> Edge64 {
    Edge64 { base, delta }
}

#[rustfmt::skip]
fn config() -> Vec<(&'static str, ConfigCase)> {
    let trip_and_probe = vec![
        Acquire, release(0, Failure), fwd(Span::OpenFor, -1), Acquire, fwd(Span::OpenFor, 0),
        Acquire, fwd(Span::ProbeTimeout, 0), Status, Acquire, release(0, Failure),
        fwd(Span::LongestOpen, 0), Status,
    ];
    let case = |threshold, open_for, backoff, probe_timeout, ops: &Vec<Op>| ConfigCase {
        threshold,
        open_for,
        backoff,
        probe_timeout,
        horizon: None,
        abandon: Ignored,
        start: u64::MAX - 3,
        ops: ops.clone(),
    };
    let with_horizon = |horizon, c: ConfigCase| ConfigCase { horizon: Some(horizon), ..c };
    let one = edge32(Base32::Zero, 1);
    let tick = edge64(Base64::Zero, 1);
    vec![
        ("all-minimal", case(one, tick, Some(tick), tick, &trip_and_probe)),
        (
            "max-w32",
            case(
                edge32(Base32::MaxW32, 0),
                edge64(Base64::MaxW32, 0),
                Some(edge64(Base64::MaxW32, 0)),
                edge64(Base64::MaxW32, 0),
                &trip_and_probe,
            ),
        ),
        (
            "max-w64",
            case(
                edge32(Base32::Zero, 1),
                edge64(Base64::MaxW64, 0),
                None,
                edge64(Base64::MaxW64, 0),
                &trip_and_probe,
            ),
        ),
        ("threshold-too-big", case(edge32(Base32::MaxW64, 1), tick, None, tick, &vec![])),
        ("zero-threshold", case(edge32(Base32::Zero, 0), tick, None, tick, &vec![])),
        (
            "cap-below-open",
            case(one, edge64(Base64::MaxW32, 0), Some(edge64(Base64::MaxW32, -1)), tick, &vec![]),
        ),
        ("duration-past-max", case(one, edge64(Base64::MaxW32, 1), None, edge64(Base64::FieldW64, 0), &vec![])),
        ("top-values", case(edge32(Base32::Top, 0), edge64(Base64::Top, 0), Some(edge64(Base64::Top, 0)), edge64(Base64::Top, 0), &vec![])),
        ("horizon-zero", with_horizon(edge64(Base64::Zero, 0), case(one, edge64(Base64::MaxW32, 0), None, tick, &trip_and_probe))),
        ("horizon-top", with_horizon(edge64(Base64::Top, 0), case(one, tick, None, tick, &vec![]))),
        ("horizon-ring-w32", with_horizon(edge64(Base64::RingW32, -100), case(one, tick, None, tick, &trip_and_probe))),
        ("longest-w32", case(one, edge64(Base64::HalfRingW32, -1), None, tick, &trip_and_probe)),
        ("limit", case(one, edge64(Base64::Limit, 0), None, edge64(Base64::Limit, 0), &trip_and_probe)),
        ("past-limit", case(one, edge64(Base64::Limit, 1), None, tick, &vec![])),
        ("cap-unreachable", case(one, tick, Some(edge64(Base64::FieldW32, 0)), tick, &vec![])),
        ("default-horizons", with_horizon(edge64(Base64::HorizonW64, 0), case(one, edge64(Base64::HorizonW32, 0), None, tick, &trip_and_probe))),
    ]
}

fn write<T>(dir: &Path, seeds: Vec<(&str, T)>, run: fn(&T))
where
    T: Encode + Debug + PartialEq + for<'a> Arbitrary<'a>,
{
    std::fs::create_dir_all(dir).expect("create corpus dir");
    for entry in std::fs::read_dir(dir).expect("read corpus dir") {
        let path = entry.expect("corpus entry").path();
        if path
            .file_name()
            .is_some_and(|n| n.to_string_lossy().starts_with("seed-"))
        {
            std::fs::remove_file(&path).expect("remove old seed");
        }
    }
    for (name, case) in seeds {
        let bytes = case.to_input();
        let back = T::arbitrary_take_rest(Unstructured::new(&bytes)).expect("decodes");
        assert_eq!(back, case, "seed {name} does not round-trip");
        // The seed itself passes the target's checks.
        run(&case);
        let path = dir.join(format!("seed-{name}"));
        std::fs::write(&path, &bytes).expect("write seed");
        println!("{} ({} bytes)", path.display(), bytes.len());
    }
}

fn main() {
    let corpus = Path::new(env!("CARGO_MANIFEST_DIR")).join("corpus");
    write(&corpus.join("differential"), differential(), DiffCase::run);
    write(&corpus.join("word"), word(), WordCase::run);
    write(&corpus.join("config"), config(), ConfigCase::run);
}
