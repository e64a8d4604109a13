//! How a call ended, as the breaker counts it.

/// The outcome of an admitted call, reported with
/// [`Breaker::release`](crate::Breaker::release) or a
/// [`Permit`](crate::Permit).
///
/// Only failures that say the dependency is unhealthy (timeouts, connection
/// errors, 5xx) should be [`Failure`](Outcome::Failure); the caller's own
/// mistakes (a 404, a validation error) are [`Ignored`](Outcome::Ignored).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Outcome {
    /// The dependency answered well: resets the failure run; closes a probing
    /// breaker.
    Success,
    /// The dependency is unhealthy: counts towards a trip; reopens a probing
    /// breaker.
    Failure,
    /// Says nothing about the dependency: changes no count; a probe that ends
    /// `Ignored` returns the breaker to half-open so the next caller probes.
    Ignored,
}
