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
//! The map is an immutable snapshot behind an [`ArcSwap`]: a lookup loads
//! the snapshot (lock-free and wait-free for readers, no write to memory
//! another thread reads) and probes a `HashMap` with a fast hasher
//! (`foldhash`). A miss takes the registry's write lock, copies the map with
//! the new entry and publishes the copy: a write costs O(n), which a map of
//! at most [`capacity`](Registry::capacity) entries that change rarely (new
//! hosts, evictions) affords. `docs/design.md`, "The registry of named
//! breakers", gives the reasons and the alternatives.
//!
//! # Idle keys and the bound
//! Each lookup marks its entry with the current *sweep epoch* (a load, and
//! a store only the first time in an epoch). [`evict_idle`](Registry::evict_idle),
//! which a service calls on a timer (every minute, say), starts a new epoch
//! and evicts the entries no lookup marked in the previous one: idle for a
//! whole period. It keeps an entry whose breaker is not `Closed` (forgetting
//! an open breaker would send the next callers to a failing dependency) or
//! that is held outside the map (an [`Arc`] from [`get`](Registry::get)).
//! When a new key finds the registry full, the same sweep runs; if it frees
//! nothing, the least recently used entries go, closed ones first, so the
//! map never holds more than `capacity` entries.

use std::borrow::Borrow;
use std::collections::HashMap;
use std::hash::Hash;
use std::ops::Deref;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};

use arc_swap::ArcSwap;
use foldhash::fast::RandomState;
use tripword::{Breaker, Clock, Observer, Status, ValidConfig, W64, Word};

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

impl<K: core::fmt::Debug, O, C, W: Word> core::fmt::Debug for Entry<K, O, C, W> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("Entry")
            .field("key", &self.key)
            .field("breaker", &self.breaker)
            .finish()
    }
}

type Map<K, O, C, W> = HashMap<K, Arc<Entry<K, O, C, W>>, RandomState>;

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
    map: ArcSwap<Map<K, O, C, W>>,
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

impl<K: Hash + Eq + Clone> Registry<K> {
    /// Breakers on the [`MonotonicClock`], with no observer, each from
    /// `config`; at most [`DEFAULT_CAPACITY`] of them.
    pub fn new(config: ValidConfig<W64>) -> Self {
        Registry::from_parts(config, MonotonicClock, |_: &K| ())
    }
}

impl<K: Hash + Eq + Clone, O: Observer, C: Clock + Clone, W: Word> Registry<K, O, C, W> {
    /// Breakers from `config` on `clock` (cloned into each), each with the
    /// observer `observer` makes from its key (`|key| TracingObserver::new(key.to_string())`);
    /// at most [`DEFAULT_CAPACITY`] of them.
    pub fn from_parts(
        config: ValidConfig<W>,
        clock: C,
        observer: impl Fn(&K) -> O + Send + Sync + 'static,
    ) -> Self {
        let hasher = RandomState::default();
        Registry {
            map: ArcSwap::from_pointee(HashMap::with_hasher(hasher.clone())),
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
        self.map.load().len()
    }

    /// Whether it holds none.
    pub fn is_empty(&self) -> bool {
        self.map.load().is_empty()
    }

    /// The template config.
    pub fn config(&self) -> &ValidConfig<W> {
        &self.config
    }

    /// Runs `f` on `key`'s breaker, made now if there is none. A hit is a
    /// lock-free load of the map's snapshot and a hash lookup; the entry
    /// is not cloned (no reference count touched). Keep `f` short, or use
    /// [`get`](Self::get) to hold the breaker across an `.await`.
    #[inline]
    pub fn with<Q, R>(&self, key: &Q, f: impl FnOnce(&Entry<K, O, C, W>) -> R) -> R
    where
        K: Borrow<Q>,
        Q: Hash + Eq + ToOwned<Owned = K> + ?Sized,
    {
        let map = self.map.load();
        if let Some(entry) = map.get(key) {
            entry.touch(self.epoch.load(Ordering::Relaxed));
            return f(entry);
        }
        drop(map);
        f(&self.insert(key))
    }

    /// `key`'s breaker, made now if there is none, as a handle to keep
    /// (across an `.await`, in a request's state). One reference-count
    /// increment more than [`with`](Self::with). While held, the entry is
    /// not evicted as idle (unless the registry is full of held entries).
    pub fn get<Q>(&self, key: &Q) -> Arc<Entry<K, O, C, W>>
    where
        K: Borrow<Q>,
        Q: Hash + Eq + ToOwned<Owned = K> + ?Sized,
    {
        if let Some(entry) = self.map.load().get(key) {
            entry.touch(self.epoch.load(Ordering::Relaxed));
            return entry.clone();
        }
        self.insert(key)
    }

    /// `key`'s breaker if there is one; makes none, and does not count as a
    /// use.
    pub fn peek<Q>(&self, key: &Q) -> Option<Arc<Entry<K, O, C, W>>>
    where
        K: Borrow<Q>,
        Q: Hash + Eq + ?Sized,
    {
        self.map.load().get(key).cloned()
    }

    /// Calls `f` on every entry (a snapshot: entries made or evicted
    /// meanwhile may or may not be seen). For a status page.
    pub fn for_each(&self, mut f: impl FnMut(&Entry<K, O, C, W>)) {
        for entry in self.map.load().values() {
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
        if let Some(entry) = current.get(key) {
            return entry.clone();
        }
        let mut next: Map<K, O, C, W> = if current.len() >= self.capacity {
            self.make_room(&current)
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
        self.map.store(Arc::new(next));
        entry
    }

    /// A copy of `current` with room for one more: the idle sweep, then, if
    /// it freed nothing, the least recently used entries, closed and unheld
    /// first. Called with the write lock held.
    fn make_room(&self, current: &Map<K, O, C, W>) -> Map<K, O, C, W> {
        let mut next = self.swept(current);
        if next.len() < self.capacity {
            return next;
        }
        // Held by `current` and `next`: 2 references are the registry's.
        // Evict an eighth of the capacity at once (at least one), so a run
        // of new keys does not copy the map at every one.
        let excess = next.len() + 1 - self.capacity;
        let batch = excess.max(self.capacity / 8).min(next.len());
        let mut order: Vec<((bool, bool, u64), K)> = next
            .values()
            .map(|e| {
                let rank = (
                    is_held(e, 2),
                    e.status() != Status::Closed,
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
    /// except those whose breaker is not `Closed` and those held outside
    /// the registry. Returns how many it evicted. Call it on a timer.
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
        let next = self.swept(&current);
        let evicted = current.len() - next.len();
        if evicted > 0 {
            self.map.store(Arc::new(next));
        }
        evicted
    }
}

/// Whether `entry`, with `refs` references the registry accounts for, is
/// held elsewhere too.
fn is_held<T>(entry: &Arc<T>, refs: usize) -> bool {
    Arc::strong_count(entry) > refs
}

/// Idle through the epoch `ended`, closed, and held by the current map
/// only (not by a reader's older snapshot, nor a handle from `get`).
fn is_idle<K, O: Observer, C: Clock, W: Word>(entry: &Arc<Entry<K, O, C, W>>, ended: u64) -> bool {
    entry.seen.load(Ordering::Relaxed) < ended
        && !is_held(entry, 1)
        && entry.status() == Status::Closed
}

/// The entry's key, for a map copy.
fn owned_key<K, O, C, W: Word>(entry: &Arc<Entry<K, O, C, W>>) -> K
where
    K: Clone,
{
    entry.key.clone()
}

impl<K: core::fmt::Debug, O, C, W: Word> core::fmt::Debug for Registry<K, O, C, W> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("Registry")
            .field("len", &self.map.load().len())
            .field("capacity", &self.capacity)
            .field("config", &self.config)
            .finish_non_exhaustive()
    }
}
