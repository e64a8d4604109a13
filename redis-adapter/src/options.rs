//! What a [`Builder`](crate::Builder) and a
//! [`FleetBuilder`](crate::FleetBuilder) are built from: one [`Options`]
//! (a breaker alone is a fleet of one key), its setters written once
//! ([`options_setters!`]) for both builders, and the config's forms (the
//! default, settings in durations, its `Debug` in durations).

use crate::engine::quorum::Quorum;
use crate::error::Error;
use crate::observer::FleetObserver;
use crate::time::{LocalClock, LocalTicks, Monotonic};
use crate::transport::Timing;
use crate::transport::hub::Hub;
use std::sync::Arc;
use std::time::Duration;
use tripword::{Config, ValidConfig, W64};

/// The default config of a fleet breaker, in the raw form (microseconds of
/// the Redis server's clock): 5 failures in a row trip the fleet, open for
/// 1 s, probe timeout 5 s, no backoff, a dropped permit is a failure.
///
/// In [`Settings`](tripword_std::Settings), the form to write a config in,
/// these are `Settings::new()`'s values; but a setting converts to one
/// microsecond more than it spans (the clock's rounding, see
/// `tripword_std::RealClock::ticks`), so `settings(&Settings::new())` is
/// open for 1 000 001 µs: another config, with another fingerprint (see
/// [`RedisBreaker::config_mismatch`](crate::RedisBreaker::config_mismatch)). Every instance of a fleet must set
/// its config the same way: all by the default, or all by the same
/// settings.
///
/// ```
/// use std::time::Duration;
/// use tripword_redis::DEFAULT_CONFIG;
///
/// assert_eq!(DEFAULT_CONFIG.check::<tripword::W64>()?.open_for(), 1_000_000);
/// let converted = tripword_std::Settings::new().config::<tripword_redis::LocalTicks, tripword::W64>()?;
/// assert_eq!(converted.open_for(), 1_000_001);
/// assert_eq!(Duration::from_micros(DEFAULT_CONFIG.check::<tripword::W64>()?.probe_timeout()), Duration::from_secs(5));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub const DEFAULT_CONFIG: Config = Config::new()
    .failure_threshold(5)
    .open_for(1_000_000)
    .probe_timeout(5_000_000);

/// The sentinels a hub asks for the primary, and the service they watch.
#[derive(Clone, Debug)]
pub(crate) struct Following {
    pub(crate) sentinels: Vec<String>,
    pub(crate) service: String,
}

impl Following {
    pub(crate) fn new<S: Into<String>>(
        sentinels: impl IntoIterator<Item = S>,
        service: impl Into<String>,
    ) -> Following {
        Following {
            sentinels: sentinels.into_iter().map(Into::into).collect(),
            service: service.into(),
        }
    }
}

/// The deployment a builder's hub is for, beyond its URL: the sentinels to
/// follow, or (feature `cluster`) the cluster's nodes. Shared by
/// [`Builder`](crate::Builder) and [`FleetBuilder`](crate::FleetBuilder).
#[derive(Clone, Debug, Default)]
pub(crate) struct Deployment {
    pub(crate) following: Option<Following>,
    #[cfg(feature = "cluster")]
    pub(crate) cluster: Option<Vec<String>>,
    /// The certificates of the `rediss://` connections.
    pub(crate) tls: crate::transport::tls::Tls,
}

impl Deployment {
    /// The hub on `url` for this deployment. On a Redis Cluster, Sentinel
    /// (a cluster fails over by itself) and `replicas` (`WAIT` is not sent
    /// through the cluster connection) are refused:
    /// [`Error::Unsupported`].
    pub(crate) fn hub(
        &self,
        url: &str,
        timing: Timing,
        clock: Arc<dyn LocalClock>,
    ) -> Result<Arc<Hub>, Error> {
        #[cfg(feature = "cluster")]
        if self.cluster.is_some() {
            if self.following.is_some() {
                return Err(Error::Unsupported("sentinel on a Redis Cluster"));
            }
            if timing.replicas > 0 {
                return Err(Error::Unsupported("replicas(n) on a Redis Cluster"));
            }
        }
        let mut hub = Hub::new(url, timing, clock)
            .and_then(|hub| hub.with_tls(self.tls.clone()))
            .map_err(Error::Url)?;
        if let Some(f) = &self.following {
            hub = hub
                .following(&f.sentinels, &f.service)
                .map_err(Error::Url)?;
        }
        #[cfg(feature = "cluster")]
        if let Some(nodes) = &self.cluster {
            hub.on_cluster(url, nodes).map_err(Error::Url)?;
        }
        Ok(Arc::new(hub))
    }
}

/// A config as a person reads it: its times as durations of the server's
/// clock (the ticks are its microseconds).
pub(crate) struct InDurations<'a>(pub(crate) &'a ValidConfig<W64>);

impl core::fmt::Debug for InDurations<'_> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        let c = self.0;
        f.debug_struct("Config")
            .field("failure_threshold", &c.failure_threshold())
            .field("open_for", &Duration::from_micros(c.open_for()))
            .field("backoff_cap", &c.backoff_cap().map(Duration::from_micros))
            .field("probe_timeout", &Duration::from_micros(c.probe_timeout()))
            .field("horizon", &Duration::from_micros(c.horizon()))
            .field("abandon", &c.abandon())
            .finish()
    }
}

/// A builder's config: checked, or the error of the settings it came from
/// (returned by `build`).
pub(crate) type Configured = Result<ValidConfig<W64>, tripword_std::SettingsError>;

/// The config of `settings` in the server clock's microseconds.
pub(crate) fn from_settings(settings: &tripword_std::Settings) -> Configured {
    settings.config::<LocalTicks, W64>()
}

/// A builder's config for its `Debug`: in durations, or the error.
pub(crate) struct ConfiguredDebug<'a>(pub(crate) &'a Configured);

impl core::fmt::Debug for ConfiguredDebug<'_> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        match self.0 {
            Ok(config) => InDurations(config).fmt(f),
            Err(e) => f.debug_tuple("Err").field(e).finish(),
        }
    }
}

/// Makes a key's observer.
pub(crate) type MakeObserver = dyn Fn(&str) -> Arc<dyn FleetObserver> + Send + Sync;

/// Where breakers get their observer: one for all, or one made for each
/// key.
#[derive(Clone)]
pub(crate) enum Observers {
    One(Arc<dyn FleetObserver>),
    PerKey(Arc<MakeObserver>),
}

impl Observers {
    pub(crate) fn for_key(&self, key: &str) -> Arc<dyn FleetObserver> {
        match self {
            Observers::One(o) => o.clone(),
            Observers::PerKey(make) => make(key),
        }
    }
}

/// Everything a builder sets, shared by [`Builder`](crate::Builder) and
/// [`FleetBuilder`](crate::FleetBuilder): a new option is a field here and
/// a setter in [`options_setters!`].
pub(crate) struct Options {
    pub(crate) url: String,
    pub(crate) config: Configured,
    pub(crate) quorum: Quorum,
    pub(crate) timing: Timing,
    pub(crate) clock: Arc<dyn LocalClock>,
    pub(crate) observer: Observers,
    pub(crate) deployment: Deployment,
}

impl Options {
    /// The defaults, on the Redis at `url`.
    pub(crate) fn new(url: String) -> Options {
        Options {
            url,
            config: Ok(ValidConfig::new(DEFAULT_CONFIG)),
            quorum: Quorum::ONE,
            timing: Timing::DEFAULT,
            clock: Arc::new(Monotonic),
            observer: Observers::One(Arc::new(())),
            deployment: Deployment::default(),
        }
    }

    /// What `build` makes: the config, checked, and the hub.
    pub(crate) fn build(self) -> Result<Built, Error> {
        let config = self.config.map_err(Error::Settings)?;
        let hub = self.deployment.hub(&self.url, self.timing, self.clock)?;
        Ok(Built {
            config,
            quorum: self.quorum,
            observer: self.observer,
            hub,
        })
    }

    /// Adds the options to a builder's `Debug`, times in durations.
    pub(crate) fn fields(&self, d: &mut core::fmt::DebugStruct<'_, '_>) {
        d.field("config", &ConfiguredDebug(&self.config))
            .field("quorum", &self.quorum)
            .field("timing", &self.timing)
            .field("deployment", &self.deployment);
    }
}

/// What [`Options::build`] makes.
pub(crate) struct Built {
    pub(crate) config: ValidConfig<W64>,
    pub(crate) quorum: Quorum,
    pub(crate) observer: Observers,
    pub(crate) hub: Arc<Hub>,
}

/// The setters of [`Options`], written once for both builders:
/// `options_setters!(Builder)` adds them to a builder with a field
/// `options: Options`. Their docs speak for both.
macro_rules! options_setters {
    ($builder:ty) => {
        impl $builder {
            /// The config of the breakers it builds, in durations: `settings` converted to the
            /// microseconds of the Redis server's clock (each time at least as long
            /// as set, see [`Settings`](tripword_std::Settings)). Default
            /// [`DEFAULT_CONFIG`](crate::DEFAULT_CONFIG): 5 failures in a row, open 1 s, probe timeout
            /// 5 s. Every instance of a fleet must use the same config (the word is
            /// interpreted with it).
            ///
            /// Settings that do not fit the fleet's 64-bit word make
            /// [`build`](Self::build) return [`Error::Settings`](crate::Error::Settings), naming the field.
            ///
            /// ```no_run
            /// use std::time::Duration;
            /// use tripword_redis::RedisBreaker;
            /// use tripword_std::Settings;
            ///
            /// let settings = Settings::new()
            ///     .failure_threshold(5)
            ///     .open_for(Duration::from_secs(2))
            ///     .probe_timeout(Duration::from_secs(5));
            /// let breaker = RedisBreaker::builder("redis://127.0.0.1:6379/", "payments")
            ///     .settings(&settings)
            ///     .build()?;
            /// # let _ = breaker;
            /// # Ok::<(), tripword_redis::Error>(())
            /// ```
            pub fn settings(mut self, settings: &tripword_std::Settings) -> Self {
                self.options.config = $crate::options::from_settings(settings);
                self
            }

            /// The config in the raw form, in microseconds of the Redis server's
            /// clock (see [`time`](crate::time)): `open_for(1_000_000)` is one second, as
            /// the kit's own configs are written. Default [`DEFAULT_CONFIG`](crate::DEFAULT_CONFIG). To
            /// write it in durations, use [`settings`](Self::settings). Every
            /// instance of a fleet must use the same config (the word is
            /// interpreted with it).
            pub fn config(mut self, config: tripword::ValidConfig<tripword::W64>) -> Self {
                self.options.config = Ok(config);
                self
            }

            /// Trips the fleet only on failures seen by at least `instances`
            /// distinct instances (default 1: every instance's failures count in
            /// the shared word, one run for the whole fleet).
            ///
            /// With a quorum of 2 or more, each instance judges its own failures
            /// first, with its local breaker and the same config: its failures are
            /// counted there, at no round trip, and a success of its own ends its
            /// run. When its own run reaches the failure threshold, its local
            /// breaker opens, which holds this instance off (it rejects its calls
            /// while the shared word is `Closed`, and probes on its own after the
            /// open time), and it votes, in one round trip: its instance id with
            /// the server's time goes to the sorted set `<key>:votes`. The shared
            /// word trips, in the same atomic script as a compare-and-set, only when
            /// at least `instances` distinct instances voted within the
            /// [`quorum_window`](Self::quorum_window); the trip consumes the votes.
            /// A success of its local probe withdraws the instance's vote. While
            /// the shared word is not `Closed`, it decides for every instance as
            /// without a quorum (one probe for the whole fleet).
            ///
            /// So one instance whose own path to the dependency is broken is held
            /// off by itself and does not trip the fleet. The quorum and its
            /// window are part of the config fingerprint: every instance of a
            /// fleet must use the same. On a Redis Cluster the votes are kept in
            /// the key's slot, under `tripword:{<key>}:votes`.
            pub fn quorum(mut self, instances: u32) -> Self {
                self.options.quorum = self.options.quorum.with_instances(instances);
                self
            }

            /// How long a vote counts towards the [`quorum`](Self::quorum), in the
            /// server's clock. Default: twice the longest open time of the config
            /// (its backoff cap, if any, else `open_for`), so that an instance
            /// whose own breaker keeps failing its probes keeps its vote alive.
            pub fn quorum_window(mut self, window: std::time::Duration) -> Self {
                self.options.quorum = self.options.quorum.with_window(window);
                self
            }

            /// The id this instance votes under (see [`quorum`](Self::quorum)).
            /// Default: the process id and a random number, drawn when the breaker
            /// is made, so a restarted instance votes under a new id and its
            /// earlier vote counts beside it until the window ends. A stable id (the
            /// host or pod name) makes its new vote replace the earlier one. No two
            /// live instances may share an id: their votes would count as one.
            pub fn quorum_id(mut self, id: impl Into<String>) -> Self {
                self.options.quorum = self.options.quorum.with_voter(id.into());
                self
            }

            /// The longest an operation that goes to Redis may take, round trips,
            /// retries and connecting included; past it the instance falls back to
            /// its local breaker. Default 100 ms.
            pub fn op_timeout(mut self, timeout: std::time::Duration) -> Self {
                self.options.timing.op_timeout = timeout.max(std::time::Duration::from_millis(1));
                self
            }

            /// How often the watcher reads the word to refresh the mirror (and the
            /// server-time sample), whatever pub/sub delivers. The mirror's
            /// staleness bound without pub/sub. Default 1 s.
            pub fn refresh(mut self, period: std::time::Duration) -> Self {
                self.options.timing.refresh = period.max(std::time::Duration::from_millis(1));
                self
            }

            /// How long the watcher waits before trying Redis again after a
            /// failure. Default 200 ms.
            pub fn retry(mut self, period: std::time::Duration) -> Self {
                self.options.timing.retry = period.max(std::time::Duration::from_millis(1));
                self
            }

            /// Whether the watcher subscribes to the key's channel, on which every
            /// change is published (default `true`). Without it the mirror learns of
            /// other instances' changes only by refreshing.
            pub fn pubsub(mut self, on: bool) -> Self {
                self.options.timing.pubsub = on;
                self
            }

            /// Follows the primary that the Redis Sentinels at `sentinels`
            /// (`redis://host:port` each) name for `service`: every connection
            /// (opened at first use, and again after any error) asks them for the
            /// primary and checks that the server named is one (`ROLE`), all within
            /// the operation timeout. A subscription to `+switch-master` on one of
            /// the sentinels drops every connection to the old primary as soon as
            /// they announce a new one: the next operation reaches the new primary
            /// without an error on the old one, and the watcher subscribes again
            /// there. A failover not announced yet (that sentinel unreachable) is
            /// learnt from the first operation that fails on the old primary (it
            /// falls back to the local breaker, as on any error). The URL given to
            /// the builder then only carries the settings of the connections to the
            /// primary (user, password, database, protocol, TLS or not): its host
            /// and port are not used. `rediss://` sentinel URLs are reached over
            /// TLS (feature `tls`).
            ///
            /// A change acknowledged by the old primary but not yet replicated is
            /// lost by the failover; [`replicas`](Self::replicas) keeps every
            /// acknowledged change.
            pub fn sentinel<S: Into<String>>(
                mut self,
                sentinels: impl IntoIterator<Item = S>,
                service: impl Into<String>,
            ) -> Self {
                self.options.deployment.following =
                    Some($crate::options::Following::new(sentinels, service));
                self
            }

            /// The replicas every change must reach before this instance takes it
            /// as made (default 0: the primary's reply is enough). After each
            /// compare-and-set that changed the word, and after the claim of the
            /// config fingerprint, the instance sends `WAIT n t` on the same
            /// connection in the same round trip (`t`: what is left of the
            /// operation timeout); fewer than `n` replicas acknowledging is a
            /// failed operation, handled as any Redis error: the call falls back to
            /// the local breaker (a release reports [`Release::Unreported`](crate::Release::Unreported)), and
            /// the instance stays in [`Mode::Local`](crate::Mode::Local) until a claim is acknowledged
            /// by `n` replicas again. The change itself stays on the primary (Redis
            /// has no rollback): other instances may see it; it only is not
            /// acknowledged here. A probe election that is not acknowledged holds
            /// the fleet's probe for nobody until the probe timeout, as one whose
            /// reply is lost does.
            ///
            /// With `n` at least 1 and a failover that promotes a replica that had
            /// acknowledged, no acknowledged trip or probe election is lost. The
            /// cost: each change waits for the replicas' acknowledgement (one round
            /// trip still: the script and `WAIT` are pipelined), and on the async
            /// path a `WAIT` holds the commands queued behind it on the shared
            /// multiplexed connection until it answers. With fewer than `n`
            /// replicas in sync, no instance joins the shared word.
            pub fn replicas(mut self, n: u32) -> Self {
                self.options.timing.replicas = n;
                self
            }

            /// The instance's own monotonic clock, used only to estimate the
            /// server's time between round trips. Default [`Monotonic`](crate::Monotonic).
            pub fn local_clock(mut self, clock: impl $crate::time::LocalClock) -> Self {
                self.options.clock = std::sync::Arc::new(clock);
                self
            }

            /// Receives the instance's reports: a core observer, with the fleet's
            /// own reports if it takes them ([`FleetObserver`](crate::FleetObserver)). `tripword-std`'s
            /// `TracingObserver` and `MetricsObserver` are taken as they are (with
            /// the features `tracing` and `metrics`), and report mode changes and
            /// config mismatches too; any other core observer through
            /// [`Transitions`](crate::Transitions). Default: none.
            ///
            /// ```
            /// # #[cfg(feature = "tracing")] {
            /// use tripword_redis::RedisBreaker;
            /// use tripword_std::observe::TracingObserver;
            ///
            /// let builder = RedisBreaker::builder("redis://127.0.0.1:6379/", "payments")
            ///     .observer(TracingObserver::new("payments"));
            /// # let _ = builder;
            /// # }
            /// ```
            pub fn observer(mut self, observer: impl $crate::FleetObserver) -> Self {
                self.options.observer =
                    $crate::options::Observers::One(std::sync::Arc::new(observer));
                self
            }

            /// The word is in a Redis Cluster, reached through the builder's URL
            /// and `nodes` (more node URLs, tried in turn for the slot map). Each
            /// script runs on the node owning the key's slot (redirections
            /// followed), changes are published with `SPUBLISH` on a channel in the
            /// key's slot ([`RedisBreaker::channel`](crate::RedisBreaker::channel)), and the watcher subscribes to
            /// it with `SSUBSCRIBE` on that node. Async admissions and releases
            /// await their round trips on an async cluster connection with the
            /// feature `cluster-async`, and take the sync path (they block for
            /// their round trip) with `cluster` alone. The key names
            /// are unchanged. Not with [`sentinel`](Self::sentinel) (a cluster
            /// fails over by itself) or [`replicas`](Self::replicas): `build`
            /// returns [`Error::Unsupported`](crate::Error::Unsupported). With a [`quorum`](Self::quorum), the
            /// votes are kept in the key's slot (`tripword:{<key>}:votes`).
            #[cfg(feature = "cluster")]
            #[cfg_attr(docsrs, doc(cfg(feature = "cluster")))]
            pub fn cluster<I, S>(mut self, nodes: I) -> Self
            where
                I: IntoIterator<Item = S>,
                S: Into<String>,
            {
                self.options.deployment.cluster = Some(nodes.into_iter().map(Into::into).collect());
                self
            }

            /// The roots a `rediss://` server's certificate is checked against
            /// (PEM: one certificate or more), in place of the system's: the
            /// Redis, the sentinels and the primary they name, a cluster's nodes.
            /// A URL `rediss://host:port/` is reached over TLS (rustls), the
            /// certificate checked against `host`; `rediss://host:port/#insecure`
            /// checks nothing (for tests only).
            ///
            /// ```no_run
            /// use tripword_redis::RedisBreaker;
            ///
            /// let ca = std::fs::read("/etc/redis/tls/ca.crt")?;
            /// let breaker = RedisBreaker::builder("rediss://redis.internal:6380/", "payments")
            ///     .tls_roots(ca)
            ///     .build()?;
            /// # let _ = breaker;
            /// # Ok::<(), Box<dyn std::error::Error>>(())
            /// ```
            #[cfg(feature = "tls")]
            #[cfg_attr(docsrs, doc(cfg(feature = "tls")))]
            pub fn tls_roots(mut self, pem: impl Into<Vec<u8>>) -> Self {
                self.options.deployment.tls.set_roots(pem.into());
                self
            }

            /// The certificate (PEM, the chain) and private key (PEM) this instance
            /// shows to `rediss://` servers that ask for one (`tls-auth-clients`).
            #[cfg(feature = "tls")]
            #[cfg_attr(docsrs, doc(cfg(feature = "tls")))]
            pub fn tls_client_auth(
                mut self,
                cert: impl Into<Vec<u8>>,
                key: impl Into<Vec<u8>>,
            ) -> Self {
                self.options
                    .deployment
                    .tls
                    .set_client_auth(cert.into(), key.into());
                self
            }
        }
    };
}
pub(crate) use options_setters;
