//! [`RegistrySettings`], a default and overrides by key, and the
//! registries built from them: [`Registry::from_settings`] and
//! [`Registry::from_settings_on`], and of failure-rate breakers
//! [`Registry::from_rate_settings`] and [`Registry::from_rate_settings_on`].

use core::fmt;
use std::collections::HashMap;
use std::hash::Hash;

use foldhash::fast::RandomState;
use tripword::rate::{RateBreaker, ValidRate};
use tripword::{Breaker, Observer, ValidConfig, Word};

use super::map::Registry;
use crate::clock::{MonotonicClock, RealClock};
use crate::settings::{Settings, SettingsError, StdRateBreaker};

impl<K> Registry<K>
where
    K: Hash + Eq + Clone + Send + Sync + 'static,
{
    /// [`StdBreaker`](crate::StdBreaker)s (the [`MonotonicClock`], the
    /// 64-bit word, no observer), each from its key's settings in
    /// `settings` (its override, or the default); at most
    /// [`DEFAULT_CAPACITY`](super::DEFAULT_CAPACITY) of them. One
    /// [`Settings`] for every key converts with `.into()`.
    ///
    /// ```
    /// use std::time::Duration;
    /// use tripword_std::{Registry, RegistrySettings, Settings};
    ///
    /// let default = Settings::new().failure_threshold(5).open_for(Duration::from_secs(30));
    /// let settings = RegistrySettings::new(default)
    ///     .override_for("api.example.com", default.failure_threshold(1));
    /// let hosts: Registry<String> = Registry::from_settings(&settings)?;
    /// assert_eq!(hosts.get("api.example.com").config().failure_threshold(), 1);
    /// assert_eq!(hosts.get("db.internal").config().failure_threshold(), 5);
    ///
    /// // The same settings for every key.
    /// let plain: Registry<String> = Registry::from_settings(&default.into())?;
    /// assert_eq!(plain.get("api.example.com").config().failure_threshold(), 5);
    ///
    /// // Out of range: the error names the key.
    /// let bad = settings.override_for("pay.example.com", default.failure_threshold(0));
    /// let err = Registry::from_settings(&bad).unwrap_err();
    /// assert_eq!(err.key().map(String::as_str), Some("pay.example.com"));
    /// assert_eq!(
    ///     err.to_string(),
    ///     r#"override for "pay.example.com": failure_threshold = 0 is out of range 1..=65535 (64-bit word)"#,
    /// );
    /// # Ok::<(), tripword_std::RegistrySettingsError>(())
    /// ```
    ///
    /// # Errors
    /// The first setting out of range (the default's, then the overrides'
    /// in order), with its key.
    pub fn from_settings(settings: &RegistrySettings<K>) -> Result<Self, RegistrySettingsError<K>> {
        Registry::from_settings_on(settings, MonotonicClock, |_: &K| ())
    }
}

impl<K, C, W, O> Registry<K, Breaker<C, W, O>>
where
    K: Hash + Eq + Clone + Send + Sync + 'static,
    C: RealClock + Clone + Send + Sync + 'static,
    W: Word,
    O: Observer + Send + Sync + 'static,
{
    /// Breakers on `clock` (a [`RealClock`], cloned into each), each from
    /// its key's settings in `settings` (its override, or the default),
    /// converted to `clock`'s ticks and checked against the word `W`, with
    /// the observer `observer` makes from its key (so each is named in its
    /// events: `|host| TracingObserver::new(host.as_str())`); at most
    /// [`DEFAULT_CAPACITY`](super::DEFAULT_CAPACITY) of them. `observer`
    /// runs under the registry's write lock when a key is new: it must not
    /// use the registry.
    ///
    /// ```
    /// use std::time::Duration;
    /// use tripword::{Status, W32};
    /// use tripword_std::clock::ManualTime;
    /// use tripword_std::{Breaker, BreakerExt, Registry, RegistrySettings, Settings};
    ///
    /// static CLOCK: ManualTime = ManualTime::new();
    /// let default = Settings::new().failure_threshold(3).open_for(Duration::from_secs(10));
    /// let settings = RegistrySettings::new(default).override_for("flaky", default.failure_threshold(1));
    /// let r: Registry<String, Breaker<&ManualTime, W32>> =
    ///     Registry::from_settings_on(&settings, &CLOCK, |_| ())?;
    /// let _ = r.with("flaky", |b| b.call(|| Err::<(), _>("down")));
    /// let _ = r.with("steady", |b| b.call(|| Err::<(), _>("down")));
    /// assert_eq!(r.with("flaky", |b| b.status()), Status::Open);
    /// assert_eq!(r.with("steady", |b| b.status()), Status::Closed);
    /// assert_eq!(r.get("flaky").config().failure_threshold(), 1);
    /// CLOCK.advance(Duration::from_secs(11));
    /// assert_eq!(r.with("flaky", |b| b.status()), Status::HalfOpen);
    /// # Ok::<(), tripword_std::RegistrySettingsError>(())
    /// ```
    ///
    /// ```
    /// use std::sync::Arc;
    /// use std::sync::atomic::{AtomicUsize, Ordering};
    /// use tripword_std::{MonotonicClock, OnTransition, Registry, Settings, StdBreaker, Transition, W64};
    ///
    /// static TRIPS: AtomicUsize = AtomicUsize::new(0);
    /// let settings = Settings::new().failure_threshold(1).into();
    /// let hosts: Registry<String, StdBreaker<W64, _>> =
    ///     Registry::from_settings_on(&settings, MonotonicClock, |host: &String| {
    ///         let host = Arc::<str>::from(host.as_str());
    ///         OnTransition(move |t: Transition| {
    ///             println!("{host}: {t}");
    ///             TRIPS.fetch_add(1, Ordering::Relaxed);
    ///         })
    ///     })?;
    /// hosts.with("db-1.internal", |b| b.force_open());
    /// assert_eq!(TRIPS.load(Ordering::Relaxed), 1);
    /// # Ok::<(), tripword_std::RegistrySettingsError>(())
    /// ```
    ///
    /// # Errors
    /// The first setting out of range for `clock` and `W` (the default's,
    /// then the overrides' in order), with its key.
    pub fn from_settings_on(
        settings: &RegistrySettings<K>,
        clock: C,
        observer: impl Fn(&K) -> O + Send + Sync + 'static,
    ) -> Result<Self, RegistrySettingsError<K>> {
        let (config, overrides) = settings.checked(Settings::config::<C, W>)?;
        let overrides: HashMap<K, ValidConfig<W>, RandomState> = overrides.into_iter().collect();
        Ok(Registry::new(move |key: &K| {
            let config = overrides.get(key).copied().unwrap_or(config);
            Breaker::from_parts(config, clock.clone(), observer(key))
        }))
    }
}

impl<K> Registry<K, StdRateBreaker>
where
    K: Hash + Eq + Clone + Send + Sync + 'static,
{
    /// [`StdRateBreaker`]s (failure-rate breakers on the
    /// [`MonotonicClock`], the 64-bit word, 8 buckets, no observer), each
    /// from its key's settings in `settings` (its override, or the
    /// default), as [`Settings::build_rate`] builds one: the policy is the
    /// settings' [`failure_rate`](crate::Settings::failure_rate) (or
    /// [`FailureRate::default`](crate::settings::FailureRate)), the
    /// failure threshold is not read. At most
    /// [`DEFAULT_CAPACITY`](super::DEFAULT_CAPACITY) of them.
    ///
    /// ```
    /// use std::time::Duration;
    /// use tripword_std::{FailureRate, StdRateBreaker};
    /// use tripword_std::{Registry, RegistrySettings, Settings};
    ///
    /// let default = Settings::new()
    ///     .open_for(Duration::from_secs(30))
    ///     .failure_rate(FailureRate::new(50, Duration::from_secs(10)));
    /// let settings = RegistrySettings::new(default).override_for(
    ///     "batch.internal",
    ///     default.failure_rate(FailureRate::new(90, Duration::from_secs(60))),
    /// );
    /// let hosts: Registry<String, StdRateBreaker> = Registry::from_rate_settings(&settings)?;
    /// assert_eq!(hosts.get("batch.internal").rate().failure_rate(), 90);
    /// assert_eq!(hosts.get("api.internal").rate().failure_rate(), 50);
    ///
    /// // Out of range: the error names the key and the field.
    /// let bad = settings.override_for("pay.internal", default.failure_rate(FailureRate::new(0, Duration::from_secs(1))));
    /// let err = Registry::from_rate_settings(&bad).unwrap_err();
    /// assert_eq!(
    ///     err.to_string(),
    ///     r#"override for "pay.internal": failure_rate.percent = 0 is out of range 1..=100"#,
    /// );
    /// # Ok::<(), tripword_std::RegistrySettingsError>(())
    /// ```
    ///
    /// # Errors
    /// The first setting out of range (the default's, then the overrides'
    /// in order), with its key.
    pub fn from_rate_settings(
        settings: &RegistrySettings<K>,
    ) -> Result<Self, RegistrySettingsError<K>> {
        Registry::from_rate_settings_on(settings, MonotonicClock, |_: &K| ())
    }
}

impl<K, C, W, O, const N: usize> Registry<K, RateBreaker<C, W, O, N>>
where
    K: Hash + Eq + Clone + Send + Sync + 'static,
    C: RealClock + Clone + Send + Sync + 'static,
    W: Word,
    O: Observer + Send + Sync + 'static,
{
    /// Failure-rate breakers on `clock` with `N` buckets, each from its
    /// key's settings in `settings` (its override, or the default) as
    /// [`Settings::build_rate_on`] builds one, with the observer `observer`
    /// makes from its key: [`from_settings_on`](Registry::from_settings_on)
    /// for rate breakers. `observer` runs under the registry's write lock
    /// when a key is new: it must not use the registry.
    ///
    /// ```
    /// use std::time::Duration;
    /// use tripword::rate::RateBreaker;
    /// use tripword::{Status, W32};
    /// use tripword_std::clock::ManualTime;
    /// use tripword_std::FailureRate;
    /// use tripword_std::{BreakerExt, Registry, RegistrySettings, Settings};
    ///
    /// static CLOCK: ManualTime = ManualTime::new();
    /// let settings = Settings::new()
    ///     .failure_rate(FailureRate::new(50, Duration::from_secs(10)).minimum_calls(4))
    ///     .into();
    /// let r: Registry<String, RateBreaker<&ManualTime, W32>> =
    ///     Registry::from_rate_settings_on(&settings, &CLOCK, |_| ())?;
    /// for ok in [true, false, true, false] {
    ///     let _ = r.with("flaky", |b| b.call(|| if ok { Ok(()) } else { Err("down") }));
    /// }
    /// assert_eq!(r.with("flaky", |b| b.status()), Status::Open);
    /// # Ok::<(), tripword_std::RegistrySettingsError>(())
    /// ```
    ///
    /// # Errors
    /// The first setting out of range for `clock`, `W` and `N` (the
    /// default's, then the overrides' in order), with its key.
    pub fn from_rate_settings_on(
        settings: &RegistrySettings<K>,
        clock: C,
        observer: impl Fn(&K) -> O + Send + Sync + 'static,
    ) -> Result<Self, RegistrySettingsError<K>> {
        let (parts, overrides) = settings.checked(Settings::rate_parts::<C, W, N>)?;
        let overrides: HashMap<K, RateParts<W, N>, RandomState> = overrides.into_iter().collect();
        Ok(Registry::new(move |key: &K| {
            let (config, rate) = overrides.get(key).copied().unwrap_or(parts);
            RateBreaker::from_parts(config, rate, clock.clone(), observer(key))
        }))
    }
}

/// A rate breaker's checked config and policy.
type RateParts<W, const N: usize> = (ValidConfig<W>, ValidRate<W, N>);

/// Settings for a registry of breakers: a default, and overrides by key
/// (a host, a route) for the keys that need other values. What
/// [`Registry::from_settings`] and [`Registry::from_settings_on`] build a
/// registry from (each key's breaker from its override, or the default),
/// and, of failure-rate breakers, [`Registry::from_rate_settings`] and
/// [`Registry::from_rate_settings_on`]; a factory of any breaker given to [`Registry::new`] can read a key's
/// with [`settings_for`](Self::settings_for). One [`Settings`] for every
/// key converts into it ([`From`]).
///
/// Every override is a whole [`Settings`]; in code, derive it from the
/// default (`default.failure_threshold(1)`). The ranges are checked where
/// a single [`Settings`]' are, when the clock and word are known
/// ([`check`](Self::check), or building the registry), and the error
/// names the key ([`RegistrySettingsError`]).
///
/// ```
/// use std::time::Duration;
/// use tripword_std::{RegistrySettings, Settings};
///
/// let default = Settings::new().failure_threshold(5).open_for(Duration::from_secs(30));
/// // Keys are `String`s by default; `override_for` takes a `&str` too.
/// let settings: RegistrySettings = RegistrySettings::new(default)
///     .override_for("api.example.com", default.failure_threshold(1));
/// assert_eq!(settings.settings_for("api.example.com").failure_threshold, 1);
/// assert_eq!(settings.settings_for("db.internal"), &default);
/// assert_eq!(settings.overrides().len(), 1);
/// ```
///
/// # From a config file (feature `serde`)
/// A table `default` (a [`Settings`], every key optional) and a table
/// `overrides` of tables by key, both optional, no other key. An override
/// names only the keys it changes: the others are the `default` table's.
/// The same holds inside an override's `failure_rate` table: `failure_rate
/// = { percent = 90 }` keeps the default's window and minimum of calls
/// (or [`FailureRate::default`](crate::settings::FailureRate)'s, where the
/// default sets no `failure_rate`). (So in a file an override cannot turn
/// off the default's `exponential_backoff` or `failure_rate`; build such
/// settings in code, with [`Settings::fixed_open_time`] and
/// [`Settings::without_failure_rate`].) Overrides keep the file's order,
/// which is the order their ranges are checked in.
///
/// ```
/// # #[cfg(feature = "serde")] {
/// use std::time::Duration;
/// use tripword_std::{RegistrySettings, Settings};
///
/// let settings: RegistrySettings = toml::from_str(r#"
///     [default]
///     failure_threshold = 5
///     open_for = "30s"
///
///     [overrides."api.example.com"]
///     failure_threshold = 1
/// "#).unwrap();
/// let default = Settings::new().failure_threshold(5).open_for(Duration::from_secs(30));
/// assert_eq!(settings.default_settings(), &default);
/// assert_eq!(settings.settings_for("api.example.com"), &default.failure_threshold(1));
/// # }
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RegistrySettings<K = String> {
    default: Settings,
    // In the order given; a key at most once.
    overrides: Vec<(K, Settings)>,
}

impl<K> Default for RegistrySettings<K> {
    /// [`Settings::new`] for every key, no overrides.
    fn default() -> Self {
        RegistrySettings::new(Settings::new())
    }
}

impl<K> From<Settings> for RegistrySettings<K> {
    /// `settings` for every key, no overrides: [`RegistrySettings::new`].
    fn from(settings: Settings) -> Self {
        RegistrySettings::new(settings)
    }
}

impl<K> RegistrySettings<K> {
    /// `default` for every key, no overrides yet.
    pub const fn new(default: Settings) -> Self {
        RegistrySettings {
            default,
            overrides: Vec::new(),
        }
    }

    /// `settings` for `key` instead of the default (replacing an earlier
    /// override of `key`).
    ///
    /// ```
    /// use tripword_std::{RegistrySettings, Settings};
    /// let s = RegistrySettings::<String>::default()
    ///     .override_for("a", Settings::new().failure_threshold(1))
    ///     .override_for("a", Settings::new().failure_threshold(2));
    /// assert_eq!(s.settings_for("a").failure_threshold, 2);
    /// assert_eq!(s.overrides().len(), 1);
    /// ```
    pub fn override_for(mut self, key: impl Into<K>, settings: Settings) -> Self
    where
        K: Eq,
    {
        let key = key.into();
        match self.overrides.iter_mut().find(|(k, _)| *k == key) {
            Some((_, s)) => *s = settings,
            None => self.overrides.push((key, settings)),
        }
        self
    }

    /// The settings of every key without an override.
    pub const fn default_settings(&self) -> &Settings {
        &self.default
    }

    /// The overrides, in the order given.
    pub fn overrides(&self) -> &[(K, Settings)] {
        &self.overrides
    }

    /// `key`'s settings: its override, or the default.
    pub fn settings_for<Q>(&self, key: &Q) -> &Settings
    where
        K: core::borrow::Borrow<Q>,
        Q: Eq + ?Sized,
    {
        self.overrides
            .iter()
            .find(|(k, _)| k.borrow() == key)
            .map_or(&self.default, |(_, s)| s)
    }

    /// Checks every setting against clock `C` and word `W`: the default's,
    /// then each override's, in order.
    ///
    /// ```
    /// use tripword::W32;
    /// use tripword_std::{MillisClock, RegistrySettings, Settings};
    ///
    /// let s = RegistrySettings::new(Settings::new())
    ///     .override_for("bulk", Settings::new().failure_threshold(5000));
    /// assert!(s.check::<MillisClock, tripword::W64>().is_ok());
    /// let err = s.check::<MillisClock, W32>().unwrap_err(); // 4095 at most
    /// assert_eq!(err.key().map(String::as_str), Some("bulk"));
    /// ```
    ///
    /// # Errors
    /// The first setting out of range, with its key.
    pub fn check<C: RealClock, W: Word>(&self) -> Result<(), RegistrySettingsError<K>>
    where
        K: Clone,
    {
        self.checked(Settings::config::<C, W>).map(drop)
    }

    /// Checks every setting as a failure-rate breaker reads it, against
    /// clock `C`, word `W` and `N` buckets: the default's, then each
    /// override's, in order (as [`Settings::build_rate_on`] does: the
    /// failure threshold is not checked).
    ///
    /// ```
    /// use std::time::Duration;
    /// use tripword::{Field, W32, W64};
    /// use tripword_std::FailureRate;
    /// use tripword_std::{MillisClock, RegistrySettings, Settings};
    ///
    /// let s = RegistrySettings::new(Settings::new()).override_for(
    ///     "bulk",
    ///     Settings::new().failure_rate(FailureRate::new(50, Duration::from_secs(10)).minimum_calls(5000)),
    /// );
    /// assert!(s.check_rate::<MillisClock, W64, 8>().is_ok());
    /// let err = s.check_rate::<MillisClock, W32, 8>().unwrap_err(); // 1023 at most
    /// assert_eq!(err.key().map(String::as_str), Some("bulk"));
    /// assert_eq!(err.settings_error().field(), Field::MinimumCalls);
    /// ```
    ///
    /// # Errors
    /// The first setting out of range, with its key.
    pub fn check_rate<C: RealClock, W: Word, const N: usize>(
        &self,
    ) -> Result<(), RegistrySettingsError<K>>
    where
        K: Clone,
    {
        self.checked(Settings::rate_parts::<C, W, N>).map(drop)
    }

    /// `check(settings)` of the default and of each override, in order:
    /// the first error with its key, or every result.
    fn checked<T>(
        &self,
        check: impl Fn(&Settings) -> Result<T, SettingsError>,
    ) -> Result<Checked<K, T>, RegistrySettingsError<K>>
    where
        K: Clone,
    {
        let default =
            check(&self.default).map_err(|error| RegistrySettingsError { key: None, error })?;
        let overrides = self
            .overrides
            .iter()
            .map(|(key, settings)| match check(settings) {
                Ok(checked) => Ok((key.clone(), checked)),
                Err(error) => Err(RegistrySettingsError {
                    key: Some(key.clone()),
                    error,
                }),
            })
            .collect::<Result<_, _>>()?;
        Ok((default, overrides))
    }
}

/// What [`RegistrySettings`] checked: the default's, and each override's
/// with its key.
type Checked<K, T> = (T, Vec<(K, T)>);

/// A setting of a [`RegistrySettings`] out of range: which key's
/// ([`key`](Self::key): `None` for the default), and the
/// [`SettingsError`] itself.
///
/// ```
/// use tripword::{Field, W64};
/// use tripword_std::{MonotonicClock, RegistrySettings, Settings};
///
/// let s = RegistrySettings::new(Settings::new())
///     .override_for("api.example.com", Settings::new().failure_threshold(0));
/// let err = s.check::<MonotonicClock, W64>().unwrap_err();
/// assert_eq!(err.key().map(String::as_str), Some("api.example.com"));
/// assert_eq!(err.settings_error().field(), Field::FailureThreshold);
/// assert_eq!(
///     err.to_string(),
///     r#"override for "api.example.com": failure_threshold = 0 is out of range 1..=65535 (64-bit word)"#,
/// );
///
/// let s = RegistrySettings::<String>::new(Settings::new().failure_threshold(0));
/// let err = s.check::<MonotonicClock, W64>().unwrap_err();
/// assert_eq!(err.key(), None);
/// assert!(err.to_string().starts_with("default: failure_threshold = 0"));
/// ```
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct RegistrySettingsError<K = String> {
    key: Option<K>,
    error: SettingsError,
}

impl<K> RegistrySettingsError<K> {
    /// The key whose override is out of range, or `None` for the default.
    pub fn key(&self) -> Option<&K> {
        self.key.as_ref()
    }

    /// What is out of range, and the range.
    pub fn settings_error(&self) -> &SettingsError {
        &self.error
    }
}

impl<K: fmt::Debug> fmt::Display for RegistrySettingsError<K> {
    /// `override for "key": ` or `default: `, then the [`SettingsError`].
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.key {
            Some(key) => write!(f, "override for {key:?}: {}", self.error),
            None => write!(f, "default: {}", self.error),
        }
    }
}

impl<K: fmt::Debug> std::error::Error for RegistrySettingsError<K> {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        Some(&self.error)
    }
}

/// [`RegistrySettings`] from config files: a `default` table, and
/// `overrides` whose keys default to the `default` table's.
#[cfg(feature = "serde")]
mod registry_serde {
    use core::fmt;
    use core::marker::PhantomData;
    use std::time::Duration;

    use serde::de::{Deserializer, MapAccess, Visitor};
    use serde::{Deserialize, de};
    use tripword::Outcome;

    use super::{RegistrySettings, Settings};
    use crate::settings::{FailureRate, RampSettings, outcome_serde};

    /// An override as written: only the keys it changes.
    #[derive(Deserialize)]
    #[serde(deny_unknown_fields)]
    struct Patch {
        #[serde(default)]
        failure_threshold: Option<u32>,
        #[serde(default, with = "humantime_serde")]
        open_for: Option<Duration>,
        #[serde(default, with = "humantime_serde")]
        exponential_backoff: Option<Duration>,
        #[serde(default, with = "humantime_serde")]
        probe_timeout: Option<Duration>,
        #[serde(default, with = "humantime_serde")]
        horizon: Option<Duration>,
        #[serde(default, deserialize_with = "outcome_serde::option::deserialize")]
        abandon_as: Option<Outcome>,
        #[serde(default)]
        failure_rate: Option<RatePatch>,
        #[serde(default)]
        probes: Option<u8>,
        #[serde(default)]
        probes_to_close: Option<u8>,
        #[serde(default)]
        ramp: Option<RampSettings>,
    }

    /// An override's `failure_rate` table: only the keys it changes.
    #[derive(Deserialize)]
    #[serde(deny_unknown_fields)]
    struct RatePatch {
        #[serde(default)]
        percent: Option<u32>,
        #[serde(default, with = "humantime_serde")]
        window: Option<Duration>,
        #[serde(default)]
        minimum_calls: Option<u32>,
    }

    impl RatePatch {
        /// `base` (the default's policy, or [`FailureRate::default`]) with
        /// this override's keys.
        fn apply(self, base: Option<FailureRate>) -> FailureRate {
            let base = base.unwrap_or_default();
            FailureRate::new(
                self.percent.unwrap_or(base.percent),
                self.window.unwrap_or(base.window),
            )
            .minimum_calls(self.minimum_calls.unwrap_or(base.minimum_calls))
        }
    }

    impl Patch {
        /// `base` with this override's keys.
        fn apply(self, base: Settings) -> Settings {
            Settings {
                failure_threshold: self.failure_threshold.unwrap_or(base.failure_threshold),
                open_for: self.open_for.unwrap_or(base.open_for),
                exponential_backoff: self.exponential_backoff.or(base.exponential_backoff),
                probe_timeout: self.probe_timeout.unwrap_or(base.probe_timeout),
                horizon: self.horizon.or(base.horizon),
                abandon_as: self.abandon_as.unwrap_or(base.abandon_as),
                failure_rate: match self.failure_rate {
                    Some(patch) => Some(patch.apply(base.failure_rate)),
                    None => base.failure_rate,
                },
                // An override's `probes` without `probes_to_close` means
                // all of its probes, as the setter does.
                probes: self.probes.unwrap_or(base.probes),
                probes_to_close: match (self.probes, self.probes_to_close) {
                    (_, Some(k)) => Some(k),
                    (Some(_), None) => None,
                    (None, None) => base.probes_to_close,
                },
                // A ramp replaces the default's whole (an empty one, `{ step
                // = "0s", shares = [] }`, is none).
                ramp: self.ramp.unwrap_or(base.ramp),
            }
        }
    }

    #[derive(Deserialize)]
    #[serde(deny_unknown_fields, bound(deserialize = "K: Deserialize<'de> + Eq"))]
    struct Raw<K> {
        #[serde(default)]
        default: Settings,
        #[serde(default = "Vec::new", deserialize_with = "in_order")]
        overrides: Vec<(K, Patch)>,
    }

    /// A map's entries in the order written; a key twice is an error.
    fn in_order<'de, D, K>(d: D) -> Result<Vec<(K, Patch)>, D::Error>
    where
        D: Deserializer<'de>,
        K: Deserialize<'de> + Eq,
    {
        struct Entries<K>(PhantomData<K>);

        impl<'de, K: Deserialize<'de> + Eq> Visitor<'de> for Entries<K> {
            type Value = Vec<(K, Patch)>;

            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a table of settings by key")
            }

            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
                let mut entries: Vec<(K, Patch)> = Vec::new();
                while let Some((key, patch)) = map.next_entry::<K, Patch>()? {
                    if entries.iter().any(|(k, _)| *k == key) {
                        return Err(de::Error::custom("a key appears twice in `overrides`"));
                    }
                    entries.push((key, patch));
                }
                Ok(entries)
            }
        }

        d.deserialize_map(Entries(PhantomData))
    }

    impl<'de, K: Deserialize<'de> + Eq> Deserialize<'de> for RegistrySettings<K> {
        fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
            let raw = Raw::<K>::deserialize(d)?;
            let default = raw.default;
            Ok(RegistrySettings {
                default,
                overrides: raw
                    .overrides
                    .into_iter()
                    .map(|(key, patch)| (key, patch.apply(default)))
                    .collect(),
            })
        }
    }
}
