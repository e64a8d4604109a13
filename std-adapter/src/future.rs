//! Futures through a breaker: [`CallAsync`], what
//! [`BreakerExt::call_async`](crate::BreakerExt::call_async) and
//! [`call_async_with`](crate::BreakerExt::call_async_with) return, what
//! [`CallAsync::new`] makes on a handle the future owns, and the `tower`
//! service's response future.
//!
//! Admission is decided when the call is made, before the protected future
//! is first polled. The outcome is recorded exactly once: when the future
//! completes (classified by the [`CallPolicy`](crate::CallPolicy)), when a
//! poll of it or its classification panics (a failure, and the panic goes
//! on), or when the call future is dropped before it completes (the
//! policy's cancel outcome, [`Ignored`](tripword::Outcome::Ignored) by
//! default; a failure if the thread is panicking).

pub use crate::call::future::*;
pub use crate::call::guard::StdUnwind;
