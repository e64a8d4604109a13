//! One [`tripword`] circuit breaker for a whole fleet of processes: the
//! breaker's word lives under a Redis key and changes only by an atomic
//! compare-and-set there (one Lua script: if `GET` is the word expected,
//! `SET` the new one), applied by the core's own compare-and-swap loop,
//! [`tripword::cell::update`]. There is no second state machine and no lock
//! is held during calls: the fleet trips once, elects exactly one probe, and
//! ignores stale results from every instance, because the state counter is
//! in the shared word.
//!
//! - **The closed path never touches the network.** Each instance keeps a
//!   mirror of the word; an admission in `Closed` reads it (one atomic
//!   load). Failures, probe elections and probe results go to Redis.
//! - **Recovery** (`Config::probes`, `Config::ramp`): a trial's `n`
//!   probes are elected in Redis, exactly `n` fleet-wide; during a ramp
//!   each instance admits its share of its own calls from its mirror, with
//!   no round trip and no write (`docs/distributed.md`, "The ramp in a
//!   fleet").
//! - **The mirror** learns of other instances' changes by pub/sub (every
//!   compare-and-set publishes the word it stored) and, whatever pub/sub
//!   delivers, by reading the word every refresh period ([`watch`](Builder::refresh)).
//! - **One time base**: the Redis server's clock, read in the same script as
//!   the word ([`time`]).
//! - **Fail-local**: when Redis does not answer within the operation
//!   timeout, the instance falls back to a local [`tripword::Breaker`] and
//!   rejoins the shared word when Redis answers again ([`Mode`]).
//! - **A quorum** ([`Builder::quorum`]): the fleet trips only on failures
//!   seen by `q` distinct instances; one instance whose own path to the
//!   dependency is broken holds itself off and does not trip the others.
//! - **Failover** ([`FleetBuilder::sentinel`]): the instances follow the
//!   primary Redis Sentinel names, asking the sentinels on each connect,
//!   and drop their connections to the old primary as soon as the
//!   sentinels announce a new one (`+switch-master`);
//!   with [`replicas(n)`](FleetBuilder::replicas) a change counts only once
//!   `n` replicas acknowledge it (`WAIT`), so no acknowledged trip or probe
//!   election is lost when a replica that acknowledged is promoted.
//! - **A [`Fleet`] per process**: every key's breaker on one connection
//!   pool, one pattern subscription and one watcher thread.
//! - **Redis Cluster** (feature `cluster`): `Builder::cluster` and
//!   `FleetBuilder::cluster` put each word on the node owning its key's
//!   slot; changes are published and subscribed per shard (`SPUBLISH`,
//!   `SSUBSCRIBE`), and a slot migrated under running instances loses no
//!   change. With `cluster-async`, the async form awaits its round trips
//!   there too.
//! - **TLS** (feature `tls`): `rediss://` URLs, for one Redis, the
//!   sentinels and the primary they name, and a cluster's nodes, with
//!   rustls; the roots to trust with [`Builder::tls_roots`] (the system's
//!   otherwise), a client certificate with [`Builder::tls_client_auth`].
//!   A fleet's ACL user and TLS setup: `docs/distributed-security.md`.
//! - **Async** (feature `tokio`): what needs Redis is awaited on one
//!   multiplexed tokio connection, never blocking an executor thread; a
//!   cancelled call never leaves a probe held.
//! - **One surface with `tripword-std`**: a fleet breaker is a
//!   [`CircuitBreaker`](tripword::CircuitBreaker) named by its key; calls run
//!   through `tripword_std::BreakerExt` (`call`, `call_async`) and its tower
//!   layers (the per-key layer takes a [`Fleet`]), with
//!   `tripword_std::CallError` as the error. Configs are written as
//!   `tripword_std::Settings` ([`Builder::settings`],
//!   [`FleetBuilder::settings`]), every other time as a `Duration`; the raw
//!   form in the server clock's microseconds stays ([`Builder::config`]).
//!   One observer: the core's, with the fleet's own reports in
//!   [`FleetObserver`] (`tripword-std`'s tracing and metrics observers take
//!   them with the features `tracing` and `metrics`).
//!
//! The defaults ([`DEFAULT_CONFIG`]): 5 failures in a row trip the fleet,
//! open for 1 s, probe timeout 5 s; operation timeout 100 ms, refresh
//! every 1 s.
//!
//! ```no_run
//! use std::time::Duration;
//! use tripword_redis::RedisBreaker;
//! use tripword_std::{BreakerExt, Settings};
//!
//! let breaker = RedisBreaker::builder("redis://127.0.0.1:6379/", "payments")
//!     .settings(&Settings::new().failure_threshold(5).open_for(Duration::from_secs(2)))
//!     .build()?;
//! match breaker.call(|| Ok::<_, std::io::Error>("paid")) {
//!     Ok(receipt) => println!("{receipt}"),
//!     // "circuit 'payments' open: call not admitted (retry after 1.2s)"
//!     Err(e) => println!("not paid: {e}"),
//! }
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! The ticket form, as the core's: [`RedisBreaker::acquire`], then
//! [`RedisBreaker::release`] with the outcome (or a [`Permit`]).
//!
//! How to run and operate a fleet is in `docs/distributed.md` in the
//! repository; the design and its bounds (mirror staleness, time, faults)
//! in `docs/distributed-proofs.md`, the measurements in
//! `docs/distributed-figures.md`, the limits in `docs/distributed-limits.md`.

#![cfg_attr(docsrs, feature(doc_cfg))]
#![forbid(unsafe_code)]
#![deny(missing_docs)]

// The layers, top down; each file imports only from the layers below it
// (the map: `docs/distributed-proofs.md`, "Map of tripword-redis").
// The handles and their options.
mod breaker;
mod error;
mod fleet;
mod options;
// The engine: one key's breaker in one instance, every decision on it.
mod engine;
// The transport: the protocol's trips, connections, the hub, the watcher.
mod transport;
// The base every layer may use: the reports and the clocks.
mod observer;
pub mod server;
pub mod time;

pub use breaker::{Builder, Permit, RedisBreaker};
pub use engine::ticket::{Release, Stats, Ticket};
pub use error::Error;
pub use fleet::{Fleet, FleetBuilder};
#[cfg(feature = "metrics")]
#[cfg_attr(docsrs, doc(cfg(feature = "metrics")))]
pub use observer::metric_names;
pub use observer::{FleetObserver, Mode, Scope, Transitions};
pub use options::DEFAULT_CONFIG;
pub use time::{LocalClock, LocalTicks, Monotonic};
