//! [`Error`]: why a builder could not build, or an operation on the
//! fleet's word failed.

use redis::RedisError;

/// Why a [`Builder`](crate::Builder) could not build, or an operation that must reach Redis
/// ([`RedisBreaker::sync`](crate::RedisBreaker::sync), [`RedisBreaker::force_open`](crate::RedisBreaker::force_open)) failed.
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
    /// write the shared word (see [`RedisBreaker::config_mismatch`](crate::RedisBreaker::config_mismatch)).
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
    /// [`Builder::settings`](crate::Builder::settings) or [`FleetBuilder::settings`](crate::FleetBuilder::settings)
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
