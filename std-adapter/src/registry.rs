//! A registry of named breakers: one per key (a host, an endpoint), made on
//! first use from a template config, found without a lock.
//!
//! ```
//! use std::time::Duration;
//! use tripword::{Outcome, Status};
//! use tripword_std::{BreakerExt, MonotonicClock, Registry, Settings};
//!
//! let config = Settings::new()
//!     .failure_threshold(2)
//!     .open_for(Duration::from_secs(30))
//!     .config::<MonotonicClock, tripword::W64>()?;
//! let hosts: Registry<String> = Registry::new(config);
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
//! `docs/design.md`, "The registry of named breakers", gives the reasons
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
use tripword::kit::{CircuitBreaker, Never};
use tripword::{
    Breaker, Clock, Observer, Outcome, Rejected, Release, Status, Ticket, ValidConfig, W64, Word,
};

use crate::clock::MonotonicClock;

/// One key's breaker in a [`Registry`]: dereferences to the
/// [`Breaker`], so `entry.call(..)`, `entry.acquire()` and the rest work on
/// it.
pub struct Entry<K, O = (), C = MonotonicClock, W: Word = W64> {
    key: K,
    breaker: Breaker<C, W, O>,
    // The sweep epoch of the last lookup.
    seen: AtomicU64,
}

impl<K, O, C, W: Word> Entry<K, O, C, W> {
    /// The key.
    pub fn key(&self) -> &K {
        &self.key
    }

    /// The breaker.
    pub fn breaker(&self) -> &Breaker<C, W, O> {
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

impl<K, O, C, W: Word> Deref for Entry<K, O, C, W> {
    type Target = Breaker<C, W, O>;
    fn deref(&self) -> &Self::Target {
        &self.breaker
    }
}

/// An entry is its key's breaker: `call`, `call_async`, the tower layer
/// (through an `Arc<Entry>` from [`Registry::get`]) work on it directly.
impl<K, O: Observer, C: Clock, W: Word> CircuitBreaker for Entry<K, O, C, W> {
    type Ticket = Ticket;
    type Clock = C;
    type Acquiring = Never<Result<Ticket, Rejected>>;
    type Releasing = Never<Release>;

    #[inline(always)]
    fn acquire(&self) -> Result<Ticket, Rejected> {
        self.breaker.acquire()
    }
    #[inline(always)]
    fn release(&self, ticket: Ticket, outcome: Outcome) -> Release {
        self.breaker.release(ticket, outcome)
    }
    #[inline(always)]
    fn release_failure_for(&self, ticket: Ticket, open_for: u64) -> Release {
        self.breaker.release_failure_for(ticket, open_for)
    }
    #[inline(always)]
    fn status(&self) -> Status {
        self.breaker.status()
    }
    #[inline(always)]
    fn clock(&self) -> &C {
        self.breaker.clock()
    }
    #[inline(always)]
    fn abandon_outcome(&self) -> Outcome {
        self.breaker.config().abandon()
    }
}

impl<K: core::fmt::Debug, O, C, W: Word> core::fmt::Debug for Entry<K, O, C, W> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("Entry")
            .field("key", &self.key)
            .field("breaker", &self.breaker)
            .finish()
    }
}

type Map<K, O, C, W> = HashMap<K, Arc<Entry<K, O, C, W>>, RandomState>;

/// A published map, numbered.
struct Snapshot<K, O, C, W: Word> {
    generation: u64,
    entries: Map<K, O, C, W>,
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

/// Makes the observer of a new key's breaker.
type MakeObserver<K, O> = Box<dyn Fn(&K) -> O + Send + Sync>;

/// One breaker per key, made on first use from a template config, found
/// without a lock, at most [`capacity`](Registry::capacity) of them. See
/// the [module docs](self).
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
    map: ArcSwap<Snapshot<K, O, C, W>>,
    // The generation of the snapshot in `map`, set after it is stored.
    generation: AtomicU64,
    id: u64,
    // Dropped with the registry: threads drop their snapshots of it.
    alive: Arc<()>,
    // Serializes writers (inserts, sweeps); readers never take it.
    write: Mutex<()>,
    epoch: AtomicU64,
    config: ValidConfig<W>,
    clock: C,
    observer: MakeObserver<K, O>,
    capacity: usize,
    hasher: RandomState,
}

/// The default [`capacity`](Registry::capacity).
pub const DEFAULT_CAPACITY: usize = 1024;

impl<K: Hash + Eq + Clone + Send + Sync + 'static> Registry<K> {
    /// Breakers on the [`MonotonicClock`], with no observer, each from
    /// `config`; at most [`DEFAULT_CAPACITY`] of them.
    pub fn new(config: ValidConfig<W64>) -> Self {
        Registry::from_parts(config, MonotonicClock, |_: &K| ())
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
        let hasher = RandomState::default();
        Registry {
            map: ArcSwap::from_pointee(Snapshot {
                generation: 0,
                entries: HashMap::with_hasher(hasher.clone()),
            }),
            generation: AtomicU64::new(0),
            id: NEXT_ID.fetch_add(1, Ordering::Relaxed),
            alive: Arc::new(()),
            write: Mutex::new(()),
            epoch: AtomicU64::new(0),
            config,
            clock,
            observer: Box::new(observer),
            capacity: DEFAULT_CAPACITY,
            hasher,
        }
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

    /// The template config.
    pub fn config(&self) -> &ValidConfig<W> {
        &self.config
    }

    /// Runs `f` on `key`'s breaker, made now if there is none. A hit is a
    /// lookup in this thread's snapshot of the map (no lock, no atomic
    /// read-modify-write; see the [module docs](self)); the entry is not
    /// cloned. Keep `f` short, or use [`get`](Self::get) to hold the
    /// breaker across an `.await`.
    #[inline]
    pub fn with<Q, R>(&self, key: &Q, f: impl FnOnce(&Entry<K, O, C, W>) -> R) -> R
    where
        K: Borrow<Q>,
        Q: Hash + Eq + ToOwned<Owned = K> + ?Sized,
    {
        self.find(key, |entry| f(entry))
    }

    /// `key`'s breaker, made now if there is none, as a handle to keep
    /// (across an `.await`, in a request's state). One reference-count
    /// increment more than [`with`](Self::with).
    pub fn get<Q>(&self, key: &Q) -> Arc<Entry<K, O, C, W>>
    where
        K: Borrow<Q>,
        Q: Hash + Eq + ToOwned<Owned = K> + ?Sized,
    {
        self.find(key, Arc::clone)
    }

    /// The hit path: this thread's snapshot, if current.
    #[inline(always)]
    fn find<Q, R>(&self, key: &Q, f: impl FnOnce(&Arc<Entry<K, O, C, W>>) -> R) -> R
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
                let snapshot = cached.snapshot.downcast_ref::<Snapshot<K, O, C, W>>()?;
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
    fn find_slow<Q, R>(&self, key: &Q, f: impl FnOnce(&Arc<Entry<K, O, C, W>>) -> R) -> R
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
    fn remember(&self, snapshot: &Arc<Snapshot<K, O, C, W>>) {
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
    fn publish(&self, entries: Map<K, O, C, W>) {
        let generation = self.generation.load(Ordering::Relaxed) + 1;
        self.map.store(Arc::new(Snapshot {
            generation,
            entries,
        }));
        self.generation.store(generation, Ordering::Release);
    }

    /// A handle for one thread or task that keeps its own snapshot of the
    /// map: [`Local::with`] checks the snapshot's generation and probes it,
    /// without the thread-local lookup [`with`](Self::with) makes (the
    /// cheapest hit; see `docs/services.md`, "The registry"). Keep one per
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
        Local {
            registry: self,
            snapshot: self.map.load_full(),
        }
    }

    /// `key`'s breaker if there is one; makes none, and does not count as a
    /// use.
    pub fn peek<Q>(&self, key: &Q) -> Option<Arc<Entry<K, O, C, W>>>
    where
        K: Borrow<Q>,
        Q: Hash + Eq + ?Sized,
    {
        self.map.load().entries.get(key).cloned()
    }

    /// Calls `f` on every entry (a snapshot: entries made or evicted
    /// meanwhile may or may not be seen). For a status page.
    pub fn for_each(&self, mut f: impl FnMut(&Entry<K, O, C, W>)) {
        for entry in self.map.load().entries.values() {
            f(entry);
        }
    }

    /// The slow path of a miss: under the write lock, looks again, and
    /// publishes a copy of the map with a new entry for `key` (making room
    /// first if the map is full).
    #[cold]
    fn insert<Q>(&self, key: &Q) -> Arc<Entry<K, O, C, W>>
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
        let mut next: Map<K, O, C, W> = if current.len() >= self.capacity {
            self.make_room(current)
        } else {
            let mut map = HashMap::with_capacity_and_hasher(current.len() + 1, self.hasher.clone());
            map.extend(current.values().map(|e| (owned_key(e), e.clone())));
            map
        };
        let key: K = key.to_owned();
        let entry = Arc::new(Entry {
            breaker: Breaker::from_parts(self.config, self.clock.clone(), (self.observer)(&key)),
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
    fn make_room(&self, current: &Map<K, O, C, W>) -> Map<K, O, C, W> {
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
                let rank = (e.status() != Status::Closed, e.seen.load(Ordering::Relaxed));
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
    fn swept(&self, current: &Map<K, O, C, W>) -> Map<K, O, C, W> {
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
fn is_idle<K, O: Observer, C: Clock, W: Word>(entry: &Arc<Entry<K, O, C, W>>, ended: u64) -> bool {
    entry.seen.load(Ordering::Relaxed) < ended && entry.status() == Status::Closed
}

/// The entry's key, for a map copy.
fn owned_key<K, O, C, W: Word>(entry: &Arc<Entry<K, O, C, W>>) -> K
where
    K: Clone,
{
    entry.key.clone()
}

/// A worker's handle on a [`Registry`] with its own snapshot of the map:
/// from [`Registry::local`].
pub struct Local<'r, K, O = (), C = MonotonicClock, W: Word = W64> {
    registry: &'r Registry<K, O, C, W>,
    snapshot: Arc<Snapshot<K, O, C, W>>,
}

impl<K, O, C, W: Word> Local<'_, K, O, C, W>
where
    K: Hash + Eq + Clone + Send + Sync + 'static,
    O: Observer + Send + Sync + 'static,
    C: Clock + Clone + Send + Sync + 'static,
{
    /// As [`Registry::with`]: runs `f` on `key`'s breaker, made now if there
    /// is none. A hit checks that this handle's snapshot is current (one
    /// load), probes it and runs `f`: no lock, no thread-local, no atomic
    /// read-modify-write.
    #[inline]
    pub fn with<Q, R>(&mut self, key: &Q, f: impl FnOnce(&Entry<K, O, C, W>) -> R) -> R
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
    fn with_slow<Q, R>(&mut self, key: &Q, f: impl FnOnce(&Entry<K, O, C, W>) -> R) -> R
    where
        K: Borrow<Q>,
        Q: Hash + Eq + ToOwned<Owned = K> + ?Sized,
    {
        let entry = self.registry.get(key);
        self.snapshot = self.registry.map.load_full();
        f(&entry)
    }
}

impl<K, O, C, W: Word> core::fmt::Debug for Local<'_, K, O, C, W> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("Local")
            .field("generation", &self.snapshot.generation)
            .finish_non_exhaustive()
    }
}

impl<K: core::fmt::Debug, O, C, W: Word> core::fmt::Debug for Registry<K, O, C, W> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("Registry")
            .field("len", &self.map.load().entries.len())
            .field("capacity", &self.capacity)
            .field("config", &self.config)
            .finish_non_exhaustive()
    }
}
