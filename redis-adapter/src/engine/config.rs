//! The fleet's config check: this instance's config fingerprint, the one
//! published beside the word, and the rule a follower (an instance whose
//! config is not the fleet's) admits by (`docs/distributed-config.md`).

use super::quorum::Quorum;
use crate::observer::FleetObserver;
use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use std::sync::{Mutex, PoisonError};
use tripword::transition::{self, Event, Verdict};
use tripword::word::{Snapshot, State};
use tripword::{Cause, Rejected, Status, ValidConfig, W64};

/// The fields of `config` that change how a word reads, as stored beside
/// the word (see [`RedisBreaker::config_mismatch`](crate::RedisBreaker::config_mismatch)).
pub(crate) fn fingerprint(config: &ValidConfig<W64>, quorum: &Quorum) -> String {
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
    recovery(config, &mut print);
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

/// The recovery options in the fingerprint, when set: instances of one
/// fleet must read a trial's counts and a ramp's stages alike. With one
/// probe and no ramp the fingerprint is as it always was.
fn recovery(config: &ValidConfig<W64>, print: &mut String) {
    if config.probes() > 1 {
        print.push_str(&format!(
            " probes={} probes_to_close={}",
            config.probes(),
            config.probes_to_close()
        ));
    }
    let ramp = config.ramp();
    if ramp.stages_count() > 0 {
        let shares: Vec<String> = (0..ramp.stages_count())
            .filter_map(|i| ramp.share(i))
            .map(|bp| bp.to_string())
            .collect();
        print.push_str(&format!(
            " ramp_step={} ramp_shares={}",
            ramp.step(),
            shares.join(",")
        ));
    }
}

/// The fingerprint part of what is stored under `<key>:config`, and its
/// generation: `<fingerprint> generation=<n>` as
/// [`RedisBreaker::publish_config`](crate::RedisBreaker::publish_config) stores it, a plain fingerprint (as the
/// first instance to join claims it) being generation 0.
pub(crate) fn published_fingerprint(stored: &str) -> (&str, u64) {
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
/// elect), `Probing` and a `Trial` reject as `Probing` (a follower never
/// holds the fleet's probes), a `Ramp` as `Ramp` (the ramp's share is of
/// the fleet's config; a follower waits for its end, which an instance of
/// that config stores), `ForcedOpen` rejects, and so do `OpenUntil` and
/// `HalfOpen` (as `Open`). `None`: the word is `Closed` (or unreadable),
/// and the follower's local breaker decides.
///
/// The wait of an `Open` rejection is the one this instance's config reads
/// at the estimated server time `now`, at least 0 (the fleet's probe may
/// end it sooner or later).
pub(crate) fn fleet_holds(
    config: &ValidConfig<W64>,
    word: u64,
    now: Option<u64>,
) -> Option<Rejected> {
    let state = Snapshot::decode::<W64>(word).ok()?.state;
    let cause = match state {
        State::Closed { .. } => return None,
        State::Probing { .. } | State::Trial { .. } => Cause::Probing,
        State::Ramp { .. } => Cause::Ramp,
        State::ForcedOpen => Cause::ForcedOpen,
        // Open, open until a time, half-open (its probe is the fleet's).
        _ => Cause::Open,
    };
    let wait =
        now.and_then(
            |now| match transition::apply(config, word, Event::Admit, || now).verdict {
                // A rejection the word makes is of the cause above: `Open`,
                // `OpenUntil` and `HalfOpen` reject as `Open` (or admit),
                // a running probe or a full trial as `Probing`, a ramp as
                // `Ramp` (until its next stage), a forced word as
                // `ForcedOpen`.
                Verdict::Rejected(why) => why.retry_after(),
                _ => None,
            },
        );
    Some(Rejected::new(cause, wait))
}

/// How many of the watcher's refreshes an attached instance makes between
/// two reads of the fleet's fingerprint (a published config is seen within
/// as many refresh periods; [`RedisBreaker::sync`](crate::RedisBreaker::sync) reads it every time).
pub(crate) const CONFIG_CHECK_EVERY: u32 = 4;

/// One breaker's config check: its fingerprint and the key it is kept
/// under (`<key>:config`), the fleet's when it is not ours, and whether
/// the breaker follows the shared word.
pub(crate) struct ConfigCheck {
    fingerprint: String,
    key: String,
    /// The fleet's fingerprint, when it is not ours.
    mismatch: Mutex<Option<String>>,
    /// Whether the breaker follows the shared word (the fleet's
    /// fingerprint is known and is not ours): it admits only while the
    /// word is `Closed`, and never writes it (see [`fleet_holds`]).
    following: AtomicBool,
    /// Refreshes by the watcher since the fingerprint was last read while
    /// attached (see [`CONFIG_CHECK_EVERY`]).
    unchecked: AtomicU32,
}

/// What the fleet's fingerprint, as read, calls for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Judged {
    /// It is ours: the breaker joins the shared word.
    Agrees,
    /// It is not: the breaker follows the word (following is set already).
    Follows,
}

impl ConfigCheck {
    /// The check of the breaker under `key` with `config` and `quorum`.
    pub(crate) fn new(key: &str, config: &ValidConfig<W64>, quorum: &Quorum) -> ConfigCheck {
        // Keys spread over the watcher's refreshes: a fleet of many keys
        // reads a share of their fingerprints at each.
        let spread = key
            .bytes()
            .fold(0u32, |h, b| h.wrapping_mul(31).wrapping_add(u32::from(b)));
        ConfigCheck {
            fingerprint: fingerprint(config, quorum),
            key: format!("{key}:config"),
            mismatch: Mutex::new(None),
            following: AtomicBool::new(false),
            unchecked: AtomicU32::new(spread),
        }
    }

    /// This breaker's fingerprint.
    pub(crate) fn fingerprint(&self) -> &str {
        &self.fingerprint
    }

    /// Where the fleet's fingerprint is kept.
    pub(crate) fn key(&self) -> &str {
        &self.key
    }

    /// Whether the breaker follows the shared word.
    pub(crate) fn following(&self) -> bool {
        self.following.load(Ordering::Acquire)
    }

    /// Stops following (the breaker joined the word, or lost Redis);
    /// whether it was following.
    pub(crate) fn stop_following(&self) -> bool {
        self.following.swap(false, Ordering::AcqRel)
    }

    /// The fleet's fingerprint, when it is not ours.
    pub(crate) fn mismatch(&self) -> Option<String> {
        self.mismatch
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    /// Whether this refresh of an attached breaker reads the fingerprint
    /// again: one in [`CONFIG_CHECK_EVERY`].
    pub(crate) fn due(&self) -> bool {
        let turn = self.unchecked.fetch_add(1, Ordering::Relaxed);
        turn % CONFIG_CHECK_EVERY == CONFIG_CHECK_EVERY - 1
    }

    /// Judges the fleet's fingerprint as stored (`stored`, with its
    /// generation) for the breaker under `breaker`: a mismatch sets following first (no admission finds
    /// the breaker off the word and not following it) and is reported
    /// once per fingerprint seen, to `observer` and by the engine's own
    /// report; the end of one is reported too.
    pub(crate) fn judge(
        &self,
        stored: &str,
        breaker: &str,
        observer: &dyn FleetObserver,
    ) -> Judged {
        let (fleet, _) = published_fingerprint(stored);
        let mut mismatch = self.mismatch.lock().unwrap_or_else(PoisonError::into_inner);
        if fleet != self.fingerprint {
            self.following.store(true, Ordering::Release);
            if mismatch.as_deref() != Some(fleet) {
                self.warn_mismatch(breaker, fleet);
                observer.on_config_mismatch(&self.fingerprint, fleet);
                *mismatch = Some(fleet.to_owned());
            }
            return Judged::Follows;
        }
        if mismatch.take().is_some() {
            self.agreed(breaker);
        }
        Judged::Agrees
    }

    /// The engine's own report of a config mismatch, whatever observer is
    /// set: a `tracing` warning (feature `tracing`) and the
    /// `metric_names::FOLLOWING` gauge at 1 (feature `metrics`).
    fn warn_mismatch(&self, breaker: &str, fleet: &str) {
        #[cfg(feature = "tracing")]
        tracing::warn!(
            target: "tripword",
            breaker,
            ours = self.fingerprint.as_str(),
            fleet,
            "fleet config is not this instance's: it follows the fleet's word \
             (admits only while the word is Closed) and never writes it, until \
             the configs agree (see RedisBreaker::publish_config)"
        );
        #[cfg(feature = "metrics")]
        metrics::gauge!(
            crate::metric_names::FOLLOWING,
            tripword_std::observe::names::BREAKER => breaker.to_owned()
        )
        .set(1.0);
        let _ = (breaker, fleet);
    }

    /// The engine's own report of a mismatch that ended: the configs
    /// agree again.
    fn agreed(&self, breaker: &str) {
        #[cfg(feature = "tracing")]
        tracing::info!(
            target: "tripword",
            breaker,
            config = self.fingerprint.as_str(),
            "fleet config is this instance's again"
        );
        let _ = breaker;
        #[cfg(feature = "metrics")]
        metrics::gauge!(
            crate::metric_names::FOLLOWING,
            tripword_std::observe::names::BREAKER => breaker.to_owned()
        )
        .set(0.0);
    }
}

/// The status a follower reports while the fleet's `word` holds it off
/// (see [`fleet_holds`]): `Probing` while the fleet probes, `Recovering`
/// while it ramps, `Open` otherwise; `None` while the word is `Closed`.
pub(crate) fn follower_status(config: &ValidConfig<W64>, word: u64) -> Option<Status> {
    let why = fleet_holds(config, word, None)?;
    Some(match why.cause() {
        Cause::Probing => Status::Probing,
        Cause::Ramp => Status::Recovering,
        _ => Status::Open,
    })
}
