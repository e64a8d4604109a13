//! The local mirror of the shared word, and what the fast paths read.
//!
//! Readers never lock: an admission reads one atomic, [`Mirror::admit`],
//! which holds the word when the kit's own decision on it is "a closed
//! admission that stores nothing" (and the instance uses the shared word),
//! and [`NONE`] otherwise. Writers (replies to this instance's operations,
//! published changes, refreshes) are rare and take a small lock, never held
//! across a round trip, so the word and the words derived from it always
//! change together for writers.
//!
//! **Readers across a change.** A reader reads `word` and the fast words as
//! separate atomics, so a writer first withdraws the fast words (stores
//! [`NONE`]), then changes `word` (or the mode), then derives them again.
//! A thread that has read a word therefore never reads a fast word older
//! than it afterwards: an admission after a release the mirror called stale
//! is never made under the passed counter. A fast read that meets the
//! withdrawn words takes the slow path, which decides on `word`.
//!
//! **Order.** Replies and published changes arrive on different
//! connections and threads, so an older word can arrive after a newer one.
//! The counter moves forward on every state change (spec I10), so a word
//! whose counter is ahead of the mirror's (within half the counter period)
//! is newer and is taken. Any other word is taken only when the mirror has
//! not changed since the operation that brought it began ([`Mirror::base`]):
//! that operation read Redis after the mirror's word was there, so its word
//! is at least as new (a refresh after a restart that emptied Redis brings
//! the initial word, counter 0, and must be taken). Changes are counted
//! rather than compared by word: a word can come back (`Closed` with no
//! failures, then one, then none).
//!
//! **One counter.** Failures counted in `Closed`, and the success that ends
//! their run, change the word but not the counter: of two `Closed` words
//! with one counter, neither says which is newer. Every answer the mirror
//! gives is the same on both but one: a success is quiet ("changes
//! nothing", [`Mirror::quiet`]) only with no failures. So when the order is
//! not known, the mirror keeps the word with failures: taking `Closed` with
//! none over it could go back behind a failure this instance reported (a
//! refresh read before the report, answered after it) and call its next
//! success quiet while Redis still holds the run; leaving `Closed` with
//! failures untaken could keep the mirror behind a failure this instance
//! read itself (a `sync` whose reply came after messages of earlier
//! changes had moved the mirror on to that counter).
//! With failures, the success goes to Redis, which decides on the word
//! there. A published end of a run is thus left to the next refresh, or to
//! the instance's own next round trip. A `Ramp`'s failures are kept by the
//! same rule; of one `Trial`, the word with more free places is kept (an
//! ignored probe frees one without moving the counter).
//!
//! **The ramp.** In `Ramp` no admission is one load (the stage depends on
//! the time), but none goes to Redis either: each instance admits its
//! share of its own calls by its own credit, [`Mirror::credit`], set to
//! none when a new ramp is taken (see `engine::recovery`). A success with
//! no ramp failures counted stores nothing, so [`Mirror::quiet`] holds a
//! `Ramp` word as it holds a `Closed` one.

use super::words::ramp;
use std::sync::atomic::{AtomicBool, AtomicU8, AtomicU32, AtomicU64, Ordering};
use std::sync::{Mutex, PoisonError};
use tripword::transition::{self, Event, Verdict};
use tripword::word::{Snapshot, State};
use tripword::{Outcome, ValidConfig, W64, Word};

/// No word: every bit set, a `Trial` (tag 7; a corrupt pattern without the
/// core's `recovery` feature), which is never a fast word: an admission on
/// it elects a probe, stores a change or is rejected, and a success on it
/// is never quiet.
pub(crate) const NONE: u64 = u64::MAX;

#[derive(Debug)]
pub(crate) struct Mirror {
    /// The shared word as last seen.
    word: AtomicU64,
    /// `word` while an admission on it is a closed admission that stores
    /// nothing and the instance is attached; [`NONE`] otherwise.
    admit: AtomicU64,
    /// `word` while a success released with its counter stores nothing
    /// (`Closed` with no failures, or `Ramp` with no ramp failures) and the
    /// instance is attached; [`NONE`] otherwise.
    quiet: AtomicU64,
    /// The instance's ramp credit, in units of `2^-share_bits` calls: what
    /// its share of the ramp admits by (see `engine::recovery`). Set to 0
    /// when a `Ramp` of another counter is taken.
    credit: AtomicU32,
    /// How many times `word` changed: an operation's base (see
    /// [`Mirror::base`]).
    changes: AtomicU64,
    /// Whether decisions rest on the shared word.
    attached: AtomicBool,
    /// With a quorum, the instance's own view (its local breaker): [`CLEAR`]
    /// (no failure of its own counted), [`RUN`] (a run of its own failures
    /// under way: a success must go to the local breaker to end it) or
    /// [`HELD`] (its local breaker is not closed: it decides this
    /// instance's admissions while the shared word is closed). Always
    /// [`CLEAR`] without a quorum.
    own: AtomicU8,
    writer: Mutex<()>,
}

/// The instance's own view: nothing of its own counted.
pub(crate) const CLEAR: u8 = 0;
/// The instance's own view: a run of its own failures under way.
pub(crate) const RUN: u8 = 1;
/// The instance's own view: its local breaker is not closed.
pub(crate) const HELD: u8 = 2;

/// Whether `a`'s counter is past `b`'s, within half the counter period.
fn ahead(a: u64, b: u64) -> bool {
    let max = W64::LAYOUT.max_counter();
    let d = Snapshot::counter_bits::<W64>(a).wrapping_sub(Snapshot::counter_bits::<W64>(b)) & max;
    d != 0 && d <= max / 2
}

/// Whether `a` and `b` carry one counter.
fn same_counter(a: u64, b: u64) -> bool {
    Snapshot::counter_bits::<W64>(a) == Snapshot::counter_bits::<W64>(b)
}

/// Whether `word` is `Closed` with failures counted, or `Ramp` with ramp
/// failures counted.
fn failing(word: u64) -> bool {
    matches!(
        Snapshot::decode::<W64>(word),
        Ok(Snapshot {
            state: State::Closed { failures: 1.. } | State::Ramp { failures: 1.., .. },
            ..
        })
    )
}

/// Whether `word` is `Closed` with no failures counted, or `Ramp` with no
/// ramp failures counted.
fn clear(word: u64) -> bool {
    matches!(
        Snapshot::decode::<W64>(word),
        Ok(Snapshot {
            state: State::Closed { failures: 0 } | State::Ramp { failures: 0, .. },
            ..
        })
    )
}

/// The probes a `Trial` word has taken (running, passed or failed): its
/// places not free.
fn taken(word: u64) -> Option<u32> {
    match Snapshot::decode::<W64>(word) {
        Ok(Snapshot {
            state:
                State::Trial {
                    running,
                    passed,
                    failed,
                    ..
                },
            ..
        }) => Some(running + passed + failed),
        _ => None,
    }
}

/// Whether `word`, of unknown order against `current`, is taken: only
/// `Closed` with failures over `Closed` with none of the same counter (see
/// the module docs, "One counter"), and likewise `Ramp` with ramp failures
/// over `Ramp` with none: its failures change the word, not the counter.
/// Of one trial, a word with more free places is taken: an ignored probe
/// frees one without moving the counter, and a mirror that holds the trial
/// full when Redis has room would refuse a call the shared word admits
/// (one held with room asks Redis, which decides).
fn safer(word: u64, current: u64) -> bool {
    Snapshot::counter_bits::<W64>(word) == Snapshot::counter_bits::<W64>(current)
        && ((failing(word) && clear(current))
            || matches!((taken(word), taken(current)), (Some(w), Some(c)) if w < c))
}

impl Mirror {
    pub(crate) const fn new() -> Self {
        Mirror {
            word: AtomicU64::new(0),
            admit: AtomicU64::new(NONE),
            quiet: AtomicU64::new(NONE),
            credit: AtomicU32::new(0),
            changes: AtomicU64::new(0),
            attached: AtomicBool::new(false),
            own: AtomicU8::new(CLEAR),
            writer: Mutex::new(()),
        }
    }

    #[inline(always)]
    pub(crate) fn admit(&self) -> u64 {
        self.admit.load(Ordering::Acquire)
    }

    #[inline(always)]
    pub(crate) fn quiet(&self) -> u64 {
        self.quiet.load(Ordering::Acquire)
    }

    /// The instance's ramp credit (see `engine::recovery`).
    #[inline(always)]
    pub(crate) fn credit(&self) -> &AtomicU32 {
        &self.credit
    }

    /// The address shared tickets carry (8-aligned).
    #[inline(always)]
    pub(crate) fn address(&self) -> usize {
        core::ptr::from_ref(&self.word).addr()
    }

    pub(crate) fn word(&self) -> u64 {
        self.word.load(Ordering::Acquire)
    }

    /// The base of an operation that reads Redis after this call: passed
    /// back to [`offer`](Self::offer) with the word it read.
    pub(crate) fn base(&self) -> u64 {
        self.changes.load(Ordering::Acquire)
    }

    pub(crate) fn attached(&self) -> bool {
        self.attached.load(Ordering::Acquire)
    }

    /// Withdraws the fast-path words before `word`, `attached` or `own`
    /// change (the lock held; see the module docs, "Readers across a
    /// change").
    fn withdraw(&self) {
        self.admit.store(NONE, Ordering::Release);
        self.quiet.store(NONE, Ordering::Release);
    }

    /// Recomputes the fast-path words from `word` (the lock held).
    fn derive(&self, config: &ValidConfig<W64>, word: u64) {
        let (mut admit, mut quiet) = (NONE, NONE);
        let own = self.own.load(Ordering::Relaxed);
        if self.attached.load(Ordering::Relaxed) && own != HELD {
            // In `Closed` neither decision reads the clock; in `Ramp` a
            // success does not.
            let a = transition::apply(config, word, Event::Admit, || 0);
            let closed =
                a.word == word && matches!(a.verdict, Verdict::Admitted { probe: false, .. });
            if closed {
                admit = word;
            }
            if (closed || ramp(word)) && own == CLEAR {
                let counter = Snapshot::counter_bits::<W64>(word);
                let outcome = Outcome::Success;
                let s = transition::apply(config, word, Event::Release { counter, outcome }, || 0);
                if s.word == word && s.verdict == Verdict::Recorded {
                    quiet = word;
                }
            }
        }
        self.admit.store(admit, Ordering::Release);
        self.quiet.store(quiet, Ordering::Release);
    }

    /// Offers `word`, seen in Redis by an operation whose [`base`](Self::base)
    /// was `base` (`None`: a published change, no operation). Taken when it
    /// is known to be at least as new as the mirror's (see the module
    /// docs): its counter is ahead, or the mirror has not changed since the
    /// operation began; or, of the mirror's counter, when it counts failures
    /// and the mirror's word none.
    pub(crate) fn offer(&self, config: &ValidConfig<W64>, base: Option<u64>, word: u64) {
        let _lock = self.writer.lock().unwrap_or_else(PoisonError::into_inner);
        let current = self.word.load(Ordering::Acquire);
        if current == word {
            return;
        }
        let changes = self.changes.load(Ordering::Relaxed);
        if base == Some(changes) || ahead(word, current) || safer(word, current) {
            self.withdraw();
            if ramp(word) && !(ramp(current) && same_counter(word, current)) {
                // A new ramp: this instance's share starts with no credit.
                self.credit.store(0, Ordering::Release);
            }
            self.word.store(word, Ordering::Release);
            self.changes
                .store(changes.wrapping_add(1), Ordering::Release);
            self.derive(config, word);
        }
    }

    /// Sets the instance's own view ([`CLEAR`], [`RUN`], [`HELD`]) to what
    /// `own` reads, read under the writer's lock, so that the last of
    /// concurrent changes leaves the view of the latest local word.
    pub(crate) fn set_own(&self, config: &ValidConfig<W64>, own: impl FnOnce() -> u8) {
        let _lock = self.writer.lock().unwrap_or_else(PoisonError::into_inner);
        let level = own();
        if self.own.load(Ordering::Relaxed) != level {
            self.withdraw();
            self.own.store(level, Ordering::Release);
            self.derive(config, self.word.load(Ordering::Acquire));
        }
    }

    /// Switches to the shared word (or away from it). Returns whether the
    /// mode changed.
    pub(crate) fn set_attached(&self, config: &ValidConfig<W64>, on: bool) -> bool {
        let _lock = self.writer.lock().unwrap_or_else(PoisonError::into_inner);
        self.withdraw();
        let was = self.attached.swap(on, Ordering::AcqRel);
        self.derive(config, self.word.load(Ordering::Acquire));
        was != on
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tripword::Config;

    fn word(state: State, counter: u32) -> u64 {
        Snapshot { state, counter }.encode::<W64>()
    }

    #[test]
    fn the_fast_words_follow_the_kits_decisions() {
        let config = Config::new().failure_threshold(3).check().unwrap();
        let m = Mirror::new();
        assert_eq!(m.admit(), NONE, "not attached");
        m.set_attached(&config, true);
        assert_eq!((m.admit(), m.quiet()), (0, 0), "Closed{{0}}");
        let two = word(State::Closed { failures: 2 }, 0);
        m.offer(&config, Some(m.base()), two);
        assert_eq!((m.admit(), m.quiet()), (two, NONE));
        let open = word(State::Open { since: 5, trips: 1 }, 1);
        m.offer(&config, None, open);
        assert_eq!((m.admit(), m.quiet(), m.word()), (NONE, NONE, open));
        m.set_attached(&config, false);
        let closed = word(State::Closed { failures: 0 }, 4);
        m.offer(&config, None, closed);
        assert_eq!(
            (m.admit(), m.word()),
            (NONE, closed),
            "detached: no fast path"
        );
        m.set_attached(&config, true);
        assert_eq!(m.admit(), closed);
        m.offer(&config, None, NONE);
        assert_eq!(m.admit(), closed, "a word with the top counter is behind");
    }

    #[test]
    fn the_instances_own_view_takes_the_fast_paths_away() {
        let config = Config::new().failure_threshold(3).check().unwrap();
        let m = Mirror::new();
        m.set_attached(&config, true);
        assert_eq!((m.admit(), m.quiet()), (0, 0));
        m.set_own(&config, || RUN);
        assert_eq!(
            (m.admit(), m.quiet()),
            (0, NONE),
            "a run of its own: admissions stay fast, successes end the run"
        );
        m.set_own(&config, || HELD);
        assert_eq!((m.admit(), m.quiet()), (NONE, NONE), "held off");
        m.set_own(&config, || CLEAR);
        assert_eq!((m.admit(), m.quiet()), (0, 0));
    }

    #[test]
    fn older_words_are_not_taken_unless_nothing_changed_meanwhile() {
        let config = Config::new().check().unwrap();
        let m = Mirror::new();
        m.set_attached(&config, true);
        let open = word(State::Open { since: 5, trips: 1 }, 1);
        let closed = word(State::Closed { failures: 0 }, 0);
        let before = m.base();
        m.offer(&config, None, open);
        m.offer(&config, None, closed);
        assert_eq!(m.word(), open, "an older published word");
        m.offer(&config, Some(before), closed);
        assert_eq!(m.word(), open, "an older reply, the mirror moved meanwhile");
        m.offer(&config, Some(m.base()), closed);
        assert_eq!(m.word(), closed, "a refresh after Redis restarted empty");
    }

    /// Within one counter the mirror never goes back to a quiet success:
    /// `Closed` with one failure (this instance's own report, say) is not
    /// replaced by the word before it, `Closed` with none, from a reply or
    /// a refresh that began before the report or from a message published
    /// before it; so a success is not called quiet while the run it must
    /// end is still in Redis. The same word from an operation begun after
    /// the mirror took the failure is taken (the run was ended meanwhile),
    /// and a word with failures of unknown order is taken over one with
    /// none.
    #[test]
    fn of_one_counter_a_word_is_taken_when_newer_or_counting_failures() {
        let config = Config::new().failure_threshold(2).check().unwrap();
        let m = Mirror::new();
        m.set_attached(&config, true);
        let clear = word(State::Closed { failures: 0 }, 0);
        let one = word(State::Closed { failures: 1 }, 0);
        assert_eq!((m.word(), m.quiet()), (clear, clear));
        // A refresh begins, then the failure report's reply comes first.
        let refresh = m.base();
        let report = m.base();
        m.offer(&config, Some(report), one);
        assert_eq!((m.word(), m.quiet()), (one, NONE), "the failure counted");
        m.offer(&config, Some(refresh), clear);
        assert_eq!(
            (m.word(), m.quiet()),
            (one, NONE),
            "a refresh begun before the report: not taken"
        );
        m.offer(&config, None, clear);
        assert_eq!(
            (m.word(), m.quiet()),
            (one, NONE),
            "a message published before the report: not taken"
        );
        let two = word(State::Closed { failures: 2 }, 0);
        m.offer(&config, None, two);
        assert_eq!(m.word(), one, "of unknown order, both with failures");
        m.offer(&config, Some(m.base()), clear);
        assert_eq!(
            (m.word(), m.quiet()),
            (clear, clear),
            "read after the mirror took the failure: the run ended"
        );
        // The word comes back to one failure, then none again: the base
        // counts changes, so the first base is not mistaken for the last.
        let stale = m.base();
        m.offer(&config, Some(m.base()), one);
        m.offer(&config, Some(m.base()), clear);
        m.offer(&config, Some(m.base()), one);
        m.offer(&config, Some(stale), clear);
        assert_eq!((m.word(), m.quiet()), (one, NONE), "an older base");
        // A `sync` reads one failure while messages move the mirror to the
        // end of an earlier run: its word is taken, as the one with
        // failures, though the mirror changed meanwhile.
        m.offer(&config, Some(m.base()), clear);
        let sync = m.base();
        m.offer(&config, Some(m.base()), one);
        m.offer(&config, None, clear);
        assert_eq!(m.word(), one, "a message with no failures: not taken");
        m.offer(&config, Some(m.base()), clear);
        m.offer(&config, Some(sync), one);
        assert_eq!(
            (m.word(), m.quiet()),
            (one, NONE),
            "the sync's failure, of unknown order: kept"
        );
        // A counter ahead is newer, whatever brings it.
        let next = word(State::Closed { failures: 0 }, 2);
        m.offer(&config, None, next);
        assert_eq!((m.word(), m.quiet()), (next, next));
    }

    /// A reader that sees a word in [`Mirror::word`] must not then be
    /// admitted by [`Mirror::admit`] on an older one: a release the mirror
    /// called stale followed by an admission under the passed counter is
    /// the mirror going back. The writer offers newer closed words while
    /// the reader reads `word` then `admit`, as a release and the next
    /// admission of one thread do.
    #[test]
    fn a_reader_never_sees_the_fast_word_behind_the_word() {
        use std::sync::atomic::AtomicBool;
        let config = Config::new().failure_threshold(3).check().unwrap();
        let m = Mirror::new();
        m.set_attached(&config, true);
        let done = AtomicBool::new(false);
        let behind = std::thread::scope(|s| {
            s.spawn(|| {
                for counter in 1..=200_000u32 {
                    m.offer(&config, None, word(State::Closed { failures: 0 }, counter));
                }
                done.store(true, Ordering::Release);
            });
            let mut behind = 0u64;
            while !done.load(Ordering::Acquire) {
                let seen = Snapshot::counter_bits::<W64>(m.word());
                let fast = m.admit();
                if fast != NONE && Snapshot::counter_bits::<W64>(fast) < seen {
                    behind += 1;
                }
            }
            behind
        });
        assert_eq!(
            behind, 0,
            "admissions on a word older than one already read"
        );
    }
}
