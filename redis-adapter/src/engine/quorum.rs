//! The quorum (`Builder::quorum`): how many instances' votes trip the
//! shared word, where the votes are kept, and the trip a quorum makes.

use super::words::closed;
use crate::transport::remote::RemoteCell;
use redis::RedisError;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;
use tripword::transition::Transition;
use tripword::transition::{self, Event};
use tripword::word::Snapshot;
use tripword::{Outcome, ValidConfig, W64};

/// The longest quorum window, in microseconds: 2^52, exact in the Lua
/// numbers of the scripts.
pub(crate) const MAX_WINDOW: u64 = 1 << 52;

/// How many instances must see failures before the shared word trips (see
/// [`Builder::quorum`](crate::Builder::quorum)).
#[derive(Clone, PartialEq, Eq)]
pub(crate) struct Quorum {
    /// Distinct instances whose votes trip the shared word; 1: every
    /// failure goes to the shared word, as without a quorum.
    pub(crate) instances: u32,
    /// How long a vote counts, in microseconds of the server's clock;
    /// `None`: twice the longest open time of the config.
    pub(crate) window: Option<u64>,
    /// The id this instance votes under; `None`: one drawn when the
    /// breaker is made.
    pub(crate) voter: Option<Arc<str>>,
}

/// The window as a duration of the server's clock.
impl core::fmt::Debug for Quorum {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("Quorum")
            .field("instances", &self.instances)
            .field("window", &self.window.map(Duration::from_micros))
            .field("voter", &self.voter)
            .finish()
    }
}

impl Quorum {
    pub(crate) const ONE: Quorum = Quorum {
        instances: 1,
        window: None,
        voter: None,
    };

    /// Whether failures are judged per instance and trip by votes.
    pub(crate) fn on(&self) -> bool {
        self.instances > 1
    }

    /// The window in microseconds under `config`.
    pub(crate) fn window(&self, config: &ValidConfig<W64>) -> u64 {
        self.window.unwrap_or_else(|| {
            let longest = config
                .backoff_cap()
                .map_or(config.open_for(), |cap| cap.max(config.open_for()));
            longest.saturating_mul(2).clamp(1, MAX_WINDOW)
        })
    }

    pub(crate) fn with_instances(mut self, instances: u32) -> Self {
        self.instances = instances.max(1);
        self
    }

    pub(crate) fn with_voter(mut self, id: String) -> Self {
        self.voter = Some(id.into());
        self
    }

    pub(crate) fn with_window(mut self, window: Duration) -> Self {
        // At most 2^52 µs (142 years): exact in the scripts' numbers.
        let micros = u64::try_from(window.as_micros()).unwrap_or(u64::MAX);
        self.window = Some(micros.clamp(1, MAX_WINDOW));
        self
    }
}

/// Where the quorum's votes for the word under `key` are kept: `<key>:votes`
/// on one Redis; on a cluster, a key in `key`'s slot (the vote and trip
/// scripts touch both): the channel's name, which is in that slot, with
/// `:votes` (`tripword:{payments}:votes`).
pub(crate) fn votes_key(cluster: bool, channel: &str, key: &str) -> String {
    if cluster {
        format!("{channel}:votes")
    } else {
        format!("{key}:votes")
    }
}

/// An id for this instance's votes, distinct across the fleet's processes
/// and within one: the process id and a number drawn from the standard
/// library's per-process random hash keys.
pub(crate) fn voter_id() -> String {
    use std::hash::{BuildHasher, Hasher};
    let mut h = std::collections::hash_map::RandomState::new().build_hasher();
    h.write_u128(
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos()),
    );
    format!("{}-{:016x}", std::process::id(), h.finish())
}

/// What a release with a quorum calls for once the local breaker recorded
/// it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Follow {
    /// Nothing.
    Nothing,
    /// The instance's own breaker opened: vote.
    Vote,
    /// The instance's own breaker closed: withdraw its vote.
    Withdraw,
}

/// The word a quorum's trip stores in place of `word` (`Closed`) at server
/// time `now`: the kit's own trip, the failures of a run applied one by one
/// until the word leaves `Closed`. `None` if it does not (not reached: a
/// run of `failure_threshold` failures trips).
pub(crate) fn trip(
    config: &ValidConfig<W64>,
    word: u64,
    now: u64,
) -> Option<transition::Step<u64>> {
    let mut w = word;
    for _ in 0..config.failure_threshold() {
        let counter = Snapshot::counter_bits::<W64>(w);
        let outcome = Outcome::Failure;
        let step = transition::apply(config, w, Event::Release { counter, outcome }, || now);
        if !closed(step.word) {
            return Some(step);
        }
        w = step.word;
    }
    None
}

/// One breaker's votes: its quorum, where the votes are kept, the id it
/// votes under, and whether its vote may be in the set.
pub(crate) struct Votes {
    pub(crate) quorum: Quorum,
    key: String,
    voter: String,
    voted: AtomicBool,
}

impl Votes {
    /// The votes of the breaker under `key` (its changes published on
    /// `channel`, on a cluster when `cluster`).
    pub(crate) fn new(quorum: Quorum, cluster: bool, channel: &str, key: &str) -> Votes {
        Votes {
            key: votes_key(cluster, channel, key),
            voter: quorum.voter.as_deref().map_or_else(voter_id, str::to_owned),
            voted: AtomicBool::new(false),
            quorum,
        }
    }

    /// Votes for tripping the shared word, and trips it when the quorum
    /// is reached (one round trip; one more for each attempt of the
    /// trip). The trip is the kit's (see [`trip`]), at the server time
    /// read after the word; `tripped` gets its transitions once it is
    /// stored. Returns the word the key holds after.
    pub(crate) fn cast(
        &self,
        cell: &RemoteCell<'_>,
        config: &ValidConfig<W64>,
        mut tripped: impl FnMut(Transition),
    ) -> Result<u64, RedisError> {
        let window = self.quorum.window(config);
        let quorum = self.quorum.instances;
        let mut ballot = cell.vote(&self.key, &self.voter, window)?;
        self.voted.store(true, Ordering::Release);
        while ballot.votes >= u64::from(quorum) && closed(ballot.read.word) {
            let Some(step) = trip(config, ballot.read.word, ballot.read.now) else {
                break;
            };
            ballot = cell.quorum_trip(&self.key, ballot.read.word, step.word, window, quorum)?;
            if ballot.stored {
                step.transitions.into_iter().for_each(&mut tripped);
                break;
            }
        }
        Ok(ballot.read.word)
    }

    /// Whether this breaker's vote may be in the set; from now on it is
    /// taken as not (the caller withdraws it).
    pub(crate) fn take_voted(&self) -> bool {
        self.voted.swap(false, Ordering::AcqRel)
    }

    /// Withdraws this breaker's vote.
    pub(crate) fn withdraw(&self, cell: &RemoteCell<'_>) -> Result<(), RedisError> {
        cell.withdraw(&self.key, &self.voter)
    }

    /// Drops every vote (an operator's close).
    pub(crate) fn clear(&self, cell: &RemoteCell<'_>) -> Result<(), RedisError> {
        cell.clear_votes(&self.key)
    }
}
