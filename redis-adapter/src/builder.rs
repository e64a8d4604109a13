//! [`Builder`]: one fleet breaker, built from the [`Options`] every
//! builder shares.

use crate::breaker::RedisBreaker;
use crate::error::Error;
use crate::options::{Options, options_setters};
use crate::transport::watch;

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
    /// in [`Mode::Shared`](crate::Mode::Shared), otherwise in
    /// [`Mode::Local`](crate::Mode::Local), and joins the shared word when
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
