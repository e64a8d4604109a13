//! A registry of named breakers: one per key (a host, an endpoint), made on
//! first use by a factory (any breaker) or from settings (a default and
//! overrides by key), found without a lock.
//!
//! ```
//! use tripword_std::prelude::*;
//!
//! let settings = Settings::new()
//!     .failure_threshold(2)
//!     .open_for(Duration::from_secs(30));
//! let hosts: Registry<String> = Registry::from_settings(&settings.into())?;
//!
//! // A breaker per host, made on first use.
//! for _ in 0..2 {
//!     let _ = hosts.with("db-1.internal", |b| b.call(|| Err::<(), _>("timeout")));
//! }
//! assert_eq!(hosts.with("db-1.internal", |b| b.status()), Status::Open);
//! assert_eq!(hosts.with("db-2.internal", |b| b.status()), Status::Closed);
//! assert_eq!(hosts.len(), 2);
//! # Ok::<(), tripword_std::RegistrySettingsError>(())
//! ```
//!
//! # How it is built
//! The map is an immutable snapshot behind an [`ArcSwap`], numbered by a
//! generation. Each thread keeps the last snapshot it loaded of each
//! registry it uses (a few, in a thread-local list): a hit checks that the
//! snapshot's generation is still the registry's (one load of a word that
//! only writers change), probes its `HashMap` (hasher `foldhash`), and runs
//! the closure. No lock, no atomic read-modify-write, no write to memory
//! another thread reads: two threads hitting the same keys do not slow
//! each other. A thread whose snapshot is out of date loads the new one
//! from the [`ArcSwap`] (lock-free). A miss takes the registry's write
//! lock, copies the map with the new entry and publishes the copy: a write
//! costs O(n), which a map of at most [`capacity`](Registry::capacity)
//! entries that change rarely (new hosts, evictions) affords.
//! `docs/design-kit.md`, "The registry of named breakers", gives the reasons
//! and the alternatives.
//!
//! A thread's cached snapshot keeps that snapshot's entries alive until
//! the thread next refreshes that registry's snapshot. A thread keeps one
//! snapshot per registry it uses, at most 8 (past that the oldest goes);
//! those of dropped registries go at its next refresh of any registry.
//!
//! # Idle keys and the bound
//! Each lookup marks its entry with the current *epoch* (a load, and a
//! store only the first time in an epoch). [`evict_idle`](Registry::evict_idle),
//! which a service calls on a timer (every minute, say), starts a new
//! *sweep period* and evicts the entries no lookup marked in the previous
//! one: idle for a whole period. It keeps an entry whose breaker is not
//! `Closed` (forgetting an open breaker would send the next callers to a
//! failing dependency). When a new key finds the registry full, the least
//! recently used [blank](tripword::Health::is_blank) entries go (`Closed`,
//! no failure counted, no call in a rate window: what a breaker made now
//! would be), an eighth of the capacity at once, so the map never holds
//! more than `capacity` entries. An evicted entry that a caller still
//! holds (an [`Arc`] from [`get`](Registry::get)) goes on working for that
//! caller, detached: the key's next lookup makes a new breaker.
//!
//! # A flood of keys
//! Whoever can make a service look keys up (hosts from URLs, tenant ids)
//! can send made-up keys by the thousand. They never evict a breaker that
//! knows something: not an open or forced one, not a `Closed` one with
//! failures counted, not a rate breaker with calls in its window. When
//! every breaker kept knows something, a new key gets a *transient*
//! breaker: made by the factory for that lookup and not kept (so no thread
//! caches it, and its key's next lookup makes another). It protects
//! nothing across calls, which is what a key the registry has no room for
//! can have without making the registry forget what it knows. Such
//! lookups are counted ([`overflowed`](Registry::overflowed), the counter
//! `tripword.registry.overflows` with feature `metrics`) and warned of
//! once per crossing (feature `tracing`). A breaker of another crate is
//! protected when it implements
//! [`CircuitBreaker::health`](tripword::CircuitBreaker::health); by
//! default its health is its status alone, and a `Closed` one is blank.
//! `docs/spec.md`, "Registries under a flood of keys", gives the reasons
//! and the alternatives.
//!
//! # Group control
//! [`force_open_all`](Registry::force_open_all),
//! [`force_open_all_for`](Registry::force_open_all_for) and
//! [`force_close_all`](Registry::force_close_all) force every breaker of
//! a registry whose breakers implement [`Force`], and every breaker it
//! makes until the group state ends.
//!
//! # Any breaker
//! [`Registry<K, B>`] holds any [`CircuitBreaker`] `B`; `B` is
//! `tripword`'s own breaker on the real clock ([`StdBreaker`]) unless set.
//! Its constructors:
//!
//! - [`Registry::new`]: each key's breaker made by a factory from its key,
//!   of any kind (a word in a remote store, a breaker behind an async
//!   mutex, a rate breaker, `tripword`'s own on a hand-moved clock);
//! - [`Registry::from_settings`]: [`StdBreaker`]s from
//!   [`RegistrySettings`], a default and overrides by key, checked first;
//! - [`Registry::from_settings_on`]: the same on a chosen clock and word,
//!   each breaker with the observer made from its key;
//! - [`Registry::from_rate_settings`] and
//!   [`from_rate_settings_on`](Registry::from_rate_settings_on): the same
//!   for failure-rate breakers ([`StdRateBreaker`](crate::StdRateBreaker)s,
//!   or on a chosen clock, word and bucket count), each key's policy the
//!   `failure_rate` of its settings.
//!
//! Every registry hands out [`Entry`]s, which are breakers themselves (and
//! dereference to theirs: `entry.config()` is a `Breaker`'s config), and is
//! a [`Lookup`], what the tower layer `tripword_std::tower::RegistryLayer`
//! picks a request's breaker from.
//!
//! ```
//! use tripword::clock::ManualClock;
//! use tripword::{Breaker, Config, Status};
//! use tripword_std::{BreakerExt, Registry};
//!
//! static CLOCK: ManualClock = ManualClock::new(0);
//! // A registry of rate breakers... or of any `CircuitBreaker`: here plain
//! // breakers whose threshold depends on the key.
//! let hosts = Registry::new(|host: &String| {
//!     let threshold = if host.starts_with("batch.") { 10 } else { 1 };
//!     Breaker::new(Config::new().failure_threshold(threshold).open_for(100), &CLOCK)
//! });
//! let _ = hosts.with("api.internal", |b| b.call(|| Err::<(), _>("down")));
//! let _ = hosts.with("batch.internal", |b| b.call(|| Err::<(), _>("down")));
//! assert_eq!(hosts.with("api.internal", |b| b.status()), Status::Open);
//! assert_eq!(hosts.with("batch.internal", |b| b.status()), Status::Closed);
//! assert_eq!(hosts.get("batch.internal").config().failure_threshold(), 10);
//! ```

// `entry` <- `force` (the trait and the group state) <- `map` (the
// registry itself and its `Local` handle, `overflow` its reports) <-
// `group`, `lookup`, `settings`; nothing here imports this file.

#[cfg(doc)]
use std::sync::Arc;

#[cfg(doc)]
use arc_swap::ArcSwap;
#[cfg(doc)]
use tripword::kit::CircuitBreaker;

#[cfg(doc)]
use crate::settings::StdBreaker;

mod entry;
mod force;
mod group;
mod lookup;
mod map;
mod overflow;
mod settings;

// Globs: the items keep the path `tripword_std::registry::Registry` in the
// API listing, as when they were defined in this file.
pub use entry::*;
pub use force::Force;
pub use lookup::*;
pub use map::*;
pub use settings::{RegistrySettings, RegistrySettingsError};
