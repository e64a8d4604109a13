//! The engine: one key's breaker in one instance ([`Inner`]), the state
//! it keeps (the mirror of the shared word, the local breaker, the quorum's
//! vote, the config check), and every decision on it, each made by the
//! core's pure layer. It reaches Redis only through the transport
//! (`crate::transport`): a [`Hub`]'s blocking or async operation, each a
//! sequence of the protocol's trips. The handles (`crate::breaker`,
//! `crate::fleet`) sit on top of it.
//!
//! - `mirror`, `local`: the two words an instance reads with no network;
//!   `held`: the health it reads of them, and what a fallback keeps.
//! - `words`: the pure rules on shared words (resume after a lost key,
//!   staleness, stamps), `quorum`: the quorum's vote and trip, `config`:
//!   the config fingerprint and the follower's rule.
//! - `ticket`: the public ticket, release and stats types.
//! - `aio` (feature `tokio`): admissions and releases as spawned tasks.

#[cfg(feature = "tokio")]
pub(crate) mod aio;
pub(crate) mod config;
mod held;
pub(crate) mod local;
pub(crate) mod mirror;
pub(crate) mod quorum;
mod recovery;
#[cfg(test)]
mod tests;
pub(crate) mod ticket;
pub(crate) mod words;

use crate::observer::{FleetObserver, Mode, Scope};
use crate::transport::Member;
use crate::transport::hub::Hub;
use crate::transport::remote::RemoteCell;
use config::{ConfigCheck, Judged, fleet_holds, follower_status, published_fingerprint};
use local::Local;
use mirror::{Mirror, NONE};
use quorum::{Follow, Quorum, Votes};
use redis::RedisError;
use std::sync::atomic::Ordering;
use std::sync::{Arc, OnceLock};
use ticket::{AtomicStats, Release, Stats, Ticket};
use tripword::cell::{self, Swap};
use tripword::transition::{self, Decision, Event, Verdict};
use tripword::word::Snapshot;
use tripword::{Outcome, Rejected, Status, ValidConfig, W64, Word};
use words::{Stored, closed, intern, mirror_ahead, shared_status};

/// One key's breaker in one instance, shared by its handles and (weakly)
/// its hub's watcher.
pub(crate) struct Inner {
    pub(crate) config: ValidConfig<W64>,
    pub(crate) key: String,
    pub(crate) channel: String,
    /// The shared word as last seen, and what the fast paths read.
    mirror: Mirror,
    /// The newest word found stored in Redis: what a lost key resumes
    /// from.
    stored: Stored,
    /// The local breaker: used while Redis does not answer.
    local: Local,
    observer: Arc<dyn FleetObserver>,
    stats: AtomicStats,
    pub(crate) hub: Arc<Hub>,
    /// The fleet's config check: this instance's fingerprint, the
    /// fleet's, and whether this instance follows the word.
    check: ConfigCheck,
    /// The quorum: how many instances' votes trip the shared word, and
    /// this instance's vote.
    votes: Votes,
    /// The key, interned when a name is first asked for.
    name: OnceLock<&'static str>,
}

impl Drop for Inner {
    fn drop(&mut self) {
        self.hub.prune(&self.channel);
    }
}

impl Inner {
    /// A breaker on `hub` under `key`, with a quorum: joins the hub's
    /// watcher, then reads the word once.
    pub(crate) fn join(
        hub: &Arc<Hub>,
        key: String,
        config: ValidConfig<W64>,
        observer: Arc<dyn FleetObserver>,
        quorum: Quorum,
    ) -> Arc<Inner> {
        let inner = Arc::new(Inner {
            config,
            channel: hub.channel(&key),
            check: ConfigCheck::new(&key, &config, &quorum),
            votes: Votes::new(quorum, hub.is_cluster(), &hub.channel(&key), &key),
            key,
            mirror: Mirror::new(),
            stored: Stored::default(),
            local: Local::new(config, hub.clock.clone(), observer.clone()),
            observer,
            stats: AtomicStats::default(),
            hub: hub.clone(),
            name: OnceLock::new(),
        });
        let member: Arc<dyn Member> = inner.clone();
        hub.join(&member);
        let _ = inner.refresh(false);
        inner
    }

    /// An admission: the fast path (one load of the mirror), or
    /// [`acquire_slow`](Self::acquire_slow).
    #[inline]
    pub(crate) fn acquire(&self) -> Result<Ticket, Rejected> {
        match self.acquire_fast() {
            Some(ticket) => Ok(ticket),
            None => self.acquire_slow(),
        }
    }

    /// The closed path's answer with no network, if the mirror gives one:
    /// a ticket of its counter. The word is there when the kit's decision
    /// on it is a closed admission that stores nothing (see `mirror`).
    #[inline(always)]
    pub(crate) fn acquire_fast(&self) -> Option<Ticket> {
        let word = self.mirror.admit();
        (word != NONE).then(|| self.ticket(Snapshot::counter_bits::<W64>(word), false))
    }

    #[inline(never)]
    fn acquire_slow(&self) -> Result<Ticket, Rejected> {
        self.answered(match self.acquire_prepare() {
            Ok(answer) => answer,
            Err(base) => self.acquire_remote(base),
        })
    }

    /// A release: the fast path (the mirror records it as it is), or
    /// [`release_slow`](Self::release_slow).
    #[inline]
    pub(crate) fn release(&self, ticket: Ticket, outcome: Outcome) -> Release {
        if self.release_quietly(&ticket, outcome) {
            return Release::Recorded;
        }
        self.release_slow(ticket, outcome)
    }

    #[inline(never)]
    fn release_slow(&self, ticket: Ticket, outcome: Outcome) -> Release {
        let release = match self.release_prepare(&ticket, outcome) {
            Ok(settled) => settled,
            Err(word) => self.release_remote(word, ticket.counter, outcome),
        };
        self.released(release, outcome)
    }

    /// A release Redis records, from the mirror's `word`.
    #[inline(never)]
    pub(crate) fn release_remote(&self, word: u64, counter: u32, outcome: Outcome) -> Release {
        let event = Event::Release { counter, outcome };
        let base = self.mirror.base();
        match self.apply(Some(word), event, |_| Ok(())) {
            Ok((applied, _)) => self.recorded(base, &applied),
            Err(_) => {
                self.detach();
                self.unreported(outcome)
            }
        }
    }

    /// The status this instance decides by: the shared word's at the
    /// estimated server time (its own breaker's, with a quorum, while the
    /// fleet is closed), or the local breaker's.
    pub(crate) fn status(&self) -> Status {
        if self.mirror.attached() {
            let status = shared_status(&self.config, self.mirror.word(), self.estimate());
            if status == Status::Closed && self.votes.quorum.on() {
                // The instance's own view, while the fleet is closed.
                return self.local.status();
            }
            return status;
        }
        if self.check.following()
            && let Some(held) = follower_status(&self.config, self.mirror.word())
        {
            return held;
        }
        self.local.status()
    }

    /// Whether the instance is on the shared word.
    pub(crate) fn mode(&self) -> Mode {
        if self.mirror.attached() {
            Mode::Shared
        } else {
            Mode::Local
        }
    }

    /// The mirror's word.
    pub(crate) fn word(&self) -> u64 {
        self.mirror.word()
    }

    /// The counters of the instance's work.
    pub(crate) fn stats(&self) -> Stats {
        self.stats.load()
    }

    /// This instance's config fingerprint.
    pub(crate) fn fingerprint(&self) -> &str {
        self.check.fingerprint()
    }

    /// Reads the word now (see [`refresh`](Self::refresh)); on an error the
    /// instance falls back to its local breaker.
    pub(crate) fn sync(&self) -> Result<(), RedisError> {
        self.refresh(true).map(drop).inspect_err(|_| self.detach())
    }

    /// An operator's force (`ForceOpen`, `ForceOpenFor`, `ForceClose`)
    /// applied to the shared word, or on an error (the instance then
    /// local) to the local breaker. A follower forces only its local
    /// breaker and reports the mismatch: `Err(Ok(fleet))` with the fleet's
    /// fingerprint; `Err(Err(e))` when Redis failed.
    pub(crate) fn force(&self, event: Event) -> Result<(), Result<String, RedisError>> {
        if let Some(fleet) = self.config_mismatch() {
            // Its config reads the fleet's word otherwise: it must not
            // write it.
            self.force_local(event);
            return Err(Ok(fleet));
        }
        let base = self.mirror.base();
        let done = self.apply(None, event, |cell| {
            if self.votes.quorum.on() && event == Event::ForceClose {
                // An operator's close resets the fleet's policy: the votes
                // too.
                self.votes.clear(cell)?;
            }
            Ok(())
        });
        match done {
            Ok((applied, _)) => {
                self.mirror.offer(&self.config, Some(base), applied.word);
                Ok(())
            }
            Err(e) => {
                // Not silently local: the caller gets the error, and this
                // instance, now local, obeys the force until it rejoins.
                self.detach();
                self.force_local(event);
                Err(Err(e))
            }
        }
    }

    /// An admission's answer, a rejection reported to the observer
    /// (`on_rejected`). Only answers off the closed path come here: the
    /// closed admission stays one load with no observer call.
    pub(crate) fn answered(&self, answer: Result<Ticket, Rejected>) -> Result<Ticket, Rejected> {
        if let Err(why) = &answer {
            self.observer.on_rejected(*why);
        }
        answer
    }

    /// A release's answer, a stale one reported to the observer
    /// (`on_stale`). A stale release never takes the closed path.
    pub(crate) fn released(&self, release: Release, outcome: Outcome) -> Release {
        if release == Release::Stale {
            self.observer.on_stale(outcome);
        }
        release
    }

    /// The key, interned (see [`intern`]).
    pub(crate) fn name(&self) -> &'static str {
        self.name.get_or_init(|| intern(&self.key))
    }

    #[inline(always)]
    fn ticket(&self, counter: u32, probe: bool) -> Ticket {
        Ticket::new(self.mirror.address(), counter, probe, false)
    }

    /// What an admission that did not take the fast path can decide with
    /// no network: `Ok` with the answer (the local breaker's, in
    /// [`Mode::Local`]; a rejection the mirror makes at the estimated
    /// server time), or `Err` with the mirror's [`base`](Mirror::base) when
    /// Redis must decide.
    pub(crate) fn acquire_prepare(&self) -> Result<Result<Ticket, Rejected>, u64> {
        if !self.mirror.attached() {
            if self.check.following()
                && let Some(why) = fleet_holds(&self.config, self.mirror.word(), self.estimate())
            {
                // The fleet's word rejects: a follower never calls past it.
                return Ok(Err(why));
            }
            return Ok(self.acquire_local());
        }
        let base = self.mirror.base();
        let word = self.mirror.word();
        if self.votes.quorum.on() && closed(word) && self.local.status() != Status::Closed {
            // The fleet is closed, this instance is held off by its own
            // failures: its local breaker decides (and probes) for it.
            return Ok(self.acquire_local());
        }
        if let Some(answer) = self.ramp_prepare(word) {
            // The ramp: this instance's share, with no network (or Redis,
            // to end it, when it is over).
            return answer.ok_or(base);
        }
        let mut estimated = true;
        let step = transition::apply(&self.config, word, Event::Admit, || {
            self.estimate().unwrap_or_else(|| {
                estimated = false;
                0
            })
        });
        // A closed admission that stores nothing is the fast path's, from
        // the mirror's derived word; here it can only be a race with a
        // change of the mirror, and Redis decides it as any other.
        match step.verdict {
            Verdict::Rejected(why) if estimated => Ok(Err(why)),
            _ => Err(base),
        }
    }

    pub(crate) fn acquire_local(&self) -> Result<Ticket, Rejected> {
        let (counter, probe) = self.local.acquire()?;
        Ok(Ticket::new(self.local.address(), counter, probe, true))
    }

    /// The release fast path: whether the mirror is `Closed` (with no
    /// failures, for a success; or `Ramp` with no ramp failures) under the
    /// ticket's counter, so that the kit stores nothing and the release is
    /// recorded as it is.
    #[inline(always)]
    pub(crate) fn release_quietly(&self, ticket: &Ticket, outcome: Outcome) -> bool {
        if ticket.origin.get() != self.mirror.address() {
            return false;
        }
        let word = match outcome {
            Outcome::Success => self.mirror.quiet(),
            // In `Ramp` (no fast admission) an ignored outcome is as quiet
            // as a success.
            Outcome::Ignored => match self.mirror.admit() {
                NONE => self.mirror.quiet(),
                word => word,
            },
            Outcome::Failure => NONE,
        };
        word != NONE && Snapshot::counter_bits::<W64>(word) == ticket.counter
    }

    /// What a release that did not take the fast path can settle with no
    /// network: `Ok` with the answer, or `Err` with the mirror's word when
    /// Redis must record it. With a quorum, the vote (or its withdrawal)
    /// the release calls for is made before it returns.
    pub(crate) fn release_prepare(
        &self,
        ticket: &Ticket,
        outcome: Outcome,
    ) -> Result<Release, u64> {
        let (settled, follow) = self.release_settle(ticket, outcome);
        self.follow(follow);
        settled
    }

    /// [`release_prepare`](Self::release_prepare), handing back the vote
    /// (or its withdrawal) the release calls for, for the caller to make.
    pub(crate) fn release_settle(
        &self,
        ticket: &Ticket,
        outcome: Outcome,
    ) -> (Result<Release, u64>, Follow) {
        let counter = ticket.counter;
        if ticket.issuer() == self.local.address() {
            if self.votes.quorum.on() {
                let (release, follow) = self.own_release(counter, outcome);
                return (Ok(release), follow);
            }
            let release = if self.local.release(counter, outcome) {
                Release::Recorded
            } else {
                Release::Stale
            };
            return (Ok(release), Follow::Nothing);
        }
        if ticket.issuer() != self.mirror.address() {
            return (Ok(Release::Stale), Follow::Nothing);
        }
        let word = self.mirror.word();
        if self.votes.quorum.on()
            && self.mirror.attached()
            && closed(word)
            && Snapshot::counter_bits::<W64>(word) == counter
        {
            // The fleet is closed: the outcome is this instance's own, for
            // its local breaker to judge.
            let (release, follow) = self.own_outcome(outcome);
            return (Ok(release), follow);
        }
        // The ticket's state has passed in the mirror, so in Redis too (the
        // word there is at least as new): stale, settled with no network,
        // and whether Redis answers or not: a stale outcome is not counted
        // in the local breaker either (spec I2). (A release the mirror
        // records without a change is the fast path's; here it can only be
        // a race, and goes to Redis.)
        if mirror_ahead(word, counter) {
            return (Ok(Release::Stale), Follow::Nothing);
        }
        if !self.mirror.attached() {
            return (Ok(self.unreported(outcome)), Follow::Nothing);
        }
        (Err(word), Follow::Nothing)
    }

    /// The answer of a release Redis applied, from an operation of
    /// [`base`](Mirror::base) `base`.
    pub(crate) fn recorded(&self, base: u64, applied: &cell::Applied<W64>) -> Release {
        self.mirror.offer(&self.config, Some(base), applied.word);
        match applied.decision {
            Decision::Recorded => Release::Recorded,
            _ => Release::Stale,
        }
    }

    fn estimate(&self) -> Option<u64> {
        self.hub.estimate()
    }

    /// Runs `op` on the key with one of the hub's connections, every round
    /// trip within the operation timeout; counted in the stats when `call`.
    fn remote<T>(
        &self,
        call: bool,
        op: impl FnOnce(&RemoteCell<'_>) -> Result<T, RedisError>,
    ) -> Result<T, RedisError> {
        let (out, trips, stored) =
            self.hub
                .remote(&self.key, &self.channel, self.missing_word(), op);
        if let Some(word) = stored {
            self.stored(word);
        }
        if call {
            self.count_call(trips);
        }
        out
    }

    /// Applies `event` to the word in Redis with the kit's
    /// compare-and-swap loop, in one operation of a call: from `from` (the
    /// mirror's word, a `TIME` round trip reading its time) or from a
    /// fresh read, then `then` on the same connection. Returns what it
    /// applied and the server time of the last reply (the time the
    /// deciding attempt read).
    fn apply(
        &self,
        from: Option<u64>,
        event: Event,
        then: impl FnOnce(&RemoteCell<'_>) -> Result<(), RedisError>,
    ) -> Result<(cell::Applied<W64>, u64), RedisError> {
        self.remote(true, |cell| {
            let (seen, at) = match from {
                Some(word) => (word, None),
                None => cell.fetch().map(|(word, at)| (word, Some(at)))?,
            };
            let report = |swap| self.report(swap);
            let applied = cell::update(cell, &self.config, seen, event, at, || cell.now(), report)?;
            then(cell)?;
            Ok((applied, cell.latest().map_or(0, |(t, _)| t)))
        })
    }

    /// Counts an operation of a call that went to Redis.
    pub(crate) fn count_call(&self, round_trips: u32) {
        self.stats
            .call_round_trips
            .fetch_add(u64::from(round_trips), Ordering::Relaxed);
        self.stats.remote_calls.fetch_add(1, Ordering::Relaxed);
    }

    /// Reads the word into the mirror, repairing it first if it is corrupt
    /// (spec I8: one admission through the kit replaces it by `Closed` with
    /// the next counter; not by a follower, which never writes the word),
    /// and joins the shared word.
    pub(crate) fn refresh(&self, call: bool) -> Result<u64, RedisError> {
        let base = self.mirror.base();
        let word = self.remote(call, |cell| {
            let (seen, at) = cell.fetch()?;
            if Snapshot::decode::<W64>(seen).is_ok() || self.check.following() {
                // A follower repairs nothing: the fleet's config does.
                return Ok(seen);
            }
            let applied = cell::update(
                cell,
                &self.config,
                seen,
                Event::Admit,
                Some(at),
                || cell.now(),
                |swap| self.report(swap),
            )?;
            Ok(applied.word)
        })?;
        self.mirror.offer(&self.config, Some(base), word);
        if !call {
            self.stats.refreshes.fetch_add(1, Ordering::Relaxed);
        }
        self.attach(true);
        Ok(word)
    }

    /// Reports a change this instance's compare-and-set made.
    pub(crate) fn report(&self, swap: Swap<W64>) {
        if let Some(raw) = swap.repaired() {
            let counter = W64::LAYOUT.next_counter(Snapshot::counter_bits::<W64>(raw));
            self.observer.on_corrupt_word(raw, counter);
        }
        for t in swap.transitions() {
            self.observer.on_scoped_transition(t, Scope::Shared);
        }
    }

    /// Reads the fleet's config fingerprint (claiming it with this
    /// instance's if there is none; one round trip) and joins the shared
    /// word when it is this instance's config, or follows the word when it
    /// is not (see [`judge`](Self::judge)). An attached instance reads it
    /// only when `check`.
    fn attach(&self, check: bool) {
        if self.mirror.attached() && !check {
            return;
        }
        let (claimed, _, _) = self.hub.remote("", "", 0, |cell| {
            cell.claim(self.check.key(), self.check.fingerprint())
        });
        if let Ok(stored) = claimed {
            self.judge(&stored);
        }
    }

    /// Acts on the fleet's config as stored under `<key>:config`: joins the
    /// shared word when its fingerprint is this instance's; otherwise
    /// follows the word (admits only while it is `Closed`, never writes
    /// it) and reports the mismatch once per fingerprint seen. An attached
    /// instance whose config the fleet left (another was published) stops
    /// writing the word here.
    fn judge(&self, stored: &str) {
        if self.check.judge(stored, &self.key, &*self.observer) == Judged::Follows {
            if self.mirror.set_attached(&self.config, false) {
                self.observer.on_mode(Mode::Local);
            }
            return;
        }
        if self.mirror.attached() {
            return;
        }
        self.sync_own();
        if self.mirror.set_attached(&self.config, true) {
            self.observer.on_mode(Mode::Shared);
        }
        self.check.stop_following();
    }

    /// Publishes this instance's config as the fleet's (see
    /// [`RedisBreaker::publish_config`](crate::RedisBreaker::publish_config)).
    pub(crate) fn publish_config(&self) -> Result<u64, RedisError> {
        let (stored, _, _) = self.hub.remote("", "", 0, |cell| {
            cell.publish_config(self.check.key(), self.check.fingerprint())
        });
        let stored = stored?;
        // Joined from a fresh read of the word, never from a mirror a
        // published change has not reached yet (if Redis does not answer
        // now, the watcher's next refresh joins it).
        let _ = self.refresh(false);
        Ok(published_fingerprint(&stored).1)
    }

    pub(crate) fn config_mismatch(&self) -> Option<String> {
        self.check.mismatch()
    }

    /// An operator's force applied to the local breaker.
    fn force_local(&self, event: Event) {
        self.local.force(event);
        self.sync_own();
    }

    /// An outcome that could not reach Redis: recorded in the local breaker
    /// while that is closed (an outcome of a call it did not admit must not
    /// settle its probe).
    pub(crate) fn unreported(&self, outcome: Outcome) -> Release {
        if self.local.record(outcome) {
            self.sync_own();
        }
        Release::Unreported
    }

    /// With a quorum: sets the mirror's view of this instance's own
    /// breaker (see `Mirror::set_own`). Nothing without a quorum.
    fn sync_own(&self) {
        if !self.votes.quorum.on() {
            return;
        }
        self.mirror.set_own(&self.config, || self.local.own());
    }

    /// With a quorum, the outcome of a call the fleet admitted while
    /// closed: recorded in the local breaker while that is closed (an
    /// outcome of a call it did not admit must not settle its probe).
    fn own_outcome(&self, outcome: Outcome) -> (Release, Follow) {
        if outcome == Outcome::Ignored || self.local.status() != Status::Closed {
            return (Release::Recorded, Follow::Nothing);
        }
        match self.local.acquire() {
            Ok((counter, false)) => self.own_release(counter, outcome),
            Ok((counter, true)) => (
                self.own_release(counter, Outcome::Ignored).0,
                Follow::Nothing,
            ),
            Err(_) => (Release::Recorded, Follow::Nothing),
        }
    }

    /// With a quorum, a release to the local breaker: a trip (or a failed
    /// local probe) votes, a local probe's success withdraws the vote.
    fn own_release(&self, counter: u32, outcome: Outcome) -> (Release, Follow) {
        let (recorded, moved) = self.local.release_traced(counter, outcome);
        self.sync_own();
        let follow = match moved {
            _ if !self.mirror.attached() => Follow::Nothing,
            Some(Status::Open) => Follow::Vote,
            Some(Status::Closed) => Follow::Withdraw,
            _ => Follow::Nothing,
        };
        let release = if recorded {
            Release::Recorded
        } else {
            Release::Stale
        };
        (release, follow)
    }

    /// Makes the vote or the withdrawal a release called for.
    pub(crate) fn follow(&self, follow: Follow) {
        match follow {
            Follow::Nothing => {}
            Follow::Vote => self.vote(),
            Follow::Withdraw => self.withdraw(),
        }
    }

    /// Votes for tripping the shared word, and trips it when the quorum
    /// is reached (one round trip; two more for the trip, each attempt of
    /// its compare-and-set one). The trip is the kit's: the failures of a
    /// run applied to the word read, at the server time read after it, by
    /// `transition::apply`. A vote that cannot reach Redis switches the
    /// instance to its local breaker, which already holds it off.
    fn vote(&self) {
        let base = self.mirror.base();
        let done = self.remote(true, |cell| {
            self.votes.cast(cell, &self.config, |t| {
                self.observer.on_scoped_transition(t, Scope::Shared);
            })
        });
        match done {
            Ok(word) => self.mirror.offer(&self.config, Some(base), word),
            Err(_) => self.detach(),
        }
    }

    /// Withdraws this instance's vote (a success of its own ended its
    /// failures), if it may have one.
    fn withdraw(&self) {
        if !self.votes.take_voted() {
            return;
        }
        if self.remote(true, |cell| self.votes.withdraw(cell)).is_err() {
            // Not withdrawn: the vote ages out of the window.
            self.detach();
        }
    }
}

/// The hub and the watcher reach a breaker through [`Member`]; the
/// engine's own paths call the same methods.
impl Member for Inner {
    fn key(&self) -> &str {
        &self.key
    }

    fn channel(&self) -> &str {
        &self.channel
    }

    fn mirror_base(&self) -> u64 {
        self.mirror.base()
    }

    /// The word a missing key reads as for this instance (see
    /// [`Stored::missing_word`]).
    fn missing_word(&self) -> u64 {
        self.stored.missing_word()
    }

    /// Notes a word found stored in Redis under the key (see
    /// [`Stored::note`]).
    fn stored(&self, word: u64) {
        self.stored.note(word);
    }

    /// The word the watcher read for this breaker (in a batch begun at the
    /// mirror's [`base`](Mirror::base) `base`): taken if it is a state, repaired with a
    /// round trip of its own if it is corrupt.
    fn refreshed(&self, base: u64, word: u64) -> Result<(), RedisError> {
        if Snapshot::decode::<W64>(word).is_err() {
            return self.refresh(false).map(drop);
        }
        self.mirror.offer(&self.config, Some(base), word);
        self.stats.refreshes.fetch_add(1, Ordering::Relaxed);
        self.attach(self.check.due());
        Ok(())
    }

    /// A change published by some instance's compare-and-set.
    fn published(&self, word: u64, server_time: u64) {
        self.stored(word);
        self.mirror.offer(&self.config, None, word);
        self.hub
            .estimate
            .sample(server_time, self.hub.clock.micros());
        self.stats.published.fetch_add(1, Ordering::Relaxed);
    }

    /// Falls back to the local breaker. If the shared word said the
    /// dependency is down (anything but `Closed`) and the local breaker is
    /// closed, the local breaker is tripped (with `failure_threshold`
    /// failures recorded through its API), so an instance that loses Redis
    /// while the fleet is open stays open for an open time and then probes
    /// on its own; an operator's hold or open with an end is kept (see
    /// `keep_hold`). The trip comes before the switch: no call may find the
    /// instance local with its breaker still closed.
    /// A follower (see [`fleet_holds`]) that loses Redis falls back the
    /// same way: its word is as stale as anyone's.
    fn detach(&self) {
        let following = self.check.stop_following();
        if !self.mirror.attached() && !following {
            return;
        }
        // An operator's hold outlives the fallback: no open time ends it,
        // only a force_close; an open with an end lasts what is left of it.
        self.keep_hold(self.mirror.word());
        self.sync_own();
        if self.mirror.set_attached(&self.config, false) {
            self.observer.on_mode(Mode::Local);
        }
    }
}
