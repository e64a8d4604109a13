//! [`RedisBreaker`]: one breaker for a fleet, its word under a Redis key.

use crate::hub::Hub;
use crate::local::Local;
use crate::mirror::{CLEAR, HELD, Mirror, NONE, RUN};
use crate::observer::{FleetObserver, Mode, Scope};
use crate::remote::RemoteCell;
use crate::time::{LocalClock, LocalTicks, Monotonic};
use crate::watch;
use core::num::NonZeroUsize;
use redis::RedisError;
use std::collections::HashSet;
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock, PoisonError};
use std::time::Duration;
use tripword::cell::{self, Swap};
use tripword::kit::CircuitBreaker;
#[cfg(not(feature = "tokio"))]
use tripword::kit::Never;
#[cfg(feature = "tokio")]
use tripword::kit::{Reply, TickVerdict};
use tripword::transition::{self, Decision, Event, Verdict};
use tripword::word::{Snapshot, State};
use tripword::{Cause, Config, Outcome, Rejected, Status, ValidConfig, W64, Word};

/// Why a [`Builder`] could not build, or an operation that must reach Redis
/// ([`RedisBreaker::sync`], [`RedisBreaker::force_open`]) failed.
#[derive(Debug)]
pub enum Error {
    /// The connection URL is not one the `redis` crate accepts.
    Url(RedisError),
    /// Redis did not answer (or answered with an error) within the
    /// operation timeout.
    Redis(RedisError),
    /// The watcher thread could not be started.
    Thread(std::io::Error),
    /// The fleet uses another config for this key: this instance does not
    /// write the shared word (see [`RedisBreaker::config_mismatch`]).
    ConfigMismatch {
        /// This instance's config fingerprint.
        ours: String,
        /// The fleet's, stored beside the word.
        fleet: String,
    },
    /// Options that do not work together were set (on a Redis Cluster:
    /// `sentinel`, `replicas` and `quorum` are not supported); the text
    /// names them.
    Unsupported(&'static str),
    /// The [`Settings`](tripword_std::Settings) given to
    /// [`Builder::settings`] or [`FleetBuilder::settings`](crate::FleetBuilder::settings)
    /// do not fit the fleet's word: the field, its value and its range, in
    /// durations.
    Settings(tripword_std::SettingsError),
}

impl core::fmt::Display for Error {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        match self {
            Error::Url(e) => write!(f, "tripword-redis: bad connection URL: {e}"),
            Error::Redis(e) => write!(f, "tripword-redis: Redis did not answer: {e}"),
            Error::Thread(e) => write!(f, "tripword-redis: cannot start the watcher: {e}"),
            Error::ConfigMismatch { ours, fleet } => write!(
                f,
                "tripword-redis: this instance's config ({ours}) is not the fleet's ({fleet})"
            ),
            Error::Unsupported(what) => write!(f, "tripword-redis: not supported: {what}"),
            Error::Settings(e) => write!(f, "tripword-redis: settings: {e}"),
        }
    }
}

impl std::error::Error for Error {}

/// What a release did.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Release {
    /// The outcome counted (in the shared word, or in the local breaker for
    /// a ticket the local breaker issued).
    Recorded,
    /// The ticket was stale (its state had passed, the probe timed out, or
    /// it came from another breaker): nothing changed.
    Stale,
    /// Redis did not answer: the outcome could not reach the shared word. It
    /// was recorded in the local breaker instead (when that is closed), and
    /// the instance switched to [`Mode::Local`].
    Unreported,
}

/// Proof of admission: release it exactly once with
/// [`RedisBreaker::release`] (or use a [`Permit`]).
#[must_use = "a ticket must be released; a lost probe ticket blocks the fleet until the probe timeout"]
#[derive(Debug, PartialEq, Eq, Hash)]
pub struct Ticket {
    // Two machine words, as the core's `Ticket`, so that
    // `Result<Ticket, Rejected>` comes back in two registers (the non-zero
    // origin is the niche): the address of the word it was issued from (the
    // mirror of the shared word, or the local breaker's; 8-aligned), with
    // the probe flag in bit 0 and the local flag in bit 1; and the counter.
    origin: NonZeroUsize,
    counter: u32,
}

impl Ticket {
    const PROBE: usize = 1;
    const LOCAL: usize = 2;

    #[inline(always)]
    fn new(address: usize, counter: u32, probe: bool, local: bool) -> Ticket {
        let flags = if probe { Self::PROBE } else { 0 } | if local { Self::LOCAL } else { 0 };
        Ticket {
            // An address is never 0.
            origin: NonZeroUsize::new(address | flags).unwrap_or(NonZeroUsize::MIN),
            counter,
        }
    }

    /// The state counter the ticket was issued under (of the shared word, or
    /// of the local breaker).
    pub fn counter(&self) -> u32 {
        self.counter
    }

    /// Whether this ticket is the probe: with [`Scope::Shared`], the single
    /// probe of the whole fleet.
    pub fn is_probe(&self) -> bool {
        self.origin.get() & Self::PROBE != 0
    }

    /// Which breaker issued it: the shared word or the local one.
    pub fn scope(&self) -> Scope {
        if self.origin.get() & Self::LOCAL != 0 {
            Scope::Local
        } else {
            Scope::Shared
        }
    }

    fn issuer(&self) -> usize {
        self.origin.get() & !(Self::PROBE | Self::LOCAL)
    }
}

/// Counters of an instance's work, for measurements and tests.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Stats {
    /// Round trips to Redis made by calls (`acquire`, `release`, `force_*`,
    /// `sync`), not by the watcher.
    pub call_round_trips: u64,
    /// Operations of calls that went to Redis.
    pub remote_calls: u64,
    /// Refreshes of the mirror by the watcher (loads, not published
    /// changes).
    pub refreshes: u64,
    /// Published changes the watcher applied to the mirror.
    pub published: u64,
}

/// Timeouts and periods of an instance.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Timing {
    pub(crate) op_timeout: Duration,
    pub(crate) refresh: Duration,
    pub(crate) retry: Duration,
    pub(crate) pubsub: bool,
    /// The replicas each change must reach before it counts (`WAIT`).
    pub(crate) replicas: u32,
}

impl Timing {
    pub(crate) const DEFAULT: Timing = Timing {
        op_timeout: Duration::from_millis(100),
        refresh: Duration::from_secs(1),
        retry: Duration::from_millis(200),
        pubsub: true,
        replicas: 0,
    };
}

/// The longest quorum window, in microseconds: 2^52, exact in the Lua
/// numbers of the scripts.
const MAX_WINDOW: u64 = 1 << 52;

/// How many instances must see failures before the shared word trips (see
/// [`Builder::quorum`]).
#[derive(Clone, PartialEq, Eq)]
pub(crate) struct Quorum {
    /// Distinct instances whose votes trip the shared word; 1: every
    /// failure goes to the shared word, as without a quorum.
    pub(crate) instances: u32,
    /// How long a vote counts, in microseconds of the server's clock;
    /// `None`: twice the longest open time of the config.
    pub(crate) window: Option<u64>,
    /// The id this instance votes under; `None`: one drawn when the
    /// breaker is made.
    pub(crate) voter: Option<Arc<str>>,
}

/// The window as a duration of the server's clock.
impl core::fmt::Debug for Quorum {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("Quorum")
            .field("instances", &self.instances)
            .field("window", &self.window.map(Duration::from_micros))
            .field("voter", &self.voter)
            .finish()
    }
}

impl Quorum {
    pub(crate) const ONE: Quorum = Quorum {
        instances: 1,
        window: None,
        voter: None,
    };

    /// Whether failures are judged per instance and trip by votes.
    pub(crate) fn on(&self) -> bool {
        self.instances > 1
    }

    /// The window in microseconds under `config`.
    pub(crate) fn window(&self, config: &ValidConfig<W64>) -> u64 {
        self.window.unwrap_or_else(|| {
            let longest = config
                .backoff_cap()
                .map_or(config.open_for(), |cap| cap.max(config.open_for()));
            longest.saturating_mul(2).clamp(1, MAX_WINDOW)
        })
    }

    pub(crate) fn with_instances(mut self, instances: u32) -> Self {
        self.instances = instances.max(1);
        self
    }

    pub(crate) fn with_voter(mut self, id: String) -> Self {
        self.voter = Some(id.into());
        self
    }

    pub(crate) fn with_window(mut self, window: Duration) -> Self {
        // At most 2^52 µs (142 years): exact in the scripts' numbers.
        let micros = u64::try_from(window.as_micros()).unwrap_or(u64::MAX);
        self.window = Some(micros.clamp(1, MAX_WINDOW));
        self
    }
}

/// Where the quorum's votes for the word under `key` are kept: `<key>:votes`
/// on one Redis; on a cluster, a key in `key`'s slot (the vote and trip
/// scripts touch both): the channel's name, which is in that slot, with
/// `:votes` (`tripword:{payments}:votes`).
fn votes_key(hub: &Hub, key: &str) -> String {
    if hub.is_cluster() {
        format!("{}:votes", hub.channel(key))
    } else {
        format!("{key}:votes")
    }
}

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
/// [`Builder`] and [`FleetBuilder`](crate::FleetBuilder).
#[derive(Clone, Debug, Default)]
pub(crate) struct Deployment {
    pub(crate) following: Option<Following>,
    #[cfg(feature = "cluster")]
    pub(crate) cluster: Option<Vec<String>>,
    /// The certificates of the `rediss://` connections.
    pub(crate) tls: crate::tls::Tls,
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

/// Builds a [`RedisBreaker`].
///
/// Its defaults: the config [`DEFAULT_CONFIG`] (5 failures in a row trip
/// the fleet, open for 1 s, probe timeout 5 s, no backoff), no quorum
/// (every instance's failures count in the shared word), operation timeout
/// 100 ms, refresh every 1 s, retry after 200 ms, pub/sub on, no replica
/// acknowledgement, the [`Monotonic`] clock, no observer. Its `Debug`
/// prints them, times as durations.
///
/// Times are given as durations: [`settings`](Self::settings) takes
/// `tripword-std`'s [`Settings`](tripword_std::Settings) for the breaker's
/// config, and every other time is a [`Duration`].
/// [`config`](Self::config) takes the raw form, a core config in the
/// server clock's microseconds.
///
/// ```
/// use std::time::Duration;
/// use tripword_redis::RedisBreaker;
/// use tripword_std::Settings;
///
/// let builder = RedisBreaker::builder("redis://127.0.0.1:6379/", "payments")
///     .settings(&Settings::new().failure_threshold(3).open_for(Duration::from_secs(30)));
/// let debug = format!("{builder:?}");
/// assert!(debug.contains("failure_threshold: 3, open_for: 30.000001s"), "{debug}");
/// assert!(debug.contains("op_timeout: 100ms, refresh: 1s, retry: 200ms"), "{debug}");
/// ```
pub struct Builder {
    url: String,
    key: String,
    config: Configured,
    quorum: Quorum,
    timing: Timing,
    clock: Arc<dyn LocalClock>,
    observer: Arc<dyn FleetObserver>,
    deployment: Deployment,
}

impl core::fmt::Debug for Builder {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("Builder")
            .field("url", &self.url)
            .field("key", &self.key)
            .field("config", &ConfiguredDebug(&self.config))
            .field("quorum", &self.quorum)
            .field("timing", &self.timing)
            .field("deployment", &self.deployment)
            .finish_non_exhaustive()
    }
}

/// The default config of a fleet breaker, in the raw form (microseconds of
/// the Redis server's clock): 5 failures in a row trip the fleet, open for
/// 1 s, probe timeout 5 s, no backoff, a dropped permit is a failure.
///
/// In [`Settings`](tripword_std::Settings), the form to write a config in,
/// these are `Settings::new()`'s values; but a setting converts to one
/// microsecond more than it spans (the clock's rounding, see
/// `tripword_std::RealClock::ticks`), so `settings(&Settings::new())` is
/// open for 1 000 001 µs: another config, with another fingerprint (see
/// [`RedisBreaker::config_mismatch`]). Every instance of a fleet must set
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

impl Builder {
    /// The breaker's config in durations: `settings` converted to the
    /// microseconds of the Redis server's clock (each time at least as long
    /// as set, see [`Settings`](tripword_std::Settings)). Default
    /// [`DEFAULT_CONFIG`]: 5 failures in a row, open 1 s, probe timeout
    /// 5 s. Every instance of a fleet must use the same config (the word is
    /// interpreted with it).
    ///
    /// Settings that do not fit the fleet's 64-bit word make
    /// [`build`](Self::build) return [`Error::Settings`], naming the field.
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
        self.config = from_settings(settings);
        self
    }

    /// The config in the raw form, in microseconds of the Redis server's
    /// clock (see [`crate::time`]): `open_for(1_000_000)` is one second, as
    /// the kit's own configs are written. Default [`DEFAULT_CONFIG`]. To
    /// write it in durations, use [`settings`](Self::settings). Every
    /// instance of a fleet must use the same config (the word is
    /// interpreted with it).
    pub fn config(mut self, config: ValidConfig<W64>) -> Self {
        self.config = Ok(config);
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
        self.quorum = self.quorum.with_instances(instances);
        self
    }

    /// How long a vote counts towards the [`quorum`](Self::quorum), in the
    /// server's clock. Default: twice the longest open time of the config
    /// (its backoff cap, if any, else `open_for`), so that an instance
    /// whose own breaker keeps failing its probes keeps its vote alive.
    pub fn quorum_window(mut self, window: Duration) -> Self {
        self.quorum = self.quorum.with_window(window);
        self
    }

    /// The id this instance votes under (see [`quorum`](Self::quorum)).
    /// Default: the process id and a random number, drawn when the breaker
    /// is made, so a restarted instance votes under a new id and its
    /// earlier vote counts beside it until the window ends. A stable id (the
    /// host or pod name) makes its new vote replace the earlier one. No two
    /// live instances may share an id: their votes would count as one.
    pub fn quorum_id(mut self, id: impl Into<String>) -> Self {
        self.quorum = self.quorum.with_voter(id.into());
        self
    }

    /// The longest an operation that goes to Redis may take, round trips,
    /// retries and connecting included; past it the instance falls back to
    /// its local breaker. Default 100 ms.
    pub fn op_timeout(mut self, timeout: Duration) -> Self {
        self.timing.op_timeout = timeout.max(Duration::from_millis(1));
        self
    }

    /// How often the watcher reads the word to refresh the mirror (and the
    /// server-time sample), whatever pub/sub delivers. The mirror's
    /// staleness bound without pub/sub. Default 1 s.
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

    /// Whether the watcher subscribes to the key's channel, on which every
    /// change is published (default `true`). Without it the mirror learns of
    /// other instances' changes only by refreshing.
    pub fn pubsub(mut self, on: bool) -> Self {
        self.timing.pubsub = on;
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
        self.deployment.following = Some(Following::new(sentinels, service));
        self
    }

    /// The replicas every change must reach before this instance takes it
    /// as made (default 0: the primary's reply is enough). After each
    /// compare-and-set that changed the word, and after the claim of the
    /// config fingerprint, the instance sends `WAIT n t` on the same
    /// connection in the same round trip (`t`: what is left of the
    /// operation timeout); fewer than `n` replicas acknowledging is a
    /// failed operation, handled as any Redis error: the call falls back to
    /// the local breaker (a release reports [`Release::Unreported`]), and
    /// the instance stays in [`Mode::Local`] until a claim is acknowledged
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
        self.timing.replicas = n;
        self
    }

    /// The instance's own monotonic clock, used only to estimate the
    /// server's time between round trips. Default [`Monotonic`].
    pub fn local_clock(mut self, clock: impl LocalClock) -> Self {
        self.clock = Arc::new(clock);
        self
    }

    /// Receives the instance's reports: a core observer, with the fleet's
    /// own reports if it takes them ([`FleetObserver`]). `tripword-std`'s
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
    pub fn observer(mut self, observer: impl FleetObserver) -> Self {
        self.observer = Arc::new(observer);
        self
    }

    /// The word is in a Redis Cluster, reached through the builder's URL
    /// and `nodes` (more node URLs, tried in turn for the slot map). Each
    /// script runs on the node owning the key's slot (redirections
    /// followed), changes are published with `SPUBLISH` on a channel in the
    /// key's slot ([`RedisBreaker::channel`]), and the watcher subscribes to
    /// it with `SSUBSCRIBE` on that node. Async admissions and releases
    /// await their round trips on an async cluster connection with the
    /// feature `cluster-async`, and take the sync path (they block for
    /// their round trip) with `cluster` alone. The key names
    /// are unchanged. Not with [`sentinel`](Self::sentinel) (a cluster
    /// fails over by itself) or [`replicas`](Self::replicas): `build`
    /// returns [`Error::Unsupported`]. With a [`quorum`](Self::quorum), the
    /// votes are kept in the key's slot (`tripword:{<key>}:votes`).
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
        self.deployment.tls.set_roots(pem.into());
        self
    }

    /// The certificate (PEM, the chain) and private key (PEM) this instance
    /// shows to `rediss://` servers that ask for one (`tls-auth-clients`).
    #[cfg(feature = "tls")]
    #[cfg_attr(docsrs, doc(cfg(feature = "tls")))]
    pub fn tls_client_auth(mut self, cert: impl Into<Vec<u8>>, key: impl Into<Vec<u8>>) -> Self {
        self.deployment.tls.set_client_auth(cert.into(), key.into());
        self
    }

    /// Builds the instance and starts its watcher thread (a breaker built
    /// alone has a connection pool and a watcher of its own; the breakers
    /// of a [`Fleet`](crate::Fleet) share them). Reads the word once
    /// (within the operation timeout): if Redis answers the instance starts
    /// in [`Mode::Shared`], otherwise in [`Mode::Local`], and joins the
    /// shared word when Redis answers. Fails only for a bad URL or when the
    /// thread cannot start: an unreachable Redis is not an error.
    ///
    /// # Errors
    /// [`Error::Url`], [`Error::Thread`], [`Error::Settings`],
    /// [`Error::Unsupported`].
    pub fn build(self) -> Result<RedisBreaker, Error> {
        let config = self.config.map_err(Error::Settings)?;
        let hub = self.deployment.hub(&self.url, self.timing, self.clock)?;
        // Joined first: the watcher's first read is of this key too.
        let breaker = RedisBreaker::join_with(&hub, self.key, config, self.observer, self.quorum);
        watch::spawn(&hub).map_err(Error::Thread)?;
        Ok(breaker)
    }
}

/// One circuit breaker shared by every instance that names the same key on
/// the same Redis: the word lives under the key and changes only by an
/// atomic compare-and-set there, applied by the core's
/// [`cell::update`](tripword::cell::update); each instance keeps a mirror
/// of it so that calls in `Closed` never touch the network.
///
/// It is a [`CircuitBreaker`]: calls run through it as through any other
/// breaker, with `tripword-std`'s `BreakerExt` (`call`, `call_async`) and
/// tower layers, whose error is `tripword_std::CallError`. Its
/// [name](CircuitBreaker::name) is its key, so a rejection names it.
///
/// ```no_run
/// use std::time::Duration;
/// use tripword_redis::RedisBreaker;
/// use tripword_std::{BreakerExt, CallError, Settings};
///
/// let breaker = RedisBreaker::builder("redis://127.0.0.1:6379/", "payments")
///     .settings(&Settings::new().failure_threshold(5).open_for(Duration::from_secs(2)))
///     .op_timeout(Duration::from_millis(50))
///     .build()?;
/// match breaker.call(|| Ok::<_, std::io::Error>("paid")) {
///     Ok(v) => println!("{v}"),
///     // "circuit 'payments' open: call not admitted (retry after 1.2s)"
///     Err(CallError::Open(why)) => println!("{why}"),
///     Err(CallError::Inner(e)) => println!("the call failed: {e}"),
/// }
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
///
/// A `RedisBreaker` is a handle: clones are the same breaker.
#[derive(Clone)]
pub struct RedisBreaker {
    inner: Arc<Inner>,
}

impl core::fmt::Debug for RedisBreaker {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("RedisBreaker")
            .field("key", &self.inner.key)
            .field("mode", &self.mode())
            .field("mirror", &Snapshot::decode::<W64>(self.word()))
            .finish_non_exhaustive()
    }
}

impl RedisBreaker {
    /// A breaker on `hub` under `key`: joins the hub's watcher, then reads
    /// the word once.
    #[cfg(test)]
    pub(crate) fn join(
        hub: &Arc<Hub>,
        key: String,
        config: ValidConfig<W64>,
        observer: Arc<dyn FleetObserver>,
    ) -> RedisBreaker {
        RedisBreaker::join_with(hub, key, config, observer, Quorum::ONE)
    }

    /// A breaker on `hub` under `key`, with a quorum: joins the hub's
    /// watcher, then reads the word once.
    pub(crate) fn join_with(
        hub: &Arc<Hub>,
        key: String,
        config: ValidConfig<W64>,
        observer: Arc<dyn FleetObserver>,
        quorum: Quorum,
    ) -> RedisBreaker {
        let fingerprint = fingerprint(&config, &quorum);
        // Keys spread over the watcher's refreshes: a fleet of many keys
        // reads a share of their fingerprints at each.
        let spread = key
            .bytes()
            .fold(0u32, |h, b| h.wrapping_mul(31).wrapping_add(u32::from(b)));
        let inner = Arc::new(Inner {
            config,
            channel: hub.channel(&key),
            fingerprint_key: format!("{key}:config"),
            votes_key: votes_key(hub, &key),
            voter: quorum.voter.as_deref().map_or_else(voter_id, str::to_owned),
            voted: AtomicBool::new(false),
            quorum,
            key,
            mirror: Mirror::new(),
            stored: Mutex::new(None),
            local: Local::new(),
            observer,
            stats: AtomicStats::default(),
            fingerprint,
            mismatch: Mutex::new(None),
            following: AtomicBool::new(false),
            unchecked: AtomicU32::new(spread),
            hub: hub.clone(),
            name: OnceLock::new(),
        });
        hub.join(&inner);
        let _ = inner.refresh(false);
        RedisBreaker { inner }
    }

    /// A handle on `inner`.
    #[cfg(feature = "tokio")]
    pub(crate) fn from_inner(inner: Arc<Inner>) -> RedisBreaker {
        RedisBreaker { inner }
    }

    /// Whether `a` and `b` are the same breaker (handles on one instance's
    /// breaker for one key).
    pub fn ptr_eq(a: &RedisBreaker, b: &RedisBreaker) -> bool {
        Arc::ptr_eq(&a.inner, &b.inner)
    }

    /// A builder for the breaker under `key` on the Redis at `url`
    /// (`redis://host:port/db`).
    pub fn builder(url: impl Into<String>, key: impl Into<String>) -> Builder {
        Builder {
            url: url.into(),
            key: key.into(),
            config: Ok(ValidConfig::new(DEFAULT_CONFIG)),
            quorum: Quorum::ONE,
            timing: Timing::DEFAULT,
            clock: Arc::new(Monotonic),
            observer: Arc::new(()),
            deployment: Deployment::default(),
        }
    }

    /// Asks to make a call. In `Closed` (as the mirror says) this is one
    /// atomic load: no network, no clock. While the mirror says `Open` or
    /// `Probing` and the server's time (estimated) is before the deadline,
    /// it rejects locally. Otherwise (the deadline passed, the mirror is
    /// stale or corrupt) it goes to Redis, where at most one instance of the
    /// fleet is elected probe. In [`Mode::Local`] the local breaker decides.
    ///
    /// # Errors
    /// [`Rejected`]: not admitted, with the cause and the wait.
    #[inline]
    pub fn acquire(&self) -> Result<Ticket, Rejected> {
        let inner = &*self.inner;
        // The word, when the kit's decision on it is a closed admission
        // that stores nothing (see `mirror`).
        let word = inner.mirror.admit();
        if word != NONE {
            return Ok(inner.ticket(Snapshot::counter_bits::<W64>(word), false));
        }
        self.acquire_slow()
    }

    #[inline(never)]
    fn acquire_slow(&self) -> Result<Ticket, Rejected> {
        self.inner.answered(match self.inner.acquire_prepare() {
            Ok(answer) => answer,
            Err(base) => self.acquire_remote(base),
        })
    }

    #[inline(never)]
    fn acquire_remote(&self, base: u64) -> Result<Ticket, Rejected> {
        let inner = &*self.inner;
        let config = &inner.config;
        let done = inner.remote(true, |cell| {
            let (seen, at) = cell.fetch()?;
            let applied = cell::update(
                cell,
                config,
                seen,
                Event::Admit,
                Some(at),
                || cell.now(),
                |swap| inner.report(swap),
            )?;
            // The server time the deciding attempt read: that of the last
            // reply.
            Ok((applied, cell.latest().map_or(at, |(t, _)| t)))
        });
        match done {
            Ok((applied, at)) => inner.admission(base, applied, at),
            Err(_) => {
                inner.detach();
                inner.acquire_local()
            }
        }
    }

    /// Reports how an admitted call went. A release settles locally, with
    /// no network, only when the mirror shows it changes nothing (a success
    /// with no failures counted, an ignored outcome, a ticket whose state has
    /// passed); a failure, a success after failures and every probe result go
    /// to Redis.
    #[inline]
    pub fn release(&self, ticket: Ticket, outcome: Outcome) -> Release {
        if self.inner.release_quietly(&ticket, outcome) {
            return Release::Recorded;
        }
        self.release_slow(ticket, outcome)
    }

    #[inline(never)]
    fn release_slow(&self, ticket: Ticket, outcome: Outcome) -> Release {
        let release = match self.inner.release_prepare(&ticket, outcome) {
            Ok(settled) => settled,
            Err(word) => self.release_remote(word, ticket.counter, outcome),
        };
        self.inner.released(release, outcome)
    }

    #[inline(never)]
    fn release_remote(&self, word: u64, counter: u32, outcome: Outcome) -> Release {
        let inner = &*self.inner;
        let event = Event::Release { counter, outcome };
        let base = inner.mirror.base();
        let done = inner.remote(true, |cell| {
            cell::update(
                cell,
                &inner.config,
                word,
                event,
                None,
                || cell.now(),
                |swap| inner.report(swap),
            )
        });
        match done {
            Ok(applied) => inner.recorded(base, &applied),
            Err(_) => {
                inner.detach();
                inner.unreported(outcome)
            }
        }
    }

    /// Asks to make a call and returns a guard that releases on drop (with
    /// the config's abandon outcome, a failure by default).
    ///
    /// # Errors
    /// [`Rejected`]: not admitted.
    pub fn permit(&self) -> Result<Permit<'_>, Rejected> {
        self.acquire().map(|ticket| Permit {
            breaker: self,
            ticket: Some(ticket),
        })
    }

    /// The status: of the mirror (at the estimated server time) in
    /// [`Mode::Shared`], of the local breaker in [`Mode::Local`]. With a
    /// [`quorum`](Builder::quorum), while the mirror says `Closed`, the
    /// instance's own view: its local breaker's status. A read: no
    /// network, stores nothing. Without a valid estimate of the server's
    /// time (no recent sample, the instance's clock went back, or the
    /// estimate is before the timestamp of the word the mirror holds), a
    /// timed state is reported as the mirror holds it (`Open`, `Probing`):
    /// whether its time is up is Redis's to say, at the next admission.
    /// An instance that follows the fleet's word (its config is not the
    /// fleet's, see [`config_mismatch`](Self::config_mismatch)) reports
    /// `Probing` while the word is, `Open` while the word is in any other
    /// state but `Closed`, and its local breaker's status otherwise.
    pub fn status(&self) -> Status {
        let inner = &*self.inner;
        if inner.mirror.attached() {
            let word = inner.mirror.word();
            let held = Snapshot::decode::<W64>(word);
            let mut void = false;
            let status = transition::status_at(&inner.config, word, || match inner.estimate() {
                Some(now) if !before_stamp(&inner.config, held, now) => now,
                _ => {
                    void = true;
                    0
                }
            });
            let status = match held {
                Ok(held) if void => held.state.status(),
                _ => status,
            };
            if status == Status::Closed && inner.quorum.on() {
                // The instance's own view, while the fleet is closed.
                return inner.local.status(&inner.config, &*inner.hub.clock);
            }
            status
        } else {
            if inner.following.load(Ordering::Acquire)
                && let Some(why) = fleet_holds(&inner.config, inner.mirror.word(), None)
            {
                // A follower held off by the fleet's word.
                return if why.cause() == Cause::Probing {
                    Status::Probing
                } else {
                    Status::Open
                };
            }
            inner.local.status(&inner.config, &*inner.hub.clock)
        }
    }

    /// Whether the instance uses the shared word or its local breaker.
    pub fn mode(&self) -> Mode {
        if self.inner.mirror.attached() {
            Mode::Shared
        } else {
            Mode::Local
        }
    }

    /// The mirror: the shared word as this instance last saw it.
    pub fn word(&self) -> u64 {
        self.inner.mirror.word()
    }

    /// The server's time now as this instance estimates it (microseconds),
    /// if it has a recent sample.
    pub fn fleet_now(&self) -> Option<u64> {
        self.inner.hub.estimate()
    }

    /// Reads the word from Redis into the mirror now (repairing a corrupt
    /// word, spec I8), and joins the shared word if the instance was local.
    /// The watcher does this every refresh period.
    ///
    /// # Errors
    /// [`Error::Redis`] when Redis did not answer in time (the instance then
    /// switches to [`Mode::Local`]).
    pub fn sync(&self) -> Result<Status, Error> {
        self.inner.refresh(true).map_err(|e| {
            self.inner.detach();
            Error::Redis(e)
        })?;
        Ok(self.status())
    }

    /// Holds the whole fleet open until [`force_close`](Self::force_close).
    /// A fleet held open stays open on an instance that loses Redis: its
    /// local breaker is forced open too, with no open time to end it.
    ///
    /// # Errors
    /// [`Error::Redis`] when Redis did not answer in time: the shared word
    /// did not change. This instance, now local, is forced open all the
    /// same (it rejects until a `force_close` or until it rejoins the
    /// shared word); try again to hold the fleet.
    pub fn force_open(&self) -> Result<(), Error> {
        self.force(Event::ForceOpen)
    }

    /// Closes the whole fleet's breaker and makes every ticket issued before
    /// stale. With a [`quorum`](Builder::quorum), drops every instance's
    /// vote too (one more round trip); the instances held off by their own
    /// breakers stay so until their own probes succeed.
    ///
    /// # Errors
    /// [`Error::Redis`] when Redis did not answer in time: the shared word
    /// did not change. This instance, now local, closes its local breaker
    /// all the same; try again to close the fleet.
    pub fn force_close(&self) -> Result<(), Error> {
        self.force(Event::ForceClose)
    }

    fn force(&self, event: Event) -> Result<(), Error> {
        let inner = &*self.inner;
        if let Some(fleet) = inner.config_mismatch() {
            // Its config reads the fleet's word otherwise: it must not
            // write it.
            inner.force_local(event);
            return Err(Error::ConfigMismatch {
                ours: inner.fingerprint.clone(),
                fleet,
            });
        }
        let base = inner.mirror.base();
        let done = inner.remote(true, |cell| {
            let (seen, at) = cell.fetch()?;
            let applied = cell::update(
                cell,
                &inner.config,
                seen,
                event,
                Some(at),
                || cell.now(),
                |swap| inner.report(swap),
            )?;
            if inner.quorum.on() && event == Event::ForceClose {
                // An operator's close resets the fleet's policy: the votes
                // too.
                cell.clear_votes(&inner.votes_key)?;
            }
            Ok(applied)
        });
        match done {
            Ok(applied) => {
                inner.mirror.offer(&inner.config, Some(base), applied.word);
                Ok(())
            }
            Err(e) => {
                // Not silently local: the caller gets the error, and this
                // instance, now local, obeys the force until it rejoins.
                inner.detach();
                inner.force_local(event);
                Err(Error::Redis(e))
            }
        }
    }

    /// The validated config (microseconds of the server's clock).
    pub fn config(&self) -> &ValidConfig<W64> {
        &self.inner.config
    }

    /// The fleet's config fingerprint for this key when it is not this
    /// instance's; `None` when they agree (or Redis was not reached yet).
    ///
    /// Every instance of a fleet must read the word with the same config: a
    /// threshold of 3 reads another instance's `Closed` with 5 failures as a
    /// corrupt word, and would "repair" it. So the first instance to join a
    /// key stores its config's fingerprint beside the word, under
    /// `<key>:config` ([`config_fingerprint`](Self::config_fingerprint)).
    /// An instance whose fingerprint differs *follows* the shared word: it
    /// never writes it (it is in [`Mode::Local`], its `force_*` return
    /// [`Error::ConfigMismatch`]), and it never admits a call the fleet's
    /// word rejects: while the word (as its mirror last saw it) is `Open`,
    /// `Probing` or `ForcedOpen` it rejects, whatever its own open time
    /// says; while the word is `Closed` its local breaker decides. It
    /// reports the mismatch once per fingerprint seen: to its observer
    /// ([`FleetObserver::on_config_mismatch`]), and, whatever the observer,
    /// as a `tracing` warning with both fingerprints (feature `tracing`)
    /// and the `metric_names::FOLLOWING` gauge (feature
    /// `metrics`).
    ///
    /// It reads the fleet's fingerprint again at each refresh, and joins
    /// once the two agree: when a new config is published
    /// ([`publish_config`](Self::publish_config)). An attached instance
    /// reads it every few refreshes and at each [`sync`](Self::sync), and
    /// follows from then on if another config was published. The rollout of
    /// a config change: `docs/distributed-config.md`.
    pub fn config_mismatch(&self) -> Option<String> {
        self.inner.config_mismatch()
    }

    /// Makes this instance's config the fleet's: stores its fingerprint
    /// under `<key>:config` with the next generation number, in one script
    /// (atomically), and joins the shared word. Returns the generation now
    /// stored (the fingerprint a first instance claims is generation 0;
    /// publishing the config that is stored already changes nothing and
    /// returns its generation).
    ///
    /// Every instance of another config follows the shared word from its
    /// next read of the fingerprint on (at most a few refresh periods, or
    /// its next [`sync`](Self::sync)): it admits only while the word is
    /// `Closed` and never writes it, so no call passes an open fleet during
    /// the change. The word is kept: a fleet held open stays open, and a
    /// word the new config reads as corrupt is repaired by the next
    /// admission or refresh (spec I8). The procedure:
    /// `docs/distributed-config.md`.
    ///
    /// ```no_run
    /// use std::time::Duration;
    /// use tripword_redis::RedisBreaker;
    /// use tripword_std::Settings;
    ///
    /// // The first instance of the new version: its settings become the
    /// // fleet's, the instances of the old one follow.
    /// let breaker = RedisBreaker::builder("redis://127.0.0.1:6379/", "payments")
    ///     .settings(&Settings::new().failure_threshold(8).open_for(Duration::from_secs(5)))
    ///     .build()?;
    /// let generation = breaker.publish_config()?;
    /// println!("payments: config generation {generation}");
    /// # Ok::<(), tripword_redis::Error>(())
    /// ```
    ///
    /// # Errors
    /// [`Error::Redis`] when Redis did not answer in time: nothing was
    /// published (or, on a lost reply, it was; publishing again is safe).
    pub fn publish_config(&self) -> Result<u64, Error> {
        self.inner.publish_config().map_err(Error::Redis)
    }

    /// This instance's config fingerprint, as stored beside the word: the
    /// fields that change how a word reads (the failure threshold, the open
    /// time and backoff cap, the probe timeout, the time horizon), in the
    /// server clock's microseconds.
    pub fn config_fingerprint(&self) -> &str {
        &self.inner.fingerprint
    }

    /// The key the word lives under.
    pub fn key(&self) -> &str {
        &self.inner.key
    }

    /// The channel every change is published on.
    pub fn channel(&self) -> &str {
        &self.inner.channel
    }

    /// Counters of the instance's work.
    pub fn stats(&self) -> Stats {
        let s = &self.inner.stats;
        Stats {
            call_round_trips: s.call_round_trips.load(Ordering::Relaxed),
            remote_calls: s.remote_calls.load(Ordering::Relaxed),
            refreshes: s.refreshes.load(Ordering::Relaxed),
            published: s.published.load(Ordering::Relaxed),
        }
    }
}

/// The fleet's breaker is a [`CircuitBreaker`]: `tripword-std`'s `call`,
/// `call_async`, tower layers and registries take it.
///
/// - **The sync methods** make an answer that needs Redis (a probe
///   election, a failure report) on the calling thread, bounded by the
///   operation timeout.
/// - **The async path**, with the `tokio` feature: an answer the mirror or
///   the local breaker gives is [`Reply::Ready`] (a closed admission stays
///   one load); one that needs Redis is [`Reply::Wait`], a round trip on
///   the fleet's multiplexed tokio connection that no executor thread waits
///   on. The round trip runs as a task of its own, so a caller cancelled
///   meanwhile leaves no probe elected for nobody: the task hands the
///   ticket back as `Ignored`. [`release_detached`](CircuitBreaker::release_detached)
///   (a cancelled call's release, from a `Drop`) spawns its round trip
///   too. Outside a tokio runtime, and without the feature, the async path
///   is the sync one.
///
/// A [`Release::Unreported`] (Redis did not answer; the outcome went to the
/// local breaker) is [`tripword::Release::Recorded`] to the trait.
///
/// [`Reply::Ready`]: tripword::kit::Reply::Ready
/// [`Reply::Wait`]: tripword::kit::Reply::Wait
impl CircuitBreaker for RedisBreaker {
    type Ticket = Ticket;
    type Clock = LocalTicks;
    #[cfg(feature = "tokio")]
    type Acquiring = crate::aio::Acquiring;
    #[cfg(feature = "tokio")]
    type Releasing = crate::aio::Releasing;
    #[cfg(not(feature = "tokio"))]
    type Acquiring = Never<Result<Ticket, Rejected>>;
    #[cfg(not(feature = "tokio"))]
    type Releasing = Never<tripword::Release>;

    #[inline]
    fn acquire(&self) -> Result<Ticket, Rejected> {
        RedisBreaker::acquire(self)
    }

    #[inline]
    fn release(&self, ticket: Ticket, outcome: Outcome) -> tripword::Release {
        to_core(RedisBreaker::release(self, ticket, outcome))
    }

    fn status(&self) -> Status {
        RedisBreaker::status(self)
    }

    /// The instance's local clock, in microseconds (the unit of the
    /// fleet's config and of a rejection's wait).
    fn clock(&self) -> &LocalTicks {
        &self.inner.hub.ticks
    }

    fn abandon_outcome(&self) -> Outcome {
        self.inner.config.abandon()
    }

    /// The key: a rejection by `tripword-std`'s call layer reads
    /// `circuit 'payments' open: call not admitted (retry after 29.9s)`.
    /// The first time a breaker's name is asked for, its key is copied
    /// for the life of the process, once per distinct key: breakers made
    /// again for a key (a fleet's evicted key looked up again, a breaker
    /// built again) share that copy. The memory kept is the total length
    /// of the distinct keys named, however many breakers were made.
    fn name(&self) -> Option<&'static str> {
        Some(self.inner.name())
    }

    #[cfg(feature = "tokio")]
    fn acquire_async(&self) -> Reply<Result<Ticket, Rejected>, Self::Acquiring> {
        let inner = &*self.inner;
        let word = inner.mirror.admit();
        if word != NONE {
            return Reply::Ready(Ok(inner.ticket(Snapshot::counter_bits::<W64>(word), false)));
        }
        match inner.acquire_prepare() {
            Ok(answer) => Reply::Ready(inner.answered(answer)),
            Err(base) => match crate::aio::acquire(&self.inner, base) {
                Some(future) => Reply::Wait(future),
                None => Reply::Ready(inner.answered(self.acquire_remote(base))),
            },
        }
    }

    #[cfg(feature = "tokio")]
    fn release_async(
        &self,
        ticket: Ticket,
        verdict: TickVerdict,
    ) -> Reply<tripword::Release, Self::Releasing> {
        let inner = &*self.inner;
        let outcome = verdict.outcome();
        if inner.release_quietly(&ticket, outcome) {
            return Reply::Ready(tripword::Release::Recorded);
        }
        let (settled, follow) = inner.release_settle(&ticket, outcome);
        if follow != Follow::Nothing {
            // A vote is a round trip: made off the polling thread.
            match tokio::runtime::Handle::try_current() {
                Ok(runtime) => {
                    let task = self.inner.clone();
                    drop(runtime.spawn_blocking(move || task.follow(follow)));
                }
                Err(_) => inner.follow(follow),
            }
        }
        let word = match settled {
            Ok(settled) => return Reply::Ready(to_core(inner.released(settled, outcome))),
            Err(word) => word,
        };
        match crate::aio::release(&self.inner, word, ticket.counter, outcome) {
            Some(future) => Reply::Wait(future),
            None => {
                let release = self.release_remote(word, ticket.counter, outcome);
                Reply::Ready(to_core(inner.released(release, outcome)))
            }
        }
    }

    /// With the `tokio` feature inside a runtime, a release that needs Redis
    /// is spawned and not awaited; otherwise it is the sync release.
    #[cfg(feature = "tokio")]
    fn release_detached(&self, ticket: Ticket, verdict: TickVerdict) {
        // A `Wait` is a spawned task's handle: dropping it detaches it.
        let _ = self.release_async(ticket, verdict);
    }
}

/// A release as the trait reports it.
fn to_core(release: Release) -> tripword::Release {
    match release {
        Release::Recorded | Release::Unreported => tripword::Release::Recorded,
        Release::Stale => tripword::Release::Stale,
    }
}

/// A guard over an admitted call: report with [`success`](Permit::success),
/// [`failure`](Permit::failure) or [`ignore`](Permit::ignore); dropped
/// without one it records the config's abandon outcome.
#[must_use = "dropping a permit at once records the abandon outcome (a failure by default)"]
#[derive(Debug)]
pub struct Permit<'b> {
    breaker: &'b RedisBreaker,
    ticket: Option<Ticket>,
}

impl Permit<'_> {
    /// Whether this permit is the probe (of the fleet, in [`Mode::Shared`]).
    pub fn is_probe(&self) -> bool {
        self.ticket.as_ref().is_some_and(Ticket::is_probe)
    }
    /// Records a success.
    pub fn success(self) -> Release {
        self.finish(Outcome::Success)
    }
    /// Records a failure.
    pub fn failure(self) -> Release {
        self.finish(Outcome::Failure)
    }
    /// Records an outcome that says nothing about the dependency.
    pub fn ignore(self) -> Release {
        self.finish(Outcome::Ignored)
    }
    /// Records `outcome`.
    pub fn finish(mut self, outcome: Outcome) -> Release {
        self.settle(outcome)
    }
    fn settle(&mut self, outcome: Outcome) -> Release {
        match self.ticket.take() {
            Some(t) => self.breaker.release(t, outcome),
            None => Release::Stale,
        }
    }
}

impl Drop for Permit<'_> {
    fn drop(&mut self) {
        let abandon = self.breaker.inner.config.abandon();
        self.settle(abandon);
    }
}

/// The fields of `config` that change how a word reads, as stored beside
/// the word (see [`RedisBreaker::config_mismatch`]).
fn fingerprint(config: &ValidConfig<W64>, quorum: &Quorum) -> String {
    let backoff = match config.backoff_cap() {
        Some(cap) => cap.to_string(),
        None => "none".to_owned(),
    };
    let mut print = format!(
        "v1 failure_threshold={} open_for={} backoff_cap={} probe_timeout={} horizon={}",
        config.failure_threshold(),
        config.open_for(),
        backoff,
        config.probe_timeout(),
        config.horizon()
    );
    if quorum.on() {
        // Instances of one fleet must count the same votes alike; without
        // a quorum the fingerprint is as it always was.
        print.push_str(&format!(
            " quorum={} window={}",
            quorum.instances,
            quorum.window(config)
        ));
    }
    print
}

/// The fingerprint part of what is stored under `<key>:config`, and its
/// generation: `<fingerprint> generation=<n>` as
/// [`RedisBreaker::publish_config`] stores it, a plain fingerprint (as the
/// first instance to join claims it) being generation 0.
fn published_fingerprint(stored: &str) -> (&str, u64) {
    if let Some((print, generation)) = stored.rsplit_once(" generation=")
        && let Ok(generation) = generation.parse()
    {
        return (print, generation);
    }
    (stored, 0)
}

/// The admission rule of an instance whose config is not the fleet's (a
/// follower): the fleet's word `word` rejects it in every state but
/// `Closed`, whatever its config reads of the open time. `Open` rejects
/// even past its open time (the fleet's open time may be longer than this
/// instance's, and its probe is an instance of the fleet's config to
/// elect), `Probing` rejects (a follower never holds the fleet's probe),
/// `ForcedOpen` rejects, and so do `OpenUntil` and `HalfOpen` (as
/// `Open`). `None`: the word is `Closed` (or unreadable), and
/// the follower's local breaker decides.
///
/// The wait of an `Open` rejection is the one this instance's config reads
/// at the estimated server time `now`, at least 0 (the fleet's probe may
/// end it sooner or later).
fn fleet_holds(config: &ValidConfig<W64>, word: u64, now: Option<u64>) -> Option<Rejected> {
    let state = Snapshot::decode::<W64>(word).ok()?.state;
    let cause = match state {
        State::Closed { .. } => return None,
        State::Probing { .. } => Cause::Probing,
        State::ForcedOpen => Cause::ForcedOpen,
        // Open, open until a time, half-open (its probe is the fleet's).
        _ => Cause::Open,
    };
    let wait =
        now.and_then(
            |now| match transition::apply(config, word, Event::Admit, || now).verdict {
                Verdict::Rejected(why) if why.cause() == cause => why.retry_after(),
                _ => None,
            },
        );
    Some(Rejected::new(cause, wait))
}

/// How many of the watcher's refreshes an attached instance makes between
/// two reads of the fleet's fingerprint (a published config is seen within
/// as many refresh periods; [`RedisBreaker::sync`] reads it every time).
const CONFIG_CHECK_EVERY: u32 = 4;

/// An id for this instance's votes, distinct across the fleet's processes
/// and within one: the process id and a number drawn from the standard
/// library's per-process random hash keys.
fn voter_id() -> String {
    use std::hash::{BuildHasher, Hasher};
    let mut h = std::collections::hash_map::RandomState::new().build_hasher();
    h.write_u128(
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos()),
    );
    format!("{}-{:016x}", std::process::id(), h.finish())
}

/// How far the counter moves on when a key that held a word is found
/// missing (see `Inner::missing_word`): more changes than one instance's
/// mirror misses, far less than half the counter period (so that every
/// instance takes the resumed word as newer than its mirror).
pub(crate) const RESUME: u32 = 1 << 12;

/// The word a lost key reads as for an instance that found `seen` stored
/// last: with none, the initial word (a new fleet); else `Closed` with the
/// counter moved on by [`RESUME`]. "None seen" is not the initial word: a
/// success that resets a failure stores the initial word again, and a key
/// lost after that must resume, not start over (found by the fleet model,
/// `verification/tests/fleet_model.rs`).
fn resumed(seen: Option<u64>) -> u64 {
    let Some(seen) = seen else {
        return 0;
    };
    let max = W64::LAYOUT.max_counter();
    let counter = Snapshot::counter_bits::<W64>(seen).wrapping_add(RESUME) & max;
    Snapshot {
        state: State::Closed { failures: 0 },
        counter,
    }
    .encode::<W64>()
}

/// The word noted as found stored after `word` is found, `seen` noted
/// before: `word`, unless `seen`'s counter is past it (see
/// [`Inner::stored`]).
fn noted(seen: Option<u64>, word: u64) -> Option<u64> {
    match seen {
        Some(old) if mirror_ahead(old, Snapshot::counter_bits::<W64>(word)) => Some(old),
        _ => Some(word),
    }
}

/// Whether `now`, an estimate of the server's time, is before the timestamp
/// of the `Open` or `Probing` word `held`. The server's clock read that
/// stamp before the word was stored, so such an estimate is behind the
/// server: a reply read from the server before a change was published, and
/// sampled after the published change, set it back. Read with it, the word
/// would look lapsed (a clock gone back fails towards probing, spec I6),
/// and a running probe would read as timed out.
fn before_stamp(
    config: &ValidConfig<W64>,
    held: Result<Snapshot, tripword::word::Corruption>,
    now: u64,
) -> bool {
    let since = match held {
        Ok(Snapshot {
            state: State::Open { since, .. } | State::Probing { since, .. },
            ..
        }) => since,
        _ => return false,
    };
    let l = W64::LAYOUT;
    l.elapsed(since, now >> config.time_shift()) >= l.max_units()
}

/// What a release with a quorum calls for once the local breaker recorded
/// it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Follow {
    /// Nothing.
    Nothing,
    /// The instance's own breaker opened: vote.
    Vote,
    /// The instance's own breaker closed: withdraw its vote.
    Withdraw,
}

/// Whether `word` is `Closed` (whatever its failures).
fn closed(word: u64) -> bool {
    matches!(
        Snapshot::decode::<W64>(word),
        Ok(Snapshot {
            state: State::Closed { .. },
            ..
        })
    )
}

/// The word a quorum's trip stores in place of `word` (`Closed`) at server
/// time `now`: the kit's own trip, the failures of a run applied one by one
/// until the word leaves `Closed`. `None` if it does not (not reached: a
/// run of `failure_threshold` failures trips).
fn trip(config: &ValidConfig<W64>, word: u64, now: u64) -> Option<transition::Step<u64>> {
    let mut w = word;
    for _ in 0..config.failure_threshold() {
        let counter = Snapshot::counter_bits::<W64>(w);
        let outcome = Outcome::Failure;
        let step = transition::apply(config, w, Event::Release { counter, outcome }, || now);
        if !closed(step.word) {
            return Some(step);
        }
        w = step.word;
    }
    None
}

/// Whether the mirror's counter is past `counter` (within half the counter
/// period): then a ticket of `counter` is stale in Redis too, since the word
/// there is at least as new as the mirror.
fn mirror_ahead(word: u64, counter: u32) -> bool {
    let max = W64::LAYOUT.max_counter();
    let d = Snapshot::counter_bits::<W64>(word).wrapping_sub(counter) & max;
    d != 0 && d <= max / 2
}

#[derive(Default)]
struct AtomicStats {
    call_round_trips: AtomicU64,
    remote_calls: AtomicU64,
    refreshes: AtomicU64,
    published: AtomicU64,
}

/// One key's breaker in one instance, shared by its handles and (weakly)
/// its hub's watcher.
pub(crate) struct Inner {
    pub(crate) config: ValidConfig<W64>,
    pub(crate) key: String,
    pub(crate) channel: String,
    /// The shared word as last seen, and what the fast paths read.
    mirror: Mirror,
    /// The newest word found stored in Redis (`None` until one is): what a
    /// missing key reads as is derived from it (`missing_word`), never from
    /// a missing key's stand-in, so that it stays put while the key is
    /// missing. It only moves forward (see [`Inner::stored`]). Taken only
    /// with a round trip or a published message, never on a fast path.
    stored: Mutex<Option<u64>>,
    /// The local breaker: used while Redis does not answer.
    local: Local,
    observer: Arc<dyn FleetObserver>,
    stats: AtomicStats,
    pub(crate) hub: Arc<Hub>,
    /// This instance's config fingerprint, and the key it is kept under.
    fingerprint: String,
    fingerprint_key: String,
    /// The fleet's fingerprint, when it is not ours.
    mismatch: Mutex<Option<String>>,
    /// Whether this instance follows the shared word (the fleet's
    /// fingerprint is known and is not ours): it admits only while the
    /// word is `Closed`, and never writes it (see [`fleet_holds`]).
    following: AtomicBool,
    /// Refreshes by the watcher since the fingerprint was last read while
    /// attached (see [`CONFIG_CHECK_EVERY`]).
    unchecked: AtomicU32,
    /// How many instances' votes trip the shared word.
    pub(crate) quorum: Quorum,
    /// Where the votes are kept, and this instance's id among them.
    votes_key: String,
    voter: String,
    /// Whether this instance's vote may be in the set.
    voted: AtomicBool,
    /// The key, interned when a name is first asked for.
    name: OnceLock<&'static str>,
}

impl Drop for Inner {
    fn drop(&mut self) {
        self.hub.prune(&self.channel);
    }
}

/// `key` for the life of the process: copied once per distinct key, the
/// same copy for every later call with an equal key.
fn intern(key: &str) -> &'static str {
    static KEYS: OnceLock<Mutex<HashSet<&'static str>>> = OnceLock::new();
    let mut keys = KEYS
        .get_or_init(Mutex::default)
        .lock()
        .unwrap_or_else(PoisonError::into_inner);
    if let Some(&kept) = keys.get(key) {
        return kept;
    }
    let kept: &'static str = Box::leak(key.into());
    keys.insert(kept);
    kept
}

impl Inner {
    /// An admission's answer, a rejection reported to the observer
    /// (`on_rejected`). Only answers off the closed path come here: the
    /// closed admission stays one load with no observer call.
    pub(crate) fn answered(&self, answer: Result<Ticket, Rejected>) -> Result<Ticket, Rejected> {
        if let Err(why) = &answer {
            self.observer.on_rejected(*why);
        }
        answer
    }

    /// A release's answer, a stale one reported to the observer
    /// (`on_stale`). A stale release never takes the closed path.
    pub(crate) fn released(&self, release: Release, outcome: Outcome) -> Release {
        if release == Release::Stale {
            self.observer.on_stale(outcome);
        }
        release
    }

    /// The key, interned (see [`intern`]).
    pub(crate) fn name(&self) -> &'static str {
        self.name.get_or_init(|| intern(&self.key))
    }

    #[inline(always)]
    fn ticket(&self, counter: u32, probe: bool) -> Ticket {
        Ticket::new(self.mirror.address(), counter, probe, false)
    }

    /// What an admission that did not take the fast path can decide with
    /// no network: `Ok` with the answer (the local breaker's, in
    /// [`Mode::Local`]; a rejection the mirror makes at the estimated
    /// server time), or `Err` with the mirror's [`base`](Mirror::base) when
    /// Redis must decide.
    pub(crate) fn acquire_prepare(&self) -> Result<Result<Ticket, Rejected>, u64> {
        if !self.mirror.attached() {
            if self.following.load(Ordering::Acquire)
                && let Some(why) = fleet_holds(&self.config, self.mirror.word(), self.estimate())
            {
                // The fleet's word rejects: a follower never calls past it.
                return Ok(Err(why));
            }
            return Ok(self.acquire_local());
        }
        let base = self.mirror.base();
        let word = self.mirror.word();
        if self.quorum.on() && closed(word) && self.local_status() != Status::Closed {
            // The fleet is closed, this instance is held off by its own
            // failures: its local breaker decides (and probes) for it.
            return Ok(self.acquire_local());
        }
        let mut estimated = true;
        let step = transition::apply(&self.config, word, Event::Admit, || {
            self.estimate().unwrap_or_else(|| {
                estimated = false;
                0
            })
        });
        // A closed admission that stores nothing is the fast path's, from
        // the mirror's derived word; here it can only be a race with a
        // change of the mirror, and Redis decides it as any other.
        match step.verdict {
            Verdict::Rejected(why) if estimated => Ok(Err(why)),
            _ => Err(base),
        }
    }

    pub(crate) fn acquire_local(&self) -> Result<Ticket, Rejected> {
        let (counter, probe) = self.local_acquire()?;
        Ok(Ticket::new(self.local.address(), counter, probe, true))
    }

    /// The answer of an admission Redis decided (`applied`, at server time
    /// `at`), from an operation of [`base`](Mirror::base) `base`.
    pub(crate) fn admission(
        &self,
        base: u64,
        applied: cell::Applied<W64>,
        at: u64,
    ) -> Result<Ticket, Rejected> {
        self.mirror.offer(&self.config, Some(base), applied.word);
        match applied.decision {
            Decision::Admitted => {
                let probe = matches!(
                    Snapshot::decode::<W64>(applied.word),
                    Ok(Snapshot {
                        state: State::Probing { .. },
                        ..
                    })
                );
                let counter = Snapshot::counter_bits::<W64>(applied.word);
                Ok(self.ticket(counter, probe))
            }
            // The rejection (cause and wait) the word makes at the server
            // time the decision read: the pure layer again.
            _ => match transition::apply(&self.config, applied.word, Event::Admit, || at).verdict {
                Verdict::Rejected(why) => Err(why),
                _ => self.acquire_local(),
            },
        }
    }

    /// The release fast path: whether the mirror is `Closed` (with no
    /// failures, for a success) under the ticket's counter, so that the kit
    /// stores nothing and the release is recorded as it is.
    #[inline(always)]
    pub(crate) fn release_quietly(&self, ticket: &Ticket, outcome: Outcome) -> bool {
        if ticket.origin.get() != self.mirror.address() {
            return false;
        }
        let word = match outcome {
            Outcome::Success => self.mirror.quiet(),
            Outcome::Ignored => self.mirror.admit(),
            Outcome::Failure => NONE,
        };
        word != NONE && Snapshot::counter_bits::<W64>(word) == ticket.counter
    }

    /// What a release that did not take the fast path can settle with no
    /// network: `Ok` with the answer, or `Err` with the mirror's word when
    /// Redis must record it. With a quorum, the vote (or its withdrawal)
    /// the release calls for is made before it returns.
    pub(crate) fn release_prepare(
        &self,
        ticket: &Ticket,
        outcome: Outcome,
    ) -> Result<Release, u64> {
        let (settled, follow) = self.release_settle(ticket, outcome);
        self.follow(follow);
        settled
    }

    /// [`release_prepare`](Self::release_prepare), handing back the vote
    /// (or its withdrawal) the release calls for, for the caller to make.
    pub(crate) fn release_settle(
        &self,
        ticket: &Ticket,
        outcome: Outcome,
    ) -> (Result<Release, u64>, Follow) {
        let counter = ticket.counter;
        if ticket.issuer() == self.local.address() {
            if self.quorum.on() {
                let (release, follow) = self.own_release(counter, outcome);
                return (Ok(release), follow);
            }
            let release = if self.local_release(counter, outcome) {
                Release::Recorded
            } else {
                Release::Stale
            };
            return (Ok(release), Follow::Nothing);
        }
        if ticket.issuer() != self.mirror.address() {
            return (Ok(Release::Stale), Follow::Nothing);
        }
        let word = self.mirror.word();
        if self.quorum.on()
            && self.mirror.attached()
            && closed(word)
            && Snapshot::counter_bits::<W64>(word) == counter
        {
            // The fleet is closed: the outcome is this instance's own, for
            // its local breaker to judge.
            let (release, follow) = self.own_outcome(outcome);
            return (Ok(release), follow);
        }
        // The ticket's state has passed in the mirror, so in Redis too (the
        // word there is at least as new): stale, settled with no network,
        // and whether Redis answers or not: a stale outcome is not counted
        // in the local breaker either (spec I2). (A release the mirror
        // records without a change is the fast path's; here it can only be
        // a race, and goes to Redis.)
        if mirror_ahead(word, counter) {
            return (Ok(Release::Stale), Follow::Nothing);
        }
        if !self.mirror.attached() {
            return (Ok(self.unreported(outcome)), Follow::Nothing);
        }
        (Err(word), Follow::Nothing)
    }

    /// The answer of a release Redis applied, from an operation of
    /// [`base`](Mirror::base) `base`.
    pub(crate) fn recorded(&self, base: u64, applied: &cell::Applied<W64>) -> Release {
        self.mirror.offer(&self.config, Some(base), applied.word);
        match applied.decision {
            Decision::Recorded => Release::Recorded,
            _ => Release::Stale,
        }
    }

    fn local_acquire(&self) -> Result<(u32, bool), Rejected> {
        self.local
            .acquire(&self.config, &*self.hub.clock, &*self.observer)
    }

    fn local_release(&self, counter: u32, outcome: Outcome) -> bool {
        self.local.release(
            &self.config,
            counter,
            outcome,
            &*self.hub.clock,
            &*self.observer,
        )
    }

    fn local_status(&self) -> Status {
        self.local.status(&self.config, &*self.hub.clock)
    }

    fn estimate(&self) -> Option<u64> {
        self.hub.estimate()
    }

    pub(crate) fn mirror_base(&self) -> u64 {
        self.mirror.base()
    }

    /// The word a missing key reads as for this instance. The initial word
    /// (`Closed`, counter 0) while the mirror holds it: a new fleet. Once
    /// the mirror has seen a state change, the key can only be missing
    /// because it was lost (Redis restarted empty, a failover lost it,
    /// someone deleted it): then it reads as `Closed` with the mirror's
    /// counter moved on by [`RESUME`], so that no ticket issued before the
    /// loss matches a word after it (spec I2), as long as the fleet made
    /// fewer than [`RESUME`] changes this instance's mirror had not seen.
    /// The first compare-and-set from it stores it.
    pub(crate) fn missing_word(&self) -> u64 {
        resumed(*self.stored.lock().unwrap_or_else(PoisonError::into_inner))
    }

    /// Notes a word found stored in Redis under the key (read, swapped in,
    /// or published): what a lost key resumes from. Only forward: a word
    /// whose counter is behind the one noted (a published message
    /// delivered late, a read after a failover lost writes) is not taken,
    /// else a message delayed across two losses of the key would move the
    /// resume point back, and the second stand-in would repeat counters the
    /// fleet used after the first (found by the fleet model).
    pub(crate) fn stored(&self, word: u64) {
        let mut seen = self.stored.lock().unwrap_or_else(PoisonError::into_inner);
        *seen = noted(*seen, word);
    }

    /// Runs `op` on the key with one of the hub's connections, every round
    /// trip within the operation timeout; counted in the stats when `call`.
    fn remote<T>(
        &self,
        call: bool,
        op: impl FnOnce(&RemoteCell<'_>) -> Result<T, RedisError>,
    ) -> Result<T, RedisError> {
        let (out, trips, stored) =
            self.hub
                .remote(&self.key, &self.channel, self.missing_word(), op);
        if let Some(word) = stored {
            self.stored(word);
        }
        if call {
            self.count_call(trips);
        }
        out
    }

    /// Counts an operation of a call that went to Redis.
    pub(crate) fn count_call(&self, round_trips: u32) {
        self.stats
            .call_round_trips
            .fetch_add(u64::from(round_trips), Ordering::Relaxed);
        self.stats.remote_calls.fetch_add(1, Ordering::Relaxed);
    }

    /// The word the watcher read for this breaker (in a batch begun at the
    /// mirror's [`base`](Mirror::base) `base`): taken if it is a state, repaired with a
    /// round trip of its own if it is corrupt.
    pub(crate) fn refreshed(&self, base: u64, word: u64) -> Result<(), RedisError> {
        if Snapshot::decode::<W64>(word).is_err() {
            return self.refresh(false).map(drop);
        }
        self.mirror.offer(&self.config, Some(base), word);
        self.stats.refreshes.fetch_add(1, Ordering::Relaxed);
        let turn = self.unchecked.fetch_add(1, Ordering::Relaxed);
        self.attach(turn % CONFIG_CHECK_EVERY == CONFIG_CHECK_EVERY - 1);
        Ok(())
    }

    /// Reads the word into the mirror, repairing it first if it is corrupt
    /// (spec I8: one admission through the kit replaces it by `Closed` with
    /// the next counter; not by a follower, which never writes the word),
    /// and joins the shared word.
    pub(crate) fn refresh(&self, call: bool) -> Result<u64, RedisError> {
        let base = self.mirror.base();
        let word = self.remote(call, |cell| {
            let (seen, at) = cell.fetch()?;
            if Snapshot::decode::<W64>(seen).is_ok() || self.following.load(Ordering::Acquire) {
                // A follower repairs nothing: the fleet's config does.
                return Ok(seen);
            }
            let applied = cell::update(
                cell,
                &self.config,
                seen,
                Event::Admit,
                Some(at),
                || cell.now(),
                |swap| self.report(swap),
            )?;
            Ok(applied.word)
        })?;
        self.mirror.offer(&self.config, Some(base), word);
        if !call {
            self.stats.refreshes.fetch_add(1, Ordering::Relaxed);
        }
        self.attach(true);
        Ok(word)
    }

    /// A change published by some instance's compare-and-set.
    pub(crate) fn published(&self, word: u64, server_time: u64) {
        self.stored(word);
        self.mirror.offer(&self.config, None, word);
        self.hub
            .estimate
            .sample(server_time, self.hub.clock.micros());
        self.stats.published.fetch_add(1, Ordering::Relaxed);
    }

    /// Reports a change this instance's compare-and-set made.
    pub(crate) fn report(&self, swap: Swap<W64>) {
        if let Some(raw) = swap.repaired() {
            let counter = W64::LAYOUT.next_counter(Snapshot::counter_bits::<W64>(raw));
            self.observer.on_corrupt_word(raw, counter);
        }
        for t in swap.transitions() {
            self.observer.on_scoped_transition(t, Scope::Shared);
        }
    }

    /// Reads the fleet's config fingerprint (claiming it with this
    /// instance's if there is none; one round trip) and joins the shared
    /// word when it is this instance's config, or follows the word when it
    /// is not (see [`judge`](Self::judge)). An attached instance reads it
    /// only when `check`.
    fn attach(&self, check: bool) {
        if self.mirror.attached() && !check {
            return;
        }
        let (claimed, _, _) = self.hub.remote("", "", 0, |cell| {
            cell.claim(&self.fingerprint_key, &self.fingerprint)
        });
        if let Ok(stored) = claimed {
            self.judge(&stored);
        }
    }

    /// Acts on the fleet's config as stored under `<key>:config`: joins the
    /// shared word when its fingerprint is this instance's; otherwise
    /// follows the word (admits only while it is `Closed`, never writes
    /// it) and reports the mismatch once per fingerprint seen. An attached
    /// instance whose config the fleet left (another was published) stops
    /// writing the word here.
    fn judge(&self, stored: &str) {
        let (fleet, _) = published_fingerprint(stored);
        let mut mismatch = self.mismatch.lock().unwrap_or_else(PoisonError::into_inner);
        if fleet != self.fingerprint {
            // Following before leaving the shared word: no admission finds
            // the instance off the word and not following it.
            self.following.store(true, Ordering::Release);
            if mismatch.as_deref() != Some(fleet) {
                self.warn_mismatch(fleet);
                self.observer.on_config_mismatch(&self.fingerprint, fleet);
                *mismatch = Some(fleet.to_owned());
            }
            drop(mismatch);
            if self.mirror.set_attached(&self.config, false) {
                self.observer.on_mode(Mode::Local);
            }
            return;
        }
        let was = mismatch.take();
        drop(mismatch);
        if was.is_some() {
            self.agreed();
        }
        if self.mirror.attached() {
            return;
        }
        self.sync_own();
        if self.mirror.set_attached(&self.config, true) {
            self.observer.on_mode(Mode::Shared);
        }
        self.following.store(false, Ordering::Release);
    }

    /// The engine's own report of a config mismatch, whatever observer is
    /// set: a `tracing` warning (feature `tracing`) and the
    /// `metric_names::FOLLOWING` gauge at 1 (feature
    /// `metrics`).
    fn warn_mismatch(&self, fleet: &str) {
        #[cfg(feature = "tracing")]
        tracing::warn!(
            target: "tripword",
            breaker = self.key.as_str(),
            ours = self.fingerprint.as_str(),
            fleet,
            "fleet config is not this instance's: it follows the fleet's word \
             (admits only while the word is Closed) and never writes it, until \
             the configs agree (see RedisBreaker::publish_config)"
        );
        #[cfg(feature = "metrics")]
        metrics::gauge!(
            crate::metric_names::FOLLOWING,
            tripword_std::observe::names::BREAKER => self.key.clone()
        )
        .set(1.0);
        let _ = fleet;
    }

    /// The engine's own report of a mismatch that ended: the configs
    /// agree again.
    fn agreed(&self) {
        #[cfg(feature = "tracing")]
        tracing::info!(
            target: "tripword",
            breaker = self.key.as_str(),
            config = self.fingerprint.as_str(),
            "fleet config is this instance's again"
        );
        #[cfg(feature = "metrics")]
        metrics::gauge!(
            crate::metric_names::FOLLOWING,
            tripword_std::observe::names::BREAKER => self.key.clone()
        )
        .set(0.0);
    }

    /// Publishes this instance's config as the fleet's (see
    /// [`RedisBreaker::publish_config`]).
    fn publish_config(&self) -> Result<u64, RedisError> {
        let (stored, _, _) = self.hub.remote("", "", 0, |cell| {
            cell.publish_config(&self.fingerprint_key, &self.fingerprint)
        });
        let stored = stored?;
        // Joined from a fresh read of the word, never from a mirror a
        // published change has not reached yet (if Redis does not answer
        // now, the watcher's next refresh joins it).
        let _ = self.refresh(false);
        Ok(published_fingerprint(&stored).1)
    }

    fn config_mismatch(&self) -> Option<String> {
        self.mismatch
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    /// Falls back to the local breaker. If the shared word said the
    /// dependency is down (anything but `Closed`) and the local breaker is
    /// closed, the local breaker is tripped (with `failure_threshold`
    /// failures recorded through its API), so an instance that loses Redis
    /// while the fleet is open stays open for an open time and then probes
    /// on its own. The trip comes before the switch: no call may find the
    /// instance local with its breaker still closed.
    /// A follower (see [`fleet_holds`]) that loses Redis falls back the
    /// same way: its word is as stale as anyone's.
    pub(crate) fn detach(&self) {
        let following = self.following.swap(false, Ordering::AcqRel);
        if !self.mirror.attached() && !following {
            return;
        }
        let shared = Snapshot::decode::<W64>(self.mirror.word());
        let shared_down = matches!(shared, Ok(s) if s.state.status() != Status::Closed);
        if matches!(shared, Ok(s) if s.state == State::ForcedOpen) {
            // An operator's hold outlives the fallback: no open time ends
            // it, only a force_close. (A local breaker held already stays
            // as it is: forcing open a forced word changes nothing.)
            self.force_local(Event::ForceOpen);
        } else if shared_down && self.local_status() == Status::Closed {
            for _ in 0..self.config.failure_threshold() {
                if let Ok((counter, _)) = self.local_acquire() {
                    self.local_release(counter, Outcome::Failure);
                }
            }
        }
        self.sync_own();
        if self.mirror.set_attached(&self.config, false) {
            self.observer.on_mode(Mode::Local);
        }
    }

    /// An operator's force applied to the local breaker.
    fn force_local(&self, event: Event) {
        self.local
            .force(&self.config, event, &*self.hub.clock, &*self.observer);
        self.sync_own();
    }

    /// An outcome that could not reach Redis: recorded in the local breaker
    /// while that is closed (an outcome of a call it did not admit must not
    /// settle its probe).
    pub(crate) fn unreported(&self, outcome: Outcome) -> Release {
        if self.local_status() == Status::Closed
            && let Ok((counter, probe)) = self.local_acquire()
        {
            let outcome = if probe { Outcome::Ignored } else { outcome };
            self.local_release(counter, outcome);
            self.sync_own();
        }
        Release::Unreported
    }

    /// With a quorum: sets the mirror's view of this instance's own
    /// breaker (see `Mirror::set_own`). Nothing without a quorum.
    fn sync_own(&self) {
        if !self.quorum.on() {
            return;
        }
        self.mirror.set_own(&self.config, || {
            match Snapshot::decode::<W64>(self.local.word()) {
                Ok(Snapshot {
                    state: State::Closed { failures: 0 },
                    ..
                }) => CLEAR,
                Ok(Snapshot {
                    state: State::Closed { .. },
                    ..
                }) => RUN,
                _ => HELD,
            }
        });
    }

    /// With a quorum, the outcome of a call the fleet admitted while
    /// closed: recorded in the local breaker while that is closed (an
    /// outcome of a call it did not admit must not settle its probe).
    fn own_outcome(&self, outcome: Outcome) -> (Release, Follow) {
        if outcome == Outcome::Ignored || self.local_status() != Status::Closed {
            return (Release::Recorded, Follow::Nothing);
        }
        match self.local_acquire() {
            Ok((counter, false)) => self.own_release(counter, outcome),
            Ok((counter, true)) => (
                self.own_release(counter, Outcome::Ignored).0,
                Follow::Nothing,
            ),
            Err(_) => (Release::Recorded, Follow::Nothing),
        }
    }

    /// With a quorum, a release to the local breaker: a trip (or a failed
    /// local probe) votes, a local probe's success withdraws the vote.
    fn own_release(&self, counter: u32, outcome: Outcome) -> (Release, Follow) {
        let (recorded, moved) = self.local.release_traced(
            &self.config,
            counter,
            outcome,
            &*self.hub.clock,
            &*self.observer,
        );
        self.sync_own();
        let follow = match moved {
            _ if !self.mirror.attached() => Follow::Nothing,
            Some(Status::Open) => Follow::Vote,
            Some(Status::Closed) => Follow::Withdraw,
            _ => Follow::Nothing,
        };
        let release = if recorded {
            Release::Recorded
        } else {
            Release::Stale
        };
        (release, follow)
    }

    /// Makes the vote or the withdrawal a release called for.
    pub(crate) fn follow(&self, follow: Follow) {
        match follow {
            Follow::Nothing => {}
            Follow::Vote => self.vote(),
            Follow::Withdraw => self.withdraw(),
        }
    }

    /// Votes for tripping the shared word, and trips it when the quorum
    /// is reached (one round trip; two more for the trip, each attempt of
    /// its compare-and-set one). The trip is the kit's: the failures of a
    /// run applied to the word read, at the server time read after it, by
    /// `transition::apply`. A vote that cannot reach Redis switches the
    /// instance to its local breaker, which already holds it off.
    fn vote(&self) {
        let base = self.mirror.base();
        let window = self.quorum.window(&self.config);
        let quorum = self.quorum.instances;
        let done = self.remote(true, |cell| {
            let mut ballot = cell.vote(&self.votes_key, &self.voter, window)?;
            self.voted.store(true, Ordering::Release);
            while ballot.votes >= u64::from(quorum) && closed(ballot.word) {
                let Some(step) = trip(&self.config, ballot.word, ballot.now) else {
                    break;
                };
                ballot =
                    cell.quorum_trip(&self.votes_key, ballot.word, step.word, window, quorum)?;
                if ballot.stored {
                    for t in step.transitions {
                        self.observer.on_scoped_transition(t, Scope::Shared);
                    }
                    break;
                }
            }
            Ok(ballot.word)
        });
        match done {
            Ok(word) => self.mirror.offer(&self.config, Some(base), word),
            Err(_) => self.detach(),
        }
    }

    /// Withdraws this instance's vote (a success of its own ended its
    /// failures), if it may have one.
    fn withdraw(&self) {
        if !self.voted.swap(false, Ordering::AcqRel) {
            return;
        }
        if self
            .remote(true, |cell| cell.withdraw(&self.votes_key, &self.voter))
            .is_err()
        {
            // Not withdrawn: the vote ages out of the window.
            self.detach();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_ticket_is_two_words() {
        assert_eq!(size_of::<Ticket>(), 2 * size_of::<usize>());
    }

    #[test]
    fn a_ticket_carries_its_issuer_and_flags() {
        for (probe, local) in [(false, false), (true, false), (false, true), (true, true)] {
            let t = Ticket::new(0x1000, 7, probe, local);
            assert_eq!(t.issuer(), 0x1000);
            assert_eq!((t.counter(), t.is_probe()), (7, probe));
            assert_eq!(t.scope(), if local { Scope::Local } else { Scope::Shared });
        }
    }

    fn closed(counter: u32) -> u64 {
        Snapshot {
            state: State::Closed { failures: 0 },
            counter,
        }
        .encode::<W64>()
    }

    fn word(state: State) -> u64 {
        Snapshot { state, counter: 9 }.encode::<W64>()
    }

    /// A follower's admission rule: every state of the fleet's word but
    /// `Closed` rejects, whatever this instance's config reads of its time.
    #[test]
    fn a_follower_admits_only_on_a_closed_fleet_word() {
        let ours = Config::new()
            .failure_threshold(3)
            .open_for(1_000)
            .probe_timeout(5_000)
            .check::<W64>()
            .unwrap();
        // Closed, with failures the follower's threshold reads as a corrupt
        // run, or unreadable: the local breaker decides.
        for w in [
            closed(4),
            word(State::Closed { failures: 2 }),
            word(State::Closed { failures: 7 }),
            NONE,
        ] {
            for now in [None, Some(0), Some(u64::MAX / 4)] {
                assert_eq!(fleet_holds(&ours, w, now), None, "{w:#x} at {now:?}");
            }
        }
        // A trip from a closed word at 10 000 µs: the kit's own open word.
        let step = transition::apply(
            &Config::new()
                .failure_threshold(1)
                .open_for(1_000)
                .probe_timeout(5_000)
                .check::<W64>()
                .unwrap(),
            closed(3),
            Event::Release {
                counter: 3,
                outcome: Outcome::Failure,
            },
            || 10_000,
        );
        let open = step.word;
        assert!(matches!(
            Snapshot::decode::<W64>(open).unwrap().state,
            State::Open { .. }
        ));
        // Before its open time: the wait this config reads.
        let why = fleet_holds(&ours, open, Some(10_100)).unwrap();
        assert_eq!(why.cause(), Cause::Open);
        let kit = match transition::apply(&ours, open, Event::Admit, || 10_100).verdict {
            Verdict::Rejected(why) => why,
            v => panic!("{v:?}"),
        };
        assert_eq!(why, kit);
        // Past it, and with no estimate of the server's time: still
        // rejected (the fleet's probe is for an instance of its config).
        for now in [Some(10_000_000), None] {
            let why = fleet_holds(&ours, open, now).unwrap();
            assert_eq!((why.cause(), why.retry_after()), (Cause::Open, Some(0)));
        }
        let cases = [
            (State::Probing { since: 3, trips: 1 }, Cause::Probing),
            (State::HalfOpen { trips: 2 }, Cause::Open),
            (State::ForcedOpen, Cause::ForcedOpen),
        ];
        for (state, cause) in cases {
            for now in [None, Some(0), Some(10_000_000)] {
                let why = fleet_holds(&ours, word(state), now).unwrap();
                assert_eq!(why.cause(), cause, "{state:?} at {now:?}");
            }
        }
        assert_eq!(
            fleet_holds(&ours, word(State::ForcedOpen), None)
                .unwrap()
                .retry_after(),
            None,
            "an operator's hold has no wait"
        );
    }

    #[test]
    fn a_published_fingerprint_carries_its_generation() {
        let print =
            "v1 failure_threshold=3 open_for=1000 backoff_cap=none probe_timeout=5000 horizon=9";
        assert_eq!(published_fingerprint(print), (print, 0));
        assert_eq!(
            published_fingerprint(&format!("{print} generation=12")),
            (print, 12)
        );
        let odd = format!("{print} generation=x");
        assert_eq!(published_fingerprint(&odd), (odd.as_str(), 0));
    }

    #[test]
    fn the_mirror_is_ahead_within_half_the_counter_period() {
        let max = W64::LAYOUT.max_counter();
        let cases = [
            (5, 5, false, "the same counter"),
            (6, 5, true, "one ahead"),
            (5, 6, false, "one behind"),
            (0, max, true, "one ahead across the wrap"),
            (max, 0, false, "one behind across the wrap"),
            (max / 2 + 5, 5, true, "half the period ahead"),
            (max / 2 + 6, 5, false, "past half the period: behind"),
            (max, 1, false, "far ahead reads as behind"),
        ];
        for (mirror, ticket, ahead, why) in cases {
            assert_eq!(
                mirror_ahead(closed(mirror), ticket),
                ahead,
                "{why}: {mirror} vs {ticket}"
            );
        }
        // Only the counter bits count: the rest of the word is ignored.
        let open = Snapshot {
            state: State::Open {
                since: 1 << 30,
                trips: 3,
            },
            counter: 9,
        }
        .encode::<W64>();
        assert!(mirror_ahead(open, 8));
        assert!(!mirror_ahead(open, 9));
    }

    #[test]
    fn a_lost_key_resumes_the_counter_past_every_ticket_of_its_word() {
        assert_eq!(resumed(None), 0, "a new fleet starts at the initial word");
        let max = W64::LAYOUT.max_counter();
        // The initial word found stored (a success reset a failure) is a
        // word seen: a key lost after it resumes past it.
        let initial = Snapshot::decode::<W64>(resumed(Some(0))).unwrap();
        assert_eq!(initial.counter, RESUME);
        for counter in [1, 7, max / 2, max - 1, max] {
            let seen = Snapshot {
                state: State::Open {
                    since: 1 << 20,
                    trips: 2,
                },
                counter,
            }
            .encode::<W64>();
            let word = resumed(Some(seen));
            let snap = Snapshot::decode::<W64>(word).unwrap();
            assert_eq!(snap.state, State::Closed { failures: 0 });
            assert_eq!(snap.counter, counter.wrapping_add(RESUME) & max);
            // Every ticket of the counters up to the one seen is stale
            // against it, and the mirrors take it as newer.
            for back in [0, 1, RESUME - 1] {
                assert!(mirror_ahead(word, counter.wrapping_sub(back) & max));
            }
        }
    }

    #[test]
    fn the_word_noted_as_stored_only_moves_forward() {
        let max = W64::LAYOUT.max_counter();
        let at = |counter: u32| {
            Snapshot {
                state: State::Closed { failures: 0 },
                counter,
            }
            .encode::<W64>()
        };
        assert_eq!(noted(None, at(0)), Some(at(0)));
        assert_eq!(noted(Some(at(5)), at(6)), Some(at(6)));
        // The same counter: the newer word (failures counted) is taken.
        let failed = Snapshot {
            state: State::Closed { failures: 1 },
            counter: 5,
        }
        .encode::<W64>();
        assert_eq!(noted(Some(at(5)), failed), Some(failed));
        // Behind: a late message, a read after lost writes.
        assert_eq!(noted(Some(at(6)), at(5)), Some(at(6)));
        assert_eq!(noted(Some(at(RESUME + 3)), at(3)), Some(at(RESUME + 3)));
        // Across the counter's wrap.
        assert_eq!(noted(Some(at(max)), at(1)), Some(at(1)));
        assert_eq!(noted(Some(at(1)), at(max)), Some(at(1)));
    }

    #[test]
    fn an_estimate_before_the_words_stamp_is_before_it_across_the_wrap() {
        let config = Config::new()
            .failure_threshold(1)
            .open_for(1)
            .probe_timeout(3_600_000_000)
            .check::<W64>()
            .unwrap();
        let s = config.time_shift();
        let probing = |since| {
            Ok(Snapshot {
                state: State::Probing { since, trips: 1 },
                counter: 3,
            })
        };
        assert!(!before_stamp(&config, probing(1000), 1000 << s));
        assert!(!before_stamp(&config, probing(1000), 1005 << s));
        assert!(before_stamp(&config, probing(1000), 999 << s));
        // Across the wrap of the time field: one unit after the top is 2
        // units after it, not before it.
        let top = W64::LAYOUT.time_mask();
        assert!(!before_stamp(&config, probing(top), 1 << s));
        assert!(before_stamp(&config, probing(1), top << s));
        // Only `Open` and `Probing` keep a stamp.
        let closed = Ok(Snapshot {
            state: State::Closed { failures: 0 },
            counter: 0,
        });
        assert!(!before_stamp(&config, closed, 0));
    }

    #[test]
    fn the_quorum_window_defaults_to_twice_the_longest_open_time() {
        let fixed = Config::new().open_for(1_000_000).check().unwrap();
        let backoff = Config::new()
            .open_for(1_000_000)
            .exponential_backoff(8_000_000)
            .check()
            .unwrap();
        let two = Quorum::ONE.with_instances(2);
        assert!(two.on() && !Quorum::ONE.on());
        assert!(!Quorum::ONE.with_instances(0).on(), "0 reads as 1");
        assert_eq!(two.window(&fixed), 2_000_000);
        assert_eq!(two.window(&backoff), 16_000_000);
        let set = two.clone().with_window(Duration::from_millis(1500));
        assert_eq!(set.window(&backoff), 1_500_000);
        assert_eq!(
            two.clone().with_window(Duration::MAX).window(&fixed),
            MAX_WINDOW
        );
        assert_eq!(two.with_window(Duration::ZERO).window(&fixed), 1);
        // The fingerprint is the same without a quorum, and names it with.
        assert_eq!(
            fingerprint(&fixed, &Quorum::ONE),
            fingerprint(&fixed, &Quorum::ONE.with_instances(1))
        );
        assert!(!fingerprint(&fixed, &Quorum::ONE).contains("quorum"));
        assert!(fingerprint(&fixed, &set).ends_with(" quorum=2 window=1500000"));
    }

    #[test]
    fn a_quorums_trip_is_the_kits_trip_at_the_time_read() {
        let config = Config::new()
            .failure_threshold(3)
            .open_for(1_000)
            .check()
            .unwrap();
        let step = trip(&config, closed(7), 5_000).unwrap();
        let open = Snapshot::decode::<W64>(step.word).unwrap();
        assert!(matches!(open.state, State::Open { .. }), "{open:?}");
        assert_eq!(open.counter, 8);
        let t: Vec<_> = step.transitions.iter().collect();
        assert_eq!(t.len(), 1);
        assert_eq!(
            (t[0].from, t[0].to, t[0].counter),
            (Status::Closed, Status::Open, 8)
        );
        // The same word a run of three failures stores through the kit.
        let mut w = closed(7);
        for _ in 0..3 {
            let outcome = Outcome::Failure;
            let event = Event::Release {
                counter: 7,
                outcome,
            };
            w = transition::apply(&config, w, event, || 5_000).word;
        }
        assert_eq!(w, step.word);
        assert!(!super::closed(step.word) && super::closed(closed(7)));
    }

    #[cfg(feature = "cluster")]
    #[test]
    fn a_cluster_refuses_sentinel_and_replicas() {
        let on_cluster =
            || RedisBreaker::builder("redis://127.0.0.1:1/", "k").cluster(["redis://127.0.0.1:2/"]);
        let cases = [
            (
                on_cluster().sentinel(["redis://127.0.0.1:3/"], "s"),
                "sentinel",
            ),
            (on_cluster().replicas(1), "replicas"),
        ];
        for (builder, what) in cases {
            match builder.build() {
                Err(e @ Error::Unsupported(_)) => assert!(e.to_string().contains(what), "{e}"),
                other => panic!("{what}: {other:?}"),
            }
        }
        let fleet = crate::Fleet::builder("redis://127.0.0.1:1/")
            .cluster(["redis://127.0.0.1:2/"])
            .replicas(2)
            .build();
        assert!(matches!(fleet, Err(Error::Unsupported(_))));
    }

    #[test]
    fn settings_convert_to_the_server_clocks_microseconds() {
        use tripword_std::Settings;
        let s = Settings::new()
            .failure_threshold(3)
            .open_for(Duration::from_secs(30))
            .exponential_backoff(Duration::from_secs(120))
            .probe_timeout(Duration::from_millis(2500));
        let b = RedisBreaker::builder("redis://127.0.0.1:1/", "k").settings(&s);
        let config = b.config.as_ref().unwrap();
        assert_eq!(config.failure_threshold(), 3);
        // At least as long as set: one tick more than each spans.
        assert_eq!(config.open_for(), 30_000_001);
        assert_eq!(config.backoff_cap(), Some(120_000_001));
        assert_eq!(config.probe_timeout(), 2_500_001);
        let d = format!("{b:?}");
        assert!(
            d.contains("open_for: 30.000001s, backoff_cap: Some(120.000001s)"),
            "{d}"
        );
        // The raw form after it wins, as any later setter does.
        let raw = b.config(ValidConfig::new(DEFAULT_CONFIG));
        assert_eq!(raw.config.as_ref().unwrap().open_for(), 1_000_000);
    }

    #[test]
    fn settings_out_of_range_are_builds_error() {
        use tripword_std::Settings;
        let zero = Settings::new().open_for(Duration::ZERO);
        let b = RedisBreaker::builder("redis://127.0.0.1:1/", "k").settings(&zero);
        assert!(format!("{b:?}").contains("config: Err("), "{b:?}");
        let Err(Error::Settings(e)) = b.build() else {
            panic!("a settings error")
        };
        assert_eq!(e.field(), tripword::Field::OpenFor);
        let text = Error::Settings(e).to_string();
        assert!(
            text.starts_with("tripword-redis: settings: open_for"),
            "{text}"
        );
        let fleet = crate::Fleet::builder("redis://127.0.0.1:1/")
            .settings(&zero)
            .build();
        assert!(matches!(fleet, Err(Error::Settings(_))));
    }

    #[test]
    fn a_key_is_interned_once() {
        let a = intern("intern-test-key");
        let b = intern(&String::from("intern-test-key"));
        assert!(core::ptr::eq(a, b));
        assert_eq!(a, "intern-test-key");
        assert!(!core::ptr::eq(a, intern("intern-test-other")));
    }

    #[test]
    fn builder_and_errors_print() {
        let b = RedisBreaker::builder("redis://127.0.0.1:1/", "payments")
            .op_timeout(Duration::from_millis(7));
        let debug = format!("{b:?}");
        for part in [
            "Builder {",
            "url: \"redis://127.0.0.1:1/\"",
            "key: \"payments\"",
            "op_timeout: 7ms",
            "..",
        ] {
            assert!(debug.contains(part), "{part} in {debug}");
        }
        // The config in durations, the quorum window too.
        let d = format!(
            "{:?}",
            RedisBreaker::builder("redis://127.0.0.1:1/", "k")
                .quorum(2)
                .quorum_window(Duration::from_millis(1500))
        );
        for part in [
            "config: Config { failure_threshold: 5, open_for: 1s, backoff_cap: None, probe_timeout: 5s,",
            "abandon: Failure }",
            "quorum: Quorum { instances: 2, window: Some(1.5s), voter: None }",
            "op_timeout: 100ms, refresh: 1s, retry: 200ms, pubsub: true, replicas: 0",
        ] {
            assert!(d.contains(part), "{part} in {d}");
        }
        let url = RedisBreaker::builder("nonsense", "k").build().unwrap_err();
        assert!(
            url.to_string()
                .starts_with("tripword-redis: bad connection URL: "),
            "{url}"
        );
    }
}
