//! [`RedisBreaker`]: the handle on one key's fleet breaker, its
//! [`Builder`] (from the [`Options`] every builder shares) and its
//! [`Permit`]. A thin layer over the engine's breaker
//! (`crate::engine::Inner`): every decision is made there.

use crate::engine::Inner;
#[cfg(feature = "tokio")]
use crate::engine::aio;
#[cfg(feature = "tokio")]
use crate::engine::quorum::Follow;
use crate::engine::quorum::Quorum;
use crate::engine::ticket::{Release, Stats, Ticket, to_core};
use crate::error::Error;
use crate::observer::{FleetObserver, Mode};
use crate::options::{Options, options_setters};
use crate::time::LocalTicks;
use crate::transport::hub::Hub;
use crate::transport::watch;
use std::sync::Arc;
use std::time::Duration;
use tripword::kit::CircuitBreaker;
#[cfg(not(feature = "tokio"))]
use tripword::kit::Never;
#[cfg(feature = "tokio")]
use tripword::kit::{Reply, TickVerdict};
use tripword::transition::Event;
use tripword::word::Snapshot;
use tripword::{Health, Outcome, Rejected, Status, ValidConfig, W64};
use tripword_std::clock::RealClock;

/// Builds a [`RedisBreaker`].
///
/// Its defaults: the config [`DEFAULT_CONFIG`](crate::DEFAULT_CONFIG) (5 failures in a row trip
/// the fleet, open for 1 s, probe timeout 5 s, no backoff), no quorum
/// (every instance's failures count in the shared word), operation timeout
/// 100 ms, refresh every 1 s, retry after 200 ms, pub/sub on, no replica
/// acknowledgement, the [`Monotonic`](crate::Monotonic) clock, no observer. Its `Debug`
/// prints them, times as durations.
///
/// Times are given as durations: [`settings`](Self::settings) takes
/// `tripword-std`'s [`Settings`](tripword_std::Settings) for the breaker's
/// config, and every other time is a [`Duration`](std::time::Duration).
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
    key: String,
    options: Options,
}

impl core::fmt::Debug for Builder {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        let mut d = f.debug_struct("Builder");
        d.field("url", &self.options.url).field("key", &self.key);
        self.options.fields(&mut d);
        d.finish_non_exhaustive()
    }
}

impl Builder {
    /// A builder of the breaker under `key` on the Redis at `url`, with
    /// the defaults.
    pub(crate) fn new(url: String, key: String) -> Builder {
        Builder {
            key,
            options: Options::new(url),
        }
    }

    /// Builds the instance and starts its watcher thread (a breaker built
    /// alone has a connection pool and a watcher of its own; the breakers
    /// of a [`Fleet`](crate::Fleet) share them). Reads the word once
    /// (within the operation timeout): if Redis answers the instance starts
    /// in [`Mode::Shared`], otherwise in
    /// [`Mode::Local`], and joins the shared word when
    /// Redis answers. Fails only for a bad URL or when the thread cannot
    /// start: an unreachable Redis is not an error.
    ///
    /// # Errors
    /// [`Error::Url`], [`Error::Thread`], [`Error::Settings`],
    /// [`Error::Unsupported`].
    pub fn build(self) -> Result<RedisBreaker, Error> {
        let built = self.options.build()?;
        let observer = built.observer.for_key(&self.key);
        // Joined first: the watcher's first read is of this key too.
        let breaker =
            RedisBreaker::join(&built.hub, self.key, built.config, observer, built.quorum);
        watch::spawn(&built.hub).map_err(Error::Thread)?;
        Ok(breaker)
    }
}

options_setters!(Builder);

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
    /// A breaker on `hub` under `key`, with a quorum: joins the hub's
    /// watcher, then reads the word once.
    pub(crate) fn join(
        hub: &Arc<Hub>,
        key: String,
        config: ValidConfig<W64>,
        observer: Arc<dyn FleetObserver>,
        quorum: Quorum,
    ) -> RedisBreaker {
        RedisBreaker {
            inner: Inner::join(hub, key, config, observer, quorum),
        }
    }

    /// Whether `a` and `b` are the same breaker (handles on one instance's
    /// breaker for one key).
    pub fn ptr_eq(a: &RedisBreaker, b: &RedisBreaker) -> bool {
        Arc::ptr_eq(&a.inner, &b.inner)
    }

    /// A builder for the breaker under `key` on the Redis at `url`
    /// (`redis://host:port/db`).
    pub fn builder(url: impl Into<String>, key: impl Into<String>) -> Builder {
        Builder::new(url.into(), key.into())
    }

    /// Asks to make a call. In `Closed` (as the mirror says) this is one
    /// atomic load: no network, no clock. While the mirror says `Open` or
    /// `Probing` and the server's time (estimated) is before the deadline,
    /// it rejects locally. Otherwise (the deadline passed, the mirror is
    /// stale or corrupt) it goes to Redis, where at most one instance of the
    /// fleet is elected probe (exactly `n` with `Config::probes(n)`: a
    /// trial with room goes to Redis, a full one rejects locally as
    /// `Probing` does). In a ramp (`Config::ramp`) each instance admits its
    /// share of its own calls with no network and no write (rejecting the
    /// rest with [`Cause::Ramp`](tripword::Cause::Ramp)); the instance that
    /// finds the last stage over stores the end in Redis. In
    /// [`Mode::Local`] the local breaker decides.
    ///
    /// # Errors
    /// [`Rejected`]: not admitted, with the cause and the wait.
    #[inline]
    pub fn acquire(&self) -> Result<Ticket, Rejected> {
        self.inner.acquire()
    }

    /// Reports how an admitted call went. A release settles locally, with
    /// no network, only when the mirror shows it changes nothing (a success
    /// with no failures counted, in `Closed` or in a ramp, an ignored
    /// outcome, a ticket whose state has passed); a failure, a success
    /// after failures and every probe result go to Redis.
    #[inline]
    pub fn release(&self, ticket: Ticket, outcome: Outcome) -> Release {
        self.inner.release(ticket, outcome)
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
    /// `Probing` while the word is (or holds a trial), `Recovering` while
    /// it ramps, `Open` while the word is in any other state but `Closed`,
    /// and its local breaker's status otherwise.
    pub fn status(&self) -> Status {
        self.inner.status()
    }

    /// The state as one value ([`Health`]), read as [`status`](Self::status)
    /// reads it: in [`Mode::Shared`], the shared word as this instance's
    /// mirror last saw it, at the estimated server time (its counter, the
    /// failures it counts, its trips, whether an operator holds it), with
    /// the wait of the rejection an admission would get now; in
    /// [`Mode::Local`], the local breaker's (while a follower is held off by
    /// the fleet's word, that word's, with the follower's status and wait).
    /// With a [`quorum`](Builder::quorum), while the mirror says `Closed`,
    /// the instance's own view: its local breaker's. Without a valid
    /// estimate of the server's time the wait is `None`: how long is
    /// Redis's to say, at the next admission. A read: no network, stores
    /// nothing. What a [`Fleet`](crate::Fleet) and `tripword-std`'s
    /// registry read to tell a blank breaker.
    pub fn health(&self) -> Health {
        self.inner.health()
    }

    /// Whether the instance uses the shared word or its local breaker.
    pub fn mode(&self) -> Mode {
        self.inner.mode()
    }

    /// The mirror: the shared word as this instance last saw it.
    pub fn word(&self) -> u64 {
        self.inner.word()
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
        self.inner.sync().map_err(Error::Redis)?;
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

    /// Opens the whole fleet's breaker now for at least `open_for`, from
    /// any state (`Event::ForceOpenFor`, timed on the Redis server's
    /// clock, in microseconds, and clamped to the config's
    /// [`longest_hint`](tripword::ValidConfig::longest_hint): 2.4 hours with
    /// the default horizon); then it becomes half-open as after a trip, and
    /// the fleet elects one probe. Every ticket issued before is stale. For
    /// maintenance with an end, or a `Retry-After` that came outside any
    /// call. An instance that loses Redis during it stays open for what is
    /// left of it (as its estimate of the server's time reads it).
    ///
    /// # Errors
    /// [`Error::Redis`] when Redis did not answer in time: the shared word
    /// did not change. This instance, now local, opens its local breaker
    /// for `open_for` (on its own clock) all the same; try again to open
    /// the fleet. [`Error::ConfigMismatch`] for an instance whose config is
    /// not the fleet's (it forces only its local breaker), as for
    /// [`force_open`](Self::force_open).
    pub fn force_open_for(&self, open_for: Duration) -> Result<(), Error> {
        let open_for = <LocalTicks as RealClock>::ticks(open_for);
        self.force(Event::ForceOpenFor { open_for })
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
        self.inner.force(event).map_err(|e| match e {
            Ok(fleet) => Error::ConfigMismatch {
                ours: self.inner.fingerprint().to_owned(),
                fleet,
            },
            Err(e) => Error::Redis(e),
        })
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
    /// `Probing` (or a trial), a ramp or `ForcedOpen` it rejects, whatever
    /// its own open time says; while the word is `Closed` its local breaker
    /// decides. It
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
        self.inner.fingerprint()
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
        self.inner.stats()
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
    type Acquiring = aio::Acquiring;
    #[cfg(feature = "tokio")]
    type Releasing = aio::Releasing;
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

    fn health(&self) -> Health {
        RedisBreaker::health(self)
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
        if let Some(ticket) = inner.acquire_fast() {
            return Reply::Ready(Ok(ticket));
        }
        match inner.acquire_prepare() {
            Ok(answer) => Reply::Ready(inner.answered(answer)),
            Err(base) => match aio::acquire(&self.inner, base) {
                Some(future) => Reply::Wait(future),
                None => Reply::Ready(inner.answered(inner.acquire_remote(base))),
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
        match aio::release(&self.inner, word, ticket.counter, outcome) {
            Some(future) => Reply::Wait(future),
            None => {
                let release = inner.release_remote(word, ticket.counter, outcome);
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::DEFAULT_CONFIG;
    use std::time::Duration;
    use tripword::ValidConfig;

    #[cfg(feature = "cluster")]
    #[test]
    fn settings_convert_to_the_server_clocks_microseconds() {
        use tripword_std::Settings;
        let s = Settings::new()
            .failure_threshold(3)
            .open_for(Duration::from_secs(30))
            .exponential_backoff(Duration::from_secs(120))
            .probe_timeout(Duration::from_millis(2500));
        let b = RedisBreaker::builder("redis://127.0.0.1:1/", "k").settings(&s);
        let config = b.options.config.as_ref().unwrap();
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
        assert_eq!(raw.options.config.as_ref().unwrap().open_for(), 1_000_000);
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

#[cfg(test)]
mod handle_tests;
