//! Why a call was not admitted, and for how long.
//!
//! "How long" is [`units_left`], the time a timed word has left: the
//! transition function reads it to decide whether a word has lapsed, a
//! rejection to compute its wait, so it lives here, below both.

use crate::config::ValidConfig;
use crate::word::{Layout, RECOVERY, Word, counter_of, has_deadline, tag, tag_of};

/// Why a call was not admitted.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Cause {
    /// The breaker is open: its open time has not elapsed.
    Open,
    /// A probe is running: the single probe of a half-open breaker was
    /// elected and has not reported (nor timed out).
    Probing,
    /// An operator holds the breaker open
    /// ([`force_open`](crate::Breaker::force_open)).
    ForcedOpen,
    /// A recovery ramp (`Config::ramp`) admits only a share of calls for
    /// now, and this one was not in it; the wait is until the share next
    /// grows (or the ramp ends).
    Ramp,
}

impl core::fmt::Display for Cause {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.write_str(match self {
            Cause::Open => "open",
            Cause::Probing => "probing",
            Cause::ForcedOpen => "forced open",
            Cause::Ramp => "ramping up",
        })
    }
}

/// The call was not admitted: the breaker is open, forced open, or probing.
/// The protected function must not run.
///
/// One machine word (the cause in two bits, the wait in the rest, which
/// saturates at `usize::MAX >> 2` ticks), so that `Result<Ticket, Rejected>`
/// is two words; built from the units the decision found left, so a
/// rejection costs a few instructions.
///
/// The cause's two bits are the low bits of the state tag that rejects
/// (`Open` 1, `OpenUntil` 5, `Probing` 3, `ForcedOpen` 4): 1 for
/// [`Cause::Open`], 3 for [`Cause::Probing`], 0 for [`Cause::ForcedOpen`], so
/// a rejection takes its cause from the word with one mask; 2 is the
/// ramp's (`Ramp` is tag 6; `Trial`, 7, rejects as `Probing`).
///
/// ```
/// use tripword::{Breaker, Cause, Config, Outcome};
/// use tripword::clock::ManualClock;
///
/// let clock = ManualClock::new(0);
/// let b = Breaker::new(Config::new().failure_threshold(1).open_for(100), &clock);
/// b.release(b.acquire().unwrap(), Outcome::Failure); // trips
/// clock.advance(30);
/// let r = b.acquire().unwrap_err();
/// assert_eq!(r.cause(), Cause::Open);
/// assert_eq!(r.retry_after(), Some(70)); // from the clock reading it made
/// b.force_open();
/// assert_eq!(b.acquire().unwrap_err().retry_after(), None);
/// ```
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct Rejected(usize);

// `OpenUntil` rejects as `Open` does, with the same two low bits; `Trial`
// (all its probes running) as `Probing`; `Ramp` has the fourth code.
const _: () = assert!(tag::OPEN_UNTIL & 3 == tag::OPEN & 3);
const _: () = assert!(tag::TRIAL & 3 == tag::PROBING & 3);
const _: () = assert!(tag::RAMP & 3 == 2);

impl Rejected {
    const CAUSE_BITS: u32 = 2;
    const MAX_WAIT: u64 = (usize::MAX >> Self::CAUSE_BITS) as u64;

    const OPEN: usize = Self::code(tag::OPEN);
    const PROBING: usize = Self::code(tag::PROBING);
    const FORCED_OPEN: usize = Self::code(tag::FORCED_OPEN);
    const RAMP: usize = Self::code(tag::RAMP);

    /// The cause's code for a rejecting tag: its two low bits (`OpenUntil`
    /// shares `Open`'s, `ForcedOpen`'s are 0).
    #[inline(always)]
    const fn code(tag: u64) -> usize {
        tag as usize & 3
    }

    #[inline(always)]
    const fn from_code(code: usize, wait: u64) -> Rejected {
        let wait = if wait < Self::MAX_WAIT {
            wait
        } else {
            Self::MAX_WAIT
        };
        Rejected(((wait as usize) << Self::CAUSE_BITS) | code)
    }

    /// The rejection of an admission by the timed or forced word `word`,
    /// with `wait` ticks to wait: its cause is the tag's two low bits.
    #[inline(always)]
    pub(crate) const fn waiting(word: u64, wait: u64) -> Rejected {
        Rejected::from_code(Self::code(tag_of(word)), wait)
    }

    /// A rejection for `cause`, with `retry_after` ticks to wait (in the
    /// breaker's clock, as [`retry_after`](Self::retry_after) reads them):
    /// what a breaker with a state machine of its own (no core word)
    /// returns from [`CircuitBreaker::acquire`](crate::CircuitBreaker::acquire).
    /// `const`, and the same one word as every rejection.
    ///
    /// The cause decides whether there is a wait, so the rejection always
    /// reads as one the core could make:
    /// - [`Cause::ForcedOpen`] has no wait (no timer ends an operator's
    ///   hold): a `Some` given with it is dropped, and
    ///   [`retry_after`](Self::retry_after) is `None`;
    /// - [`Cause::Open`] and [`Cause::Probing`] always have one: `None`
    ///   given with them reads as `Some(0)` (no known wait: ask again);
    /// - a wait saturates at `usize::MAX >> 2` ticks (`2^62 - 1`, or
    ///   `2^30 - 1` on 32-bit targets).
    ///
    /// So `Rejected::new(r.cause(), r.retry_after()) == r` for every
    /// rejection `r`.
    ///
    /// ```
    /// use tripword::{Cause, Rejected};
    ///
    /// const COOLING: Rejected = Rejected::new(Cause::Open, Some(250));
    /// assert_eq!(COOLING.cause(), Cause::Open);
    /// assert_eq!(COOLING.retry_after(), Some(250));
    ///
    /// // An operator's hold has no wait; an open breaker always has one.
    /// assert_eq!(Rejected::new(Cause::ForcedOpen, Some(5)).retry_after(), None);
    /// assert_eq!(Rejected::new(Cause::Probing, None).retry_after(), Some(0));
    /// ```
    #[inline]
    pub const fn new(cause: Cause, retry_after: Option<u64>) -> Rejected {
        let wait = match retry_after {
            Some(ticks) => ticks,
            None => 0,
        };
        match cause {
            Cause::Open => Rejected::from_code(Self::OPEN, wait),
            Cause::Probing => Rejected::from_code(Self::PROBING, wait),
            Cause::ForcedOpen => Rejected::from_code(Self::FORCED_OPEN, 0),
            Cause::Ramp => Rejected::from_code(Self::RAMP, wait),
        }
    }

    /// The wait, at `now` (ticks), when `left` units of `2^shift` ticks are
    /// left before a word lapses: to the first tick of the unit where it
    /// does, `left << shift` ticks from the start of the current unit. In
    /// 32 bits for a 32-bit word (left <= 2^14, shift <= 17).
    #[inline(always)]
    pub(crate) fn wait<W: Word>(left: u64, shift: u32, now: u64) -> u64 {
        if left == 0 {
            0
        } else if W::LAYOUT.word_bits <= 32 {
            let into_unit = (now as u32) & ((1u32 << shift) - 1);
            u64::from(((left as u32) << shift) - into_unit)
        } else {
            let into_unit = now & ((1u64 << shift) - 1);
            (left << shift) - into_unit
        }
    }

    /// The bits of this rejection (the cause, and the wait above it).
    #[inline(always)]
    pub(crate) const fn bits(self) -> usize {
        self.0
    }

    /// The rejection whose [`bits`](Self::bits) are `bits`.
    #[inline(always)]
    pub(crate) const fn from_bits(bits: usize) -> Rejected {
        Rejected(bits)
    }

    /// Why the call was not admitted.
    pub const fn cause(&self) -> Cause {
        match self.0 & 3 {
            Self::OPEN => Cause::Open,
            Self::PROBING => Cause::Probing,
            Self::RAMP => Cause::Ramp,
            _ => Cause::ForcedOpen,
        }
    }

    /// Ticks from the rejection until an admission could succeed: until the
    /// open time ends (`Open`; the first caller from then on is elected
    /// probe) or the running probe times out (`Probing`; it may report
    /// sooner). `None` when forced open: no timer ends that. Computed from
    /// the clock reading the rejection made: the first tick at which an
    /// admission succeeds, whatever the config's
    /// [`time_shift`](crate::ValidConfig::time_shift). Saturates at `2^62 -
    /// 1` ticks (`2^30 - 1` on 32-bit targets: 12 days of a 1 kHz tick).
    pub const fn retry_after(&self) -> Option<u64> {
        match self.cause() {
            Cause::ForcedOpen => None,
            _ => Some((self.0 >> Self::CAUSE_BITS) as u64),
        }
    }

    /// The rejection `word` (valid, `Open`, `Probing` or `ForcedOpen`) makes
    /// at `now`, in ticks.
    #[inline]
    pub fn at<W: Word>(config: &ValidConfig<W>, word: u64, now: u64) -> Rejected {
        let l = &W::LAYOUT;
        let t = tag_of(word);
        if RECOVERY && t == tag::RAMP {
            let left = match crate::recovery::ramp_stage(l, config, word, now) {
                Some((_, left)) => left,
                None => 0,
            };
            return Rejected::waiting(word, Self::wait::<W>(left, config.time_shift(), now));
        }
        if !has_deadline(t) {
            // The operator's hold: no timer, no wait.
            return Rejected::waiting(word, 0);
        }
        let left = units_left(l, config, word, now);
        Rejected::waiting(word, Self::wait::<W>(left, config.time_shift(), now))
    }
}

impl core::fmt::Debug for Rejected {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("Rejected")
            .field("cause", &self.cause())
            .field("retry_after", &self.retry_after())
            .finish()
    }
}

impl core::fmt::Display for Rejected {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        match self.retry_after() {
            Some(ticks) => write!(
                f,
                "circuit {}: call not admitted (retry after {ticks} ticks)",
                self.cause()
            ),
            None => write!(f, "circuit {}: call not admitted", self.cause()),
        }
    }
}

impl core::error::Error for Rejected {}

/// Units left, at `now` (ticks), before a timed word lapses: before an
/// `Open` word's open time is up, a `Probing` word's probe times out, or an
/// `OpenUntil` word's deadline comes; 0 once it has. `w` must be a timed
/// word (`Open`, `Probing`, `OpenUntil`).
///
/// Time is compared in units of `2^s` ticks (`docs/design-word.md`, "Time in
/// units"). With backoff an `Open` word needs `min(cap, open_for << (trips -
/// 1))` units, which fits the word's integer: `open_for` is at most half the
/// time field (2^14 units for `W32`, 2^33 for `W64`) and the doublings at
/// most 14 or 30. For a 32-bit word everything is computed in 32 bits, so an
/// MCU does no 64-bit arithmetic here; and there the function is shared out
/// of line by every caller (the CAS loop, the status read, the rejection's
/// wait), which is the smaller code.
#[inline(always)]
pub(crate) fn units_left<W: Word>(l: &Layout, config: &ValidConfig<W>, w: u64, now: u64) -> u64 {
    if l.time_bits <= 32 {
        // The word and the clock's low 32 bits are all this needs (`units_of`).
        u64::from(units_left32(l, config, w as u32, now as u32))
    } else {
        units_left64(l, config, w, now)
    }
}

/// [`units_left`] for a word whose time field fits 32 bits: everything in
/// 32 bits, and its arguments and result in registers, so an MCU does no
/// 64-bit arithmetic and passes nothing on the stack. Out of line on 32-bit
/// targets, where every caller (the CAS loop, the status read) shares it.
#[cfg_attr(target_pointer_width = "64", inline(always))]
#[cfg_attr(not(target_pointer_width = "64"), inline(never))]
fn units_left32<W: Word>(l: &Layout, config: &ValidConfig<W>, w: u32, now: u32) -> u32 {
    let tag = tag_of(w.into());
    if RECOVERY && tag == tag::TRIAL {
        return crate::recovery::trial_left(l, config, w.into(), now.into()) as u32;
    }
    let mask = l.time_mask() as u32;
    let now = now >> config.time_shift();
    let stamp = l.since_of(w.into()) as u32;
    if tag == tag::OPEN_UNTIL {
        // The stamp is the deadline: a reading up to half the ring
        // before it waits, anything else has passed it.
        let left = stamp.wrapping_sub(now) & mask;
        return if left > l.max_units() as u32 { 0 } else { left };
    }
    let need = if tag == tag::PROBING {
        config.probe_units() as u32
    } else {
        let open = config.open_units() as u32;
        let cap = config.cap_units() as u32;
        // Without backoff (cap 0) the open time does not double.
        let need = if cap == 0 {
            open
        } else {
            // `open << (trips - 1)` with a trip count of 0 read as 1: `open
            // << trips` fits (open is at most 2^14, trips at most 15).
            let doubled = (open << l.trips_of(w.into()) >> 1).max(open);
            if cap < doubled { cap } else { doubled }
        };
        // A trip count of 0 (only in a word written by hand) reads as 1,
        // for the jitter as for the backoff.
        config.jitter_units32(need, counter_of(l, w.into()), l.trips_of(w.into()).max(1))
    };
    need.saturating_sub(now.wrapping_sub(stamp) & mask)
}

/// [`units_left`] for the 64-bit word.
#[cfg_attr(target_pointer_width = "64", inline(always))]
#[cfg_attr(not(target_pointer_width = "64"), inline(never))]
fn units_left64<W: Word>(l: &Layout, config: &ValidConfig<W>, w: u64, now: u64) -> u64 {
    let tag = tag_of(w);
    if RECOVERY && tag == tag::TRIAL {
        return crate::recovery::trial_left(l, config, w, now);
    }
    let now = l.units_of(now, config.time_shift());
    let stamp = l.since_of(w);
    let mask = l.time_mask();
    if tag == tag::OPEN_UNTIL {
        let left = stamp.wrapping_sub(now) & mask;
        return if left > l.max_units() { 0 } else { left };
    }
    let need = if tag == tag::PROBING {
        config.probe_units()
    } else {
        let open = config.open_units();
        let cap = config.cap_units();
        let need = if cap == 0 {
            open
        } else {
            let doubled = open << l.trips_of(w).saturating_sub(1);
            if cap < doubled { cap } else { doubled }
        };
        config.jitter_units(need, counter_of(l, w), l.trips_of(w).max(1))
    };
    need.saturating_sub(now.wrapping_sub(stamp) & mask)
}

#[cfg(test)]
mod tests;
