//! A guide to building on the kit (doc only, no code).
//!
//! [`Breaker`](crate::Breaker) is one way to apply the state machine: one
//! atomic cell, one config, one clock. Authors of other breaker crates — a
//! tower layer, an HTTP client keeping a breaker per host, a fleet sharing a
//! word in Redis — often want the same state machine over cells of their own.
//! The kit gives them exactly what `Breaker` is built from:
//!
//! - [`ValidConfig`](crate::ValidConfig): a config checked once for a word
//!   width ([`Config::check`](crate::Config::check)); nothing else is
//!   accepted, so every count and duration fits the word;
//! - [`cell::Cell`](crate::cell::Cell): load and compare-and-exchange of a
//!   word, with an error type for cells that can fail (a network store);
//! - [`cell::update`](crate::cell::update): the compare-and-swap loop
//!   `Breaker` runs, which keeps the rules by construction: it never stores
//!   without a compare-and-exchange, reads the clock after the load the
//!   decision rests on, retries on contention from the word the cell holds,
//!   and hands over the change (its transitions, a repaired corrupt word)
//!   once, after the exchange that made it;
//! - [`transition::apply`](crate::transition::apply) and
//!   [`transition::status_at`](crate::transition::status_at): the same
//!   decision as a pure function, for tests and simulations;
//! - [`word::Snapshot`](crate::word::Snapshot): decode and encode words.
//!
//! # Example: a table of breakers, one word each
//!
//! A client talking to many hosts keeps one breaker per host. With one shared
//! config and clock, each breaker costs one `AtomicU64`; the `AtomicU64` of
//! the core's atomics is already a [`Cell`](crate::cell::Cell):
//!
//! ```
//! use tripword::cell::{self, Applied, Cell};
//! use tripword::transition::{Decision, Event};
//! use tripword::word::Snapshot;
//! use tripword::{Config, Outcome, Transition, ValidConfig, W64};
//! use portable_atomic::AtomicU64;
//!
//! struct Table<const N: usize> {
//!     words: [AtomicU64; N],
//!     config: ValidConfig<W64>,
//! }
//!
//! impl<const N: usize> Table<N> {
//!     /// One event on one host's word; transitions reported once.
//!     fn run(&self, host: usize, event: Event, now: impl Fn() -> u64,
//!            report: impl Fn(usize, Transition)) -> Applied<W64> {
//!         let cell = &self.words[host];
//!         let seen = Cell::<W64>::load(cell).unwrap_or_else(|never| match never {});
//!         cell::update(cell, &self.config, seen, event, None, now, |swap| {
//!             swap.transitions().each(|t| report(host, t));
//!         })
//!         .unwrap_or_else(|never| match never {})
//!     }
//! }
//!
//! let table = Table::<64> {
//!     words: [const { AtomicU64::new(0) }; 64], // the zero word is Closed
//!     config: Config::new().failure_threshold(2).open_for(1_000).check()?,
//! };
//! let now = || 0;
//! let log = |host, t: Transition| println!("host {host}: {t}");
//!
//! for _ in 0..2 {
//!     let admitted = table.run(7, Event::Admit, now, log);
//!     assert_eq!(admitted.decision, Decision::Admitted);
//!     let counter = Snapshot::counter_bits::<W64>(admitted.word);
//!     table.run(7, Event::Release { counter, outcome: Outcome::Failure }, now, log);
//! }
//! assert_eq!(table.run(7, Event::Admit, now, log).decision, Decision::Rejected); // host 7 is open
//! assert_eq!(table.run(8, Event::Admit, now, log).decision, Decision::Admitted);
//! # Ok::<(), tripword::ConfigError>(())
//! ```
//!
//! A cell behind a lock, or one in another process, implements
//! [`Cell`](crate::cell::Cell) itself: see the [`cell`](crate::cell) module's
//! example, and `verification/tests/second_cell.rs` in the repository, which
//! runs a breaker on a `Mutex<u64>` cell through the same model check as
//! `Breaker`.
//!
//! # What remains yours
//!
//! - **Tickets are counters.** An admission leaves the admitting word; its
//!   counter is what a release must carry
//!   ([`Applied::verdict`](crate::cell::Applied::verdict) gives it, as does
//!   [`Snapshot::counter_bits`](crate::word::Snapshot::counter_bits)). If
//!   your cells can be confused with one another, carry the cell's identity
//!   with the counter, as [`Ticket`](crate::Ticket) does.
//! - **A cell error is not contention.** [`update`](crate::cell::update)
//!   returns it without retrying: the exchange may or may not have happened,
//!   so load again before deciding what to tell the caller.
//! - **Never store a word you did not get from the kit.** Anything else is
//!   treated as corrupt (and repaired, failing open).
