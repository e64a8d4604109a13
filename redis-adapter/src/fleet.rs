//! [`Fleet`]: every breaker a process keeps on one Redis deployment, on one
//! connection pool, one subscription and one watcher thread.

use crate::breaker::{
    Configured, ConfiguredDebug, DEFAULT_CONFIG, Deployment, Error, Following, InDurations, Quorum,
    RedisBreaker, Timing, from_settings,
};
use crate::hub::Hub;
use crate::observer::FleetObserver;
use crate::time::{LocalClock, Monotonic};
use crate::watch;
use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, PoisonError, RwLock};
use std::time::Duration;
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

/// Makes a key's observer.
type MakeObserver = dyn Fn(&str) -> Arc<dyn FleetObserver> + Send + Sync;

/// What a breaker is made with when its lookup chooses: a config, and an
/// observer (`None`: the fleet's).
type MadeWith = (ValidConfig<W64>, Option<Arc<dyn FleetObserver>>);

/// Where a fleet's breakers get their observer: one for all, or one made
/// for each key.
#[derive(Clone)]
enum Observers {
    One(Arc<dyn FleetObserver>),
    PerKey(Arc<MakeObserver>),
}

impl Observers {
    fn for_key(&self, key: &str) -> Arc<dyn FleetObserver> {
        match self {
            Observers::One(o) => o.clone(),
            Observers::PerKey(make) => make(key),
        }
    }
}

/// Builds a [`Fleet`].
///
/// Its defaults: the config [`DEFAULT_CONFIG`] for every key (5 failures
/// in a row trip the fleet, open for 1 s, probe timeout 5 s, no backoff),
/// no quorum, operation timeout 100 ms, refresh every 1 s, retry after
/// 200 ms, pub/sub on, no replica acknowledgement, the
/// [`Monotonic`] clock, no observer. Its `Debug` prints them, times as
/// durations.
///
/// Times are given as durations: [`settings`](Self::settings) takes
/// `tripword-std`'s [`Settings`](tripword_std::Settings) for the breakers'
/// config, and every other time is a [`Duration`].
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
    url: String,
    config: Configured,
    quorum: Quorum,
    timing: Timing,
    clock: Arc<dyn LocalClock>,
    observer: Observers,
    deployment: Deployment,
}

impl core::fmt::Debug for FleetBuilder {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("FleetBuilder")
            .field("url", &self.url)
            .field("config", &ConfiguredDebug(&self.config))
            .field("quorum", &self.quorum)
            .field("timing", &self.timing)
            .field("deployment", &self.deployment)
            .finish_non_exhaustive()
    }
}

impl FleetBuilder {
    /// The config of the breakers made by [`Fleet::breaker`], in
    /// durations: `settings` converted to the microseconds of the Redis
    /// server's clock (each time at least as long as set). Default
    /// [`DEFAULT_CONFIG`](crate::DEFAULT_CONFIG): 5 failures in a row, open
    /// 1 s, probe timeout 5 s. Settings that do not fit the fleet's 64-bit
    /// word make [`build`](Self::build) return [`Error::Settings`].
    ///
    /// ```no_run
    /// use std::time::Duration;
    /// use tripword_redis::Fleet;
    /// use tripword_std::Settings;
    ///
    /// let fleet = Fleet::builder("redis://127.0.0.1:6379/")
    ///     .settings(&Settings::new().open_for(Duration::from_secs(30)))
    ///     .build()?;
    /// # let _ = fleet;
    /// # Ok::<(), tripword_redis::Error>(())
    /// ```
    pub fn settings(mut self, settings: &tripword_std::Settings) -> Self {
        self.config = from_settings(settings);
        self
    }

    /// The config of the breakers made by [`Fleet::breaker`] in the raw
    /// form: microseconds of the Redis server's clock. Default
    /// [`DEFAULT_CONFIG`](crate::DEFAULT_CONFIG). To write it in durations,
    /// use [`settings`](Self::settings).
    pub fn config(mut self, config: ValidConfig<W64>) -> Self {
        self.config = Ok(config);
        self
    }

    /// Trips each breaker of the fleet only on failures seen by at least
    /// `instances` distinct instances (default 1). See
    /// [`Builder::quorum`](crate::Builder::quorum).
    pub fn quorum(mut self, instances: u32) -> Self {
        self.quorum = self.quorum.with_instances(instances);
        self
    }

    /// How long a vote counts towards the quorum, in the server's clock.
    /// See [`Builder::quorum_window`](crate::Builder::quorum_window).
    pub fn quorum_window(mut self, window: Duration) -> Self {
        self.quorum = self.quorum.with_window(window);
        self
    }

    /// The id this process votes under, for every key. See
    /// [`Builder::quorum_id`](crate::Builder::quorum_id).
    pub fn quorum_id(mut self, id: impl Into<String>) -> Self {
        self.quorum = self.quorum.with_voter(id.into());
        self
    }

    /// The longest an operation that goes to Redis may take, connecting
    /// included. Default 100 ms. See [`Builder::op_timeout`](crate::Builder::op_timeout).
    pub fn op_timeout(mut self, timeout: Duration) -> Self {
        self.timing.op_timeout = timeout.max(Duration::from_millis(1));
        self
    }

    /// How often the watcher reads every breaker's word. Default 1 s.
    pub fn refresh(mut self, period: Duration) -> Self {
        self.timing.refresh = period.max(Duration::from_millis(1));
        self
    }

    /// How long the watcher waits before trying Redis again after a
    /// failure. Default 200 ms.
    pub fn retry(mut self, period: Duration) -> Self {
        self.timing.retry = period.max(Duration::from_millis(1));
        self
    }

    /// Whether the watcher subscribes to the breakers' changes (default
    /// `true`).
    pub fn pubsub(mut self, on: bool) -> Self {
        self.timing.pubsub = on;
        self
    }

    /// Follows the primary the Redis Sentinels at `sentinels` name for
    /// `service`; the fleet's URL then only carries the settings of the
    /// connections to the primary. See [`Builder::sentinel`](crate::Builder::sentinel).
    ///
    /// ```no_run
    /// use tripword_redis::Fleet;
    ///
    /// // The primary's password and database come from the URL; the
    /// // sentinels name its address.
    /// let fleet = Fleet::builder("redis://:secret@primary/0")
    ///     .sentinel(
    ///         ["redis://10.0.0.1:26379/", "redis://10.0.0.2:26379/", "redis://10.0.0.3:26379/"],
    ///         "breakers",
    ///     )
    ///     .replicas(1)
    ///     .build()?;
    /// # let _ = fleet;
    /// # Ok::<(), tripword_redis::Error>(())
    /// ```
    pub fn sentinel<S: Into<String>>(
        mut self,
        sentinels: impl IntoIterator<Item = S>,
        service: impl Into<String>,
    ) -> Self {
        self.deployment.following = Some(Following::new(sentinels, service));
        self
    }

    /// The replicas every change must reach (`WAIT`) before an instance
    /// takes it as made. Default 0. See [`Builder::replicas`](crate::Builder::replicas).
    pub fn replicas(mut self, n: u32) -> Self {
        self.timing.replicas = n;
        self
    }

    /// The process's monotonic clock. Default [`Monotonic`].
    pub fn local_clock(mut self, clock: impl LocalClock) -> Self {
        self.clock = Arc::new(clock);
        self
    }

    /// Receives the reports of every breaker made by [`Fleet::breaker`]
    /// (see [`Builder::observer`](crate::Builder::observer)). One observer
    /// for all keys: for observers that name their breaker (`tripword-std`'s
    /// tracing and metrics observers), [`observer_per_key`](Self::observer_per_key).
    pub fn observer(mut self, observer: impl FleetObserver) -> Self {
        self.observer = Observers::One(Arc::new(observer));
        self
    }

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
        self.observer = Observers::PerKey(Arc::new(move |key: &str| -> Arc<dyn FleetObserver> {
            Arc::new(make(key))
        }));
        self
    }

    /// The words are in a Redis Cluster, reached through the builder's URL
    /// and `nodes` (more node URLs). See [`Builder::cluster`](crate::Builder::cluster).
    #[cfg(feature = "cluster")]
    #[cfg_attr(docsrs, doc(cfg(feature = "cluster")))]
    pub fn cluster<I, S>(mut self, nodes: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.deployment.cluster = Some(nodes.into_iter().map(Into::into).collect());
        self
    }

    /// The roots a `rediss://` server's certificate is checked against
    /// (PEM), in place of the system's. See [`Builder::tls_roots`](crate::Builder::tls_roots).
    #[cfg(feature = "tls")]
    #[cfg_attr(docsrs, doc(cfg(feature = "tls")))]
    pub fn tls_roots(mut self, pem: impl Into<Vec<u8>>) -> Self {
        self.deployment.tls.set_roots(pem.into());
        self
    }

    /// The certificate and key shown to `rediss://` servers. See
    /// [`Builder::tls_client_auth`](crate::Builder::tls_client_auth).
    #[cfg(feature = "tls")]
    #[cfg_attr(docsrs, doc(cfg(feature = "tls")))]
    pub fn tls_client_auth(mut self, cert: impl Into<Vec<u8>>, key: impl Into<Vec<u8>>) -> Self {
        self.deployment.tls.set_client_auth(cert.into(), key.into());
        self
    }

    /// Builds the fleet and starts its watcher thread. Connects to nothing
    /// yet: each breaker reads its word when it is made.
    ///
    /// # Errors
    /// [`Error::Url`], [`Error::Thread`], [`Error::Settings`],
    /// [`Error::Unsupported`].
    pub fn build(self) -> Result<Fleet, Error> {
        let config = self.config.map_err(Error::Settings)?;
        let hub = self.deployment.hub(&self.url, self.timing, self.clock)?;
        watch::spawn(&hub).map_err(Error::Thread)?;
        Ok(Fleet {
            hub,
            config,
            quorum: self.quorum,
            observer: self.observer,
            breakers: RwLock::new(HashMap::new()),
            epoch: AtomicU64::new(0),
        })
    }
}

impl Fleet {
    /// A builder for the fleet on the Redis at `url`.
    pub fn builder(url: impl Into<String>) -> FleetBuilder {
        FleetBuilder {
            url: url.into(),
            config: Ok(ValidConfig::new(DEFAULT_CONFIG)),
            quorum: Quorum::ONE,
            timing: Timing::DEFAULT,
            clock: Arc::new(Monotonic),
            observer: Observers::One(Arc::new(())),
            deployment: Deployment::default(),
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
        let made = Arc::new(RedisBreaker::join_with(
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
