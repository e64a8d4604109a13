//! [`Registry`], one breaker per key, found without a lock, and [`Local`],
//! a worker's handle on it with its own snapshot.

use std::any::Any;
use std::borrow::Borrow;
use std::cell::RefCell;
use std::collections::HashMap;
use std::hash::Hash;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError, Weak};

use arc_swap::ArcSwap;
use foldhash::fast::RandomState;
use tripword::Status;
use tripword::kit::CircuitBreaker;

use super::entry::Entry;
use super::force::{Apply, Hold};
use super::overflow;
use crate::settings::StdBreaker;

type Map<K, B> = HashMap<K, Arc<Entry<K, B>>, RandomState>;

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

/// What the writers (inserts, sweeps, group calls) share, under the write
/// lock.
pub(super) struct Writer<B> {
    /// The epoch the current sweep period started in: an entry last seen
    /// before it was idle through the whole period when the sweep ends it.
    /// Making room starts epochs too (for the least-recently-used order),
    /// not periods.
    period: u64,
    /// Whether the last new key found the registry full (a warning once
    /// per crossing).
    overflowing: bool,
    /// The group state each breaker made gets, and how to apply it.
    pub(super) hold: Option<(Hold, Apply<B>)>,
}

/// One breaker per key, made on first use, found without a lock, at most
/// [`capacity`](Registry::capacity) of them. See the [module docs](crate::registry).
///
/// `K` is the key (a host `String`, a `(host, route)` pair, an enum of
/// dependencies), `B` the breaker: a [`StdBreaker`] (the real microsecond
/// clock, the 64-bit word, no observer) unless set, or any
/// [`CircuitBreaker`]. Make one with [`new`](Registry::new) (a factory
/// makes each key's breaker, of any kind), [`from_settings`](Registry::from_settings)
/// (`StdBreaker`s from a default and per-key overrides), or
/// [`from_settings_on`](Registry::from_settings_on) (the same, on a chosen
/// clock and word, each breaker with an observer made from its key). A
/// breaker that is not `Closed` is never evicted as idle, and only a blank
/// one ([`Health::is_blank`](tripword::Health::is_blank)) to make room:
/// when every breaker kept knows something, a new key gets a breaker that
/// is not kept (see the [module docs](crate::registry), "A flood of keys").
///
/// ```
/// use std::sync::atomic::{AtomicU32, Ordering};
/// use tripword::clock::ManualClock;
/// use tripword::{Breaker, Config, Status};
/// use tripword_std::{CircuitBreaker, Registry};
///
/// static CLOCK: ManualClock = ManualClock::new(0);
/// static MADE: AtomicU32 = AtomicU32::new(0);
/// let r = Registry::new(|_: &u32| {
///     MADE.fetch_add(1, Ordering::Relaxed);
///     Breaker::new(Config::new().failure_threshold(1), &CLOCK)
/// })
/// .with_capacity(64);
/// let entry = r.get(&7); // an `Arc<Entry<u32, Breaker<..>>>`, a breaker itself
/// assert_eq!(CircuitBreaker::status(&*entry), Status::Closed);
/// assert_eq!(entry.config().failure_threshold(), 1); // the breaker's config
/// r.with(&7, |b| b.force_open());
/// assert_eq!((r.len(), MADE.load(Ordering::Relaxed)), (1, 1));
/// assert_eq!(r.peek(&7).unwrap().status(), Status::Open);
/// ```
pub struct Registry<K, B = StdBreaker> {
    map: ArcSwap<Snapshot<K, B>>,
    // The generation of the snapshot in `map`, set after it is stored.
    generation: AtomicU64,
    id: u64,
    // Dropped with the registry: threads drop their snapshots of it.
    alive: Arc<()>,
    // Serializes writers (inserts, sweeps, group calls); readers never
    // take it.
    write: Mutex<Writer<B>>,
    epoch: AtomicU64,
    make: Factory<K, B>,
    capacity: usize,
    hasher: RandomState,
    // Lookups of new keys that found every breaker kept holding state.
    overflowed: AtomicU64,
    name: Option<Arc<str>>,
}

/// The default [`capacity`](Registry::capacity).
pub const DEFAULT_CAPACITY: usize = 1024;

impl<K, B> Registry<K, B>
where
    K: Hash + Eq + Clone + Send + Sync + 'static,
    B: CircuitBreaker + Send + Sync + 'static,
{
    /// Breakers made by `make` from their key, on first use; at most
    /// [`DEFAULT_CAPACITY`] of them. `make` runs under the registry's write
    /// lock when a key is new: it must not use the registry.
    ///
    /// Any breaker: `tripword`'s own on any clock, a
    /// [`RateBreaker`](tripword::rate::RateBreaker), a breaker of another
    /// crate. The factory can name each breaker after its key, or configure
    /// it for its key.
    ///
    /// ```
    /// use tripword::clock::ManualClock;
    /// use tripword::{Breaker, Config, OnTransition, Status, Transition, W64};
    /// use tripword_std::Registry;
    ///
    /// static CLOCK: ManualClock = ManualClock::new(0);
    /// // A template config, checked once, on a hand-moved clock; each
    /// // breaker reports its transitions under its key.
    /// let config = Config::new().failure_threshold(1).check::<W64>()?;
    /// let hosts = Registry::new(move |host: &String| {
    ///     let host = host.clone();
    ///     Breaker::from_parts(config, &CLOCK, OnTransition(move |t: Transition| println!("{host}: {t}")))
    /// });
    /// hosts.with("db-1", |b| b.force_open());
    /// assert_eq!(hosts.get("db-1").status(), Status::Open);
    /// assert_eq!(hosts.get("db-1").config(), &config);
    /// # Ok::<(), tripword::ConfigError>(())
    /// ```
    pub fn new(make: impl Fn(&K) -> B + Send + Sync + 'static) -> Self {
        let hasher = RandomState::default();
        Registry {
            map: ArcSwap::from_pointee(Snapshot {
                generation: 0,
                entries: HashMap::with_hasher(hasher.clone()),
            }),
            generation: AtomicU64::new(0),
            id: NEXT_ID.fetch_add(1, Ordering::Relaxed),
            alive: Arc::new(()),
            write: Mutex::new(Writer {
                period: 0,
                overflowing: false,
                hold: None,
            }),
            epoch: AtomicU64::new(0),
            make: Box::new(make),
            capacity: DEFAULT_CAPACITY,
            hasher,
            overflowed: AtomicU64::new(0),
            name: None,
        }
    }

    /// Names the registry in what it reports of itself: the label
    /// `tripword.registry.name` of its overflow counter (feature
    /// `metrics`), the field `registry` of its overflow warning (feature
    /// `tracing`). Unnamed, both are the empty string.
    pub fn with_name(mut self, name: impl Into<Arc<str>>) -> Self {
        self.name = Some(name.into());
        self
    }

    /// The name given with [`with_name`](Self::with_name).
    pub fn name(&self) -> Option<&str> {
        self.name.as_deref()
    }

    /// How many lookups of a new key found every breaker kept holding
    /// state (none [blank](tripword::Health::is_blank)), and so got a
    /// breaker made for that lookup alone, not kept. Counted as long as
    /// the registry lives; see the [module docs](crate::registry), "A flood
    /// of keys".
    pub fn overflowed(&self) -> u64 {
        self.overflowed.load(Ordering::Relaxed)
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
    /// read-modify-write; see the [module docs](crate::registry)); the entry is not
    /// cloned. Keep `f` short. `f` cannot return a call future (it would
    /// borrow the entry): for a future, take the entry's handle with
    /// [`get`](Self::get) and make the call on it with
    /// [`CallAsync::new`](crate::future::CallAsync::new), whose future owns
    /// that handle.
    ///
    /// ```
    /// use tripword_std::future::CallAsync;
    /// use tripword_std::{CallError, CallPolicy, Registry, Settings};
    ///
    /// async fn query(sql: &str) -> Result<usize, std::io::Error> {
    ///     Ok(sql.len()) // the database round trip here
    /// }
    ///
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// let hosts: Registry<String> = Registry::from_settings(&Settings::new().into())?;
    /// // Sync: inside the closure, no handle taken.
    /// assert!(hosts.with("db-1.internal", |b| b.acquire()).is_ok());
    /// // Async: the future owns its handle, so it may outlive this scope.
    /// let call = CallAsync::new(hosts.get("db-1.internal"), CallPolicy::new(), query("SELECT 1"));
    /// let rows: Result<usize, CallError<std::io::Error>> = tokio::spawn(call).await?;
    /// assert_eq!(rows?, 8);
    /// # Ok(())
    /// # }
    /// ```
    #[inline]
    pub fn with<Q, R>(&self, key: &Q, f: impl FnOnce(&Entry<K, B>) -> R) -> R
    where
        K: Borrow<Q>,
        Q: Hash + Eq + ToOwned<Owned = K> + ?Sized,
    {
        self.find(key, |entry| f(entry))
    }

    /// `key`'s breaker, made now if there is none, as a handle to keep
    /// (across an `.await`, in a request's state, in a call future made by
    /// [`CallAsync::new`](crate::future::CallAsync::new)). One
    /// reference-count increment more than [`with`](Self::with).
    #[inline]
    pub fn get<Q>(&self, key: &Q) -> Arc<Entry<K, B>>
    where
        K: Borrow<Q>,
        Q: Hash + Eq + ToOwned<Owned = K> + ?Sized,
    {
        self.find(key, Arc::clone)
    }

    /// The hit path: this thread's snapshot, if current.
    #[inline(always)]
    fn find<Q, R>(&self, key: &Q, f: impl FnOnce(&Arc<Entry<K, B>>) -> R) -> R
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
    fn find_slow<Q, R>(&self, key: &Q, f: impl FnOnce(&Arc<Entry<K, B>>) -> R) -> R
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
    /// map: [`Local::with`] checks the snapshot's generation and probes
    /// it, without the thread-local lookup [`with`](Self::with) makes (the
    /// cheapest hit; see `docs/performance/services.md`, "The registry"). Keep one per
    /// worker (a tower service clone, a worker loop), not one per call. A
    /// handle keeps its snapshot, and the entries in it, alive until its
    /// first lookup after the map changes.
    ///
    /// ```
    /// use tripword_std::{Registry, Settings};
    ///
    /// let hosts: Registry<String> = Registry::from_settings(&Settings::new().into())?;
    /// let mut local = hosts.local();
    /// assert!(local.with("db-1", |b| b.acquire()).is_ok());
    /// assert_eq!(hosts.len(), 1);
    /// # Ok::<(), tripword_std::RegistrySettingsError>(())
    /// ```
    pub fn local(&self) -> Local<'_, K, B> {
        Local {
            registry: self,
            snapshot: self.map.load_full(),
        }
    }

    /// `key`'s breaker if there is one; makes none, and does not count as a
    /// use.
    pub fn peek<Q>(&self, key: &Q) -> Option<Arc<Entry<K, B>>>
    where
        K: Borrow<Q>,
        Q: Hash + Eq + ?Sized,
    {
        self.map.load().entries.get(key).cloned()
    }

    /// Calls `f` on every entry (a snapshot: entries made or evicted
    /// meanwhile may or may not be seen). For a status page.
    pub fn for_each(&self, mut f: impl FnMut(&Entry<K, B>)) {
        for entry in self.map.load().entries.values() {
            f(entry);
        }
    }

    /// The write lock. A writer that panicked left the map as published.
    fn lock(&self) -> MutexGuard<'_, Writer<B>> {
        self.write.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// The slow path of a miss: under the write lock, looks again, and
    /// publishes a copy of the map with a new entry for `key` (making room
    /// first if the map is full). When no room can be made (every breaker
    /// kept holds state), a transient entry: made for this lookup, not
    /// kept.
    #[cold]
    fn insert<Q>(&self, key: &Q) -> Arc<Entry<K, B>>
    where
        K: Borrow<Q>,
        Q: Hash + Eq + ToOwned<Owned = K> + ?Sized,
    {
        let mut writer = self.lock();
        let current = self.map.load_full();
        let current = &current.entries;
        if let Some(entry) = current.get(key) {
            return entry.clone();
        }
        let room = if current.len() >= self.capacity {
            self.make_room(current)
        } else {
            let mut map = HashMap::with_capacity_and_hasher(current.len() + 1, self.hasher.clone());
            map.extend(current.values().map(|e| (owned_key(e), e.clone())));
            Some(map)
        };
        let key: K = key.to_owned();
        let breaker = (self.make)(&key);
        // The group state, applied before anyone can see the breaker: a
        // group call cannot miss it (spec, "Registries under a flood of
        // keys").
        match writer.hold {
            Some((hold, apply)) if hold.left().is_some() => {
                apply(&breaker, hold);
            }
            Some(_) => writer.hold = None,
            None => {}
        }
        let entry = Arc::new(Entry::new(key, breaker, self.epoch.load(Ordering::Relaxed)));
        let Some(mut next) = room else {
            // Not kept, so not in any snapshot: no thread caches it.
            let first = !writer.overflowing;
            writer.overflowing = true;
            self.overflowed.fetch_add(1, Ordering::Relaxed);
            drop(writer);
            overflow::report(self.name(), self.capacity, first);
            return entry;
        };
        writer.overflowing = false;
        next.insert(owned_key(&entry), entry.clone());
        self.publish(next);
        entry
    }

    /// A copy of `current` with room for one more, or `None` when every
    /// entry holds state: only [blank](tripword::Health::is_blank) entries
    /// go, the least recently used first, an eighth of the capacity at once
    /// (at least one). Then starts a new epoch, for the order of the next
    /// evictions, not a new sweep period. Called with the write lock held.
    fn make_room(&self, current: &Map<K, B>) -> Option<Map<K, B>> {
        let mut blank: Vec<(u64, &Arc<Entry<K, B>>)> = current
            .values()
            .filter(|e| CircuitBreaker::health(&***e).is_blank())
            .map(|e| (e.seen(), e))
            .collect();
        if blank.is_empty() {
            return None;
        }
        self.epoch.fetch_add(1, Ordering::Relaxed);
        // A run of new keys does not copy the map at every one.
        let excess = current.len() + 1 - self.capacity;
        let batch = excess.max(self.capacity / 8).min(blank.len());
        blank.sort_unstable_by_key(|(seen, _)| *seen);
        let mut next = HashMap::with_capacity_and_hasher(current.len(), self.hasher.clone());
        next.extend(current.values().map(|e| (owned_key(e), e.clone())));
        for (_, e) in &blank[..batch] {
            next.remove(e.key());
        }
        Some(next)
    }

    /// Starts a new sweep period (and epoch) and evicts the entries no
    /// lookup marked in the period that ended (idle for a whole period
    /// between two calls), except those whose breaker is not `Closed`.
    /// Returns how many it evicted. Call it on a timer.
    ///
    /// An idle `Closed` breaker with failures counted (or calls in a rate
    /// window) is forgotten: a whole idle period is the operator's memory
    /// horizon. Making room for a new key never forgets it
    /// (`docs/registry.md`, "A flood of keys").
    ///
    /// ```
    /// use tripword::clock::ManualClock;
    /// use tripword::{Breaker, Config, W64};
    /// use tripword_std::Registry;
    ///
    /// static CLOCK: ManualClock = ManualClock::new(0);
    /// let config = Config::new().check::<W64>()?;
    /// let r = Registry::new(move |_: &String| Breaker::from_parts(config, &CLOCK, ()));
    /// r.with("a", |_| ());
    /// r.with("b", |_| ());
    /// assert_eq!(r.evict_idle(), 0); // both used in this period
    /// r.with("a", |_| ());
    /// assert_eq!(r.evict_idle(), 1); // "b" was idle for a whole period
    /// assert!(r.peek("b").is_none());
    /// # Ok::<(), tripword::ConfigError>(())
    /// ```
    pub fn evict_idle(&self) -> usize {
        let mut writer = self.lock();
        let started = writer.period;
        writer.period = self.epoch.fetch_add(1, Ordering::Relaxed) + 1;
        let current = self.map.load_full();
        let mut next =
            HashMap::with_capacity_and_hasher(current.entries.len(), self.hasher.clone());
        next.extend(
            current
                .entries
                .values()
                .filter(|e| !is_idle(e, started))
                .map(|e| (owned_key(e), e.clone())),
        );
        let evicted = current.entries.len() - next.len();
        if evicted > 0 {
            self.publish(next);
        }
        evicted
    }

    /// Under the write lock: sets the group state (`None` clears it) and
    /// runs `act` on every breaker kept, returning how many it acted on. A
    /// breaker made after the lock is released gets the new state; one
    /// made before is in the map `act` runs on.
    pub(super) fn act_on_all(
        &self,
        hold: Option<(Hold, Apply<B>)>,
        act: impl Fn(&B) -> bool,
    ) -> usize {
        let mut writer = self.lock();
        writer.hold = hold;
        let current = self.map.load_full();
        current
            .entries
            .values()
            .filter(|e| act(e.breaker()))
            .count()
    }
}

/// Idle through the sweep period that started in epoch `started`, and
/// closed.
fn is_idle<K, B: CircuitBreaker>(entry: &Arc<Entry<K, B>>, started: u64) -> bool {
    entry.seen() < started && CircuitBreaker::status(&**entry) == Status::Closed
}

/// The entry's key, for a map copy.
fn owned_key<K: Clone, B>(entry: &Arc<Entry<K, B>>) -> K {
    entry.key().clone()
}

impl<K, B> core::fmt::Debug for Registry<K, B> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("Registry")
            .field("len", &self.map.load().entries.len())
            .field("capacity", &self.capacity)
            .finish_non_exhaustive()
    }
}

/// A worker's handle on a [`Registry`] with its own snapshot of the map:
/// from [`Registry::local`].
pub struct Local<'r, K, B = StdBreaker> {
    registry: &'r Registry<K, B>,
    snapshot: Arc<Snapshot<K, B>>,
}

impl<K, B> Local<'_, K, B>
where
    K: Hash + Eq + Clone + Send + Sync + 'static,
    B: CircuitBreaker + Send + Sync + 'static,
{
    /// As [`Registry::with`]: runs `f` on `key`'s breaker, made now if
    /// there is none. A hit checks that this handle's snapshot is current
    /// (one load), probes it and runs `f`: no lock, no thread-local, no
    /// atomic read-modify-write.
    #[inline]
    pub fn with<Q, R>(&mut self, key: &Q, f: impl FnOnce(&Entry<K, B>) -> R) -> R
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
    fn with_slow<Q, R>(&mut self, key: &Q, f: impl FnOnce(&Entry<K, B>) -> R) -> R
    where
        K: Borrow<Q>,
        Q: Hash + Eq + ToOwned<Owned = K> + ?Sized,
    {
        let entry = self.registry.get(key);
        self.snapshot = self.registry.map.load_full();
        f(&entry)
    }
}

impl<K, B> core::fmt::Debug for Local<'_, K, B> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("Local")
            .field("generation", &self.snapshot.generation)
            .finish_non_exhaustive()
    }
}
