//! [`Fleet`]: every breaker a process keeps on one Redis deployment, on one
//! connection pool, one subscription and one watcher thread.

use crate::breaker::{DEFAULT_CONFIG, Deployment, Error, Following, Quorum, RedisBreaker, Timing};
use crate::hub::Hub;
use crate::observer::Observer;
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
/// not `Closed` is kept). With the `tripword-std` feature a fleet is a
/// `tripword_std::registry::Lookup`, so the per-key tower layer takes it.
///
/// ```no_run
/// use tripword_redis::Fleet;
///
/// let fleet = Fleet::builder("redis://127.0.0.1:6379/").build()?;
/// let payments = fleet.breaker("breaker:payments");
/// let search = fleet.breaker("breaker:search");
/// if let Ok(ticket) = payments.acquire() {
///     payments.release(ticket, tripword::Outcome::Success);
/// }
/// # let _ = search;
/// # Ok::<(), tripword_redis::Error>(())
/// ```
pub struct Fleet {
    hub: Arc<Hub>,
    config: ValidConfig<W64>,
    quorum: Quorum,
    observer: Arc<dyn Observer>,
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
            .field("timing", &self.hub.timing)
            .finish_non_exhaustive()
    }
}

/// Builds a [`Fleet`].
pub struct FleetBuilder {
    url: String,
    config: ValidConfig<W64>,
    quorum: Quorum,
    timing: Timing,
    clock: Arc<dyn LocalClock>,
    observer: Arc<dyn Observer>,
    deployment: Deployment,
}

impl core::fmt::Debug for FleetBuilder {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("FleetBuilder")
            .field("url", &self.url)
            .field("config", &self.config)
            .field("quorum", &self.quorum)
            .field("timing", &self.timing)
            .field("deployment", &self.deployment)
            .finish_non_exhaustive()
    }
}

impl FleetBuilder {
    /// The config of the breakers made by [`Fleet::breaker`] (microseconds
    /// of the Redis server's clock). Default
    /// [`DEFAULT_CONFIG`](crate::DEFAULT_CONFIG).
    pub fn config(mut self, config: ValidConfig<W64>) -> Self {
        self.config = config;
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

    /// Receives the reports of the breakers made by [`Fleet::breaker`].
    pub fn observer(mut self, observer: impl Observer) -> Self {
        self.observer = Arc::new(observer);
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

    /// Builds the fleet and starts its watcher thread. Connects to nothing
    /// yet: each breaker reads its word when it is made.
    ///
    /// # Errors
    /// [`Error::Url`], [`Error::Thread`].
    pub fn build(self) -> Result<Fleet, Error> {
        let hub = self.deployment.hub(&self.url, self.timing, self.clock)?;
        watch::spawn(&hub).map_err(Error::Thread)?;
        Ok(Fleet {
            hub,
            config: self.config,
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
            config: ValidConfig::new(DEFAULT_CONFIG),
            quorum: Quorum::ONE,
            timing: Timing::DEFAULT,
            clock: Arc::new(Monotonic),
            observer: Arc::new(()),
            deployment: Deployment::default(),
        }
    }

    /// The breaker under `key`, made with the fleet's config and observer
    /// if this process has none yet (made: it reads its word once, within
    /// the operation timeout, outside any lock).
    pub fn breaker(&self, key: &str) -> RedisBreaker {
        RedisBreaker::clone(&self.lookup_arc(key, None))
    }

    /// The breaker under `key`, made with `config` and `observer` if this
    /// process has none yet. An existing breaker keeps the config it was
    /// made with (every instance of a fleet must use the same config for a
    /// key).
    pub fn breaker_with(
        &self,
        key: &str,
        config: ValidConfig<W64>,
        observer: impl Observer,
    ) -> RedisBreaker {
        let observer: Arc<dyn Observer> = Arc::new(observer);
        RedisBreaker::clone(&self.lookup_arc(key, Some((config, observer))))
    }

    /// The breaker under `key`, made with `settings` (durations, converted
    /// to the microseconds of the server's clock) and the fleet's observer
    /// if this process has none yet.
    ///
    /// # Errors
    /// The settings' error, when a duration is out of range.
    #[cfg(feature = "tripword-std")]
    #[cfg_attr(docsrs, doc(cfg(feature = "tripword-std")))]
    pub fn breaker_with_settings(
        &self,
        key: &str,
        settings: &tripword_std::Settings,
    ) -> Result<RedisBreaker, tripword_std::SettingsError> {
        let config = settings.config::<crate::LocalTicks, W64>()?;
        let observer = self.observer.clone();
        Ok(RedisBreaker::clone(
            &self.lookup_arc(key, Some((config, observer))),
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

    fn lookup_arc(
        &self,
        key: &str,
        made_with: Option<(ValidConfig<W64>, Arc<dyn Observer>)>,
    ) -> Arc<RedisBreaker> {
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
        let (config, observer) = made_with.unwrap_or_else(|| (self.config, self.observer.clone()));
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
#[cfg(feature = "tripword-std")]
#[cfg_attr(docsrs, doc(cfg(feature = "tripword-std")))]
impl<Q: AsRef<str> + ?Sized> tripword_std::registry::Lookup<Q> for Fleet {
    type Breaker = RedisBreaker;

    fn lookup(&self, key: &Q) -> Arc<RedisBreaker> {
        self.lookup_arc(key.as_ref(), None)
    }
}
