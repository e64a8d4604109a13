//! [`Fleet`]: every breaker a process keeps on one Redis deployment, on one
//! connection pool, one subscription and one watcher thread.

use crate::breaker::RedisBreaker;
use crate::engine::quorum::Quorum;
use crate::error::Error;
use crate::observer::FleetObserver;
use crate::options::{InDurations, Observers, Options, from_settings, options_setters};
use crate::transport::hub::Hub;
use crate::transport::watch;
use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, PoisonError, RwLock};
use tripword::{Status, ValidConfig, W64};

/// The breakers of one process on one Redis deployment: one per key,
/// made on first use, all served by one bounded connection pool (at most
/// 16 idle connections, plus one multiplexed connection for async calls
/// with the `tokio` feature), one pattern subscription and one watcher
/// thread, however many keys there are.
///
/// [`breaker`](Fleet::breaker) returns the same breaker for the same key;
/// [`evict_idle`](Fleet::evict_idle) forgets the keys no lookup asked for
/// in a whole period, as `tripword-std`'s `Registry` does (a breaker that is
/// not `Closed` is kept). A fleet is a `tripword_std::registry::Lookup`, so
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
    breakers: RwLock<HashMap<String, Member>>,
    /// The sweep epoch lookups mark their entries with.
    epoch: AtomicU64,
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
}

impl core::fmt::Debug for FleetBuilder {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        let mut d = f.debug_struct("FleetBuilder");
        d.field("url", &self.options.url);
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
            breakers: RwLock::new(HashMap::new()),
            epoch: AtomicU64::new(0),
        })
    }
}

impl Fleet {
    /// A builder for the fleet on the Redis at `url`.
    pub fn builder(url: impl Into<String>) -> FleetBuilder {
        FleetBuilder {
            options: Options::new(url.into()),
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
        breakers.get(key).map(|m| {
            self.mark(m);
            RedisBreaker::clone(&m.breaker)
        })
    }

    /// How many keys the fleet holds.
    pub fn len(&self) -> usize {
        self.breakers
            .read()
            .unwrap_or_else(PoisonError::into_inner)
            .len()
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
    pub fn evict_idle(&self) -> usize {
        let ended = self.epoch.fetch_add(1, Ordering::AcqRel);
        let mut breakers = self
            .breakers
            .write()
            .unwrap_or_else(PoisonError::into_inner);
        let before = breakers.len();
        breakers.retain(|_, m| {
            m.seen.load(Ordering::Relaxed) >= ended || m.breaker.status() != Status::Closed
        });
        before - breakers.len()
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
        let mut breakers = self
            .breakers
            .write()
            .unwrap_or_else(PoisonError::into_inner);
        let epoch = self.epoch.load(Ordering::Acquire);
        // Another thread may have made it meanwhile: theirs stays.
        let member = breakers.entry(key.to_owned()).or_insert_with(|| Member {
            breaker: made,
            seen: AtomicU64::new(epoch),
        });
        member.seen.store(epoch, Ordering::Relaxed);
        member.breaker.clone()
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
