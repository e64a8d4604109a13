//! HTTP responses: what counts as a failure, and `Retry-After` (feature
//! `http`).
//!
//! Only responses that say the dependency is unhealthy are failures: a 5xx,
//! or no response at all (a connection error, a timeout: the `Err` side). A
//! 4xx is the caller's own business (a 404, a validation error) and is
//! [`Ignored`](Outcome::Ignored): a burst of bad requests from one client
//! must not cut everyone off. That is [`StatusClassifier`], the default of
//! the [`tower`](crate::tower) layer.
//!
//! A server that is overloaded may say how long to stay away, with
//! `Retry-After` (RFC 9110, 10.2.3: delay-seconds or an HTTP-date).
//! [`RetryAfterClassifier`] turns such a 5xx (or 429) into
//! [`Verdict::FailureFor`]: if it trips the breaker or fails its probe, the
//! breaker stays open that long instead of its configured open time.
//! [`retry_after`] reads the header for your own classifiers.
//!
//! ```
//! use std::time::Duration;
//! use http::{Response, StatusCode};
//! use tripword::Outcome;
//! use tripword_std::classify::{Classify, Verdict};
//! use tripword_std::http::{RetryAfterClassifier, StatusClassifier, retry_after};
//!
//! let busy = Response::builder().status(503).header("retry-after", "5").body(()).unwrap();
//! let missing = Response::builder().status(StatusCode::NOT_FOUND).body(()).unwrap();
//!
//! let ok: Result<_, std::io::Error> = Ok(busy);
//! assert_eq!(StatusClassifier.classify(&ok), Outcome::Failure);
//! assert_eq!(RetryAfterClassifier.classify(&ok), Verdict::FailureFor(Duration::from_secs(5)));
//! assert_eq!(retry_after(ok.as_ref().unwrap()), Some(Duration::from_secs(5)));
//!
//! let not_found: Result<_, std::io::Error> = Ok(missing);
//! assert_eq!(StatusClassifier.classify(&not_found), Outcome::Ignored);
//! let refused: Result<Response<()>, _> = Err(std::io::Error::other("connection refused"));
//! assert_eq!(StatusClassifier.classify(&refused), Outcome::Failure);
//! ```

use std::time::{Duration, SystemTime};

use ::http::header::RETRY_AFTER;
use ::http::{HeaderMap, Response, StatusCode};
use tripword::Outcome;

use crate::classify::{Classify, Verdict};

/// The outcome an HTTP status says: 5xx a failure, 4xx ignored, anything
/// else (1xx, 2xx, 3xx) a success.
///
/// ```
/// use http::StatusCode;
/// use tripword::Outcome;
/// use tripword_std::http::status_outcome;
///
/// assert_eq!(status_outcome(StatusCode::OK), Outcome::Success);
/// assert_eq!(status_outcome(StatusCode::TOO_MANY_REQUESTS), Outcome::Ignored);
/// assert_eq!(status_outcome(StatusCode::BAD_GATEWAY), Outcome::Failure);
/// ```
pub fn status_outcome(status: StatusCode) -> Outcome {
    if status.is_server_error() {
        Outcome::Failure
    } else if status.is_client_error() {
        Outcome::Ignored
    } else {
        Outcome::Success
    }
}

/// Classifies `Result<http::Response<B>, E>`: an `Err` (no response: a
/// connection error, a timeout) is a failure, otherwise
/// [`status_outcome`]. Works on any clock.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct StatusClassifier;

impl StatusClassifier {
    /// The same, honouring `Retry-After` ([`RetryAfterClassifier`]).
    pub const fn honor_retry_after(self) -> RetryAfterClassifier {
        RetryAfterClassifier
    }
}

impl<B, E> Classify<Response<B>, E> for StatusClassifier {
    type Verdict = Outcome;
    #[inline]
    fn classify(&self, result: &Result<Response<B>, E>) -> Outcome {
        match result {
            Ok(response) => status_outcome(response.status()),
            Err(_) => Outcome::Failure,
        }
    }
}

/// [`StatusClassifier`], and a response that says how long to stay away: a
/// 5xx or a 429 with a `Retry-After` of more than zero is
/// [`Verdict::FailureFor`] that long (a 429 without one stays ignored, as a
/// 4xx). Needs a breaker on a [`RealClock`](crate::RealClock).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct RetryAfterClassifier;

impl<B, E> Classify<Response<B>, E> for RetryAfterClassifier {
    type Verdict = Verdict;
    fn classify(&self, result: &Result<Response<B>, E>) -> Verdict {
        let response = match result {
            Ok(response) => response,
            Err(_) => return Verdict::Failure,
        };
        let status = response.status();
        if (status.is_server_error() || status == StatusCode::TOO_MANY_REQUESTS)
            && let Some(wait) = retry_after(response).filter(|wait| !wait.is_zero())
        {
            return Verdict::FailureFor(wait);
        }
        Verdict::from(status_outcome(status))
    }
}

/// The wait a response's `Retry-After` asks for, an HTTP-date measured from
/// the system clock now; `None` without a valid one. See
/// [`retry_after_at`].
pub fn retry_after<B>(response: &Response<B>) -> Option<Duration> {
    retry_after_at(response.headers(), SystemTime::now())
}

/// The wait the first `Retry-After` in `headers` asks for, an HTTP-date
/// measured from `now`: see [`parse_retry_after`].
///
/// ```
/// use std::time::{Duration, SystemTime};
/// use http::HeaderMap;
/// use tripword_std::http::retry_after_at;
///
/// let mut headers = HeaderMap::new();
/// assert_eq!(retry_after_at(&headers, SystemTime::now()), None);
/// headers.insert("retry-after", "120".parse().unwrap());
/// assert_eq!(retry_after_at(&headers, SystemTime::now()), Some(Duration::from_secs(120)));
/// ```
pub fn retry_after_at(headers: &HeaderMap, now: SystemTime) -> Option<Duration> {
    let value = headers.get(RETRY_AFTER)?.to_str().ok()?;
    parse_retry_after(value, now)
}

/// Parses a `Retry-After` value: delay-seconds (`"120"`), or an HTTP-date
/// (`"Wed, 21 Oct 2015 07:28:00 GMT"`, and the two obsolete forms) whose
/// distance from `now` is the wait (zero if it has passed). `None` if it is
/// neither; delay-seconds too large for a `u64` saturate.
///
/// ```
/// use std::time::{Duration, SystemTime, UNIX_EPOCH};
/// use tripword_std::http::parse_retry_after;
///
/// let now = UNIX_EPOCH + Duration::from_secs(1_445_412_470); // 07:27:50
/// assert_eq!(parse_retry_after("5", now), Some(Duration::from_secs(5)));
/// assert_eq!(parse_retry_after(" 5 ", now), Some(Duration::from_secs(5)));
/// assert_eq!(parse_retry_after("Wed, 21 Oct 2015 07:28:00 GMT", now), Some(Duration::from_secs(10)));
/// assert_eq!(parse_retry_after("Wed, 21 Oct 2015 07:27:00 GMT", now), Some(Duration::ZERO));
/// assert_eq!(parse_retry_after("-5", now), None);
/// assert_eq!(parse_retry_after("soon", now), None);
/// ```
pub fn parse_retry_after(value: &str, now: SystemTime) -> Option<Duration> {
    let value = value.trim();
    if !value.is_empty() && value.bytes().all(|b| b.is_ascii_digit()) {
        let secs = value.parse::<u64>().unwrap_or(u64::MAX);
        return Some(Duration::from_secs(secs));
    }
    let date = httpdate::parse_http_date(value).ok()?;
    Some(date.duration_since(now).unwrap_or(Duration::ZERO))
}
