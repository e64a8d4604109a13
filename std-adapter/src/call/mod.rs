//! Running a closure through a breaker.
//!
//! [`BreakerExt::call`] asks the breaker first: when the circuit is open the
//! closure is **not run** and the result is [`CallError::Open`]. Admitted, it
//! runs the closure and records how it went: `Ok` a success, `Err` a failure
//! (returned as [`CallError::Inner`]), a panic a failure, after which the
//! panic keeps unwinding. [`BreakerExt::call_with`] counts by a
//! [`CallPolicy`](crate::CallPolicy) instead: its classifier (see
//! [`classify`](crate::classify)), its slow-call threshold, and its
//! fallback for a call not admitted.
//!
//! ```
//! use tripword::{Breaker, Cause, Config, Status};
//! use tripword::clock::ManualClock;
//! use tripword_std::{BreakerExt, CallError};
//!
//! let clock = ManualClock::new(0);
//! let b = Breaker::new(Config::new().failure_threshold(2).open_for(100), &clock);
//!
//! assert_eq!(b.call(|| Ok::<_, &str>(7)), Ok(7));
//! assert_eq!(b.call(|| Err::<u32, _>("timeout")), Err(CallError::Inner("timeout")));
//! assert_eq!(b.call(|| Err::<u32, _>("timeout")), Err(CallError::Inner("timeout")));
//! assert_eq!(b.status(), Status::Open);
//!
//! let mut ran = false;
//! clock.advance(30);
//! let r = b.call(|| { ran = true; Ok::<_, &str>(7) });
//! assert!(!ran); // not called while open
//! let Err(CallError::Open(rejected)) = r else { panic!("{r:?}") };
//! assert_eq!(rejected.cause(), Cause::Open);
//! assert_eq!(rejected.retry_after_ticks(), Some(70)); // a `ManualClock`: ticks
//! assert_eq!(rejected.to_string(), "circuit open: call not admitted (retry after 70 ticks)");
//! ```

// The call path every form shares, a file a concept, each importing only
// files below it: `intern` <- `rejection` <- `error` <- `future` <- `ext`,
// with `guard` (the settling guard) under `future` and `ext`, `sealed`
// under `ext`, and the crate's `classify` and `policy` under `future` and
// `ext`. The public module `crate::future` re-exports `future`; nothing here
// imports this file (docs/design-kit.md, "Map of tripword-std").

pub(crate) mod error;
mod ext;
pub(crate) mod future;
pub(crate) mod guard;
mod intern;
pub(crate) mod rejection;
mod sealed;

// Globs, not lists: an item reached through a glob keeps the path of the
// module that shows it (`tripword_std::call::CallError`) in rustdoc's JSON
// and in api/tripword-std.txt, as when it was defined in that module.
pub use error::*;
pub use ext::*;
pub use rejection::*;
