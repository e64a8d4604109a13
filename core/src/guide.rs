//! A guide to building on the pure layer (doc only, no code).
//!
//! [`Breaker`](crate::Breaker) is one way to apply the state machine: one
//! atomic cell, one config, one clock. Authors of other breaker crates — a
//! tower layer, an HTTP client keeping a breaker per host, an actor system —
//! often want the same state machine over cells of their own. The pure layer
//! gives them exactly that:
//!
//! - [`word::Snapshot`](crate::word::Snapshot) decodes and encodes words;
//! - [`transition::apply`](crate::transition::apply) is the whole state
//!   machine: `(config, word, event, now) -> Step { word, verdict,
//!   transitions, repaired }`;
//! - the rules for applying it are those of `Breaker::run`: load, apply, and
//!   if `step.word` differs, compare-and-swap; on failure retry with the
//!   observed word; report `step.transitions` (and `step.repaired`) only after
//!   a successful swap; read the clock inside the loop, after the load.
//!
//! # Example: a table of breakers, one word each
//!
//! A client talking to many hosts keeps one breaker per host. With one shared
//! config and clock, each breaker costs one `AtomicU64`:
//!
//! ```
//! use std::sync::atomic::{AtomicU64, Ordering};
//! use tripword::transition::{apply, Event, Verdict};
//! use tripword::word::W64;
//! use tripword::{Config, Outcome, Transition};
//!
//! struct Table<const N: usize> {
//!     words: [AtomicU64; N],
//!     config: Config,
//! }
//!
//! impl<const N: usize> Table<N> {
//!     /// One CAS loop, as `Breaker` runs it; transitions reported once.
//!     fn run(&self, host: usize, event: Event, now: impl Fn() -> u64,
//!            report: impl Fn(usize, Transition)) -> Verdict {
//!         let cell = &self.words[host];
//!         let mut current = cell.load(Ordering::Acquire);
//!         loop {
//!             let step = apply::<W64>(&self.config, current, event, &now);
//!             if step.word == current {
//!                 return step.verdict; // nothing to store
//!             }
//!             match cell.compare_exchange_weak(current, step.word,
//!                                              Ordering::AcqRel, Ordering::Acquire) {
//!                 Ok(_) => {
//!                     step.transitions.into_iter().for_each(|t| report(host, t));
//!                     return step.verdict;
//!                 }
//!                 Err(observed) => current = observed,
//!             }
//!         }
//!     }
//! }
//!
//! let table = Table::<64> {
//!     words: [const { AtomicU64::new(0) }; 64], // the zero word is Closed
//!     config: Config::new().failure_threshold(2).open_for(1_000)
//!         .validate::<W64>().expect("in range"),
//! };
//! let now = || 0;
//! let log = |host, t: Transition| println!("host {host}: {:?} -> {:?}", t.from, t.to);
//!
//! for _ in 0..2 {
//!     let Verdict::Admitted { counter, .. } = table.run(7, Event::Admit, now, log) else {
//!         unreachable!()
//!     };
//!     table.run(7, Event::Release { counter, outcome: Outcome::Failure }, now, log);
//! }
//! assert_eq!(table.run(7, Event::Admit, now, log), Verdict::Rejected); // host 7 is open
//! assert!(matches!(table.run(8, Event::Admit, now, log), Verdict::Admitted { .. }));
//! ```
//!
//! # What you must keep
//!
//! - **Validate the config** for the width with
//!   [`Config::validate`](crate::Config::validate). The pure layer never
//!   panics on an unvalidated one, but counts and durations may not fit.
//! - **Compare-and-swap, never store.** A plain store after `apply` loses
//!   concurrent transitions: two probes, double trips.
//! - **Report after the swap**, and only the swap that succeeded. A retried
//!   `apply` produces the transitions again; only the winning one is real.
//! - **Tickets are counters.** The pure layer's `Verdict::Admitted { counter }`
//!   is what `Breaker` wraps in a `Ticket`. If your cells can be confused with
//!   one another, carry the cell's identity with the counter, as `Ticket` does.
//! - **Never store a word you did not get from `apply` or `Snapshot::encode`.**
//!   Anything else is treated as corrupt (and repaired, failing open).
