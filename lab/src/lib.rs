//! A contention lab for circuit breakers, or any call many threads or tasks
//! share: every implementation makes the calls of each [`Workload`] on each
//! [`Scheduler`] with each worker count, side by side with baselines;
//! reported as tables with the spread of the repeats, latency percentiles,
//! fairness, JSON, CSV, SVG plots and one HTML page; two runs compared with
//! `compare`.
//!
//! To measure a breaker of your own, implement [`SimpleSubject`] (build it
//! for a [`Workload`]; one call that is handed its planned outcome and says
//! whether it was admitted) and hand it to a [`Lab`]:
//!
//! ```no_run
//! use std::sync::atomic::{AtomicBool, Ordering};
//! use tripword_lab::{Call, Lab, SimpleSubject, Workload};
//!
//! /// Never opens: admits every call.
//! struct AlwaysClosed(AtomicBool);
//!
//! impl SimpleSubject for AlwaysClosed {
//!     const NAME: &'static str = "always_closed";
//!     fn build(_: &Workload) -> Option<Self> {
//!         Some(AlwaysClosed(AtomicBool::new(false)))
//!     }
//!     fn call(&self, call: Call) -> bool {
//!         if self.0.load(Ordering::Acquire) {
//!             return false; // open: rejected
//!         }
//!         let _ok = call.perform(); // the dependency: report its outcome
//!         true
//!     }
//! }
//!
//! Lab::from_args()
//!     .baselines() // the floor and a Mutex breaker
//!     .simple::<AlwaysClosed>() // yours
//!     .run()
//!     .report(&[]);
//! ```
//!
//! A breaker that needs per-worker state, or whose calls are futures that
//! the async schedulers should `.await`, implements [`Subject`] and
//! [`Worker`] instead (as every built-in one does) and is added with
//! [`Lab::subject`]. `examples/my_breaker.rs` is a complete example and
//! `docs/lab.md` the guide.
//!
//! Features (all on by default; `default-features = false` keeps the lab,
//! the baselines and the OS-thread schedulers): `tripword` (tripword's
//! subjects), `tower` (tripword-std's tower layer), `peers` (`failsafe`,
//! `recloser`, `seatbelt`, `tower-resilience`), `tokio` and `smol` (their
//! schedulers), `pinned` (the pinned-threads scheduler), `plots` (SVG).

pub mod cli;
pub mod compare;
pub mod exec;
mod lab;
pub mod mutex_breaker;
pub mod pool;
pub mod report;
pub mod sched;
pub mod stats;
pub mod subject;
pub mod subjects;
pub mod workload;

pub use crate::cli::Options;
pub use crate::lab::{Lab, NoFlags, Sweep, cpu_model, load_average};
pub use crate::report::{Results, Row};
pub use crate::sched::{Run, Scheduler, Timing};
pub use crate::subject::{Kind, SimpleSubject, Subject, Worker, run_calls};
pub use crate::workload::{Call, Plan, Setup, Workload};
/// The `tripword` crate the helpers' types come from
/// ([`subjects::Tripword::breaker`], [`mutex_breaker`]'s `Outcome`, …).
pub use tripword;
/// The `tripword-std` crate of the `tripword` subjects' clocks and calls.
#[cfg(feature = "tripword")]
pub use tripword_std;
