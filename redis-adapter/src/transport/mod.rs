//! The transport: everything that talks to Redis, and nothing that decides
//! a breaker's state. The layer under the engine (`crate::engine`), which
//! reaches it only through a [`hub::Hub`]; the hub reaches the engine's
//! breakers only through [`Member`].
//!
//! - [`script`]: the Lua scripts and each round trip as a value (what to
//!   send, how the reply reads): no I/O, so the same steps serve both
//!   drivers and are tested with replies fed in.
//! - [`remote`]: the blocking driver, a key's word as a
//!   [`tripword::cell::Cell`] on a [`con::Con`]; [`aio`] (feature `tokio`):
//!   the async driver on one multiplexed connection.
//! - [`hub`]: what the breakers of one deployment share in a process (the
//!   pool, the server-clock estimate, the timings, the members).
//! - [`sentinel`], [`cluster`], [`tls`]: how a connection is opened on
//!   each kind of deployment.
//! - [`watch`]: the watcher thread that keeps every member's mirror fresh.
//!
//! Arrows point down: `watch` -> `hub` -> `remote`, `aio` -> `con`,
//! `sentinel`, `cluster` -> `script`, `tls`; this file imports from none of
//! them.

#[cfg(feature = "tokio")]
pub(crate) mod aio;
#[cfg(feature = "cluster")]
pub(crate) mod cluster;
pub(crate) mod con;
pub(crate) mod hub;
pub(crate) mod remote;
pub(crate) mod script;
pub(crate) mod sentinel;
pub(crate) mod tls;
pub(crate) mod watch;

use redis::RedisError;
use std::time::Duration;

/// The channel prefix every breaker's changes are published under, and the
/// watcher's one pattern subscription.
pub(crate) const CHANNEL_PREFIX: &str = "tripword:";

/// Timeouts and periods of a hub.
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

/// A breaker as its hub and the watcher see it: the engine's breaker
/// implements it, and the transport knows nothing else of it (the hub
/// holds its members weakly, as `Weak<dyn Member>`).
pub(crate) trait Member: Send + Sync {
    /// The key its word lives under.
    fn key(&self) -> &str;
    /// The channel its changes are published on.
    fn channel(&self) -> &str;
    /// Its mirror's change count before a read (see the engine's mirror):
    /// a word read after it is taken only if the mirror did not change
    /// meanwhile or the word is newer.
    fn mirror_base(&self) -> u64;
    /// What its missing key reads as.
    fn missing_word(&self) -> u64;
    /// A word found stored under its key.
    fn stored(&self, word: u64);
    /// The word the watcher read for it, in a batch begun at `base`.
    ///
    /// # Errors
    /// A corrupt word is repaired with a round trip of its own, which can
    /// fail.
    fn refreshed(&self, base: u64, word: u64) -> Result<(), RedisError>;
    /// A change some instance published, with the server time it was made
    /// at.
    fn published(&self, word: u64, server_time: u64);
    /// Redis failed: fall back to the local breaker.
    fn detach(&self);
}
