//! Group control: every breaker of a [`Registry`] forced at once, and the
//! breakers it makes afterwards forced alike.

use std::hash::Hash;
use std::time::{Duration, Instant};

use tripword::kit::CircuitBreaker;

use super::force::{Force, Hold, apply};
use super::map::Registry;

/// An operator's hand on every breaker of the registry at once: isolate a
/// region, drain for maintenance, end it. Each returns how many breakers it
/// acted on (a breaker whose force failed, one of `tripword-redis` whose
/// Redis did not answer, is not counted).
///
/// **Breakers made afterwards.** The registry remembers the group state
/// (held open, open until an instant, or none) and applies it to each
/// breaker it makes, until [`force_close_all`](Self::force_close_all): a
/// key first looked up during an isolation is isolated too. A timed hold
/// ends for new breakers when its duration has passed since the group
/// call, measured on the process's monotonic time ([`Instant`]: the
/// registry has no clock of its own); each breaker counts what it was
/// given on its own clock.
///
/// **Concurrent lookups.** The group call and every new key's insert take
/// the registry's write lock, and the insert applies the group state
/// before it publishes the breaker: a lookup racing with the group call
/// gets a breaker in the old state or the forced one, never one left out.
/// A call admitted before the force is stale (spec I2): its result changes
/// nothing. What the group call does not reach: a handle from
/// [`get`](Self::get) whose entry was evicted before the call (detached),
/// and a breaker made for a single lookup of a full registry (transient,
/// made before the call: `docs/registry.md`, "A flood of keys"). Made
/// during a group state, a transient breaker gets it too.
///
/// ```
/// use std::time::Duration;
/// use tripword::Status;
/// use tripword_std::{CircuitBreaker, ManualTime, Registry, RegistrySettings, Settings};
/// use tripword_std::Breaker;
///
/// static CLOCK: ManualTime = ManualTime::new();
/// let hosts: Registry<String, Breaker<&ManualTime>> =
///     Registry::from_settings_on(&RegistrySettings::new(Settings::new()), &CLOCK, |_| ())?;
/// hosts.with("a", |_| ());
/// hosts.with("b", |_| ());
/// assert_eq!(hosts.force_open_all(), 2);
/// assert!(hosts.get("a").is_open());
/// assert!(hosts.get("c").is_open(), "made during the hold: held too");
/// assert_eq!(hosts.force_close_all(), 3);
/// assert_eq!(hosts.get("d").status(), Status::Closed);
///
/// // Maintenance with an end: open for ten minutes, then probes as usual.
/// assert_eq!(hosts.force_open_all_for(Duration::from_secs(600)), 4);
/// CLOCK.advance(Duration::from_secs(601));
/// assert_eq!(hosts.get("a").status(), Status::HalfOpen);
/// # Ok::<(), tripword_std::RegistrySettingsError>(())
/// ```
impl<K, B> Registry<K, B>
where
    K: Hash + Eq + Clone + Send + Sync + 'static,
    B: CircuitBreaker + Force + Send + Sync + 'static,
{
    /// Holds every breaker open ([`Force::force_open`]), and each breaker
    /// made afterwards, until [`force_close_all`](Self::force_close_all).
    /// Returns how many breakers kept it acted on.
    pub fn force_open_all(&self) -> usize {
        self.act_on_all(Some((Hold::Open, apply::<B>)), |b| b.force_open().is_ok())
    }

    /// Opens every breaker for `open_for` ([`Force::force_open_for`]), and
    /// each breaker made before `open_for` has passed for what is left of
    /// it; after that, breakers are made as usual. Returns how many
    /// breakers kept it acted on.
    pub fn force_open_all_for(&self, open_for: Duration) -> usize {
        let hold = Hold::OpenFor {
            from: Instant::now(),
            open_for,
        };
        self.act_on_all(Some((hold, apply::<B>)), |b| {
            b.force_open_for(open_for).is_ok()
        })
    }

    /// Closes every breaker ([`Force::force_close`]) and ends the group
    /// state: breakers made afterwards are made as usual. Returns how many
    /// breakers kept it acted on.
    pub fn force_close_all(&self) -> usize {
        self.act_on_all(None, |b| b.force_close().is_ok())
    }
}
