//! [`Fleet`]: every breaker a process keeps on one Redis deployment, on one
//! connection pool, one subscription and one watcher thread.

use crate::breaker::RedisBreaker;
use crate::engine::quorum::Quorum;
use crate::error::Error;
use crate::observer::{FleetObserver, report_overflow};
use crate::options::{InDurations, Observers, Options, from_settings, options_setters};
use crate::transport::hub::Hub;
use crate::transport::watch;
use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError, RwLock};
use std::time::{Duration, Instant};
use tripword::{CircuitBreaker, Status, ValidConfig, W64};
use tripword_std::registry::Force;

/// The breakers of one process on one Redis deployment: one per key,
/// made on first use, all served by one bounded connection pool (at most
/// 16 idle connections, plus one multiplexed connection for async calls
/// with the `tokio` feature), one pattern subscription and one watcher
/// thread, however many keys there are.
///
/// [`breaker`](Fleet::breaker) returns the same breaker for the same key;
/// [`evict_idle`](Fleet::evict_idle) forgets the keys no lookup asked for
/// in a whole period, as `tripword-std`'s `Registry` does (a breaker that is
/// not `Closed` is kept). It keeps at most [`capacity`](Fleet::capacity)
/// keys, and as the `Registry` does under a flood of made-up keys, a new
/// key makes room only by evicting blank breakers (`Closed`, no failure
/// counted, here or in the shared word as mirrored); when none is blank
/// the new key gets a breaker made for that lookup and not kept, counted
/// by [`overflowed`](Fleet::overflowed), by a metric (feature `metrics`)
/// and by a warning once per crossing into full (feature `tracing`)
/// (`docs/spec.md`, "Registries under a flood of keys").
/// [`force_open_prefix`](Fleet::force_open_prefix),
/// [`force_open_prefix_for`](Fleet::force_open_prefix_for) and
/// [`force_close_prefix`](Fleet::force_close_prefix) force the keys this
/// instance holds under a prefix. A fleet is a `tripword_std::registry::Lookup`, so
/// the per-key tower layer takes it. Each breaker is a
/// [`CircuitBreaker`](tripword::CircuitBreaker) named by its key: calls run
/// through `tripword_std::BreakerExt` as through any breaker.
///
/// ```no_run
/// use std::time::Duration;
/// use tripword_redis::Fleet;
/// use tripword_std::{BreakerExt, Settings};
///
/// let fleet = Fleet::builder("redis://127.0.0.1:6379/")
///     .settings(&Settings::new().failure_threshold(5).open_for(Duration::from_secs(30)))
///     .build()?;
/// let payments = fleet.breaker("payments");
/// match payments.call(|| Ok::<_, std::io::Error>("paid")) {
///     Ok(receipt) => println!("{receipt}"),
///     // "circuit 'payments' open: call not admitted (retry after 29.9s)"
///     Err(e) => println!("{e}"),
/// }
/// # Ok::<(), tripword_redis::Error>(())
/// ```
pub struct Fleet {
    hub: Arc<Hub>,
    config: ValidConfig<W64>,
    quorum: Quorum,
    observer: Observers,
    breakers: RwLock<Members>,
    /// The sweep epoch lookups mark their entries with.
    epoch: AtomicU64,
    capacity: usize,
    /// Lookups of a new key that found every breaker kept holding state.
    overflowed: AtomicU64,
    /// Serializes the prefix forces with the making of new keys: a key is
    /// made (and, under a held prefix, forced open) wholly before or wholly
    /// after a prefix force, so the force reaches it or it sees the new
    /// held prefixes, and no lookup finds it before it is forced.
    group: Mutex<()>,
}

/// The keys held, and the prefixes held open for the keys made next.
#[derive(Default)]
struct Members {
    map: HashMap<String, Member>,
    held: Vec<(String, Hold)>,
    /// Whether the last new key found the fleet full (a warning once per
    /// crossing).
    overflowing: bool,
}

/// How a prefix is held open for the keys made under it.
#[derive(Clone, Copy, Debug)]
enum Hold {
    /// Until a close ([`Fleet::force_open_prefix`]).
    Open,
    /// For `open_for` from `from` ([`Fleet::force_open_prefix_for`]),
    /// measured on the process's monotonic time.
    OpenFor { from: Instant, open_for: Duration },
}

impl Hold {
    /// What is left of it: `None` once it is over.
    fn left(self) -> Option<Duration> {
        match self {
            Hold::Open => Some(Duration::MAX),
            Hold::OpenFor { from, open_for } => {
                Some(open_for.saturating_sub(from.elapsed())).filter(|d| !d.is_zero())
            }
        }
    }
}

impl Members {
    /// The strongest hold on `key` that is not over, and what is left of
    /// it: a hold with no end over any timed one, else the one with the
    /// most left; `None` if no held prefix covers it.
    fn hold(&self, key: &str) -> Option<(Hold, Duration)> {
        self.held
            .iter()
            .filter(|(p, _)| key.starts_with(p.as_str()))
            .filter_map(|&(_, hold)| Some((hold, hold.left()?)))
            .max_by_key(|&(_, left)| left)
    }
}

/// What a prefix force does.
#[derive(Clone, Copy)]
enum Act {
    Open,
    OpenFor(Duration),
    Close,
}

struct Member {
    breaker: Arc<RedisBreaker>,
    /// The last epoch a lookup asked for it in.
    seen: AtomicU64,
}

impl core::fmt::Debug for Fleet {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("Fleet")
            .field("breakers", &self.len())
            .field("config", &InDurations(&self.config))
            .field("quorum", &self.quorum)
            .field("timing", &self.hub.timing)
            .finish_non_exhaustive()
    }
}

/// What a breaker is made with when its lookup chooses: a config, and an
/// observer (`None`: the fleet's).
type MadeWith = (ValidConfig<W64>, Option<Arc<dyn FleetObserver>>);

/// Builds a [`Fleet`].
///
/// Its defaults: the config [`DEFAULT_CONFIG`](crate::DEFAULT_CONFIG) for every key (5 failures
/// in a row trip the fleet, open for 1 s, probe timeout 5 s, no backoff),
/// no quorum, operation timeout 100 ms, refresh every 1 s, retry after
/// 200 ms, pub/sub on, no replica acknowledgement, the
/// [`Monotonic`](crate::Monotonic) clock, no observer. Its `Debug` prints them, times as
/// durations.
///
/// Times are given as durations: [`settings`](Self::settings) takes
/// `tripword-std`'s [`Settings`](tripword_std::Settings) for the breakers'
/// config, and every other time is a [`Duration`](std::time::Duration).
/// [`config`](Self::config) takes the raw form, a core config in the
/// server clock's microseconds.
///
/// ```
/// use tripword_redis::Fleet;
///
/// let debug = format!("{:?}", Fleet::builder("redis://127.0.0.1:6379/"));
/// assert!(debug.contains("failure_threshold: 5, open_for: 1s"), "{debug}");
/// assert!(debug.contains("probe_timeout: 5s"), "{debug}");
/// ```
pub struct FleetBuilder {
    options: Options,
    capacity: usize,
}

impl core::fmt::Debug for FleetBuilder {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        let mut d = f.debug_struct("FleetBuilder");
        d.field("url", &self.options.url);
        d.field("capacity", &self.capacity);
        self.options.fields(&mut d);
        d.finish_non_exhaustive()
    }
}

options_setters!(FleetBuilder);

impl FleetBuilder {
    /// Each breaker made by [`Fleet::breaker`] gets the observer `make`
    /// makes for its key (once per breaker made: a key evicted and looked
    /// up again gets a new one).
    ///
    /// ```
    /// # #[cfg(all(feature = "tracing", feature = "metrics"))] {
    /// use tripword_redis::Fleet;
    /// use tripword_std::observe::{MetricsObserver, TracingObserver};
    ///
    /// // Events and series labelled with each breaker's key.
    /// let fleet = Fleet::builder("redis://127.0.0.1:6379/")
    ///     .observer_per_key(|key| (TracingObserver::new(key), MetricsObserver::new(key)));
    /// # let _ = fleet;
    /// # }
    /// ```
    pub fn observer_per_key<O: FleetObserver>(
        mut self,
        make: impl Fn(&str) -> O + Send + Sync + 'static,
    ) -> Self {
        self.options.observer =
            Observers::PerKey(Arc::new(move |key: &str| -> Arc<dyn FleetObserver> {
                Arc::new(make(key))
            }));
        self
    }

    /// At most `capacity` keys held by this instance (at least 1; 1024 by
    /// default, as `tripword-std`'s registry,
    /// `tripword_std::registry::DEFAULT_CAPACITY`). A new key that finds
    /// the fleet full evicts blank breakers (the least recently used, an
    /// eighth of the capacity at once); when none is blank, it gets a
    /// breaker made for that lookup and not kept
    /// ([`Fleet::overflowed`] counts them).
    pub fn capacity(mut self, capacity: usize) -> Self {
        self.capacity = capacity.max(1);
        self
    }

    /// Builds the fleet and starts its watcher thread. Connects to nothing
    /// yet: each breaker reads its word when it is made.
    ///
    /// # Errors
    /// [`Error::Url`], [`Error::Thread`], [`Error::Settings`],
    /// [`Error::Unsupported`].
    pub fn build(self) -> Result<Fleet, Error> {
        let built = self.options.build()?;
        watch::spawn(&built.hub).map_err(Error::Thread)?;
        Ok(Fleet {
            hub: built.hub,
            config: built.config,
            quorum: built.quorum,
            observer: built.observer,
            breakers: RwLock::new(Members::default()),
            epoch: AtomicU64::new(0),
            capacity: self.capacity,
            overflowed: AtomicU64::new(0),
            group: Mutex::new(()),
        })
    }
}

impl Fleet {
    /// A builder for the fleet on the Redis at `url`.
    pub fn builder(url: impl Into<String>) -> FleetBuilder {
        FleetBuilder {
            options: Options::new(url.into()),
            capacity: tripword_std::registry::DEFAULT_CAPACITY,
        }
    }

    /// The breaker under `key`, made with the fleet's config and observer
    /// if this process has none yet (made: it reads its word once, within
    /// the operation timeout, outside any lock).
    pub fn breaker(&self, key: &str) -> RedisBreaker {
        RedisBreaker::clone(&self.lookup_arc(key, None))
    }

    /// The breaker under `key`, made with `config` (the raw form:
    /// microseconds of the server's clock) and `observer` if this process
    /// has none yet. An existing breaker keeps the config it was made with
    /// (every instance of a fleet must use the same config for a key).
    pub fn breaker_with(
        &self,
        key: &str,
        config: ValidConfig<W64>,
        observer: impl FleetObserver,
    ) -> RedisBreaker {
        let observer: Arc<dyn FleetObserver> = Arc::new(observer);
        RedisBreaker::clone(&self.lookup_arc(key, Some((config, Some(observer)))))
    }

    /// The breaker under `key`, made with `settings` (durations, converted
    /// to the microseconds of the server's clock) and the fleet's observer
    /// if this process has none yet. An existing breaker keeps the config
    /// it was made with.
    ///
    /// # Errors
    /// The settings' error, when a duration is out of range.
    pub fn breaker_with_settings(
        &self,
        key: &str,
        settings: &tripword_std::Settings,
    ) -> Result<RedisBreaker, tripword_std::SettingsError> {
        let config = from_settings(settings)?;
        Ok(RedisBreaker::clone(
            &self.lookup_arc(key, Some((config, None))),
        ))
    }

    /// The breaker under `key` if this process has one; makes none.
    pub fn get(&self, key: &str) -> Option<RedisBreaker> {
        let breakers = self.breakers.read().unwrap_or_else(PoisonError::into_inner);
        breakers.map.get(key).map(|m| {
            self.mark(m);
            RedisBreaker::clone(&m.breaker)
        })
    }

    /// How many keys the fleet holds.
    pub fn len(&self) -> usize {
        self.breakers
            .read()
            .unwrap_or_else(PoisonError::into_inner)
            .map
            .len()
    }

    /// The most keys the fleet holds ([`FleetBuilder::capacity`]).
    pub fn capacity(&self) -> usize {
        self.capacity
    }

    /// How many lookups of a new key found every breaker held holding
    /// state, and so got a breaker made for that lookup alone, not kept.
    /// Reported too: with the `metrics` feature, the counter
    /// `tripword_std::observe::names::REGISTRY_OVERFLOWS`
    /// (`tripword.registry.overflows`) labelled
    /// `tripword.registry.name="fleet"`; with the `tracing` feature, a
    /// `WARN` event (target `tripword`, message `fleet full of breakers
    /// holding state: new keys get breakers that are not kept`, fields
    /// `registry = "fleet"`, `capacity`) once per crossing: at the first
    /// overflow, and again at the first after a new key found room.
    pub fn overflowed(&self) -> u64 {
        self.overflowed.load(Ordering::Relaxed)
    }

    /// Whether the fleet holds no key.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The keys the fleet holds, in no order.
    pub fn keys(&self) -> Vec<String> {
        self.breakers
            .read()
            .unwrap_or_else(PoisonError::into_inner)
            .map
            .keys()
            .cloned()
            .collect()
    }

    /// Starts a new sweep epoch and forgets the keys no lookup
    /// ([`breaker`](Self::breaker), [`get`](Self::get), the tower layer's)
    /// asked for in the one that ended: idle for a whole period between two
    /// calls. A breaker that is not `Closed` is kept (forgetting an open
    /// breaker would send the next callers to a failing dependency; its
    /// word stays in Redis either way). A forgotten breaker that a caller
    /// still holds goes on working; the key's next lookup makes a new one.
    /// Returns how many keys were forgotten. Call it on a timer.
    ///
    /// An idle `Closed` breaker with failures counted is forgotten (a whole
    /// idle period is the operator's horizon; the count stays in the
    /// shared word); making room for a new key never forgets it.
    pub fn evict_idle(&self) -> usize {
        let ended = self.epoch.fetch_add(1, Ordering::AcqRel);
        let mut breakers = self
            .breakers
            .write()
            .unwrap_or_else(PoisonError::into_inner);
        let before = breakers.map.len();
        breakers.map.retain(|_, m| {
            m.seen.load(Ordering::Relaxed) >= ended
                || CircuitBreaker::health(&*m.breaker).status != Status::Closed
        });
        before - breakers.map.len()
    }

    /// Holds open every breaker this instance holds under a key starting
    /// with `prefix` (`""`: every one), and each breaker it makes under
    /// such a key afterwards, until [`force_close_prefix`](Self::force_close_prefix)
    /// of that prefix or a shorter one. Acts on the keys this instance
    /// holds: a key no lookup of this instance made is not forced (its
    /// breaker, made later here, is; another instance's lookups are its
    /// own). Each force is a round trip ([`RedisBreaker::force_open`]),
    /// and lookups of new keys wait for the last; returns each key's
    /// result, in key order.
    pub fn force_open_prefix(&self, prefix: &str) -> Vec<(String, Result<(), Error>)> {
        self.force_prefix(prefix, Act::Open)
    }

    /// Opens every breaker this instance holds under a key starting with
    /// `prefix` for `open_for` ([`RedisBreaker::force_open_for`]: then each
    /// becomes half-open as after a trip, and the fleet elects its probe),
    /// and each breaker it makes under such a key before `open_for` has
    /// passed, for what is left of it (measured on the process's monotonic
    /// time from this call); after that, keys are made as usual. It
    /// replaces a hold of the same prefix; a key under several held
    /// prefixes gets the strongest (one with no end, else the one with the
    /// most left). [`force_close_prefix`](Self::force_close_prefix) ends it
    /// early. Acts on the keys this instance holds, as
    /// [`force_open_prefix`](Self::force_open_prefix) does; returns each
    /// key's result, in key order.
    pub fn force_open_prefix_for(
        &self,
        prefix: &str,
        open_for: Duration,
    ) -> Vec<(String, Result<(), Error>)> {
        self.force_prefix(prefix, Act::OpenFor(open_for))
    }

    /// Closes every breaker this instance holds under a key starting with
    /// `prefix` ([`RedisBreaker::force_close`]), and stops holding open the
    /// keys made afterwards under the prefixes it covers, timed or not (a
    /// held prefix shorter than `prefix` still holds). Returns each key's
    /// result, in key order.
    pub fn force_close_prefix(&self, prefix: &str) -> Vec<(String, Result<(), Error>)> {
        self.force_prefix(prefix, Act::Close)
    }

    fn force_prefix(&self, prefix: &str, act: Act) -> Vec<(String, Result<(), Error>)> {
        let _group = self.group.lock().unwrap_or_else(PoisonError::into_inner);
        let mut targets: Vec<(String, Arc<RedisBreaker>)> = {
            let mut breakers = self
                .breakers
                .write()
                .unwrap_or_else(PoisonError::into_inner);
            let hold = match act {
                Act::Open => Some(Hold::Open),
                Act::OpenFor(open_for) => Some(Hold::OpenFor {
                    from: Instant::now(),
                    open_for,
                }),
                Act::Close => None,
            };
            // Holds that are over go too.
            let held = &mut breakers.held;
            match hold {
                Some(hold) => {
                    held.retain(|(p, h)| p != prefix && h.left().is_some());
                    held.push((prefix.to_owned(), hold));
                }
                None => held.retain(|(p, h)| !p.starts_with(prefix) && h.left().is_some()),
            }
            breakers
                .map
                .iter()
                .filter(|(k, _)| k.starts_with(prefix))
                .map(|(k, m)| (k.clone(), m.breaker.clone()))
                .collect()
        };
        targets.sort_by(|a, b| a.0.cmp(&b.0));
        targets
            .into_iter()
            .map(|(key, b)| {
                let done = match act {
                    Act::Open => b.force_open(),
                    Act::OpenFor(open_for) => b.force_open_for(open_for),
                    Act::Close => b.force_close(),
                };
                (key, done)
            })
            .collect()
    }

    fn mark(&self, member: &Member) {
        let epoch = self.epoch.load(Ordering::Acquire);
        if member.seen.load(Ordering::Relaxed) < epoch {
            member.seen.store(epoch, Ordering::Relaxed);
        }
    }

    fn lookup_arc(&self, key: &str, made_with: Option<MadeWith>) -> Arc<RedisBreaker> {
        if let Some(m) = self
            .breakers
            .read()
            .unwrap_or_else(PoisonError::into_inner)
            .map
            .get(key)
        {
            self.mark(m);
            return m.breaker.clone();
        }
        // Made outside the lock: its first read is a round trip.
        let (config, observer) = made_with.unwrap_or((self.config, None));
        let observer = observer.unwrap_or_else(|| self.observer.for_key(key));
        let made = Arc::new(RedisBreaker::join(
            &self.hub,
            key.to_owned(),
            config,
            observer,
            self.quorum.clone(),
        ));
        let _group = self.group.lock().unwrap_or_else(PoisonError::into_inner);
        let hold = self
            .breakers
            .read()
            .unwrap_or_else(PoisonError::into_inner)
            .hold(key);
        // Before anyone can find it. Failed: the instance is local, and
        // forced open all the same.
        match hold {
            Some((Hold::Open, _)) => drop(made.force_open()),
            Some((Hold::OpenFor { .. }, left)) => drop(made.force_open_for(left)),
            None => {}
        }
        let mut breakers = self
            .breakers
            .write()
            .unwrap_or_else(PoisonError::into_inner);
        let epoch = self.epoch.load(Ordering::Acquire);
        // Another thread may have made it meanwhile: theirs stays.
        if let Some(m) = breakers.map.get(key) {
            m.seen.store(epoch, Ordering::Relaxed);
            return m.breaker.clone();
        }
        if breakers.map.len() >= self.capacity && !self.make_room(&mut breakers.map) {
            // Not kept: made for this lookup alone.
            let first = !breakers.overflowing;
            breakers.overflowing = true;
            self.overflowed.fetch_add(1, Ordering::Relaxed);
            drop(breakers);
            report_overflow(self.capacity, first);
            return made;
        }
        breakers.overflowing = false;
        breakers.map.insert(
            key.to_owned(),
            Member {
                breaker: made.clone(),
                seen: AtomicU64::new(epoch),
            },
        );
        made
    }

    /// Evicts the least recently used blank breakers, an eighth of the
    /// capacity at once (at least one); false when none is blank. Write
    /// lock held.
    fn make_room(&self, map: &mut HashMap<String, Member>) -> bool {
        let mut blank: Vec<(u64, String)> = map
            .iter()
            .filter(|(_, m)| is_blank(&m.breaker))
            .map(|(k, m)| (m.seen.load(Ordering::Relaxed), k.clone()))
            .collect();
        if blank.is_empty() {
            return false;
        }
        let excess = map.len() + 1 - self.capacity;
        let batch = excess.max(self.capacity / 8).min(blank.len());
        blank.sort_unstable();
        for (_, key) in &blank[..batch] {
            map.remove(key);
        }
        true
    }
}

/// A breaker that knows nothing: `Closed` with no failure counted, as its
/// health says (the shared word as this instance mirrors it, or its local
/// breaker).
fn is_blank(breaker: &RedisBreaker) -> bool {
    breaker.health().is_blank()
}

/// An operator's forces for generic code and `tripword-std`'s registry
/// group control: [`RedisBreaker::force_open`],
/// [`force_open_for`](RedisBreaker::force_open_for) and
/// [`force_close`](RedisBreaker::force_close), round trips whose error is
/// Redis's (or [`Error::ConfigMismatch`]).
impl Force for RedisBreaker {
    type Error = Error;

    fn force_open(&self) -> Result<(), Error> {
        RedisBreaker::force_open(self)
    }
    fn force_open_for(&self, open_for: Duration) -> Result<(), Error> {
        RedisBreaker::force_open_for(self, open_for)
    }
    fn force_close(&self) -> Result<(), Error> {
        RedisBreaker::force_close(self)
    }
}

/// The per-key tower layer of `tripword-std`
/// (`tripword_std::tower::RegistryLayer`) picks each request's breaker from
/// a fleet: made on first use, shared fleet-wide through Redis.
impl<Q: AsRef<str> + ?Sized> tripword_std::registry::Lookup<Q> for Fleet {
    type Breaker = RedisBreaker;

    fn lookup(&self, key: &Q) -> Arc<RedisBreaker> {
        self.lookup_arc(key.as_ref(), None)
    }
}
