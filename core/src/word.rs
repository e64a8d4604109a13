//! The word: how a breaker's whole state is packed into one integer.
//!
//! A word holds a 3-bit state tag, the state counter, and a payload whose
//! meaning depends on the state (see `docs/design-word.md` for the bit diagrams):
//!
//! ```text
//! W64:  | time (34) | trips (5) | counter (22) | tag (3) |    Open, Probing, OpenUntil
//!       |        0        | failures (16) | counter (22) | tag (3) |  Closed
//! W32:  | time (15) | trips (4) | counter (10) | tag (3) |    Open, Probing, OpenUntil
//!       |     0     | failures (12) | counter (10) | tag (3) |    Closed
//! ```
//!
//! With the `recovery` feature two more states use the spare tags: `Trial`
//! (7, several probes) and `Ramp` (6, the progressive ramp), whose counts
//! take the low bits of the time field, which then keeps the same ring in
//! coarser units (`docs/design-word.md`, "Recovery states").
//!
//! `time` is in units of `2^s` ticks, modulo the field, where `s` is the
//! config's [`time_shift`](crate::ValidConfig::time_shift). `HalfOpen` keeps
//! only `trips`; the operator-held `ForcedOpen` keeps nothing but the counter.
//! Every bit a state does not use must be zero: a word that breaks this rule,
//! or carries an unknown tag, is *corrupt* (spec I8) and [`Snapshot::decode`]
//! says so instead of guessing.
//!
//! The all-zero word is `Closed` with counter 0 and no failures: a breaker's
//! initial state, so a zeroed cell is a valid breaker.
//!
//! # Example
//! ```
//! use tripword::word::{Snapshot, State, W32, W64};
//!
//! let snap = Snapshot { state: State::Open { since: 1234, trips: 2 }, counter: 7 };
//! let raw = snap.encode::<W64>();
//! assert_eq!(Snapshot::decode::<W64>(raw), Ok(snap));
//! // The same state fits the 32-bit word, with its narrower fields.
//! let raw32 = snap.encode::<W32>();
//! assert_eq!(Snapshot::decode::<W32>(raw32), Ok(snap));
//! ```

use crate::status::Status;
use crate::sync::{AtomicU32, AtomicU64};

/// Field widths of a word layout, in bits. Everything else follows from them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Layout {
    /// Width of the whole word.
    pub word_bits: u32,
    /// Width of the state counter (wraps modulo `2^counter_bits`).
    pub counter_bits: u32,
    /// Width of the consecutive-trip count (saturates at `2^trips_bits - 1`).
    pub trips_bits: u32,
    /// Width of the timestamp kept by `Open` and `Probing` (units of `2^s`
    /// ticks modulo `2^time_bits`).
    pub time_bits: u32,
    /// Width of the consecutive-failure count kept by `Closed`.
    pub failure_bits: u32,
    /// Width of each of the three counts a `Trial` keeps (probes running,
    /// passed, failed): at most `2^probe_bits - 1` probes.
    pub probe_bits: u32,
    /// Width of the admission credit a `Ramp` keeps: shares are in units of
    /// `2^-share_bits`.
    pub share_bits: u32,
    /// Width of the consecutive-failure count a `Ramp` keeps.
    pub ramp_failure_bits: u32,
}

/// Width of the state tag at the bottom of every word.
pub const TAG_BITS: u32 = 3;

pub(crate) const TAG_CLOSED: u64 = 0;
pub(crate) const TAG_OPEN: u64 = 1;
pub(crate) const TAG_HALF_OPEN: u64 = 2;
pub(crate) const TAG_PROBING: u64 = 3;
pub(crate) const TAG_FORCED_OPEN: u64 = 4;
pub(crate) const TAG_OPEN_UNTIL: u64 = 5;
pub(crate) const TAG_RAMP: u64 = 6;
pub(crate) const TAG_TRIAL: u64 = 7;

/// Whether the recovery states (`Trial`, `Ramp`: tags 7 and 6) exist in
/// this build (the `recovery` feature). Without it their tags are corrupt
/// and the code that handles them is not linked.
pub(crate) const RECOVERY: bool = cfg!(feature = "recovery");

pub(crate) const fn mask(bits: u32) -> u64 {
    if bits >= 64 {
        u64::MAX
    } else {
        (1u64 << bits) - 1
    }
}

impl Layout {
    /// Largest counter value; counters wrap to 0 after it.
    pub const fn max_counter(&self) -> u32 {
        mask(self.counter_bits) as u32
    }
    /// Largest trip count the word can hold (further trips saturate here).
    pub const fn max_trips(&self) -> u32 {
        mask(self.trips_bits) as u32
    }
    /// Largest failure count the word can hold; thresholds go up to it.
    pub const fn max_failures(&self) -> u32 {
        mask(self.failure_bits) as u32
    }
    /// Mask applied to tick values stored in the word.
    pub const fn time_mask(&self) -> u64 {
        mask(self.time_bits)
    }
    /// Longest duration (open time, backoff cap, probe timeout) a config may
    /// use, in units of the time field: half its range, so that a clock that
    /// went backwards by up to this much still reads as "elapsed" (spec I6).
    pub const fn max_units(&self) -> u64 {
        1u64 << (self.time_bits - 1)
    }
    /// Largest time shift: units of `2^max_shift` ticks make the ring
    /// `2^word_bits` ticks, so for `W32` the shifted clock still fits in 32
    /// bits (no 64-bit shift on an MCU).
    pub const fn max_shift(&self) -> u32 {
        self.word_bits - self.time_bits
    }
    /// The horizon a config gets when it sets none: an hour of the width's
    /// typical tick (1 kHz for `W32`, 1 µs for `W64`).
    pub const fn default_horizon(&self) -> u64 {
        if self.word_bits > 32 {
            3_600_000_000
        } else {
            3_600_000
        }
    }
    /// The clock reading `now` in units of `2^shift` ticks, modulo the
    /// word (only the time field's bits of it matter).
    #[inline(always)]
    pub const fn units_of(&self, now: u64, shift: u32) -> u64 {
        if self.word_bits > 32 {
            now >> shift
        } else {
            // shift <= 17, so the time field's 15 bits of `now >> shift`
            // are all in the low 32 bits of `now`.
            ((now as u32) >> shift) as u64
        }
    }
    /// Whether `raw` is `Closed` with fewer than `threshold` failures: the
    /// closed fast path's test. For a 64-bit word it compares the whole word,
    /// `raw < threshold << payload_shift`, which is `failures < threshold`
    /// because the bits below the payload are less than `1 << payload_shift`.
    /// That form shifts the threshold, which a `const` config folds, and
    /// not the word, which saves an instruction on the host. For a 32-bit
    /// word it shifts the word instead: there the word is zero-extended to
    /// `u64`, so its shift stays 32-bit, while the shifted threshold would be
    /// compared as a 64-bit value, which costs 8 B more on a 32-bit MCU. The
    /// two forms agree for every value, since nothing overflows `u64`.
    ///
    /// 64-bit targets keep the shifted threshold in the config instead
    /// (`ValidConfig::closed_limit`); a unit test checks the two agree.
    #[inline(always)]
    #[cfg_attr(target_pointer_width = "64", allow(dead_code))]
    pub(crate) const fn closed_below(&self, raw: u64, threshold: u32) -> bool {
        tag_of(raw) == TAG_CLOSED
            && if self.word_bits > 32 {
                raw < (threshold as u64) << self.payload_shift()
            } else {
                raw >> self.payload_shift() < threshold as u64
            }
    }
    /// What one more failure adds to a `Closed` word (the failure count's
    /// unit, in place). The failure fast path of `release`, 64-bit only.
    #[cfg(target_pointer_width = "64")]
    #[inline(always)]
    pub(crate) const fn one_failure(&self) -> u64 {
        1 << self.payload_shift()
    }
    /// The bits of the word that hold the state counter, in place.
    #[inline(always)]
    pub(crate) const fn counter_field_mask(&self) -> u64 {
        mask(self.counter_bits) << TAG_BITS
    }
    pub(crate) const fn payload_shift(&self) -> u32 {
        TAG_BITS + self.counter_bits
    }
    pub(crate) const fn time_shift(&self) -> u32 {
        self.payload_shift() + self.trips_bits
    }
    /// The counter that follows `counter` (modulo the counter's width).
    pub const fn next_counter(&self, counter: u32) -> u32 {
        (counter.wrapping_add(1) as u64 & mask(self.counter_bits)) as u32
    }
    /// Units elapsed from `since` (a stored timestamp) to `now` (a clock
    /// reading in the same units), modulo the time field's range. A clock
    /// that went backwards reads as a large elapsed time, so it fails
    /// towards probing.
    pub const fn elapsed(&self, since: u64, now: u64) -> u64 {
        now.wrapping_sub(since) & self.time_mask()
    }
}

mod sealed {
    pub trait Sealed {}
}

/// Where a word is kept. Defined here, below [`Word`], because
/// [`Word::Atomic`] names [`Cell`](store::Cell); published as
/// [`cell::Cell`](crate::cell::Cell) and
/// [`cell::CasError`](crate::cell::CasError), beside the loop that uses them.
pub(crate) mod store {
    use super::Word;

    /// A place that holds a word of width `W`: load it, compare-and-exchange it.
    ///
    /// Implemented for the atomics a [`Breaker`](crate::Breaker) uses
    /// (`Acquire` loads, `AcqRel` exchanges, `Error = Infallible`). Implement it
    /// for a cell of your own to run the same state machine there with
    /// [`update`](crate::cell::update).
    pub trait Cell<W: Word> {
        /// Why the cell could not answer: a lost connection, a timeout. Use
        /// [`Infallible`](core::convert::Infallible) for memory.
        type Error;

        /// The word the cell holds now.
        ///
        /// # Errors
        /// When the cell cannot be read.
        fn load(&self) -> Result<W::Raw, Self::Error>;

        /// Replaces the word with `new` if it is still `current`. May fail
        /// spuriously (report the word unchanged), as `compare_exchange_weak`
        /// does: [`update`](crate::cell::update) retries.
        ///
        /// # Errors
        /// [`CasError::Changed`] with the word the cell holds when it is not
        /// `current` (contention: [`update`](crate::cell::update) retries from it);
        /// [`CasError::Cell`] when the cell failed (the exchange may or may not
        /// have happened: [`update`](crate::cell::update) returns the error).
        fn compare_exchange(
            &self,
            current: W::Raw,
            new: W::Raw,
        ) -> Result<(), CasError<W::Raw, Self::Error>>;
    }

    /// Why a [`Cell::compare_exchange`] did not exchange.
    #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
    pub enum CasError<R, E> {
        /// The cell held another word (given): someone else changed it first.
        Changed(R),
        /// The cell failed; whether the exchange happened is unknown.
        Cell(E),
    }
}

/// A word width: [`W64`] (the default) or [`W32`] (for MCUs whose native
/// atomics are 32-bit). Sealed: the two layouts are the only ones.
pub trait Word: sealed::Sealed + Sized + 'static {
    /// The integer the word is stored as (`u64` or `u32`).
    type Raw: Copy + Eq + core::fmt::Debug + core::hash::Hash + Into<u64> + Send + Sync + 'static;
    /// The atomic cell a [`Breaker`](crate::Breaker) keeps the word in.
    type Atomic: store::Cell<Self, Error = core::convert::Infallible> + Send + Sync;
    /// This width's field layout.
    const LAYOUT: Layout;
    /// Whether the atomic cell is lock-free on the target being compiled
    /// (false for `W64` on 32-bit MCUs, where `portable-atomic` falls back to
    /// a lock).
    const IS_ALWAYS_LOCK_FREE: bool;
    /// A new cell holding the initial word (`Closed`, counter 0); `const` so
    /// breakers can be `static`s.
    #[cfg(not(tripword_loom))]
    #[allow(clippy::declare_interior_mutable_const)]
    const NEW_CELL: Self::Atomic;
    /// Truncates a `u64` to this width (the pure layer computes in `u64`).
    fn from_u64(raw: u64) -> Self::Raw;
    /// A cell holding `raw`.
    fn new_cell(raw: Self::Raw) -> Self::Atomic;
}

/// The 64-bit word: 22-bit counter, 34-bit timestamps, thresholds up to 65535.
///
/// With 1 µs ticks, time is kept in whole ticks for durations up to 2^33
/// µs (about 2.39 hours); the time field's ring is 2^34 µs (4.77 hours), so
/// a caller sees every deadline exactly when it comes back within the ring
/// less the open time (less one unit). The counter turns over after 4 194 304
/// state changes (`docs/design-word.md`, "Counter wrap").
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct W64;

/// The 32-bit word: 10-bit counter, 15-bit timestamps, thresholds up to 4095.
/// Lock-free wherever 32-bit compare-and-swap is native (Cortex-M3/M4/M7,
/// RISC-V with the A extension).
///
/// **Time.** The 15-bit field keeps time in units of `2^s` ticks, `s` derived
/// from the config ([`ValidConfig::time_shift`](crate::ValidConfig::time_shift)):
/// with a 1 kHz tick and the default one-hour horizon, 128 ms units (256 ms
/// once the longest duration passes ~9.9 minutes), a ring of 69.9 minutes (or
/// 2.3 hours), open times of minutes to days. Durations last up to `3 * 2^s`
/// ticks longer than set. Callers further apart than the ring minus the open
/// time may be rejected once more per ring they skip: pick [`W64`] (or a
/// longer [`horizon`](crate::Config::horizon)) if yours can be.
///
/// **Counter.** It turns over after 1 024 state changes: a ticket held across
/// exactly a multiple of that many changes could be misread as current. Timed
/// cycles need at least 512 probe timeouts or 256 open times for that; but
/// probes that keep ending `Ignored`, or an operator toggling
/// `force_open`/`force_close`, take no time per change. Firmware that holds
/// calls across either should use [`W64`] (4 194 304 changes). See
/// `docs/design-word.md`, "Counter wrap".
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct W32;

impl sealed::Sealed for W64 {}
impl sealed::Sealed for W32 {}

impl Word for W64 {
    type Raw = u64;
    type Atomic = AtomicU64;
    const LAYOUT: Layout = Layout {
        word_bits: 64,
        counter_bits: 22,
        trips_bits: 5,
        time_bits: 34,
        failure_bits: 16,
        probe_bits: 4,
        share_bits: 10,
        ramp_failure_bits: 4,
    };
    #[cfg(not(tripword_loom))]
    const IS_ALWAYS_LOCK_FREE: bool = AtomicU64::is_always_lock_free();
    #[cfg(tripword_loom)]
    const IS_ALWAYS_LOCK_FREE: bool = true;
    #[cfg(not(tripword_loom))]
    #[allow(clippy::declare_interior_mutable_const)]
    const NEW_CELL: AtomicU64 = AtomicU64::new(0);
    #[inline]
    fn from_u64(raw: u64) -> u64 {
        raw
    }
    fn new_cell(raw: u64) -> AtomicU64 {
        AtomicU64::new(raw)
    }
}

impl Word for W32 {
    type Raw = u32;
    type Atomic = AtomicU32;
    const LAYOUT: Layout = Layout {
        word_bits: 32,
        counter_bits: 10,
        trips_bits: 4,
        time_bits: 15,
        failure_bits: 12,
        probe_bits: 2,
        share_bits: 5,
        ramp_failure_bits: 2,
    };
    #[cfg(not(tripword_loom))]
    const IS_ALWAYS_LOCK_FREE: bool = AtomicU32::is_always_lock_free();
    #[cfg(tripword_loom)]
    const IS_ALWAYS_LOCK_FREE: bool = true;
    #[cfg(not(tripword_loom))]
    #[allow(clippy::declare_interior_mutable_const)]
    const NEW_CELL: AtomicU32 = AtomicU32::new(0);
    #[inline]
    fn from_u64(raw: u64) -> u32 {
        raw as u32
    }
    fn new_cell(raw: u32) -> AtomicU32 {
        AtomicU32::new(raw)
    }
}

/// A breaker state with its payload, as decoded from a word.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum State {
    /// Calls are admitted; `failures` consecutive current failures so far.
    Closed {
        /// Consecutive failures counted since the last success or close.
        failures: u32,
    },
    /// Calls are rejected until the open duration for `trips` has elapsed
    /// since `since`.
    Open {
        /// When the breaker opened, in units of `2^s` ticks modulo the time
        /// field's range.
        since: u64,
        /// Trips since the breaker was last closed (1 for the first trip).
        trips: u32,
    },
    /// The next caller becomes the probe.
    HalfOpen {
        /// Trips since the breaker was last closed.
        trips: u32,
    },
    /// A probe admitted at `since` is running; everyone else is rejected.
    Probing {
        /// When the probe was admitted, in units of `2^s` ticks modulo the
        /// time field's range.
        since: u64,
        /// Trips since the breaker was last closed.
        trips: u32,
    },
    /// Held open by an operator (`force_open`) until `force_close`.
    ForcedOpen,
    /// Open until a given time rather than for the configured open time: a
    /// failure said how long (`failure_for`, a `Retry-After`), or an operator
    /// opened it for a while (`force_open_for`). Reads as `Open`; when the
    /// time comes it becomes `HalfOpen` as after a trip.
    OpenUntil {
        /// When it may become half-open, in units of `2^s` ticks modulo the
        /// time field's range.
        until: u64,
        /// Trips since the breaker was last closed.
        trips: u32,
    },
    /// Several probes (`Config::probes`): a trial of up to `n` calls that
    /// started at `since`; it closes once enough of them pass and reopens
    /// once too many fail (`docs/spec.md`, "Several probes"). The `recovery`
    /// feature.
    Trial {
        /// When the trial started, in units of `2^(s + 3 probe_bits)` ticks
        /// modulo its time field (the same ring, coarser units).
        since: u64,
        /// Trips since the breaker was last closed.
        trips: u32,
        /// Probes admitted that have not reported.
        running: u32,
        /// Probes that succeeded.
        passed: u32,
        /// Probes that failed.
        failed: u32,
    },
    /// The progressive ramp after a recovery (`Config::ramp`): since
    /// `since`, a growing share of calls is admitted (`docs/spec.md`, "The
    /// ramp"). The `recovery` feature.
    Ramp {
        /// When the ramp started, in units of `2^(s + share_bits +
        /// ramp_failure_bits)` ticks modulo its time field.
        since: u64,
        /// Trips since the breaker was last closed.
        trips: u32,
        /// The admission credit, in units of `2^-share_bits` calls.
        credit: u32,
        /// Consecutive failures of admitted calls.
        failures: u32,
    },
}

/// The name of a state, without its payload.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub(crate) enum Phase {
    /// See [`State::Closed`].
    Closed,
    /// See [`State::Open`].
    Open,
    /// See [`State::HalfOpen`].
    HalfOpen,
    /// See [`State::Probing`].
    Probing,
    /// See [`State::ForcedOpen`].
    ForcedOpen,
    /// See [`State::Ramp`].
    Recovering,
}

impl Phase {
    /// What [`Breaker::status`](crate::Breaker::status) reports for this
    /// phase: `ForcedOpen` reads as [`Status::Open`].
    pub(crate) const fn status(self) -> Status {
        match self {
            Phase::Closed => Status::Closed,
            Phase::Open | Phase::ForcedOpen => Status::Open,
            Phase::HalfOpen => Status::HalfOpen,
            Phase::Probing => Status::Probing,
            Phase::Recovering => Status::Recovering,
        }
    }
}

impl State {
    /// What [`Breaker::status`](crate::Breaker::status) reports in this
    /// state before acting on time: `ForcedOpen` reads as [`Status::Open`].
    pub const fn status(&self) -> Status {
        self.phase().status()
    }

    /// Whether this is the operator-held open of `force_open`.
    pub const fn is_forced_open(&self) -> bool {
        matches!(self, State::ForcedOpen)
    }

    pub(crate) const fn phase(&self) -> Phase {
        match self {
            State::Closed { .. } => Phase::Closed,
            State::Open { .. } => Phase::Open,
            State::HalfOpen { .. } => Phase::HalfOpen,
            State::Probing { .. } => Phase::Probing,
            State::ForcedOpen => Phase::ForcedOpen,
            State::OpenUntil { .. } => Phase::Open,
            State::Trial { .. } => Phase::Probing,
            State::Ramp { .. } => Phase::Recovering,
        }
    }
}

/// Why a word did not decode (spec I8).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Corruption {
    /// The tag is not one of the six states.
    UnknownTag(u8),
    /// Bits the state does not use are set.
    StrayBits,
}

impl core::fmt::Display for Corruption {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        match self {
            Corruption::UnknownTag(tag) => {
                write!(f, "corrupt breaker word: unknown state tag {tag}")
            }
            Corruption::StrayBits => {
                f.write_str("corrupt breaker word: bits its state does not use are set")
            }
        }
    }
}

impl core::error::Error for Corruption {}

/// A decoded word: the state and the state counter.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Snapshot {
    /// The state and its payload.
    pub state: State,
    /// The state counter: moves forward (modulo its width) on every change.
    pub counter: u32,
}

impl Snapshot {
    /// The initial state: `Closed`, no failures, counter 0 (the zero word).
    pub const INITIAL: Snapshot = Snapshot {
        state: State::Closed { failures: 0 },
        counter: 0,
    };

    /// Decodes a word of width `W`. Never panics; any bit pattern that is not
    /// a valid state yields the [`Corruption`] found.
    pub fn decode<W: Word>(raw: W::Raw) -> Result<Snapshot, Corruption> {
        decode_u64(&W::LAYOUT, raw.into())
    }

    /// Encodes this snapshot as a word of width `W`. Never panics and always
    /// yields a word that decodes: the counter and timestamps are reduced
    /// modulo their fields' ranges, trips saturate, failures are clamped to the
    /// largest count the field holds.
    pub fn encode<W: Word>(&self) -> W::Raw {
        W::from_u64(encode_u64(&W::LAYOUT, self))
    }

    /// The counter carried by `raw`, whether or not the rest of it is valid.
    pub fn counter_bits<W: Word>(raw: W::Raw) -> u32 {
        counter_of(&W::LAYOUT, raw.into())
    }
}

/// The tag of a word.
#[inline(always)]
pub(crate) const fn tag_of(raw: u64) -> u64 {
    raw & mask(TAG_BITS)
}

/// Whether a tag keeps a timestamp (`Open`, `Probing`, `OpenUntil`: the odd
/// tags but 7). Every bit pattern of these tags is a valid word. `Trial`
/// (7) keeps one too, but admits before its deadline: see [`has_deadline`].
/// The 64-bit fast paths' test (an MCU leaves them to the shared loop).
#[cfg(target_pointer_width = "64")]
#[inline(always)]
pub(crate) const fn is_timed(tag: u64) -> bool {
    tag & 1 == 1 && tag != 7
}

/// Whether a tag's word lapses at a deadline: the timed tags and, in a
/// build with the recovery states, `Trial` (its probe timeout).
#[inline(always)]
pub(crate) const fn has_deadline(tag: u64) -> bool {
    tag & 1 == 1 && (tag != TAG_TRIAL || RECOVERY)
}

#[inline(always)]
pub(crate) const fn counter_of(layout: &Layout, raw: u64) -> u32 {
    ((raw >> TAG_BITS) & mask(layout.counter_bits)) as u32
}

/// The failure count of a `Closed` word (with any stray bits above the
/// failure field included, so a corrupt word reads as a count at or over any
/// valid threshold), or `None` for any other tag. The failure fast path of
/// `release`, which exists on 64-bit targets only.
#[cfg(target_pointer_width = "64")]
#[inline(always)]
pub(crate) const fn closed_failures(layout: &Layout, raw: u64) -> Option<u64> {
    if tag_of(raw) == TAG_CLOSED {
        Some(raw >> layout.payload_shift())
    } else {
        None
    }
}

/// Field access and construction on raw words: what the transition kernel
/// works with, so that it never builds a [`Snapshot`] (see `docs/design.md`,
/// "The kernel works on raw bits"). Every constructor yields a valid word:
/// the counter and time are reduced modulo their fields, trips and failures
/// clamped to the largest value their fields hold.
impl Layout {
    /// The payload: every bit above the counter.
    #[inline(always)]
    pub(crate) const fn payload_of(&self, raw: u64) -> u64 {
        raw >> self.payload_shift()
    }
    /// The trip count of an `Open`, `HalfOpen` or `Probing` word.
    #[inline(always)]
    pub(crate) const fn trips_of(&self, raw: u64) -> u32 {
        (self.payload_of(raw) & mask(self.trips_bits)) as u32
    }
    /// The timestamp of an `Open` or `Probing` word.
    #[inline(always)]
    pub(crate) const fn since_of(&self, raw: u64) -> u64 {
        (raw >> self.time_shift()) & self.time_mask()
    }
    #[inline(always)]
    pub(crate) const fn pack(&self, tag: u64, counter: u32, payload: u64) -> u64 {
        tag | ((counter as u64 & mask(self.counter_bits)) << TAG_BITS)
            | (payload << self.payload_shift())
    }
    #[inline(always)]
    pub(crate) const fn clamp(value: u32, max: u32) -> u64 {
        (if value < max { value } else { max }) as u64
    }
    /// `Closed` with `failures` consecutive failures.
    #[inline(always)]
    pub(crate) const fn closed(&self, counter: u32, failures: u32) -> u64 {
        self.pack(
            TAG_CLOSED,
            counter,
            Self::clamp(failures, self.max_failures()),
        )
    }
    /// `Open` since `since` (in units), after `trips` trips.
    #[inline(always)]
    pub(crate) const fn open(&self, counter: u32, since: u64, trips: u32) -> u64 {
        self.stamped(TAG_OPEN, counter, since, trips)
    }
    /// `Probing` since `since` (in units), after `trips` trips.
    #[inline(always)]
    pub(crate) const fn probing(&self, counter: u32, since: u64, trips: u32) -> u64 {
        self.stamped(TAG_PROBING, counter, since, trips)
    }
    #[inline(always)]
    const fn stamped(&self, tag: u64, counter: u32, since: u64, trips: u32) -> u64 {
        let time = (since & self.time_mask()) << self.trips_bits;
        self.pack(tag, counter, Self::clamp(trips, self.max_trips()) | time)
    }
    /// `OpenUntil` the time `until` (in units), after `trips` trips.
    #[inline(always)]
    pub(crate) const fn open_until(&self, counter: u32, until: u64, trips: u32) -> u64 {
        self.stamped(TAG_OPEN_UNTIL, counter, until, trips)
    }
    /// `HalfOpen` after `trips` trips.
    #[inline(always)]
    pub(crate) const fn half_open(&self, counter: u32, trips: u32) -> u64 {
        self.pack(TAG_HALF_OPEN, counter, Self::clamp(trips, self.max_trips()))
    }
    /// The operator-held `ForcedOpen`.
    #[inline(always)]
    pub(crate) const fn forced_open(&self, counter: u32) -> u64 {
        self.pack(TAG_FORCED_OPEN, counter, 0)
    }
    /// Whether `raw` is a valid word under a failure threshold (spec I8): a
    /// known tag, no stray bits, and a `Closed` count below the threshold.
    /// Agrees with [`decode_u64`] plus the threshold check.
    #[inline(always)]
    pub(crate) const fn is_valid(&self, raw: u64, threshold: u32) -> bool {
        let payload = self.payload_of(raw);
        match tag_of(raw) {
            TAG_CLOSED => payload <= mask(self.failure_bits) && payload < threshold as u64,
            // Their fields fill the word: every bit pattern is a state.
            TAG_OPEN | TAG_PROBING | TAG_OPEN_UNTIL => true,
            TAG_HALF_OPEN => raw >> self.time_shift() == 0,
            TAG_FORCED_OPEN => payload == 0,
            // Every bit pattern is a state too, where they exist.
            TAG_TRIAL | TAG_RAMP => RECOVERY,
            _ => false,
        }
    }
    /// The phase of a valid word (`Closed` for an unknown tag).
    #[inline(always)]
    pub(crate) const fn phase_of(raw: u64) -> Phase {
        match tag_of(raw) {
            TAG_OPEN | TAG_OPEN_UNTIL => Phase::Open,
            TAG_HALF_OPEN => Phase::HalfOpen,
            TAG_PROBING => Phase::Probing,
            TAG_FORCED_OPEN => Phase::ForcedOpen,
            TAG_TRIAL if RECOVERY => Phase::Probing,
            TAG_RAMP if RECOVERY => Phase::Recovering,
            _ => Phase::Closed,
        }
    }
}

/// The tag values, for the kernel's matches.
pub(crate) mod tag {
    pub(crate) use super::TAG_OPEN_UNTIL as OPEN_UNTIL;
    pub(crate) use super::{TAG_CLOSED as CLOSED, TAG_FORCED_OPEN as FORCED_OPEN};
    pub(crate) use super::{TAG_HALF_OPEN as HALF_OPEN, TAG_OPEN as OPEN, TAG_PROBING as PROBING};
    pub(crate) use super::{TAG_RAMP as RAMP, TAG_TRIAL as TRIAL};
}

#[inline]
pub(crate) fn decode_u64(layout: &Layout, raw: u64) -> Result<Snapshot, Corruption> {
    let counter = counter_of(layout, raw);
    let payload = layout.payload_of(raw);
    let trips = layout.trips_of(raw);
    let since = layout.since_of(raw);
    let state = match tag_of(raw) {
        TAG_CLOSED => {
            if payload > mask(layout.failure_bits) {
                return Err(Corruption::StrayBits);
            }
            State::Closed {
                failures: payload as u32,
            }
        }
        TAG_OPEN => State::Open { since, trips },
        TAG_HALF_OPEN => {
            if since != 0 {
                return Err(Corruption::StrayBits);
            }
            State::HalfOpen { trips }
        }
        TAG_PROBING => State::Probing { since, trips },
        TAG_OPEN_UNTIL => State::OpenUntil {
            until: since,
            trips,
        },
        TAG_FORCED_OPEN => {
            if payload != 0 {
                return Err(Corruption::StrayBits);
            }
            State::ForcedOpen
        }
        TAG_TRIAL if RECOVERY => layout.trial_state(raw),
        TAG_RAMP if RECOVERY => layout.ramp_state(raw),
        other => return Err(Corruption::UnknownTag(other as u8)),
    };
    // Open/Probing use every payload bit; W64's fields fill the word exactly,
    // W32's too, so no bits above the time field can be set.
    Ok(Snapshot { state, counter })
}

#[inline]
pub(crate) fn encode_u64(layout: &Layout, snap: &Snapshot) -> u64 {
    let c = snap.counter;
    match snap.state {
        State::Closed { failures } => layout.closed(c, failures),
        State::Open { since, trips } => layout.open(c, since, trips),
        State::HalfOpen { trips } => layout.half_open(c, trips),
        State::Probing { since, trips } => layout.probing(c, since, trips),
        State::ForcedOpen => layout.forced_open(c),
        State::OpenUntil { until, trips } => layout.open_until(c, until, trips),
        State::Trial {
            since,
            trips,
            running,
            passed,
            failed,
        } => layout.trial(c, since, trips, [running, passed, failed]),
        State::Ramp {
            since,
            trips,
            credit,
            failures,
        } => layout.ramp(c, since, trips, credit, failures),
    }
}

#[cfg(test)]
mod tests;
