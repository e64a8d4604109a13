//! The built-in subjects: the baselines, `tripword` (feature `tripword`)
//! and the peers (feature `peers`), each set up per [`Workload`]'s
//! [`Setup`](crate::Setup) so that every implementation is asked to do the
//! same thing:
//!
//! | setup | configuration |
//! |---|---|
//! | `trips` | trips after 5 consecutive failures (or a 50% failure rate over 100 calls), open 10 ms |
//! | `never_trips` | a threshold the run does not reach (see below) |
//! | `tripped` | tripped at start; open for the shortest time the crate allows (1 µs) |
//!
//! With `never_trips`, `tripword` and the `Mutex` baseline trip after
//! 65 535 failures (`W64`'s largest threshold; 4 095 for `W32`), and the
//! caller that is rejected closes the breaker again (`force_close`): the
//! trip and the reset are a few calls in tens of thousands. `failsafe` gets
//! `consecutive_failures(u32::MAX)`, `recloser` a failure-rate threshold of
//! 2.0 (never reached), `tower-resilience` `consecutive_failures(usize::MAX)`,
//! `seatbelt` a minimum throughput it never reaches.
//!
//! The peers differ from `tripword` in what half-open means: `failsafe` and
//! `recloser` admit every caller while half-open (no single probe), and
//! `tower-resilience` admits `permitted_calls_in_half_open` (set to 1). A
//! `tripped` workload therefore measures each crate doing what it does when
//! a dependency stays down and callers keep arriving.
//!
//! [`Workload`]: crate::Workload

mod baselines;
mod by_hand;
#[cfg(feature = "peers")]
mod peers;
#[cfg(any(feature = "peers", feature = "tower"))]
mod service;
#[cfg(feature = "tripword")]
mod tripword;

pub use crate::subject::{Kind, Subject, Worker, run_calls};
pub use baselines::*;
pub use by_hand::*;
#[cfg(feature = "peers")]
pub use peers::*;
#[cfg(any(feature = "peers", feature = "tower"))]
pub use service::*;
#[cfg(feature = "tripword")]
pub use tripword::*;
