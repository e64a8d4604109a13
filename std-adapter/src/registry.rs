//! A registry of named breakers: one per key (a host, an endpoint), made on
//! first use from a template config (or per-key settings, or a factory of
//! any breaker), found without a lock.
//!
//! ```
//! use tripword_std::prelude::*;
//!
//! let hosts: Registry<String> = Settings::new()
//!     .failure_threshold(2)
//!     .open_for(Duration::from_secs(30))
//!     .build_registry()?;
//!
//! // A breaker per host, made on first use.
//! for _ in 0..2 {
//!     let _ = hosts.with("db-1.internal", |b| b.call(|| Err::<(), _>("timeout")));
//! }
//! assert_eq!(hosts.with("db-1.internal", |b| b.status()), Status::Open);
//! assert_eq!(hosts.with("db-2.internal", |b| b.status()), Status::Closed);
//! assert_eq!(hosts.len(), 2);
//! # Ok::<(), tripword_std::SettingsError>(())
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
//! Each lookup marks its entry with the current *sweep epoch* (a load, and
//! a store only the first time in an epoch). [`evict_idle`](Registry::evict_idle),
//! which a service calls on a timer (every minute, say), starts a new epoch
//! and evicts the entries no lookup marked in the previous one: idle for a
//! whole period. It keeps an entry whose breaker is not `Closed`
//! (forgetting an open breaker would send the next callers to a failing
//! dependency). When a new key finds the registry full, the same sweep
//! runs; if it frees nothing, the least recently used entries go, closed
//! ones first, so the map never holds more than `capacity` entries. An
//! evicted entry that a caller still holds (an [`Arc`] from
//! [`get`](Registry::get)) goes on working for that caller, detached: the
//! key's next lookup makes a new breaker.
//!
//! # Any breaker
//! [`Registry`] holds `tripword`'s own [`Breaker`], made from a template
//! config (or from [`RegistrySettings`]: a default and overrides by key).
//! [`RegistryOf<K, B>`] is the same map for any [`CircuitBreaker`] `B`,
//! each made by a factory from its key: a breaker of another crate (a word
//! in a remote store, a breaker behind an async mutex) lives in a registry
//! too. `Registry` is a `RegistryOf<K, Breaker<C, W, O>>` that also keeps
//! its template config; both hand out [`EntryOf`]s, which are breakers
//! themselves, and both are a [`Lookup`], what the tower layer
//! `tripword_std::tower::RegistryLayer` picks a request's breaker from.
//!
//! ```
//! use tripword::clock::ManualClock;
//! use tripword::{Breaker, Config, Status};
//! use tripword_std::{BreakerExt, RegistryOf};
//!
//! static CLOCK: ManualClock = ManualClock::new(0);
//! // A registry of rate breakers... or of any `CircuitBreaker`: here plain
//! // breakers whose threshold depends on the key.
//! let hosts = RegistryOf::with_factory(|host: &String| {
//!     let threshold = if host.starts_with("batch.") { 10 } else { 1 };
//!     Breaker::new(Config::new().failure_threshold(threshold).open_for(100), &CLOCK)
//! });
//! let _ = hosts.with("api.internal", |b| b.call(|| Err::<(), _>("down")));
//! let _ = hosts.with("batch.internal", |b| b.call(|| Err::<(), _>("down")));
//! assert_eq!(hosts.with("api.internal", |b| b.status()), Status::Open);
//! assert_eq!(hosts.with("batch.internal", |b| b.status()), Status::Closed);
//! ```

use std::any::Any;
use std::borrow::Borrow;
use std::cell::RefCell;
use std::collections::HashMap;
use std::hash::Hash;
use std::ops::Deref;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError, Weak};

use arc_swap::ArcSwap;
use foldhash::fast::RandomState;
use tripword::kit::{CircuitBreaker, Reply, TickVerdict};
use tripword::{
    Breaker, Clock, Observer, Outcome, Rejected, Release, Status, ValidConfig, W64, Word,
};

use crate::clock::{MonotonicClock, RealClock};
use crate::settings::{RegistrySettings, RegistrySettingsError, Settings};

/// One key's breaker in a [`RegistryOf`] (or a [`Registry`]): the key and
/// the breaker `B`. It dereferences to the breaker, so `entry.call(..)`,
/// `entry.acquire()` and the breaker's own methods work on it, and it is a
/// [`CircuitBreaker`] itself (each method the breaker's), so the calls,
/// futures and tower layer of this crate take an `Arc<EntryOf<K, B>>` from
/// [`get`](RegistryOf::get) as their handle.
pub struct EntryOf<K, B> {
    key: K,
    breaker: B,
    // The sweep epoch of the last lookup.
    seen: AtomicU64,
}

/// One key's [`Breaker`] in a [`Registry`]: an [`EntryOf`] whose breaker is
/// `tripword`'s own, on clock `C`, word `W`, with observer `O`.
pub type Entry<K, O = (), C = MonotonicClock, W = W64> = EntryOf<K, Breaker<C, W, O>>;

impl<K, B> EntryOf<K, B> {
    /// The key.
    pub fn key(&self) -> &K {
        &self.key
    }

    /// The breaker.
    pub fn breaker(&self) -> &B {
        &self.breaker
    }

    #[inline(always)]
    fn touch(&self, epoch: u64) {
        // A store only the first time in an epoch: hits on a hot key by
        // many threads read this line, they do not keep writing it.
        if self.seen.load(Ordering::Relaxed) != epoch {
            self.seen.store(epoch, Ordering::Relaxed);
        }
    }
}

impl<K, B> Deref for EntryOf<K, B> {
    type Target = B;
    fn deref(&self) -> &B {
        &self.breaker
    }
}

/// An entry is its key's breaker: `call`, `call_async`, the tower layers
/// (through an `Arc<EntryOf>` from [`RegistryOf::get`]) work on it
/// directly. Every method is the breaker's, the async path included.
impl<K, B: CircuitBreaker> CircuitBreaker for EntryOf<K, B> {
    type Ticket = B::Ticket;
    type Clock = B::Clock;
    type Acquiring = B::Acquiring;
    type Releasing = B::Releasing;

    #[inline(always)]
    fn acquire(&self) -> Result<B::Ticket, Rejected> {
        self.breaker.acquire()
    }
    #[inline(always)]
    fn release(&self, ticket: B::Ticket, outcome: Outcome) -> Release {
        self.breaker.release(ticket, outcome)
    }
    #[inline(always)]
    fn release_failure_for(&self, ticket: B::Ticket, open_for: u64) -> Release {
        self.breaker.release_failure_for(ticket, open_for)
    }
    #[inline(always)]
    fn status(&self) -> Status {
        CircuitBreaker::status(&self.breaker)
    }
    #[inline(always)]
    fn clock(&self) -> &B::Clock {
        CircuitBreaker::clock(&self.breaker)
    }
    #[inline(always)]
    fn abandon_outcome(&self) -> Outcome {
        self.breaker.abandon_outcome()
    }
    #[inline(always)]
    fn name(&self) -> Option<&'static str> {
        self.breaker.name()
    }
    #[inline(always)]
    fn release_verdict(&self, ticket: B::Ticket, verdict: TickVerdict) -> Release {
        self.breaker.release_verdict(ticket, verdict)
    }
    #[inline(always)]
    fn acquire_async(&self) -> Reply<Result<B::Ticket, Rejected>, B::Acquiring> {
        self.breaker.acquire_async()
    }
    #[inline(always)]
    fn release_async(
        &self,
        ticket: B::Ticket,
        verdict: TickVerdict,
    ) -> Reply<Release, B::Releasing> {
        self.breaker.release_async(ticket, verdict)
    }
    #[inline(always)]
    fn release_detached(&self, ticket: B::Ticket, verdict: TickVerdict) {
        self.breaker.release_detached(ticket, verdict)
    }
}

impl<K: core::fmt::Debug, B: core::fmt::Debug> core::fmt::Debug for EntryOf<K, B> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("Entry")
            .field("key", &self.key)
            .field("breaker", &self.breaker)
            .finish()
    }
}

type Map<K, B> = HashMap<K, Arc<EntryOf<K, B>>, RandomState>;

/// A published map, numbered.
struct Snapshot<K, B> {
    generation: u64,
    entries: Map<K, B>,
}

/// A thread's last snapshot of one registry.
struct Cached {
    registry: u64,
    alive: Weak<()>,
    snapshot: Arc<dyn Any + Send + Sync>,
}

/// How many registries' snapshots a thread keeps.
const CACHED: usize = 8;

thread_local! {
    static SNAPSHOTS: RefCell<Vec<Cached>> = const { RefCell::new(Vec::new()) };
}

/// Registry identities, for the thread-local snapshots.
static NEXT_ID: AtomicU64 = AtomicU64::new(0);

/// Makes a new key's breaker.
type Factory<K, B> = Box<dyn Fn(&K) -> B + Send + Sync>;

/// One breaker of any kind per key, made on first use by a factory, found
/// without a lock, at most [`capacity`](RegistryOf::capacity) of them: the
/// map behind [`Registry`], for any [`CircuitBreaker`] `B`. See the
/// [module docs](self).
///
/// `K` is the key (a host `String`, a `(host, route)` pair, an enum of
/// dependencies), `B` the breaker, made by the factory from its key (so it
/// can be named after it, or configured for it). A `B` that is not
/// `Closed` is never evicted as idle, as in a [`Registry`].
///
/// ```
/// use std::sync::atomic::{AtomicU32, Ordering};
/// use tripword::clock::ManualClock;
/// use tripword::{Breaker, Config, Status};
/// use tripword_std::{CircuitBreaker, RegistryOf};
///
/// static CLOCK: ManualClock = ManualClock::new(0);
/// static MADE: AtomicU32 = AtomicU32::new(0);
/// let r = RegistryOf::with_factory(|_: &u32| {
///     MADE.fetch_add(1, Ordering::Relaxed);
///     Breaker::new(Config::new().failure_threshold(1), &CLOCK)
/// })
/// .with_capacity(64);
/// let entry = r.get(&7); // an `Arc<EntryOf<u32, Breaker<..>>>`, a breaker itself
/// assert_eq!(CircuitBreaker::status(&*entry), Status::Closed);
/// r.with(&7, |b| b.force_open());
/// assert_eq!((r.len(), MADE.load(Ordering::Relaxed)), (1, 1));
/// assert_eq!(r.peek(&7).unwrap().status(), Status::Open);
/// ```
pub struct RegistryOf<K, B> {
    map: ArcSwap<Snapshot<K, B>>,
    // The generation of the snapshot in `map`, set after it is stored.
    generation: AtomicU64,
    id: u64,
    // Dropped with the registry: threads drop their snapshots of it.
    alive: Arc<()>,
    // Serializes writers (inserts, sweeps); readers never take it.
    write: Mutex<()>,
    epoch: AtomicU64,
    make: Factory<K, B>,
    capacity: usize,
    hasher: RandomState,
}

/// The default [`capacity`](RegistryOf::capacity).
pub const DEFAULT_CAPACITY: usize = 1024;

impl<K, B> RegistryOf<K, B>
where
    K: Hash + Eq + Clone + Send + Sync + 'static,
    B: CircuitBreaker + Send + Sync + 'static,
{
    /// Breakers made by `make` from their key, on first use; at most
    /// [`DEFAULT_CAPACITY`] of them. `make` runs under the registry's write
    /// lock when a key is new: it must not use the registry.
    pub fn with_factory(make: impl Fn(&K) -> B + Send + Sync + 'static) -> Self {
        let hasher = RandomState::default();
        RegistryOf {
            map: ArcSwap::from_pointee(Snapshot {
                generation: 0,
                entries: HashMap::with_hasher(hasher.clone()),
            }),
            generation: AtomicU64::new(0),
            id: NEXT_ID.fetch_add(1, Ordering::Relaxed),
            alive: Arc::new(()),
            write: Mutex::new(()),
            epoch: AtomicU64::new(0),
            make: Box::new(make),
            capacity: DEFAULT_CAPACITY,
            hasher,
        }
    }

    /// Breakers made by `make` from their key and that key's [`Settings`]
    /// in `settings` (its override, or the default): per-key settings for a
    /// breaker of any kind. The settings are not checked here (only the
    /// breaker knows its clock and word); check them first with
    /// [`RegistrySettings::check`].
    ///
    /// ```
    /// use std::time::Duration;
    /// use tripword::Breaker;
    /// use tripword_std::clock::ManualTime;
    /// use tripword_std::{RegistryOf, RegistrySettings, Settings};
    ///
    /// static CLOCK: ManualTime = ManualTime::new();
    /// let default = Settings::new().failure_threshold(3).open_for(Duration::from_secs(30));
    /// let settings = RegistrySettings::new(default)
    ///     .override_for("api.example.com", default.failure_threshold(1));
    /// settings.check::<ManualTime, tripword::W64>()?;
    /// let hosts = RegistryOf::from_settings(&settings, |_host: &String, s: &Settings| -> Breaker<&ManualTime> {
    ///     s.build_on(&CLOCK, ()).expect("checked")
    /// });
    /// assert_eq!(hosts.get("api.example.com").config().failure_threshold(), 1);
    /// assert_eq!(hosts.get("db.example.com").config().failure_threshold(), 3);
    /// # Ok::<(), tripword_std::RegistrySettingsError>(())
    /// ```
    pub fn from_settings(
        settings: &RegistrySettings<K>,
        make: impl Fn(&K, &Settings) -> B + Send + Sync + 'static,
    ) -> Self {
        let settings = settings.clone();
        Self::with_factory(move |key: &K| make(key, settings.settings_for(key)))
    }

    /// At most `capacity` breakers (at least 1).
    pub fn with_capacity(mut self, capacity: usize) -> Self {
        self.capacity = capacity.max(1);
        self
    }

    /// The most breakers the registry keeps.
    pub fn capacity(&self) -> usize {
        self.capacity
    }

    /// How many breakers it holds now.
    pub fn len(&self) -> usize {
        self.map.load().entries.len()
    }

    /// Whether it holds none.
    pub fn is_empty(&self) -> bool {
        self.map.load().entries.is_empty()
    }

    /// Runs `f` on `key`'s breaker, made now if there is none. A hit is a
    /// lookup in this thread's snapshot of the map (no lock, no atomic
    /// read-modify-write; see the [module docs](self)); the entry is not
    /// cloned. Keep `f` short. `f` cannot return a call future (it would
    /// borrow the entry): for a future, take the entry's handle with
    /// [`get`](Self::get) and make the call with
    /// [`call_async_owned`](crate::BreakerExt::call_async_owned), whose
    /// future owns that handle.
    #[inline]
    pub fn with<Q, R>(&self, key: &Q, f: impl FnOnce(&EntryOf<K, B>) -> R) -> R
    where
        K: Borrow<Q>,
        Q: Hash + Eq + ToOwned<Owned = K> + ?Sized,
    {
        self.find(key, |entry| f(entry))
    }

    /// `key`'s breaker, made now if there is none, as a handle to keep
    /// (across an `.await`, in a request's state, in a call future with
    /// [`call_async_owned`](crate::BreakerExt::call_async_owned)). One
    /// reference-count increment more than [`with`](Self::with).
    pub fn get<Q>(&self, key: &Q) -> Arc<EntryOf<K, B>>
    where
        K: Borrow<Q>,
        Q: Hash + Eq + ToOwned<Owned = K> + ?Sized,
    {
        self.find(key, Arc::clone)
    }

    /// The hit path: this thread's snapshot, if current.
    #[inline(always)]
    fn find<Q, R>(&self, key: &Q, f: impl FnOnce(&Arc<EntryOf<K, B>>) -> R) -> R
    where
        K: Borrow<Q>,
        Q: Hash + Eq + ToOwned<Owned = K> + ?Sized,
    {
        let mut f = Some(f);
        let generation = self.generation.load(Ordering::Acquire);
        let hit = SNAPSHOTS
            .try_with(|cache| {
                // A shared borrow: `f` may use this registry again.
                let cache = cache.try_borrow().ok()?;
                let cached = cache.iter().find(|c| c.registry == self.id)?;
                let snapshot = cached.snapshot.downcast_ref::<Snapshot<K, B>>()?;
                if snapshot.generation != generation {
                    return None;
                }
                let entry = snapshot.entries.get(key)?;
                entry.touch(self.epoch.load(Ordering::Relaxed));
                f.take().map(|f| f(entry))
            })
            .ok()
            .flatten();
        match (hit, f) {
            (Some(r), _) => r,
            (None, Some(f)) => self.find_slow(key, f),
            (None, None) => unreachable!("`f` runs only on a hit"),
        }
    }

    /// A stale or missing thread snapshot, or a new key: the current
    /// snapshot from the `ArcSwap`, kept for this thread; a new entry if
    /// the key has none.
    #[inline(never)]
    fn find_slow<Q, R>(&self, key: &Q, f: impl FnOnce(&Arc<EntryOf<K, B>>) -> R) -> R
    where
        K: Borrow<Q>,
        Q: Hash + Eq + ToOwned<Owned = K> + ?Sized,
    {
        let snapshot = self.map.load_full();
        self.remember(&snapshot);
        if let Some(entry) = snapshot.entries.get(key) {
            entry.touch(self.epoch.load(Ordering::Relaxed));
            return f(entry);
        }
        drop(snapshot);
        f(&self.insert(key))
    }

    /// Keeps `snapshot` as this thread's, dropping those of dropped
    /// registries and, past [`CACHED`], the oldest.
    fn remember(&self, snapshot: &Arc<Snapshot<K, B>>) {
        let _ = SNAPSHOTS.try_with(|cache| {
            // Busy when called from inside a hit's `f`: then not kept.
            if let Ok(mut cache) = cache.try_borrow_mut() {
                cache.retain(|c| c.registry != self.id && c.alive.strong_count() > 0);
                if cache.len() >= CACHED {
                    cache.remove(0);
                }
                cache.push(Cached {
                    registry: self.id,
                    alive: Arc::downgrade(&self.alive),
                    snapshot: snapshot.clone(),
                });
            }
        });
    }

    /// Publishes `entries` as the next snapshot. Write lock held.
    fn publish(&self, entries: Map<K, B>) {
        let generation = self.generation.load(Ordering::Relaxed) + 1;
        self.map.store(Arc::new(Snapshot {
            generation,
            entries,
        }));
        self.generation.store(generation, Ordering::Release);
    }

    /// A handle for one thread or task that keeps its own snapshot of the
    /// map: [`LocalOf::with`] checks the snapshot's generation and probes
    /// it, without the thread-local lookup [`with`](Self::with) makes (the
    /// cheapest hit; see `docs/performance/services.md`, "The registry"). Keep one per
    /// worker (a tower service clone, a worker loop), not one per call. A
    /// handle keeps its snapshot, and the entries in it, alive until its
    /// first lookup after the map changes.
    pub fn local(&self) -> LocalOf<'_, K, B> {
        LocalOf {
            registry: self,
            snapshot: self.map.load_full(),
        }
    }

    /// `key`'s breaker if there is one; makes none, and does not count as a
    /// use.
    pub fn peek<Q>(&self, key: &Q) -> Option<Arc<EntryOf<K, B>>>
    where
        K: Borrow<Q>,
        Q: Hash + Eq + ?Sized,
    {
        self.map.load().entries.get(key).cloned()
    }

    /// Calls `f` on every entry (a snapshot: entries made or evicted
    /// meanwhile may or may not be seen). For a status page.
    pub fn for_each(&self, mut f: impl FnMut(&EntryOf<K, B>)) {
        for entry in self.map.load().entries.values() {
            f(entry);
        }
    }

    /// The slow path of a miss: under the write lock, looks again, and
    /// publishes a copy of the map with a new entry for `key` (making room
    /// first if the map is full).
    #[cold]
    fn insert<Q>(&self, key: &Q) -> Arc<EntryOf<K, B>>
    where
        K: Borrow<Q>,
        Q: Hash + Eq + ToOwned<Owned = K> + ?Sized,
    {
        let _write = self.write.lock().unwrap_or_else(PoisonError::into_inner);
        let current = self.map.load_full();
        let current = &current.entries;
        if let Some(entry) = current.get(key) {
            return entry.clone();
        }
        let mut next: Map<K, B> = if current.len() >= self.capacity {
            self.make_room(current)
        } else {
            let mut map = HashMap::with_capacity_and_hasher(current.len() + 1, self.hasher.clone());
            map.extend(current.values().map(|e| (owned_key(e), e.clone())));
            map
        };
        let key: K = key.to_owned();
        let entry = Arc::new(EntryOf {
            breaker: (self.make)(&key),
            key,
            seen: AtomicU64::new(self.epoch.load(Ordering::Relaxed)),
        });
        next.insert(owned_key(&entry), entry.clone());
        self.publish(next);
        entry
    }

    /// A copy of `current` with room for one more: the idle sweep, then, if
    /// it freed nothing, the least recently used entries, closed ones
    /// first. Called with the write lock held.
    fn make_room(&self, current: &Map<K, B>) -> Map<K, B> {
        let mut next = self.swept(current);
        if next.len() < self.capacity {
            return next;
        }
        // Evict an eighth of the capacity at once (at least one), so a run
        // of new keys does not copy the map at every one.
        let excess = next.len() + 1 - self.capacity;
        let batch = excess.max(self.capacity / 8).min(next.len());
        let mut order: Vec<((bool, u64), K)> = next
            .values()
            .map(|e| {
                let rank = (
                    CircuitBreaker::status(&**e) != Status::Closed,
                    e.seen.load(Ordering::Relaxed),
                );
                (rank, owned_key(e))
            })
            .collect();
        order.sort_by_key(|(rank, _)| *rank);
        for (_, key) in order.into_iter().take(batch) {
            next.remove(&key);
        }
        next
    }

    /// A copy of `current` without the idle entries, after starting a new
    /// epoch. Write lock held.
    fn swept(&self, current: &Map<K, B>) -> Map<K, B> {
        let ended = self.epoch.fetch_add(1, Ordering::Relaxed);
        let mut next = HashMap::with_capacity_and_hasher(current.len() + 1, self.hasher.clone());
        next.extend(
            current
                .values()
                .filter(|e| !is_idle(e, ended))
                .map(|e| (owned_key(e), e.clone())),
        );
        next
    }

    /// Starts a new sweep epoch and evicts the entries no lookup marked in
    /// the one that ended (idle for a whole period between two calls),
    /// except those whose breaker is not `Closed`. Returns how many it
    /// evicted. Call it on a timer.
    pub fn evict_idle(&self) -> usize {
        let _write = self.write.lock().unwrap_or_else(PoisonError::into_inner);
        let current = self.map.load_full();
        let next = self.swept(&current.entries);
        let evicted = current.entries.len() - next.len();
        if evicted > 0 {
            self.publish(next);
        }
        evicted
    }
}

/// Idle through the epoch `ended`, and closed.
fn is_idle<K, B: CircuitBreaker>(entry: &Arc<EntryOf<K, B>>, ended: u64) -> bool {
    entry.seen.load(Ordering::Relaxed) < ended && CircuitBreaker::status(&**entry) == Status::Closed
}

/// The entry's key, for a map copy.
fn owned_key<K: Clone, B>(entry: &Arc<EntryOf<K, B>>) -> K {
    entry.key.clone()
}

impl<K, B> core::fmt::Debug for RegistryOf<K, B> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("RegistryOf")
            .field("len", &self.map.load().entries.len())
            .field("capacity", &self.capacity)
            .finish_non_exhaustive()
    }
}

/// A worker's handle on a [`RegistryOf`] (or a [`Registry`]) with its own
/// snapshot of the map: from [`RegistryOf::local`].
pub struct LocalOf<'r, K, B> {
    registry: &'r RegistryOf<K, B>,
    snapshot: Arc<Snapshot<K, B>>,
}

/// A worker's handle on a [`Registry`]: from [`Registry::local`].
pub type Local<'r, K, O = (), C = MonotonicClock, W = W64> = LocalOf<'r, K, Breaker<C, W, O>>;

impl<K, B> LocalOf<'_, K, B>
where
    K: Hash + Eq + Clone + Send + Sync + 'static,
    B: CircuitBreaker + Send + Sync + 'static,
{
    /// As [`RegistryOf::with`]: runs `f` on `key`'s breaker, made now if
    /// there is none. A hit checks that this handle's snapshot is current
    /// (one load), probes it and runs `f`: no lock, no thread-local, no
    /// atomic read-modify-write.
    #[inline]
    pub fn with<Q, R>(&mut self, key: &Q, f: impl FnOnce(&EntryOf<K, B>) -> R) -> R
    where
        K: Borrow<Q>,
        Q: Hash + Eq + ToOwned<Owned = K> + ?Sized,
    {
        let r = self.registry;
        if self.snapshot.generation == r.generation.load(Ordering::Acquire)
            && let Some(entry) = self.snapshot.entries.get(key)
        {
            entry.touch(r.epoch.load(Ordering::Relaxed));
            return f(entry);
        }
        self.with_slow(key, f)
    }

    #[inline(never)]
    fn with_slow<Q, R>(&mut self, key: &Q, f: impl FnOnce(&EntryOf<K, B>) -> R) -> R
    where
        K: Borrow<Q>,
        Q: Hash + Eq + ToOwned<Owned = K> + ?Sized,
    {
        let entry = self.registry.get(key);
        self.snapshot = self.registry.map.load_full();
        f(&entry)
    }
}

impl<K, B> core::fmt::Debug for LocalOf<'_, K, B> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("Local")
            .field("generation", &self.snapshot.generation)
            .finish_non_exhaustive()
    }
}

/// One [`Breaker`] per key, made on first use from a template config (or
/// from per-key [`RegistrySettings`]), found without a lock, at most
/// [`capacity`](Registry::capacity) of them: a [`RegistryOf`] of
/// `tripword`'s own breakers that keeps its template. See the
/// [module docs](self).
///
/// `K` is the key (a host `String`, a `(host, route)` pair, an enum of
/// dependencies), `O` the observer each breaker gets (made from its key, so
/// each breaker's events carry its name), `C` the clock (cloned into each
/// breaker), `W` the word.
///
/// ```
/// # #[cfg(feature = "tracing")] {
/// use tripword_std::{MonotonicClock, Registry, Settings};
/// use tripword_std::observe::TracingObserver;
///
/// let config = Settings::new().config::<MonotonicClock, tripword::W64>().unwrap();
/// let routes = Registry::from_parts(config, MonotonicClock, |(host, route): &(String, String)| {
///     TracingObserver::new(format!("{host}{route}"))
/// })
/// .with_capacity(256);
/// let key = ("api.example.com".to_string(), "/v1/pay".to_string());
/// assert!(routes.with(&key, |b| b.acquire().map(|t| b.release(t, tripword::Outcome::Success))).is_ok());
/// assert_eq!(routes.get(&key).observer().name(), "api.example.com/v1/pay");
/// # }
/// ```
pub struct Registry<K, O = (), C = MonotonicClock, W: Word = W64> {
    map: RegistryOf<K, Breaker<C, W, O>>,
    // The template: the config of every key without an override.
    config: ValidConfig<W>,
    // The configs of the keys with an override (shared with the factory).
    overrides: Arc<HashMap<K, ValidConfig<W>, RandomState>>,
}

impl<K: Hash + Eq + Clone + Send + Sync + 'static> Registry<K> {
    /// Breakers on the [`MonotonicClock`], with no observer, each from
    /// `config`; at most [`DEFAULT_CAPACITY`] of them.
    pub fn new(config: ValidConfig<W64>) -> Self {
        Registry::from_parts(config, MonotonicClock, |_: &K| ())
    }

    /// Breakers on the [`MonotonicClock`], with no observer, each from its
    /// key's settings in `settings` (its override, or the default); at most
    /// [`DEFAULT_CAPACITY`] of them.
    ///
    /// ```
    /// use std::time::Duration;
    /// use tripword_std::{Registry, RegistrySettings, Settings};
    ///
    /// let default = Settings::new().failure_threshold(5).open_for(Duration::from_secs(30));
    /// let settings = RegistrySettings::new(default)
    ///     .override_for("api.example.com", default.failure_threshold(1));
    /// let hosts: Registry<String> = Registry::from_settings(&settings)?;
    /// assert_eq!(hosts.get("api.example.com").config().failure_threshold(), 1);
    /// assert_eq!(hosts.get("db.internal").config().failure_threshold(), 5);
    ///
    /// // Out of range: the error names the key.
    /// let bad = settings.override_for("pay.example.com", default.failure_threshold(0));
    /// let err = Registry::from_settings(&bad).unwrap_err();
    /// assert_eq!(err.key().map(String::as_str), Some("pay.example.com"));
    /// assert_eq!(
    ///     err.to_string(),
    ///     r#"override for "pay.example.com": failure_threshold = 0 is out of range 1..=65535 (64-bit word)"#,
    /// );
    /// # Ok::<(), tripword_std::RegistrySettingsError>(())
    /// ```
    ///
    /// # Errors
    /// The first setting out of range (the default's, then the overrides'
    /// in order), with its key.
    pub fn from_settings(settings: &RegistrySettings<K>) -> Result<Self, RegistrySettingsError<K>> {
        Registry::from_settings_on(settings, MonotonicClock, |_: &K| ())
    }
}

impl<K, O, C, W: Word> Registry<K, O, C, W>
where
    K: Hash + Eq + Clone + Send + Sync + 'static,
    O: Observer + Send + Sync + 'static,
    C: Clock + Clone + Send + Sync + 'static,
{
    /// Breakers from `config` on `clock` (cloned into each), each with the
    /// observer `observer` makes from its key (`|key| TracingObserver::new(key.to_string())`);
    /// at most [`DEFAULT_CAPACITY`] of them. `observer` runs under the
    /// registry's write lock when a key is new: it must not use the
    /// registry.
    pub fn from_parts(
        config: ValidConfig<W>,
        clock: C,
        observer: impl Fn(&K) -> O + Send + Sync + 'static,
    ) -> Self {
        Self::from_configs(config, HashMap::default(), clock, observer)
    }

    /// Breakers on `clock` (a [`RealClock`], cloned into each), each from
    /// its key's settings in `settings` (its override, or the default),
    /// converted to `clock`'s ticks and checked against the word `W`, with
    /// the observer `observer` makes from its key.
    ///
    /// ```
    /// use std::time::Duration;
    /// use tripword::{Status, W32};
    /// use tripword_std::clock::ManualTime;
    /// use tripword_std::{BreakerExt, Registry, RegistrySettings, Settings};
    ///
    /// static CLOCK: ManualTime = ManualTime::new();
    /// let default = Settings::new().failure_threshold(3).open_for(Duration::from_secs(10));
    /// let settings = RegistrySettings::new(default).override_for("flaky", default.failure_threshold(1));
    /// let r: Registry<String, (), &ManualTime, W32> =
    ///     Registry::from_settings_on(&settings, &CLOCK, |_| ())?;
    /// let _ = r.with("flaky", |b| b.call(|| Err::<(), _>("down")));
    /// let _ = r.with("steady", |b| b.call(|| Err::<(), _>("down")));
    /// assert_eq!(r.with("flaky", |b| b.status()), Status::Open);
    /// assert_eq!(r.with("steady", |b| b.status()), Status::Closed);
    /// assert_eq!(r.config_for("flaky").failure_threshold(), 1);
    /// assert_eq!(r.config_for("steady"), r.config());
    /// # Ok::<(), tripword_std::RegistrySettingsError>(())
    /// ```
    ///
    /// # Errors
    /// The first setting out of range for `clock` and `W` (the default's,
    /// then the overrides' in order), with its key.
    pub fn from_settings_on(
        settings: &RegistrySettings<K>,
        clock: C,
        observer: impl Fn(&K) -> O + Send + Sync + 'static,
    ) -> Result<Self, RegistrySettingsError<K>>
    where
        C: RealClock,
    {
        let (config, overrides) = settings.configs::<C, W>()?;
        Ok(Self::from_configs(
            config,
            overrides.into_iter().collect(),
            clock,
            observer,
        ))
    }

    /// The registry of `config` for every key but those of `overrides`.
    fn from_configs(
        config: ValidConfig<W>,
        overrides: HashMap<K, ValidConfig<W>, RandomState>,
        clock: C,
        observer: impl Fn(&K) -> O + Send + Sync + 'static,
    ) -> Self {
        let overrides = Arc::new(overrides);
        let configs = overrides.clone();
        let map = RegistryOf::with_factory(move |key: &K| {
            let config = configs.get(key).copied().unwrap_or(config);
            Breaker::from_parts(config, clock.clone(), observer(key))
        });
        Registry {
            map,
            config,
            overrides,
        }
    }

    /// At most `capacity` breakers (at least 1).
    pub fn with_capacity(self, capacity: usize) -> Self {
        Registry {
            map: self.map.with_capacity(capacity),
            ..self
        }
    }

    /// The most breakers the registry keeps.
    pub fn capacity(&self) -> usize {
        self.map.capacity()
    }

    /// How many breakers it holds now.
    pub fn len(&self) -> usize {
        self.map.len()
    }

    /// Whether it holds none.
    pub fn is_empty(&self) -> bool {
        self.map.is_empty()
    }

    /// The template config: that of every key without an override.
    pub fn config(&self) -> &ValidConfig<W> {
        &self.config
    }

    /// The config `key`'s breaker is (or would be) made from: its override,
    /// or the template.
    pub fn config_for<Q>(&self, key: &Q) -> &ValidConfig<W>
    where
        K: Borrow<Q>,
        Q: Hash + Eq + ?Sized,
    {
        self.overrides.get(key).unwrap_or(&self.config)
    }

    /// The map itself, as a registry of any breaker: for code written
    /// against [`RegistryOf`].
    pub fn as_registry_of(&self) -> &RegistryOf<K, Breaker<C, W, O>> {
        &self.map
    }

    /// Runs `f` on `key`'s breaker, made now if there is none. A hit is a
    /// lookup in this thread's snapshot of the map (no lock, no atomic
    /// read-modify-write; see the [module docs](self)); the entry is not
    /// cloned. Keep `f` short. `f` cannot return a call future (it would
    /// borrow the entry): for a future, take the entry's handle with
    /// [`get`](Self::get) and make the call with
    /// [`call_async_owned`](crate::BreakerExt::call_async_owned), whose
    /// future owns that handle.
    ///
    /// ```
    /// use tripword_std::{BreakerExt, CallError, Registry, Settings};
    ///
    /// async fn query(sql: &str) -> Result<usize, std::io::Error> {
    ///     Ok(sql.len()) // the database round trip here
    /// }
    ///
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// let hosts: Registry<String> = Settings::new().build_registry()?;
    /// // Sync: inside the closure, no handle taken.
    /// assert!(hosts.with("db-1.internal", |b| b.acquire()).is_ok());
    /// // Async: the future owns its handle, so it may outlive this scope.
    /// let call = hosts.get("db-1.internal").call_async_owned(query("SELECT 1"));
    /// let rows: Result<usize, CallError<std::io::Error>> = tokio::spawn(call).await?;
    /// assert_eq!(rows?, 8);
    /// # Ok(())
    /// # }
    /// ```
    #[inline]
    pub fn with<Q, R>(&self, key: &Q, f: impl FnOnce(&Entry<K, O, C, W>) -> R) -> R
    where
        K: Borrow<Q>,
        Q: Hash + Eq + ToOwned<Owned = K> + ?Sized,
    {
        self.map.with(key, f)
    }

    /// `key`'s breaker, made now if there is none, as a handle to keep
    /// (across an `.await`, in a request's state, in a call future with
    /// [`call_async_owned`](crate::BreakerExt::call_async_owned)). One
    /// reference-count increment more than [`with`](Self::with).
    #[inline]
    pub fn get<Q>(&self, key: &Q) -> Arc<Entry<K, O, C, W>>
    where
        K: Borrow<Q>,
        Q: Hash + Eq + ToOwned<Owned = K> + ?Sized,
    {
        self.map.get(key)
    }

    /// A handle for one thread or task that keeps its own snapshot of the
    /// map: [`LocalOf::with`] checks the snapshot's generation and probes
    /// it, without the thread-local lookup [`with`](Self::with) makes (the
    /// cheapest hit; see `docs/performance/services.md`, "The registry"). Keep one per
    /// worker (a tower service clone, a worker loop), not one per call. A
    /// handle keeps its snapshot, and the entries in it, alive until its
    /// first lookup after the map changes.
    ///
    /// ```
    /// use tripword_std::Registry;
    ///
    /// let config = tripword::Config::new().check::<tripword::W64>().unwrap();
    /// let hosts: Registry<String> = Registry::new(config);
    /// let mut local = hosts.local();
    /// assert!(local.with("db-1", |b| b.acquire()).is_ok());
    /// assert_eq!(hosts.len(), 1);
    /// ```
    pub fn local(&self) -> Local<'_, K, O, C, W> {
        self.map.local()
    }

    /// `key`'s breaker if there is one; makes none, and does not count as a
    /// use.
    pub fn peek<Q>(&self, key: &Q) -> Option<Arc<Entry<K, O, C, W>>>
    where
        K: Borrow<Q>,
        Q: Hash + Eq + ?Sized,
    {
        self.map.peek(key)
    }

    /// Calls `f` on every entry (a snapshot: entries made or evicted
    /// meanwhile may or may not be seen). For a status page.
    pub fn for_each(&self, f: impl FnMut(&Entry<K, O, C, W>)) {
        self.map.for_each(f)
    }

    /// Starts a new sweep epoch and evicts the entries no lookup marked in
    /// the one that ended (idle for a whole period between two calls),
    /// except those whose breaker is not `Closed`. Returns how many it
    /// evicted. Call it on a timer.
    ///
    /// ```
    /// use tripword::clock::ManualClock;
    /// use tripword::{Config, W64};
    /// use tripword_std::Registry;
    ///
    /// static CLOCK: ManualClock = ManualClock::new(0);
    /// let r = Registry::from_parts(Config::new().check::<W64>()?, &CLOCK, |_: &String| ());
    /// r.with("a", |_| ());
    /// r.with("b", |_| ());
    /// assert_eq!(r.evict_idle(), 0); // both used in this period
    /// r.with("a", |_| ());
    /// assert_eq!(r.evict_idle(), 1); // "b" was idle for a whole period
    /// assert!(r.peek("b").is_none());
    /// # Ok::<(), tripword::ConfigError>(())
    /// ```
    pub fn evict_idle(&self) -> usize {
        self.map.evict_idle()
    }
}

impl<K, O, C, W: Word> core::fmt::Debug for Registry<K, O, C, W> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("Registry")
            .field("len", &self.map.map.load().entries.len())
            .field("capacity", &self.map.capacity)
            .field("config", &self.config)
            .field("overrides", &self.overrides.len())
            .finish_non_exhaustive()
    }
}

/// Where a breaker is found by key: a [`RegistryOf`] or a [`Registry`]
/// (`Q` is the key as looked up: the registry's key type, or a borrowed
/// form of it, `&str` for a `String`). What the tower layer
/// `tripword_std::tower::RegistryLayer` picks each request's breaker from;
/// implement it to put another map of breakers behind that layer.
///
/// ```
/// use tripword::Status;
/// use tripword_std::registry::Lookup;
/// use tripword_std::{CircuitBreaker, Registry};
///
/// fn status_of<R: Lookup<str>>(registry: &R, key: &str) -> Status {
///     registry.lookup(key).status()
/// }
/// let hosts: Registry<String> = Registry::new(tripword::Config::new().check()?);
/// assert_eq!(status_of(&hosts, "db-1"), Status::Closed);
/// # Ok::<(), tripword::ConfigError>(())
/// ```
pub trait Lookup<Q: ?Sized> {
    /// The breaker found (an [`EntryOf`] for the registries here).
    type Breaker: CircuitBreaker;

    /// `key`'s breaker, made now if there is none, as a handle to keep.
    fn lookup(&self, key: &Q) -> Arc<Self::Breaker>;
}

impl<K, B, Q> Lookup<Q> for RegistryOf<K, B>
where
    K: Hash + Eq + Clone + Send + Sync + 'static + Borrow<Q>,
    B: CircuitBreaker + Send + Sync + 'static,
    Q: Hash + Eq + ToOwned<Owned = K> + ?Sized,
{
    type Breaker = EntryOf<K, B>;

    #[inline]
    fn lookup(&self, key: &Q) -> Arc<EntryOf<K, B>> {
        self.get(key)
    }
}

impl<K, O, C, W, Q> Lookup<Q> for Registry<K, O, C, W>
where
    K: Hash + Eq + Clone + Send + Sync + 'static + Borrow<Q>,
    O: Observer + Send + Sync + 'static,
    C: Clock + Clone + Send + Sync + 'static,
    W: Word,
    Q: Hash + Eq + ToOwned<Owned = K> + ?Sized,
{
    type Breaker = Entry<K, O, C, W>;

    #[inline]
    fn lookup(&self, key: &Q) -> Arc<Entry<K, O, C, W>> {
        self.map.get(key)
    }
}
