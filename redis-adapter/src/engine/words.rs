//! The pure rules on the shared word an instance applies with no
//! network: the word a lost key resumes from, which counters are stale,
//! which server-time estimates a stamped word cannot be read with, and
//! what a word says as a [`Health`]; and the key as the name a rejection
//! carries, interned.

use std::collections::HashSet;
use std::sync::{Mutex, OnceLock, PoisonError};
use tripword::transition;
use tripword::word::{Snapshot, State};
use tripword::{Health, Status, ValidConfig, W64, Word};

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
pub(crate) fn resumed(seen: Option<u64>) -> u64 {
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
/// [`Stored::note`]).
pub(crate) fn noted(seen: Option<u64>, word: u64) -> Option<u64> {
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
///
/// A `Trial` and a `Ramp` keep their stamp in coarser units (`3 ×
/// probe_bits`, `share_bits + ramp_failure_bits` bits coarser, the same
/// ring): read with an estimate behind it, a trial would read as timed
/// out, a ramp as over.
pub(crate) fn before_stamp(
    config: &ValidConfig<W64>,
    held: Result<Snapshot, tripword::word::Corruption>,
    now: u64,
) -> bool {
    let l = W64::LAYOUT;
    let (since, extra) = match held {
        Ok(Snapshot {
            state: State::Open { since, .. } | State::Probing { since, .. },
            ..
        }) => (since, 0),
        Ok(Snapshot {
            state: State::Trial { since, .. },
            ..
        }) => (since, 3 * l.probe_bits),
        Ok(Snapshot {
            state: State::Ramp { since, .. },
            ..
        }) => (since, l.share_bits + l.ramp_failure_bits),
        _ => return false,
    };
    let ring = (1u64 << (l.time_bits - extra)) - 1;
    let elapsed = (now >> (config.time_shift() + extra)).wrapping_sub(since) & ring;
    elapsed > ring / 2
}

/// Whether an admission that leaves `word` stored got a probe ticket: the
/// single probe (`Probing`) or one of a trial's (`Trial`).
pub(crate) fn probing(word: u64) -> bool {
    matches!(
        Snapshot::decode::<W64>(word),
        Ok(Snapshot {
            state: State::Probing { .. } | State::Trial { .. },
            ..
        })
    )
}

/// Whether `word` is a `Ramp` (before or after its last stage).
pub(crate) fn ramp(word: u64) -> bool {
    matches!(
        Snapshot::decode::<W64>(word),
        Ok(Snapshot {
            state: State::Ramp { .. },
            ..
        })
    )
}

/// Whether `word` is `Closed` (whatever its failures).
pub(crate) fn closed(word: u64) -> bool {
    matches!(
        Snapshot::decode::<W64>(word),
        Ok(Snapshot {
            state: State::Closed { .. },
            ..
        })
    )
}

/// Whether the mirror's counter is past `counter` (within half the counter
/// period): then a ticket of `counter` is stale in Redis too, since the word
/// there is at least as new as the mirror.
pub(crate) fn mirror_ahead(word: u64, counter: u32) -> bool {
    let max = W64::LAYOUT.max_counter();
    let d = Snapshot::counter_bits::<W64>(word).wrapping_sub(counter) & max;
    d != 0 && d <= max / 2
}

/// The newest word found stored in Redis under a breaker's key (`None`
/// until one is): what a missing key reads as is derived from it
/// ([`missing_word`](Self::missing_word)), never from a missing key's
/// stand-in, so that it stays put while the key is missing. It only moves
/// forward (see [`note`](Self::note)). Taken only with a round trip or a
/// published message, never on a fast path.
#[derive(Default)]
pub(crate) struct Stored(Mutex<Option<u64>>);

impl Stored {
    /// The word a missing key reads as for this instance. The initial word
    /// (`Closed`, counter 0) while none was found: a new fleet. Once one
    /// was, the key can only be missing because it was lost (Redis
    /// restarted empty, a failover lost it, someone deleted it): then it
    /// reads as `Closed` with the counter moved on by [`RESUME`], so that
    /// no ticket issued before the loss matches a word after it (spec I2),
    /// as long as the fleet made fewer than [`RESUME`] changes this
    /// instance had not seen. The first compare-and-set from it stores it.
    pub(crate) fn missing_word(&self) -> u64 {
        resumed(*self.0.lock().unwrap_or_else(PoisonError::into_inner))
    }

    /// Notes a word found stored in Redis under the key (read, swapped in,
    /// or published): what a lost key resumes from. Only forward: a word
    /// whose counter is behind the one noted (a published message
    /// delivered late, a read after a failover lost writes) is not taken,
    /// else a message delayed across two losses of the key would move the
    /// resume point back, and the second stand-in would repeat counters the
    /// fleet used after the first (found by the fleet model).
    pub(crate) fn note(&self, word: u64) {
        let mut seen = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        *seen = noted(*seen, word);
    }
}

/// `key` for the life of the process: copied once per distinct key, the
/// same copy for every later call with an equal key.
pub(crate) fn intern(key: &str) -> &'static str {
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

/// The status of the shared `word` at the estimate `now` of the server's
/// time. With no estimate, or one before the word's stamp (see
/// [`before_stamp`]), the state the word holds, as it is.
pub(crate) fn shared_status(config: &ValidConfig<W64>, word: u64, now: Option<u64>) -> Status {
    let held = Snapshot::decode::<W64>(word);
    let mut void = false;
    let status = transition::status_at(config, word, || match now {
        Some(now) if !before_stamp(config, held, now) => now,
        _ => {
            void = true;
            0
        }
    });
    match held {
        Ok(held) if void => held.state.status(),
        _ => status,
    }
}

/// The health of the shared `word` at the estimate `now` of the server's
/// time: its status as [`shared_status`] reads it, and the wait of the
/// rejection an admission would get at `now`. With no estimate, or one
/// before the word's stamp (see [`before_stamp`]), no wait: how long is
/// Redis's to say, at the next admission.
pub(crate) fn shared_health(config: &ValidConfig<W64>, word: u64, now: Option<u64>) -> Health {
    let held = Snapshot::decode::<W64>(word);
    let now = now.filter(|&now| !before_stamp(config, held, now));
    transition::health_at(config, word, shared_status(config, word, now), now)
}
