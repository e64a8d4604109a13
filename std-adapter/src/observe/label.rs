//! The names of states, outcomes and causes, as both observers write them
//! (lower snake case, as OpenTelemetry writes attribute values).

use tripword::{Cause, Outcome, Status};

/// `closed`, `open`, `half_open`, `probing`, `recovering`.
///
/// ```
/// assert_eq!(tripword_std::observe::status_name(tripword::Status::HalfOpen), "half_open");
/// ```
pub const fn status_name(status: Status) -> &'static str {
    match status {
        Status::Closed => "closed",
        Status::Open => "open",
        Status::HalfOpen => "half_open",
        Status::Probing => "probing",
        Status::Recovering => "recovering",
    }
}

/// `success`, `failure`, `ignored`.
///
/// ```
/// assert_eq!(tripword_std::observe::outcome_name(tripword::Outcome::Ignored), "ignored");
/// ```
pub const fn outcome_name(outcome: Outcome) -> &'static str {
    match outcome {
        Outcome::Success => "success",
        Outcome::Failure => "failure",
        Outcome::Ignored => "ignored",
    }
}

/// `open`, `probing`, `forced_open`, `ramp`.
///
/// ```
/// assert_eq!(tripword_std::observe::cause_name(tripword::Cause::ForcedOpen), "forced_open");
/// ```
pub const fn cause_name(cause: Cause) -> &'static str {
    match cause {
        Cause::Open => "open",
        Cause::Probing => "probing",
        Cause::ForcedOpen => "forced_open",
        Cause::Ramp => "ramp",
    }
}
