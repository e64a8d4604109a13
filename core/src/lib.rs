//! A circuit breaker whose whole state machine lives in **one atomic word**.
//!
//! `tripword` is `no_std`, allocation-free and lock-free (wherever the target
//! has native compare-and-swap for the word's width), with time from an
//! injected [`Clock`]. Four states, `Closed`, `Open`, `HalfOpen` and `Probing`,
//! plus the operator-held open of [`Breaker::force_open`]; a state counter in
//! the word that makes results from earlier states harmless; exactly one probe
//! elected when an open breaker's time is up.
//!
//! Two layers:
//!
//! - the **kit**, for crates that keep the word in a cell of their own:
//!   [`word`] (encode/decode), [`transition`] (the state machine as a
//!   function of word, event, time and a [`ValidConfig`]) and [`cell`] (the
//!   compare-and-swap loop over any [`cell::Cell`], local or remote);
//! - the **atomic layer**, [`Breaker`], which runs that loop on an atomic,
//!   hands out [`Ticket`]s and [`Permit`]s, and reports each transition once
//!   to an [`Observer`].
//!
//! The contract (states, counter, invariants I1–I10 cited as "spec I*n*"
//! throughout) is `docs/spec.md` in the repository.
//!
//! ```
//! use tripword::{Breaker, Cause, Config, Outcome, Status};
//! use tripword::clock::ManualClock;
//!
//! static CLOCK: ManualClock = ManualClock::new(0);
//! static B: Breaker<&ManualClock> = Breaker::new(
//!     Config::new().failure_threshold(3).open_for(100).probe_timeout(50),
//!     &CLOCK,
//! );
//!
//! fn call_dependency() -> Result<u32, &'static str> { Err("timeout") }
//!
//! for _ in 0..3 {
//!     let permit = B.permit().expect("closed: admitted");
//!     match call_dependency() {
//!         Ok(_) => { permit.success(); }
//!         Err(_) => { permit.failure(); }
//!     }
//! }
//! assert_eq!(B.status(), Status::Open);
//! assert_eq!(B.acquire().unwrap_err().cause(), Cause::Open);
//! ```
//!
//! # Portability
//! Atomics come from `portable-atomic` with `require-cas`. On targets without
//! compare-and-swap (Cortex-M0, `riscv32imc`) the final binary must choose a
//! backend (`critical-section` or `unsafe-assume-single-core`); this library
//! never does. Pick [`W32`] where native atomics are 32-bit (Cortex-M3/M4/M7,
//! RISC-V with A): a [`W64`] word there falls back to a lock.
//!
//! See `docs/design-word.md` for the bit diagrams, and `docs/design.md` for the transition table and the
//! memory-ordering argument.

#![cfg_attr(not(test), no_std)]
#![cfg_attr(docsrs, feature(doc_cfg))]
#![forbid(unsafe_code)]
#![deny(missing_docs)]

#[cfg(feature = "alloc")]
extern crate alloc;

#[macro_use]
mod macros;
mod breaker;
pub mod cell;
pub mod clock;
pub mod config;
pub mod future;
pub mod guide;
pub mod kit;
#[cfg(feature = "heapless")]
#[cfg_attr(docsrs, doc(cfg(feature = "heapless")))]
pub mod log;
mod observer;
mod outcome;
pub mod rate;
mod recovery;
mod rejected;
mod status;
mod sync;
pub mod table;
mod ticket;
pub mod transition;
pub mod word;

pub use breaker::{Breaker, Breaker32, ConstBreaker, Permit, StaticBreaker};
pub use clock::Clock;
#[cfg(feature = "jitter")]
#[cfg_attr(docsrs, doc(cfg(feature = "jitter")))]
pub use config::Jitter;
#[cfg(feature = "recovery")]
#[cfg_attr(docsrs, doc(cfg(feature = "recovery")))]
pub use config::Ramp;
pub use config::{Config, ConfigError, ConfigSource, Const, ConstConfig, Field, ValidConfig};
pub use kit::CircuitBreaker;
pub use observer::{CallEvent, Observer, OnCall, OnTransition};
pub use outcome::Outcome;
pub use rejected::{Cause, Rejected};
pub use status::{Health, Status};
pub use ticket::{Release, Ticket};
pub use transition::Transition;
pub use word::{W32, W64, Word};

/// For the verification and fuzz crates only: not part of the API, may change
/// in any release.
#[doc(hidden)]
pub mod __verification {
    use crate::{Breaker, ConfigSource, Ticket, Word};

    /// The raw word of a breaker.
    pub fn load_word<C, W: Word, O, P: ConfigSource<W>>(b: &Breaker<C, W, O, P>) -> W::Raw {
        b.load()
    }

    /// A breaker whose word starts as `raw` (any bit pattern, corrupt ones
    /// included): to run every word a search reaches through the breaker's
    /// own fast paths, not only the pure layer.
    pub fn breaker_with_word<C, W: Word, O, P: ConfigSource<W>>(
        config: P,
        clock: C,
        observer: O,
        raw: W::Raw,
    ) -> Breaker<C, W, O, P> {
        Breaker::with_word(config, clock, observer, raw)
    }

    /// A rate breaker whose word and buckets start as given: to explore
    /// every state a search reaches through the real code.
    pub fn rate_breaker_with<C, W: Word, O, const N: usize>(
        config: crate::ValidConfig<W>,
        rate: crate::rate::ValidRate<W, N>,
        clock: C,
        observer: O,
        word: W::Raw,
        buckets: [u64; N],
    ) -> crate::rate::RateBreaker<C, W, O, N> {
        crate::rate::RateBreaker::with_state(config, rate, clock, observer, word, buckets)
    }

    /// The raw words of a rate breaker's buckets.
    pub fn rate_buckets<C, W: Word, O, const N: usize>(
        b: &crate::rate::RateBreaker<C, W, O, N>,
    ) -> [u64; N] {
        b.bucket_words()
    }

    /// A ticket of `b` carrying `counter` (as the admission into a word with
    /// that counter would issue), a probe's if `probe`: to release any
    /// counter into any word.
    pub fn ticket<C, W: Word, O, P: ConfigSource<W>>(
        b: &Breaker<C, W, O, P>,
        counter: u32,
        probe: bool,
    ) -> Ticket {
        b.forge_ticket(counter, probe)
    }
}

// Breaker-level tests use real atomics and `static` breakers; under
// `--cfg tripword_loom` atomics only work inside a loom model (the loom models
// live in `verification/tests/loom.rs`), so these are not built there.
#[cfg(all(test, not(tripword_loom)))]
mod tests;
