//! Classification: how a call's result counts towards the breaker.
//!
//! A classifier is any `Fn(&Result<T, E>) -> Outcome`. Only failures that say
//! the dependency is unhealthy (timeouts, connection errors, 5xx) should be
//! [`Outcome::Failure`]; the caller's own mistakes (a 404, a validation
//! error) are [`Outcome::Ignored`] and change no count.
//! [`BreakerExt::call`](crate::BreakerExt::call) uses [`ok_or_failure`];
//! [`BreakerExt::call_classified`](crate::BreakerExt::call_classified) takes
//! any classifier:
//!
//! ```
//! use tripword::{Breaker, Config, Outcome, Status};
//! use tripword::clock::ManualClock;
//! use tripword_std::{BreakerExt, classify};
//!
//! #[derive(Debug)]
//! enum HttpError { NotFound, Unavailable }
//!
//! let clock = ManualClock::new(0);
//! let b = Breaker::new(Config::new().failure_threshold(1), &clock);
//! let by_status = classify::by_error(|e: &HttpError| match e {
//!     HttpError::NotFound => Outcome::Ignored,
//!     HttpError::Unavailable => Outcome::Failure,
//! });
//! let _ = b.call_classified(&by_status, || Err::<(), _>(HttpError::NotFound));
//! assert_eq!(b.status(), Status::Closed); // a 404 says nothing about health
//! let _ = b.call_classified(&by_status, || Err::<(), _>(HttpError::Unavailable));
//! assert_eq!(b.status(), Status::Open);
//! ```

use tripword::Outcome;

/// The default classifier: `Ok` is a success, `Err` a failure.
///
/// ```
/// use tripword::Outcome;
/// use tripword_std::classify::ok_or_failure;
///
/// assert_eq!(ok_or_failure(&Ok::<u8, ()>(1)), Outcome::Success);
/// assert_eq!(ok_or_failure(&Err::<u8, ()>(())), Outcome::Failure);
/// ```
pub fn ok_or_failure<T, E>(result: &Result<T, E>) -> Outcome {
    match result {
        Ok(_) => Outcome::Success,
        Err(_) => Outcome::Failure,
    }
}

/// A classifier from one on errors: `Ok` is a success, `Err(e)` is
/// `classify(e)`.
///
/// ```
/// use tripword::Outcome;
/// use tripword_std::classify::by_error;
///
/// let c = by_error(|code: &u16| if *code >= 500 { Outcome::Failure } else { Outcome::Ignored });
/// assert_eq!(c(&Ok::<(), u16>(())), Outcome::Success);
/// assert_eq!(c(&Err(404)), Outcome::Ignored);
/// assert_eq!(c(&Err(503)), Outcome::Failure);
/// ```
pub fn by_error<T, E, F>(classify: F) -> impl Fn(&Result<T, E>) -> Outcome
where
    F: Fn(&E) -> Outcome,
{
    move |result| match result {
        Ok(_) => Outcome::Success,
        Err(e) => classify(e),
    }
}
