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
//!   primary Redis Sentinel names, asking the sentinels on each connect;
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
//! - **Async** (feature `tokio`): what needs Redis is awaited on one
//!   multiplexed tokio connection, never blocking an executor thread; a
//!   cancelled call never leaves a probe held. With the feature
//!   `tripword-std`: settings in durations, its observers
//!   ([`Transitions`]), the per-key tower layer.
//!
//! ```no_run
//! use tripword::{Config, Outcome};
//! use tripword_redis::RedisBreaker;
//!
//! let breaker = RedisBreaker::builder("redis://127.0.0.1:6379/", "breaker:payments")
//!     .config(Config::new().failure_threshold(5).open_for(2_000_000).probe_timeout(5_000_000).check()?)
//!     .build()?;
//! match breaker.acquire() {
//!     Ok(ticket) => {
//!         let ok = true; // call the dependency here
//!         breaker.release(ticket, if ok { Outcome::Success } else { Outcome::Failure });
//!     }
//!     Err(rejected) => println!("not calling: {rejected}"),
//! }
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! The design, its bounds (mirror staleness, time, faults) and measurements
//! are in `docs/distributed.md` in the repository.

#![cfg_attr(docsrs, feature(doc_cfg))]
#![forbid(unsafe_code)]
#![deny(missing_docs)]

#[cfg(feature = "tokio")]
mod aio;
mod breaker;
#[cfg(feature = "cluster")]
mod cluster;
mod fleet;
mod hub;
mod local;
mod mirror;
mod observer;
mod remote;
mod sentinel;
pub mod server;
pub mod time;
mod watch;

pub use breaker::{
    Builder, CallError, DEFAULT_CONFIG, Error, Permit, RedisBreaker, Release, Stats, Ticket,
};
pub use fleet::{Fleet, FleetBuilder};
pub use observer::{Mode, Observer, OnTransition, Scope, Transitions};
pub use time::{LocalClock, LocalTicks, Monotonic};
