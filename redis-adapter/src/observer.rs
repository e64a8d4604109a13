//! What an instance reports: transitions it made (in the shared word or in
//! its local breaker), corrupt words it repaired, its mode changes and a
//! config mismatch, to one observer: the core's [`tripword::Observer`],
//! with the fleet's own reports in [`FleetObserver`].

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
    /// (fail-local, see `docs/distributed-proofs.md`, "Faults").
    Local,
}

impl Mode {
    /// `shared`, `local`: as it prints, and as the `tracing` and `metrics`
    /// reports write it.
    pub const fn name(self) -> &'static str {
        match self {
            Mode::Shared => "shared",
            Mode::Local => "local",
        }
    }
}

impl core::fmt::Display for Mode {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.write_str(self.name())
    }
}

/// What a fleet breaker reports beyond the core's [`tripword::Observer`]:
/// the scope of each transition, its mode changes, a config mismatch.
///
/// A fleet breaker takes any observer of the core that implements this
/// trait; every method has a default, so `impl FleetObserver for Mine {}`
/// is all a core observer needs. The reports:
///
/// | report | method | default |
/// |---|---|---|
/// | a transition, in the shared word or the local breaker | [`on_scoped_transition`](Self::on_scoped_transition) | the core's [`on_transition`](tripword::Observer::on_transition) |
/// | a corrupt word repaired (spec I8) | the core's [`on_corrupt_word`](tripword::Observer::on_corrupt_word) | nothing |
/// | a switch to the local breaker and back | [`on_mode`](Self::on_mode) | nothing |
/// | the fleet uses another config for the key | [`on_config_mismatch`](Self::on_config_mismatch) | nothing |
///
/// Of the core's per-call hooks, a fleet breaker calls
/// [`on_rejected`](tripword::Observer::on_rejected) for every call it does
/// not admit and [`on_stale`](tripword::Observer::on_stale) for every stale
/// release (in the sync and the async form; neither ever takes the closed
/// path), but not `on_admitted` and `on_recorded`: its closed path is one
/// load with no observer call. So `MetricsObserver` counts rejections and
/// stale releases, not its `calls`; `TracingObserver` writes `call
/// rejected` and `stale release ignored`.
///
/// It is implemented for `()`, for pairs (both, `.0` first), for
/// [`tripword::OnTransition`], for `&'static` references, for
/// [`Transitions`] (any core observer, fleet reports dropped), and, with
/// the features `tracing` and `metrics`, for `tripword-std`'s
/// `TracingObserver` and `MetricsObserver`, which then report mode changes
/// and config mismatches too (see their impls below).
///
/// Called on the thread that made the change (a caller, or the watcher
/// thread), after it was made, with no lock held.
///
/// ```
/// use std::sync::atomic::{AtomicUsize, Ordering};
/// use tripword::Transition;
/// use tripword_redis::{FleetObserver, Mode, Scope};
///
/// #[derive(Default)]
/// struct Count {
///     shared_trips: AtomicUsize,
///     fallbacks: AtomicUsize,
/// }
/// impl tripword::Observer for Count {
///     fn on_transition(&self, _: Transition) {}
/// }
/// impl FleetObserver for Count {
///     fn on_scoped_transition(&self, t: Transition, scope: Scope) {
///         if scope == Scope::Shared && t.to == tripword::Status::Open {
///             self.shared_trips.fetch_add(1, Ordering::Relaxed);
///         }
///     }
///     fn on_mode(&self, mode: Mode) {
///         if mode == Mode::Local {
///             self.fallbacks.fetch_add(1, Ordering::Relaxed);
///         }
///     }
/// }
/// ```
#[diagnostic::on_unimplemented(
    message = "`{Self}` does not take a fleet breaker's reports",
    label = "not a `FleetObserver`",
    note = "an observer of the core takes `impl tripword_redis::FleetObserver for {Self} {{}}`; one of another crate, `tripword_redis::Transitions(observer)`",
    note = "tripword-std's `TracingObserver` and `MetricsObserver` need the features `tracing` and `metrics` of tripword-redis"
)]
pub trait FleetObserver: tripword::Observer + Send + Sync + 'static {
    /// A state change this instance made, in the shared word
    /// ([`Scope::Shared`]: reported by exactly one instance of the fleet,
    /// spec I7 across processes) or in its local breaker
    /// ([`Scope::Local`]). By default the core's
    /// [`on_transition`](tripword::Observer::on_transition), whatever the
    /// scope.
    fn on_scoped_transition(&self, transition: Transition, scope: Scope) {
        let _ = scope;
        self.on_transition(transition);
    }

    /// The instance switched to `mode`. Does nothing by default.
    fn on_mode(&self, mode: Mode) {
        let _ = mode;
    }

    /// The fleet's config for this key (its fingerprint `fleet`, stored
    /// beside the word by the first instance to join, or published) is not
    /// this instance's (`ours`): the instance follows the shared word (it
    /// rejects while the word is not `Closed`, its local breaker decides
    /// otherwise) and never writes it, until the two agree (see
    /// [`RedisBreaker::config_mismatch`](crate::RedisBreaker::config_mismatch)).
    /// Reported once per fingerprint seen. Does nothing by default.
    fn on_config_mismatch(&self, ours: &str, fleet: &str) {
        let _ = (ours, fleet);
    }
}

impl FleetObserver for () {}

impl<F: Fn(Transition) + Send + Sync + 'static> FleetObserver for tripword::OnTransition<F> {}

impl<O: FleetObserver + ?Sized> FleetObserver for &'static O {
    fn on_scoped_transition(&self, transition: Transition, scope: Scope) {
        (**self).on_scoped_transition(transition, scope);
    }
    fn on_mode(&self, mode: Mode) {
        (**self).on_mode(mode);
    }
    fn on_config_mismatch(&self, ours: &str, fleet: &str) {
        (**self).on_config_mismatch(ours, fleet);
    }
}

/// Both observers, `.0` first: the fleet's reports reach each of them as
/// it takes them (`(TracingObserver, MetricsObserver)`, say).
impl<A: FleetObserver, B: FleetObserver> FleetObserver for (A, B) {
    fn on_scoped_transition(&self, transition: Transition, scope: Scope) {
        self.0.on_scoped_transition(transition, scope);
        self.1.on_scoped_transition(transition, scope);
    }
    fn on_mode(&self, mode: Mode) {
        self.0.on_mode(mode);
        self.1.on_mode(mode);
    }
    fn on_config_mismatch(&self, ours: &str, fleet: &str) {
        self.0.on_config_mismatch(ours, fleet);
        self.1.on_config_mismatch(ours, fleet);
    }
}

/// Any core [`Observer`](tripword::Observer) as a [`FleetObserver`] that
/// drops the fleet's own reports: it gets every transition the instance
/// makes, in the shared word and in its local breaker, and every corrupt
/// word it repairs. For an observer of another crate (one of your own
/// takes `impl FleetObserver for Mine {}`).
///
/// ```
/// use tripword::Transition;
/// use tripword_redis::{Fleet, Transitions};
///
/// struct Print;
/// impl tripword::Observer for Print {
///     fn on_transition(&self, t: Transition) {
///         println!("{t}");
///     }
/// }
/// let fleet = Fleet::builder("redis://127.0.0.1:6379/").observer(Transitions(Print));
/// # let _ = fleet;
/// ```
#[derive(Clone, Copy, Debug, Default)]
pub struct Transitions<O>(pub O);

impl<O: tripword::Observer> tripword::Observer for Transitions<O> {
    fn on_transition(&self, transition: Transition) {
        self.0.on_transition(transition);
    }
    fn on_corrupt_word(&self, raw: u64, counter: u32) {
        self.0.on_corrupt_word(raw, counter);
    }
    #[inline]
    fn on_admitted(&self, ticket: &tripword::Ticket) {
        self.0.on_admitted(ticket);
    }
    #[inline]
    fn on_rejected(&self, rejected: tripword::Rejected) {
        self.0.on_rejected(rejected);
    }
    #[inline]
    fn on_recorded(&self, outcome: tripword::Outcome) {
        self.0.on_recorded(outcome);
    }
    #[inline]
    fn on_stale(&self, outcome: tripword::Outcome) {
        self.0.on_stale(outcome);
    }
}

impl<O: tripword::Observer + Send + Sync + 'static> FleetObserver for Transitions<O> {}

/// `tracing` events for the fleet's reports, beside the transition events
/// the observer writes itself (target `tripword`, field `breaker`: the
/// observer's name):
///
/// | what | level | message | fields |
/// |---|---|---|---|
/// | a switch to the local breaker | `WARN` | `fleet breaker on its local breaker` | `breaker`, `mode` |
/// | a switch back to the shared word | `INFO` | `fleet breaker on the shared word` | `breaker`, `mode` |
/// | a config mismatch | `ERROR` | `fleet config is not this instance's` | `breaker`, `ours`, `fleet` |
///
/// Transitions are the observer's own events, for both scopes.
#[cfg(feature = "tracing")]
#[cfg_attr(docsrs, doc(cfg(feature = "tracing")))]
impl FleetObserver for tripword_std::observe::TracingObserver {
    fn on_mode(&self, mode: Mode) {
        match mode {
            Mode::Local => tracing::warn!(
                target: "tripword",
                breaker = self.name(),
                mode = mode.name(),
                "fleet breaker on its local breaker"
            ),
            Mode::Shared => tracing::info!(
                target: "tripword",
                breaker = self.name(),
                mode = mode.name(),
                "fleet breaker on the shared word"
            ),
        }
    }

    fn on_config_mismatch(&self, ours: &str, fleet: &str) {
        tracing::error!(
            target: "tripword",
            breaker = self.name(),
            ours,
            fleet,
            "fleet config is not this instance's"
        );
    }
}

/// The metric and label names of the fleet's reports, as the
/// `MetricsObserver` writes them (feature `metrics`), in its namespace and
/// with its label for the breaker's name
/// (`tripword_std::observe::names::BREAKER`).
#[cfg(feature = "metrics")]
#[cfg_attr(docsrs, doc(cfg(feature = "metrics")))]
pub mod metric_names {
    /// Counter (unit `{change}`): switches of mode, by the [`MODE`]
    /// entered.
    pub const MODE_CHANGES: &str = "tripword.fleet.mode_changes";
    /// Gauge (unit `1`): 1 while the instance is on its local breaker
    /// ([`Mode::Local`](crate::Mode::Local)), 0 on the shared word; set at
    /// each switch.
    pub const LOCAL: &str = "tripword.fleet.local";
    /// Counter (unit `{mismatch}`): config fingerprints of the fleet found
    /// not to be this instance's.
    pub const CONFIG_MISMATCHES: &str = "tripword.fleet.config_mismatches";
    /// Gauge (unit `1`): 1 while the instance follows the fleet's word
    /// because its config is not the fleet's, 0 once they agree again. Set
    /// by the breaker itself, whatever its observer, once per mismatch (see
    /// `RedisBreaker::config_mismatch`).
    pub const FOLLOWING: &str = "tripword.fleet.following";
    /// Label of [`MODE_CHANGES`]: `shared`, `local`.
    pub const MODE: &str = "tripword.fleet.mode";
}

/// Counters and a gauge for the fleet's reports, beside the observer's own
/// metrics, labelled with its name (the names: [`metric_names`]). Transitions are
/// the observer's own metrics, for both scopes.
#[cfg(feature = "metrics")]
#[cfg_attr(docsrs, doc(cfg(feature = "metrics")))]
impl FleetObserver for tripword_std::observe::MetricsObserver {
    fn on_mode(&self, mode: Mode) {
        use tripword_std::observe::names::BREAKER;
        let breaker = self.name().to_owned();
        metrics::counter!(metric_names::MODE_CHANGES, BREAKER => breaker.clone(), metric_names::MODE => mode.name())
            .increment(1);
        metrics::gauge!(metric_names::LOCAL, BREAKER => breaker).set(match mode {
            Mode::Local => 1.0,
            Mode::Shared => 0.0,
        });
    }

    fn on_config_mismatch(&self, _ours: &str, _fleet: &str) {
        use tripword_std::observe::names::BREAKER;
        metrics::counter!(metric_names::CONFIG_MISMATCHES, BREAKER => self.name().to_owned())
            .increment(1);
    }
}

/// A lookup that found a fleet (of `capacity` keys) full of breakers
/// holding state; `first`: the first since a new key last found room.
/// Reported as `tripword-std`'s registry reports its own: the counter
/// `tripword.registry.overflows`, labelled `tripword.registry.name="fleet"`
/// (feature `metrics`), and a warning once per crossing (feature
/// `tracing`). Called without the fleet's map lock.
// `capacity` is the warning's alone, `first` both reports'.
#[cfg_attr(not(feature = "tracing"), allow(unused_variables))]
pub(crate) fn report_overflow(capacity: usize, first: bool) {
    #[cfg(feature = "metrics")]
    {
        use tripword_std::observe::names;
        if first {
            metrics::describe_counter!(
                names::REGISTRY_OVERFLOWS,
                metrics::Unit::Count,
                "Lookups of a new key that found a registry full of breakers holding state, and got a breaker not kept ({lookup})."
            );
        }
        metrics::counter!(names::REGISTRY_OVERFLOWS, names::REGISTRY => "fleet").increment(1);
    }
    #[cfg(feature = "tracing")]
    if first {
        tracing::warn!(
            target: "tripword",
            registry = "fleet",
            capacity,
            "fleet full of breakers holding state: new keys get breakers that are not kept"
        );
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
