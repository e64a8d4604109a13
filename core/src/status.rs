//! The four states a user sees.

/// What [`Breaker::status`](crate::Breaker::status) reports.
///
/// The operator-held open of `force_open` reads as [`Status::Open`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Status {
    /// Calls are admitted.
    Closed,
    /// Calls are rejected at once.
    Open,
    /// The next caller becomes the probe.
    HalfOpen,
    /// A probe is running; other calls are rejected.
    Probing,
}

impl core::fmt::Display for Status {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.write_str(match self {
            Status::Closed => "closed",
            Status::Open => "open",
            Status::HalfOpen => "half-open",
            Status::Probing => "probing",
        })
    }
}
