//! The failure-rate policy (`docs/spec.md`, "Failure rate").
//!
//! A [`RateBreaker`] trips when, over a sliding window of time, the share of
//! failed calls reaches a threshold and at least a minimum number of calls
//! were made: what services under mixed traffic need, where a few failures in
//! a row mean little and one failure in two means a lot. Everything else is
//! the consecutive breaker's: open time (backoff, jitter, `failure_for`), the
//! single probe, the counter that makes stale results harmless, the
//! observer. The choice is made at the type level: a program that only uses
//! [`Breaker`] links none of this.
//!
//! **Layout.** Beside the breaker's word, `N` buckets (a power of two, 2 to
//! 64), each one atomic word of the breaker's width holding the calls and
//! failures of one slice of `2^k` ticks, stamped with the slice's number
//! (its *epoch*, modulo the field) and the counter of the `Closed` state the
//! calls were admitted in:
//!
//! ```text
//! W64 bucket:  | epoch (20) | counter (12) | calls (16) | failures (16) |
//! W32 bucket:  | epoch (8)  | counter (4)  | calls (10) | failures (10) |
//! ```
//!
//! The window is the last `N` slices, the current one included: `k` is the
//! smallest shift with `N * 2^k >= window`. A release first checks that its
//! ticket's `Closed` state is still the word (a stale result changes nothing,
//! I2), then adds itself to its slice's bucket by compare-and-swap (a bucket
//! stamped with another epoch or counter is started afresh: the rollover).
//! A failure then sums the buckets stamped with its counter and an epoch in
//! the window; if the rate and the minimum are reached it passes the failure
//! on to the breaker, whose threshold is 1, so the breaker's own
//! compare-and-swap on the counter trips it exactly once (I3): every other
//! failure of that `Closed` state then finds the counter moved and is stale.
//! A new `Closed` state (after a probe's success, or `force_close`) has a
//! new counter, so it starts with an empty window.
//!
//! **Trade-off** (`docs/design.md`, "Failure rate"). Packing the window into
//! the breaker's word would make the rate and the state change in one
//! compare-and-swap, but a 64-bit word has room for a handful of 4-bit
//! counts at most. Buckets of their own keep the window as large as a
//! service wants, keep the consecutive breaker's word and closed path
//! untouched, and cost a closed call one clock read and one bucket
//! compare-and-swap (the rate must count successes). What the split costs is
//! exactness at the edges, stated in the spec: a result is counted in the
//! slice of the clock reading its release makes; stamps are compared modulo
//! their fields, so a bucket untouched for exactly a multiple of 2^20 (W64)
//! or 2^8 (W32) slices, or across 2^12 (W64) or 2^4 (W32) state changes,
//! can be read as current; a slice holds at most 65 535 (W64) or 1 023
//! (W32) calls: past that both its counts are halved, which keeps its rate
//! (to within a call) but weighs a busy slice less than its share.
//!
//! ```
//! use tripword::clock::ManualClock;
//! use tripword::rate::{Rate, RateBreaker};
//! use tripword::{Config, Outcome, Status, W64};
//!
//! let clock = ManualClock::new(0);
//! let b: RateBreaker<_, W64, (), 8> = RateBreaker::new(
//!     Config::new().open_for(5_000),
//!     // Trip at 50 % failures over the last 10 s, once 10 calls were made.
//!     Rate::new().failure_rate(50).minimum_calls(10).window(10_000),
//!     &clock,
//! )?;
//! for i in 0..10 {
//!     let t = b.acquire().unwrap();
//!     let outcome = if i % 2 == 0 { Outcome::Success } else { Outcome::Failure };
//!     b.release(t, outcome);
//! }
//! assert_eq!(b.status(), Status::Open); // 5 of 10: the rate is reached
//! # Ok::<(), tripword::ConfigError>(())
//! ```

use crate::breaker::Breaker;
use crate::cell::{CasError, Cell};
use crate::clock::Clock;
use crate::config::{Config, ConfigError, Field, ValidConfig};
use crate::observer::Observer;
use crate::outcome::Outcome;
use crate::rejected::Rejected;
use crate::status::{Health, Status};
use crate::ticket::{Release, Ticket};
use crate::word::{W64, Word};
use core::marker::PhantomData;

/// The failure-rate policy's settings: a builder with `const` setters,
/// checked for a word width and bucket count by [`Rate::check`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Rate {
    percent: u32,
    minimum_calls: u32,
    window: u64,
}

impl Default for Rate {
    fn default() -> Self {
        Self::new()
    }
}

/// The bit widths of a bucket of word width `W`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BucketLayout {
    /// Width of each count (calls, failures).
    pub count_bits: u32,
    /// Width of the `Closed` counter stamp.
    pub counter_bits: u32,
    /// Width of the epoch stamp.
    pub epoch_bits: u32,
}

impl BucketLayout {
    /// The layout of a bucket on a word of `word_bits` bits.
    pub const fn for_bits(word_bits: u32) -> BucketLayout {
        if word_bits > 32 {
            BucketLayout {
                count_bits: 16,
                counter_bits: 12,
                epoch_bits: 20,
            }
        } else {
            BucketLayout {
                count_bits: 10,
                counter_bits: 4,
                epoch_bits: 8,
            }
        }
    }
    /// The largest count a bucket holds (counts saturate there).
    pub const fn max_count(&self) -> u64 {
        (1 << self.count_bits) - 1
    }
    const fn calls_shift(&self) -> u32 {
        self.count_bits
    }
    const fn stamp_shift(&self) -> u32 {
        2 * self.count_bits
    }
    /// The stamp of a bucket: epoch and counter, in place.
    const fn stamp(&self, epoch: u64, counter: u32) -> u64 {
        let e = epoch & ((1 << self.epoch_bits) - 1);
        let c = counter as u64 & ((1 << self.counter_bits) - 1);
        ((e << self.counter_bits) | c) << self.stamp_shift()
    }
    const fn stamp_of(&self, bucket: u64) -> u64 {
        bucket & !((1 << self.stamp_shift()) - 1)
    }
    /// Whether the stamps of buckets `a` and `b` name the same slice.
    const fn same_epoch(&self, a: u64, b: u64) -> bool {
        let shift = self.stamp_shift() + self.counter_bits;
        a >> shift == b >> shift
    }
    /// Whether the slice of stamp `a` is behind that of bucket `b`: `b`'s
    /// epoch is ahead of `a`'s by less than half the epoch field.
    const fn behind(&self, a: u64, b: u64) -> bool {
        let shift = self.stamp_shift() + self.counter_bits;
        let ahead = (b >> shift).wrapping_sub(a >> shift) & ((1 << self.epoch_bits) - 1);
        ahead != 0 && ahead < 1 << (self.epoch_bits - 1)
    }
}

impl Rate {
    /// Defaults: trip at 50 % failures over a window of 10 000 ticks, once
    /// 20 calls were made in it.
    pub const fn new() -> Self {
        Rate {
            percent: 50,
            minimum_calls: 20,
            window: 10_000,
        }
    }
    /// Trip when at least this percentage of the window's calls failed
    /// (1 to 100).
    pub const fn failure_rate(mut self, percent: u32) -> Self {
        self.percent = percent;
        self
    }
    /// Trip only once the window holds at least this many calls (1 to the
    /// bucket's largest count: 65 535 for `W64`, 1 023 for `W32`).
    pub const fn minimum_calls(mut self, calls: u32) -> Self {
        self.minimum_calls = calls;
        self
    }
    /// The window, in ticks: rounded up to `N` slices of `2^k` ticks.
    pub const fn window(mut self, ticks: u64) -> Self {
        self.window = ticks;
        self
    }

    /// Checks every field for word width `W` and `N` buckets, and derives
    /// the slice length.
    ///
    /// `N` must be a power of two from 2 to 64: a compile error otherwise.
    ///
    /// # Errors
    /// The first field out of range, with the value given and the range.
    pub const fn check<W: Word, const N: usize>(self) -> Result<ValidRate<W, N>, ConfigError> {
        const {
            assert!(
                N.is_power_of_two() && N >= 2 && N <= 64,
                "tripword: a rate window has 2 to 64 buckets, a power of two"
            )
        };
        let b = BucketLayout::for_bits(W::LAYOUT.word_bits);
        if self.percent < 1 || self.percent > 100 {
            return Err(error(Field::FailureRate, self.percent as u64, 1, 100));
        }
        if self.minimum_calls < 1 || self.minimum_calls as u64 > b.max_count() {
            return Err(error(
                Field::MinimumCalls,
                self.minimum_calls as u64,
                1,
                b.max_count(),
            ));
        }
        let max = 1u64 << 60;
        if self.window < N as u64 || self.window > max {
            return Err(error(Field::Window, self.window, N as u64, max));
        }
        let mut shift = 0;
        while (N as u64) << shift < self.window {
            shift += 1;
        }
        Ok(ValidRate {
            rate: self,
            shift,
            width: PhantomData,
        })
    }
}

const fn error(field: Field, value: u64, min: u64, max: u64) -> ConfigError {
    ConfigError {
        field,
        value,
        min,
        max,
    }
}

/// A [`Rate`] checked for word width `W` and `N` buckets.
pub struct ValidRate<W: Word = W64, const N: usize = 8> {
    rate: Rate,
    shift: u32,
    width: PhantomData<fn() -> W>,
}

impl<W: Word, const N: usize> Clone for ValidRate<W, N> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<W: Word, const N: usize> Copy for ValidRate<W, N> {}
impl<W: Word, const N: usize> core::fmt::Debug for ValidRate<W, N> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("ValidRate")
            .field("rate", &self.rate)
            .field("buckets", &N)
            .field("slice_shift", &self.shift)
            .finish()
    }
}

impl<W: Word, const N: usize> ValidRate<W, N> {
    /// `rate` checked for `W` and `N`.
    ///
    /// # Panics
    /// If a field is out of range; in a `const` or `static`, a compile error.
    pub const fn new(rate: Rate) -> Self {
        match rate.check::<W, N>() {
            Ok(valid) => valid,
            Err(e) => panic!("{}", e.message()),
        }
    }
    /// The failure percentage that trips.
    pub const fn failure_rate(&self) -> u32 {
        self.rate.percent
    }
    /// The fewest calls in the window that can trip.
    pub const fn minimum_calls(&self) -> u32 {
        self.rate.minimum_calls
    }
    /// The window as given, in ticks.
    pub const fn window(&self) -> u64 {
        self.rate.window
    }
    /// Each bucket covers `2^slice_shift()` ticks.
    pub const fn slice_shift(&self) -> u32 {
        self.shift
    }
    /// The window as kept: `N * 2^slice_shift()` ticks (at least
    /// [`window`](Self::window)).
    pub const fn effective_window(&self) -> u64 {
        (N as u64) << self.shift
    }
    /// Whether `failures` of `calls` trip: at least the minimum of calls,
    /// and `failures * 100 >= percent * calls`.
    pub const fn trips(&self, calls: u64, failures: u64) -> bool {
        calls >= self.rate.minimum_calls as u64
            && failures * 100 >= self.rate.percent as u64 * calls
    }
}

/// A breaker that trips on the failure rate over a sliding window: see the
/// [module](self). `N` buckets (default 8) of the breaker's word width.
pub struct RateBreaker<C, W: Word = W64, O = (), const N: usize = 8> {
    breaker: Breaker<C, W, O, ValidConfig<W>>,
    rate: ValidRate<W, N>,
    buckets: [W::Atomic; N],
}

#[cfg(not(tripword_loom))]
macro_rules! initial_buckets {
    ($w:ty, $n:expr) => {
        [<$w as Word>::NEW_CELL; $n]
    };
}
#[cfg(tripword_loom)]
macro_rules! initial_buckets {
    ($w:ty, $n:expr) => {
        core::array::from_fn(|_| <$w as Word>::new_cell(<$w as Word>::from_u64(0)))
    };
}

impl<C, W: Word, O, const N: usize> RateBreaker<C, W, O, N> {
    constructor! {
        /// A breaker on `config` (its `failure_threshold` is not used: the
        /// rate decides) and `rate`, both checked. `const`: it can be a
        /// `static`.
        pub fn from_parts(config: ValidConfig<W>, rate: ValidRate<W, N>, clock: C, observer: O) -> Self {
            RateBreaker {
                breaker: Breaker::from_parts(config.with_threshold_one(), clock, observer),
                rate,
                buckets: initial_buckets!(W, N),
            }
        }
    }

    /// The breaker underneath: its status, force-open and force-close, its
    /// config, clock and observer. Release this breaker's tickets through
    /// [`RateBreaker::release`]: the breaker's own `release` would trip on
    /// any single failure.
    pub fn breaker(&self) -> &Breaker<C, W, O, ValidConfig<W>> {
        &self.breaker
    }
    /// The rate policy.
    pub fn rate(&self) -> &ValidRate<W, N> {
        &self.rate
    }
}

impl<C, W: Word, O, const N: usize> RateBreaker<C, W, O, N> {
    /// A breaker whose word and buckets start as given (for the
    /// verification crate's exhaustive search).
    pub(crate) fn with_state(
        config: ValidConfig<W>,
        rate: ValidRate<W, N>,
        clock: C,
        observer: O,
        word: W::Raw,
        buckets: [u64; N],
    ) -> Self {
        RateBreaker {
            breaker: Breaker::with_word(config.with_threshold_one(), clock, observer, word),
            rate,
            buckets: buckets.map(|b| W::new_cell(W::from_u64(b))),
        }
    }

    /// The buckets' raw words.
    pub(crate) fn bucket_words(&self) -> [u64; N] {
        core::array::from_fn(|i| load::<W>(&self.buckets[i]))
    }
}

impl<C, W: Word, const N: usize> RateBreaker<C, W, (), N> {
    /// A breaker from an unchecked `config` and `rate`, with no observer.
    ///
    /// # Errors
    /// The first field of either out of range.
    pub fn new(config: Config, rate: Rate, clock: C) -> Result<Self, ConfigError> {
        Ok(Self::from_parts(
            config.check::<W>()?,
            rate.check::<W, N>()?,
            clock,
            (),
        ))
    }
}

impl<C: Clock, W: Word, O: Observer, const N: usize> RateBreaker<C, W, O, N> {
    /// Asks to make a call, as [`Breaker::acquire`]: a closed admission
    /// reads the word and nothing else.
    #[inline]
    pub fn acquire(&self) -> Result<Ticket, Rejected> {
        self.breaker.acquire()
    }

    /// The state, as [`Breaker::status`] (a read).
    pub fn status(&self) -> Status {
        self.breaker.status()
    }

    /// The state as one value, as [`Breaker::health`], with the window's
    /// calls and failures under the current `Closed` state at the clock's
    /// reading (a read: stores nothing).
    pub fn health(&self) -> Health {
        let mut health = self.breaker.health();
        if let (Status::Closed, Some(counter)) = (health.status, health.counter) {
            let epoch = self.breaker.clock().now() >> self.rate.shift;
            (health.window_calls, health.window_failures) = self.window_counts(epoch, counter);
        }
        health
    }

    /// Reports how an admitted call went.
    ///
    /// A probe's result goes to the breaker (success closes, failure
    /// reopens). A closed call's result is counted in the window if its
    /// `Closed` state is still current (else it is [`Release::Stale`]); a
    /// failure that brings the window to the rate (with the minimum of
    /// calls) trips the breaker, once; a failure that finds the trip made
    /// by another meanwhile is stale. `Ignored` counts nothing. The observer hears each release as from
    /// [`Breaker::release`]: recorded, stale, and the trip's transition.
    pub fn release(&self, ticket: Ticket, outcome: Outcome) -> Release {
        // Probes, ignored outcomes and a recovery ramp's calls are the
        // word's to judge; the window counts `Closed` calls only.
        if ticket.is_probe() || outcome == Outcome::Ignored || self.breaker.ramp_current(&ticket) {
            return self.breaker.release(ticket, outcome);
        }
        if !self.breaker.closed_current(&ticket) {
            self.breaker.observer().on_stale(outcome);
            return Release::Stale;
        }
        let failed = outcome == Outcome::Failure;
        let Some(epoch) = self.count(&ticket, failed) else {
            self.breaker.observer().on_stale(outcome);
            return Release::Stale;
        };
        if failed && self.window_trips(epoch, ticket.counter()) {
            // Threshold 1: the breaker trips if the counter is still the
            // ticket's, and exactly one such failure does (I3). A failure
            // that loses that race is stale: it takes effect after the
            // winner's trip, which may have counted it (the spec's one
            // relaxation: a failure may trip on counts of releases it
            // overlaps; docs/spec.md, "Failure rate").
            if !self.breaker.trip_quiet(&ticket) {
                self.breaker.observer().on_stale(outcome);
                return Release::Stale;
            }
        }
        self.breaker.observer().on_recorded(outcome);
        Release::Recorded
    }

    /// Adds one call of `ticket` (a failure if `failed`) to the bucket of
    /// the slice the clock reads now; the slice it was counted in, or
    /// `None` if it was not (the ticket's state has passed).
    ///
    /// The bucket is added to if it holds that slice and `Closed` state,
    /// and started afresh if it holds an older slice (the rollover: a slice
    /// a multiple of `N` slices back) or the same slice under an earlier
    /// `Closed` state (checked on the word: the ticket's state must still be
    /// current). A bucket that holds a *later* slice (modulo the epoch
    /// field, less than half of it ahead) means this thread's reading is
    /// old (it was descheduled since): the clock is read once more and the
    /// call counted in that slice, so an old reading never wipes a newer
    /// slice, and a bucket left idle past half the epoch field is still
    /// reset by a fresh reading.
    fn count(&self, ticket: &Ticket, failed: bool) -> Option<u64> {
        let b = BucketLayout::for_bits(W::LAYOUT.word_bits);
        let max = b.max_count();
        let mut epoch = self.breaker.clock().now() >> self.rate.shift;
        let mut reread = false;
        'slice: loop {
            let cell = &self.buckets[epoch as usize & (N - 1)];
            let stamp = b.stamp(epoch, ticket.counter());
            let mut current = load::<W>(cell);
            loop {
                let (calls, failures) = if b.stamp_of(current) == stamp {
                    counts(&b, current)
                } else if b.same_epoch(stamp, current) {
                    if !self.breaker.closed_current(ticket) {
                        return None;
                    }
                    (0, 0)
                } else if !reread && b.behind(stamp, current) {
                    epoch = self.breaker.clock().now() >> self.rate.shift;
                    reread = true;
                    continue 'slice;
                } else {
                    (0, 0)
                };
                // A full slice halves both counts: the rate is kept (to
                // within one call in 2^count_bits), the slice's weight in
                // the window stops growing. `failures <= calls` holds.
                let (calls, failures) = if calls < max {
                    (calls, failures)
                } else {
                    (calls >> 1, failures >> 1)
                };
                let (calls, failures) = (calls + 1, failures + failed as u64);
                let next = stamp | (calls << b.calls_shift()) | failures;
                match cell.compare_exchange(W::from_u64(current), W::from_u64(next)) {
                    Ok(()) => return Some(epoch),
                    // Lost to another writer: on 64-bit targets wait and
                    // read again, as the failure count does (docs/design.md,
                    // "Backoff in the failure count").
                    #[cfg(target_pointer_width = "64")]
                    Err(CasError::Changed(seen)) => {
                        current = crate::breaker::backoff(W::from_u64(current), seen, || {
                            W::from_u64(load::<W>(cell))
                        })
                        .into();
                    }
                    #[cfg(not(target_pointer_width = "64"))]
                    Err(CasError::Changed(seen)) => current = seen.into(),
                    Err(CasError::Cell(never)) => match never {},
                }
            }
        }
    }

    /// The window's calls and failures under `counter`, at `epoch`.
    pub fn window_counts(&self, epoch: u64, counter: u32) -> (u64, u64) {
        let b = BucketLayout::for_bits(W::LAYOUT.word_bits);
        let emask = (1u64 << b.epoch_bits) - 1;
        let (mut calls, mut failures) = (0, 0);
        for cell in &self.buckets {
            let bucket = load::<W>(cell);
            let stamp = bucket >> b.stamp_shift();
            let c = stamp & ((1 << b.counter_bits) - 1);
            let e = stamp >> b.counter_bits;
            if c == counter as u64 & ((1 << b.counter_bits) - 1)
                && (epoch.wrapping_sub(e) & emask) < N as u64
            {
                let (n, f) = counts(&b, bucket);
                calls += n;
                failures += f;
            }
        }
        (calls, failures)
    }

    fn window_trips(&self, epoch: u64, counter: u32) -> bool {
        let (calls, failures) = self.window_counts(epoch, counter);
        self.rate.trips(calls, failures)
    }
}

#[inline(always)]
fn load<W: Word>(cell: &W::Atomic) -> u64 {
    match Cell::<W>::load(cell) {
        Ok(raw) => raw.into(),
        Err(never) => match never {},
    }
}

const fn counts(b: &BucketLayout, bucket: u64) -> (u64, u64) {
    let mask = b.max_count();
    ((bucket >> b.calls_shift()) & mask, bucket & mask)
}

#[cfg(all(test, not(tripword_loom)))]
mod tests;
