//! What an instance reads of the shared word with no network: its
//! [`Health`], as the mirror last saw it; and what the local breaker keeps
//! of it when the instance falls back to it (an operator's hold, an open
//! with an end, a trip).

use super::Inner;
use super::config::{fleet_holds, follower_status};
use super::words::{shared_health, shared_status};
use tripword::transition::{self, Event, Verdict};
use tripword::word::{Snapshot, State};
use tripword::{Health, Status, W64};

impl Inner {
    /// The state as one value, read as [`status`](Inner::status) reads
    /// it: the mirror's word at the estimated server time in
    /// [`Mode::Shared`](crate::Mode::Shared) (with a quorum, while the
    /// fleet is closed, the local breaker's: the instance's own view);
    /// while a follower is held off by the fleet's word, that word, with
    /// the follower's status and wait; the local breaker's otherwise. A
    /// read: no network, stores nothing.
    pub(crate) fn health(&self) -> Health {
        let word = self.mirror.word();
        if self.mirror.attached() {
            let now = self.estimate();
            if self.votes.quorum.on() && shared_status(&self.config, word, now) == Status::Closed {
                return self.local.health();
            }
            return shared_health(&self.config, word, now);
        }
        if self.check.following()
            && let Some(status) = follower_status(&self.config, word)
        {
            let mut health = tripword::transition::health_at(&self.config, word, status, None);
            health.retry_after =
                fleet_holds(&self.config, word, self.estimate()).and_then(|why| why.retry_after());
            return health;
        }
        self.local.health()
    }

    /// On a fallback to the local breaker, keeps what the shared `word`
    /// (as the mirror last saw it) said: an operator's hold
    /// (`force_open`) holds the local breaker, with no open time to end
    /// it; an open with an end (`force_open_for`) opens it for what is
    /// left of it at the estimated server time (for its own open time
    /// without an estimate); any other state but `Closed` trips it (a
    /// `Ramp` too, unless its last stage is over at the estimated server
    /// time). The
    /// local breaker moves before the switch: no call may find the
    /// instance local with its breaker still closed.
    pub(super) fn keep_hold(&self, word: u64) {
        let Ok(shared) = Snapshot::decode::<W64>(word) else {
            return;
        };
        match shared.state {
            // A local breaker held already stays as it is: forcing open a
            // forced word changes nothing.
            State::ForcedOpen => self.force_local(Event::ForceOpen),
            State::OpenUntil { .. } => match self.left(word) {
                Some(open_for) => self.force_local(Event::ForceOpenFor { open_for }),
                None => self.local.trip(),
            },
            // A ramp past its last stage at the estimated server time is
            // `Closed` (the next admission would store it).
            State::Ramp { .. }
                if shared_status(&self.config, word, self.estimate()) == Status::Closed => {}
            state if state.status() != Status::Closed => self.local.trip(),
            _ => {}
        }
    }

    /// What is left, in microseconds, of a timed `word`'s wait at the
    /// estimated server time: the wait of the rejection an admission would
    /// get. `None` without an estimate, or when it would be admitted.
    fn left(&self, word: u64) -> Option<u64> {
        let now = self.estimate()?;
        match transition::apply(&self.config, word, Event::Admit, || now).verdict {
            Verdict::Rejected(why) => why.retry_after(),
            _ => None,
        }
    }
}
