//! The fleet's config check: this instance's config fingerprint, the one
//! published beside the word, and the rule a follower (an instance whose
//! config is not the fleet's) admits by (`docs/distributed-config.md`).

use super::quorum::Quorum;
use tripword::transition::{self, Event, Verdict};
use tripword::word::{Snapshot, State};
use tripword::{Cause, Rejected, ValidConfig, W64};

/// The fields of `config` that change how a word reads, as stored beside
/// the word (see [`RedisBreaker::config_mismatch`]).
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
/// elect), `Probing` rejects (a follower never holds the fleet's probe),
/// `ForcedOpen` rejects, and so do `OpenUntil` and `HalfOpen` (as
/// `Open`). `None`: the word is `Closed` (or unreadable), and
/// the follower's local breaker decides.
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
pub(crate) const CONFIG_CHECK_EVERY: u32 = 4;
