//! What an instance reports: transitions it made (in the shared word or in
//! its local breaker), corrupt words it repaired, and its mode changes.

use tripword::Transition;

/// Where a transition was made.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Scope {
    /// In the shared word under the Redis key, by this instance's
    /// compare-and-set: reported by exactly one instance of the fleet (spec
    /// I7 across processes).
    Shared,
    /// In this instance's local breaker, used while Redis cannot be reached
    /// and, with a [`quorum`](crate::Builder::quorum), as the instance's own
    /// view of its failures while the shared word is `Closed`.
    Local,
}

/// Whether an instance uses the shared word.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Mode {
    /// Decisions rest on the shared word: admissions in `Closed` on the
    /// local mirror, everything else in Redis.
    Shared,
    /// Redis did not answer within the operation timeout: decisions rest on
    /// the instance's local breaker until the shared word can be read again
    /// (fail-local, see `docs/distributed.md`).
    Local,
}

impl core::fmt::Display for Mode {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.write_str(match self {
            Mode::Shared => "shared",
            Mode::Local => "local",
        })
    }
}

/// Receives an instance's reports. Called on the thread that made the
/// change (a caller, or the instance's watcher thread), after it was made,
/// with no lock held. Every method does nothing by default.
pub trait Observer: Send + Sync + 'static {
    /// A state change this instance made.
    fn on_transition(&self, transition: Transition, scope: Scope) {
        let _ = (transition, scope);
    }

    /// The shared word was `raw`, not a valid state (spec I8): this instance
    /// replaced it by `Closed` with counter `counter`.
    fn on_corrupt_word(&self, raw: u64, counter: u32) {
        let _ = (raw, counter);
    }

    /// The instance switched to `mode`.
    fn on_mode(&self, mode: Mode) {
        let _ = mode;
    }

    /// The fleet's config for this key (its fingerprint `fleet`, stored
    /// beside the word by the first instance to join) is not this
    /// instance's (`ours`): the instance stays on its local breaker and
    /// never writes the shared word, until the two agree (see
    /// [`RedisBreaker::config_mismatch`](crate::RedisBreaker::config_mismatch)).
    /// Reported once per fingerprint seen.
    fn on_config_mismatch(&self, ours: &str, fleet: &str) {
        let _ = (ours, fleet);
    }
}

impl Observer for () {}

/// An [`Observer`] from a closure over transitions.
#[derive(Clone, Copy, Debug, Default)]
pub struct OnTransition<F>(pub F);

impl<F: Fn(Transition, Scope) + Send + Sync + 'static> Observer for OnTransition<F> {
    fn on_transition(&self, transition: Transition, scope: Scope) {
        (self.0)(transition, scope)
    }
}

/// A `tripword` [`Observer`](tripword::Observer) (`tripword-std`'s tracing
/// and metrics observers, or one of your own) as an instance's
/// [`Observer`]: it gets every transition the instance makes, in the shared
/// word and in its local breaker, and every corrupt word it repairs. (A
/// fleet breaker's closed path is one load with no observer call: the
/// per-call events, `on_admitted` and the rest, come from the call layer
/// that runs the calls, not from here.)
///
/// ```
/// use tripword::{Status, Transition};
/// use tripword_redis::Transitions;
///
/// struct Print;
/// impl tripword::Observer for Print {
///     fn on_transition(&self, t: Transition) {
///         println!("{:?} -> {:?}", t.from, t.to);
///     }
/// }
/// let observer = Transitions(Print);
/// # let _ = (observer, Status::Open);
/// ```
#[derive(Clone, Copy, Debug, Default)]
pub struct Transitions<O>(pub O);

impl<O: tripword::Observer + Send + Sync + 'static> Observer for Transitions<O> {
    fn on_transition(&self, transition: Transition, _scope: Scope) {
        self.0.on_transition(transition);
    }

    fn on_corrupt_word(&self, raw: u64, counter: u32) {
        self.0.on_corrupt_word(raw, counter);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn modes_print() {
        assert_eq!(Mode::Shared.to_string(), "shared");
        assert_eq!(Mode::Local.to_string(), "local");
    }
}
