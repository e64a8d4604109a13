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
//! - the **pure layer**, [`word`] (encode/decode) and [`transition`] (the state
//!   machine as a function of word, event, time and config), for crates that
//!   keep the word in a cell of their own;
//! - the **atomic layer**, [`Breaker`], which applies the pure layer to an
//!   atomic with one compare-and-swap loop, hands out [`Ticket`]s and
//!   [`Permit`]s, and reports each transition once to an [`Observer`].
//!
//! ```
//! use tripword::{Breaker, Config, Outcome, Rejected, Status};
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
//! assert_eq!(B.acquire().unwrap_err(), Rejected);
//! ```
//!
//! # Portability
//! Atomics come from `portable-atomic` with `require-cas`. On targets without
//! compare-and-swap (Cortex-M0, `riscv32imc`) the final binary must choose a
//! backend (`critical-section` or `unsafe-assume-single-core`); this library
//! never does. Pick [`W32`] where native atomics are 32-bit (Cortex-M3/M4/M7,
//! RISC-V with A): a [`W64`] word there falls back to a lock.
//!
//! See `docs/design.md` for the bit diagrams, the transition table and the
//! memory-ordering argument.

#![cfg_attr(not(test), no_std)]
#![forbid(unsafe_code)]
#![deny(missing_docs)]

mod breaker;
pub mod clock;
pub mod config;
pub mod guide;
mod observer;
mod outcome;
mod status;
mod sync;
pub mod transition;
pub mod word;

pub use breaker::{Breaker, Permit, Rejected, Release, Ticket};
pub use clock::Clock;
pub use config::{Config, ConfigError, ConstConfig, Field};
pub use observer::{Observer, OnTransition};
pub use outcome::Outcome;
pub use status::Status;
pub use transition::Transition;
pub use word::{Phase, W32, W64, Word};

/// A breaker on the 32-bit word, for MCUs whose native atomics are 32-bit.
pub type Breaker32<C, O = ()> = Breaker<C, W32, O>;

// Breaker-level tests use real atomics and `static` breakers; under
// `--cfg loom` atomics only work inside a loom model (the loom models live in
// `verification/tests/loom.rs`), so these are not built there.
#[cfg(all(test, not(loom)))]
mod tests;
