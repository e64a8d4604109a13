//! A deadline that counts as a failure (feature `tokio`).
//!
//! A call that takes too long says the dependency is unhealthy; a caller
//! that goes away does not. So the deadline goes *inside* the breaker:
//! [`timeout`] turns a future that runs past it into an `Err`
//! ([`TimeoutError::Elapsed`]), which the breaker records as a failure,
//! while dropping the call future from outside (a `select!`, an aborted
//! task) is a cancellation, [`Ignored`](tripword::Outcome::Ignored) by
//! default.
//!
//! ```
//! use std::time::Duration;
//! use tripword::Status;
//! use tripword_std::tokio::{TimeoutError, timeout};
//! use tripword_std::{BreakerExt, CallError, Settings};
//!
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() -> Result<(), tripword_std::SettingsError> {
//! let b = Settings::new().failure_threshold(1).build()?;
//! let hang = std::future::pending::<Result<(), std::io::Error>>();
//! let r = b.call_async(timeout(Duration::from_millis(10), hang)).await;
//! assert!(matches!(r, Err(CallError::Inner(TimeoutError::Elapsed(_)))));
//! assert_eq!(b.status(), Status::Open); // a timeout is a failure
//! # Ok(())
//! # }
//! ```
//!
//! Needs a tokio runtime with the time driver enabled when polled. With
//! tower, `tower::timeout::TimeoutLayer` inside the
//! [`BreakerLayer`](crate::tower::BreakerLayer) does the same.

use core::fmt;
use core::future::Future;
use core::pin::Pin;
use core::task::{Context, Poll, ready};
use std::time::Duration;

use pin_project_lite::pin_project;

/// Runs `future` with a deadline `duration` from now: past it, `future` is
/// dropped and the result is [`TimeoutError::Elapsed`]. Give it to
/// [`call_async`](crate::BreakerExt::call_async), so the timeout is
/// recorded as a failure.
pub fn timeout<F, T, E>(duration: Duration, future: F) -> Timeout<F>
where
    F: Future<Output = Result<T, E>>,
{
    Timeout {
        inner: ::tokio::time::timeout(duration, future),
        duration,
    }
}

pin_project! {
    /// The future of [`timeout`].
    #[must_use = "futures do nothing unless polled"]
    #[derive(Debug)]
    pub struct Timeout<F> {
        #[pin]
        inner: ::tokio::time::Timeout<F>,
        duration: Duration,
    }
}

impl<F, T, E> Future for Timeout<F>
where
    F: Future<Output = Result<T, E>>,
{
    type Output = Result<T, TimeoutError<E>>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let this = self.project();
        Poll::Ready(match ready!(this.inner.poll(cx)) {
            Ok(result) => result.map_err(TimeoutError::Inner),
            Err(_) => Err(TimeoutError::Elapsed(*this.duration)),
        })
    }
}

/// Why a [`timeout`] future failed.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum TimeoutError<E> {
    /// The deadline passed (the duration it was given).
    Elapsed(Duration),
    /// The future completed in time, with this error.
    Inner(E),
}

impl<E> TimeoutError<E> {
    /// Whether the deadline passed.
    ///
    /// ```
    /// use std::time::Duration;
    /// use tripword_std::tokio::TimeoutError;
    /// assert!(TimeoutError::<()>::Elapsed(Duration::from_secs(1)).is_elapsed());
    /// ```
    pub fn is_elapsed(&self) -> bool {
        matches!(self, TimeoutError::Elapsed(_))
    }

    /// The future's own error, if it completed in time.
    pub fn into_inner(self) -> Option<E> {
        match self {
            TimeoutError::Elapsed(_) => None,
            TimeoutError::Inner(e) => Some(e),
        }
    }
}

impl<E: fmt::Display> fmt::Display for TimeoutError<E> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            TimeoutError::Elapsed(d) => write!(f, "timed out after {d:?}"),
            TimeoutError::Inner(e) => fmt::Display::fmt(e, f),
        }
    }
}

impl<E: std::error::Error + 'static> std::error::Error for TimeoutError<E> {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            TimeoutError::Elapsed(_) => None,
            TimeoutError::Inner(e) => e.source(),
        }
    }
}
