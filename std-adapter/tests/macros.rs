//! `breakers!` and `#[breaker]` (feature `macros`): declared breakers trip
//! at their threshold and then reject without running the body; sync and
//! async functions, a classifier, a policy, panics, cancellation, methods,
//! and a hand-set clock. No test waits on real time: open times are long
//! and never elapse, or the clock is moved by hand.

use std::future::Future;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::pin::pin;
use std::sync::Mutex;
use std::sync::atomic::{AtomicU32, Ordering};
use std::task::{Context, Waker};
use std::time::Duration;

use tripword::{Cause, Clock, Observer, Outcome, Rejected, Status, Transition, W32};
use tripword_std::Rejection;
use tripword_std::classify::by_error;
use tripword_std::clock::{ManualTime, RealClock};
use tripword_std::{
    BreakerExt, CallError, CallPolicy, LazyObserver, MillisClock, NamedBreaker, breaker, breakers,
};

/// A service error with room for a rejection.
#[derive(Debug, PartialEq)]
enum ServiceError {
    Timeout,
    NotFound,
    Unavailable(Rejection),
}

impl From<Rejection> for ServiceError {
    fn from(rejected: Rejection) -> Self {
        ServiceError::Unavailable(rejected)
    }
}

/// The hand-set time of the tests that move time.
static TIME: ManualTime = ManualTime::new();

/// A unit-struct clock reading [`TIME`], for a declaration's `clock`.
struct TestClock;

impl Clock for TestClock {
    const TICK_PERIOD: Option<Duration> = Some(ManualTime::TICK);
    fn now(&self) -> u64 {
        TIME.now()
    }
}

impl RealClock for TestClock {
    const TICK: Duration = ManualTime::TICK;
}

breakers! {
    /// Trips after three failures in a row; open an hour.
    PAYMENTS: failure_threshold = 3, open_for = 1h, probe_timeout = 10s;
    pub(crate) ASYNC_PAYMENTS: failure_threshold = 2, open_for = 1h;
    CLASSIFIED: failure_threshold = 1, open_for = 1h;
    CLASSIFIED_BY_ERROR: failure_threshold = 1, open_for = 1h;
    PANICKY: failure_threshold = 2, open_for = 1h;
    ASYNC_PANICKY: failure_threshold = 1, open_for = 1h;
    CANCELLED: failure_threshold = 1, open_for = 1h;
    CANCELLED_AS_FAILURE: failure_threshold = 1, open_for = 1h;
    METHODS: failure_threshold = 1, open_for = 1h;
    GENERIC: failure_threshold = 1, open_for = 1h;
    WRAPPED: failure_threshold = 1, open_for = 1h;
    /// Every duration form and setting.
    pub SETTINGS: failure_threshold = 7, open_for = 1.5s, exponential_backoff = 2m,
        probe_timeout = 250ms, horizon = 2h, abandon_as = Outcome::Ignored,
        name = "settings-v2",;
    DEFAULTS;
    NARROW: failure_threshold = 4095, open_for = 10min, clock = MillisClock, word = W32;
    MOVED: failure_threshold = 1, open_for = 10s, probe_timeout = 2s, clock = TestClock;
    OBSERVED: failure_threshold = 1, open_for = 1h,
        observer = Recorder;
    EXPRESSIONS: failure_threshold = THRESHOLD + 1, open_for = OPEN_FOR;
}

const THRESHOLD: u32 = 2;
const OPEN_FOR: Duration = Duration::from_millis(1_500);

/// How many times each guarded body ran.
static CHARGES: AtomicU32 = AtomicU32::new(0);

#[breaker(PAYMENTS)]
fn charge(cents: u64) -> Result<u64, ServiceError> {
    CHARGES.fetch_add(1, Ordering::SeqCst);
    if cents == 0 {
        return Err(ServiceError::Timeout); // `return` leaves the guarded body
    }
    Ok(cents)
}

#[test]
fn a_declared_breaker_trips_after_its_threshold_and_then_rejects_without_running_the_body() {
    assert_eq!(charge(10), Ok(10));
    for _ in 0..3 {
        assert_eq!(PAYMENTS.status(), Status::Closed);
        assert_eq!(charge(0), Err(ServiceError::Timeout));
    }
    assert_eq!(PAYMENTS.status(), Status::Open);
    let ran = CHARGES.load(Ordering::SeqCst);
    assert_eq!(ran, 4);
    let Err(ServiceError::Unavailable(rejected)) = charge(10) else {
        panic!("not rejected");
    };
    assert_eq!(CHARGES.load(Ordering::SeqCst), ran); // not run
    assert_eq!(rejected.cause(), Cause::Open);
    // The wait, on the declared clock: at most the hour (and its tick).
    let wait = rejected.retry_after();
    assert!(wait.is_some_and(|w| w > Duration::from_secs(3500)
        && w <= Duration::from_secs(3600) + Duration::from_micros(1)));
    // It names the declared breaker and reads in seconds.
    assert_eq!(rejected.name(), Some("payments"));
    assert!(
        rejected
            .to_string()
            .starts_with("circuit 'payments' open: call not admitted (retry after 3")
    );
}

/// How many times the async body ran.
static SEARCHES: AtomicU32 = AtomicU32::new(0);

#[breaker(ASYNC_PAYMENTS)]
async fn search(query: String) -> Result<usize, ServiceError> {
    SEARCHES.fetch_add(1, Ordering::SeqCst);
    tokio::task::yield_now().await;
    let n: usize = query.parse().map_err(|_| ServiceError::Timeout)?;
    Ok(n)
}

#[tokio::test]
async fn an_async_fn_trips_and_then_rejects_without_running_the_body() {
    assert_eq!(search("3".into()).await, Ok(3));
    assert_eq!(search("x".into()).await, Err(ServiceError::Timeout));
    assert_eq!(search("y".into()).await, Err(ServiceError::Timeout));
    assert_eq!(ASYNC_PAYMENTS.status(), Status::Open);
    let ran = SEARCHES.load(Ordering::SeqCst);
    assert!(matches!(
        search("4".into()).await,
        Err(ServiceError::Unavailable(r)) if r.cause() == Cause::Open
    ));
    assert_eq!(SEARCHES.load(Ordering::SeqCst), ran);
}

/// Not-found is the caller's mistake: it says nothing about health.
fn is_unhealthy(result: &Result<&'static str, ServiceError>) -> Outcome {
    match result {
        Ok(_) => Outcome::Success,
        Err(ServiceError::NotFound) => Outcome::Ignored,
        Err(_) => Outcome::Failure,
    }
}

#[breaker(CLASSIFIED, classify = is_unhealthy)]
fn lookup(key: &str) -> Result<&'static str, ServiceError> {
    match key {
        "a" => Ok("apple"),
        "slow" => Err(ServiceError::Timeout),
        _ => Err(ServiceError::NotFound),
    }
}

#[breaker(CLASSIFIED_BY_ERROR, classify = by_error(|e: &ServiceError| match e {
    ServiceError::NotFound => Outcome::Ignored,
    _ => Outcome::Failure,
}))]
fn lookup_again(key: &str) -> Result<&'static str, ServiceError> {
    match key {
        "slow" => Err(ServiceError::Timeout),
        _ => Err(ServiceError::NotFound),
    }
}

#[test]
fn the_classify_argument_decides_what_counts() {
    for _ in 0..5 {
        assert_eq!(lookup("zzz"), Err(ServiceError::NotFound));
    }
    assert_eq!(CLASSIFIED.status(), Status::Closed); // ignored, every time
    assert_eq!(lookup("a"), Ok("apple"));
    assert_eq!(lookup("slow"), Err(ServiceError::Timeout));
    assert_eq!(CLASSIFIED.status(), Status::Open);
    assert!(matches!(lookup("a"), Err(ServiceError::Unavailable(_))));

    // Any classifier expression.
    assert_eq!(lookup_again("zzz"), Err(ServiceError::NotFound));
    assert_eq!(CLASSIFIED_BY_ERROR.status(), Status::Closed);
    assert_eq!(lookup_again("slow"), Err(ServiceError::Timeout));
    assert_eq!(CLASSIFIED_BY_ERROR.status(), Status::Open);
}

#[breaker(PANICKY)]
fn explode(really: bool) -> Result<(), ServiceError> {
    assert!(!really, "boom");
    Ok(())
}

#[test]
fn a_panic_counts_as_a_failure_and_keeps_unwinding() {
    for _ in 0..2 {
        let unwound = catch_unwind(|| explode(true));
        assert!(unwound.is_err()); // the panic went on
    }
    assert_eq!(PANICKY.status(), Status::Open);
    assert!(matches!(explode(false), Err(ServiceError::Unavailable(_))));
}

#[breaker(ASYNC_PANICKY)]
async fn explode_later() -> Result<(), ServiceError> {
    tokio::task::yield_now().await;
    panic!("boom");
}

#[test]
fn an_async_panic_counts_as_a_failure() {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap();
    let unwound = catch_unwind(AssertUnwindSafe(|| runtime.block_on(explode_later())));
    assert!(unwound.is_err());
    assert_eq!(ASYNC_PANICKY.status(), Status::Open);
}

#[breaker(CANCELLED)]
async fn hang() -> Result<(), ServiceError> {
    std::future::pending::<()>().await;
    Ok(())
}

/// A policy whose cancelled calls are failures.
fn cancel_is_failure() -> CallPolicy {
    CallPolicy::new().on_cancel(Outcome::Failure)
}

#[breaker(CANCELLED_AS_FAILURE, policy = cancel_is_failure())]
async fn hang_strictly() -> Result<(), ServiceError> {
    std::future::pending::<()>().await;
    Ok(())
}

/// Polls `future` once, then drops it.
fn poll_once_and_drop<F: Future>(future: F) {
    let mut cx = Context::from_waker(Waker::noop());
    assert!(pin!(future).poll(&mut cx).is_pending());
}

#[test]
fn a_dropped_async_call_is_ignored_unless_the_policy_says_otherwise() {
    for _ in 0..3 {
        poll_once_and_drop(hang());
    }
    assert_eq!(CANCELLED.status(), Status::Closed);
    // A future never polled was never admitted: nothing to record.
    drop(hang_strictly());
    assert_eq!(CANCELLED_AS_FAILURE.status(), Status::Closed);
    poll_once_and_drop(hang_strictly());
    assert_eq!(CANCELLED_AS_FAILURE.status(), Status::Open);
}

/// A client with its own breaker, and one counter it mutates.
struct Client {
    breaker: NamedBreaker<(), ManualTime>,
    calls: u32,
}

impl Client {
    #[breaker(self.breaker)]
    fn get(&self, fail: bool) -> Result<u32, CallError<&'static str>> {
        if fail {
            Err(CallError::Inner("down"))
        } else {
            Ok(1)
        }
    }

    #[breaker(self.breaker)]
    async fn get_later(&self, fail: bool) -> Result<u32, CallError<&'static str>> {
        self.get(fail)
    }

    #[breaker(METHODS)]
    fn count(&mut self) -> Result<u32, ServiceError> {
        self.calls += 1;
        if self.calls > 1 {
            Err(ServiceError::Timeout)
        } else {
            Ok(self.calls)
        }
    }
}

#[tokio::test]
async fn methods_take_a_field_or_a_static_breaker() {
    let mut client = Client {
        breaker: NamedBreaker::new(
            "client",
            tripword_std::Settings::new().failure_threshold(2),
            ManualTime::new(),
            (),
        ),
        calls: 0,
    };
    assert_eq!(client.get(false), Ok(1));
    assert_eq!(client.get_later(false).await, Ok(1));
    assert_eq!(client.get(true), Err(CallError::Inner("down")));
    // The inner call is the second failure and opens the breaker; the outer
    // call, admitted before that, then releases a stale ticket.
    assert_eq!(client.get_later(true).await, Err(CallError::Inner("down")));
    assert_eq!(client.breaker.status(), Status::Open);
    assert!(client.get(false).unwrap_err().is_open());
    assert!(client.get_later(false).await.unwrap_err().is_open());

    assert_eq!(client.count(), Ok(1));
    assert_eq!(client.count(), Err(ServiceError::Timeout));
    assert!(matches!(client.count(), Err(ServiceError::Unavailable(_))));
    assert_eq!(client.calls, 2);
}

#[breaker(GENERIC)]
fn parse<T>(text: &str) -> Result<T, Box<dyn std::error::Error + Send + Sync>>
where
    T: std::str::FromStr,
    T::Err: std::error::Error + Send + Sync + 'static,
{
    Ok(text.trim().parse::<T>()?)
}

#[test]
fn generic_functions_and_boxed_errors() {
    assert_eq!(parse::<u8>(" 7 ").unwrap(), 7);
    assert!(parse::<u8>("300").is_err()); // `?` in the body: a failure
    let err = parse::<u8>("7").unwrap_err();
    let rejected = err
        .downcast_ref::<Rejection>()
        .expect("the rejection, boxed");
    assert_eq!(rejected.cause(), Cause::Open);
}

#[breaker(WRAPPED)]
fn wrapped(fail: bool) -> Result<(), CallError<ServiceError>> {
    if fail {
        Err(CallError::Inner(ServiceError::Timeout))
    } else {
        Ok(())
    }
}

#[test]
fn call_error_is_an_error_type_that_takes_a_rejection() {
    assert_eq!(wrapped(false), Ok(()));
    assert_eq!(wrapped(true), Err(CallError::Inner(ServiceError::Timeout)));
    assert_eq!(wrapped(false).unwrap_err().cause(), Some(Cause::Open));
}

#[test]
fn the_settings_are_as_declared() {
    let config = SETTINGS.config();
    assert_eq!(SETTINGS.name(), "settings-v2");
    assert_eq!(config.failure_threshold(), 7);
    assert_eq!(config.open_for(), 1_500_001); // µs, at least as long as set
    assert_eq!(config.open_duration(u32::MAX), 120_000_001); // the backoff cap
    assert_eq!(config.probe_timeout(), 250_001);
    assert_eq!(config.abandon(), Outcome::Ignored);
    let expected = tripword_std::Settings::new()
        .failure_threshold(7)
        .open_for(Duration::from_millis(1_500))
        .exponential_backoff(Duration::from_secs(120))
        .probe_timeout(Duration::from_millis(250))
        .horizon(Duration::from_secs(7_200))
        .abandon_as(Outcome::Ignored)
        .config::<tripword_std::MonotonicClock, tripword::W64>()
        .unwrap();
    assert_eq!(config.time_shift(), expected.time_shift()); // the horizon
    assert_eq!(*config, expected);

    assert_eq!(DEFAULTS.name(), "defaults");
    let defaults = tripword_std::Settings::new()
        .config::<tripword_std::MonotonicClock, tripword::W64>()
        .unwrap();
    assert_eq!(*DEFAULTS.config(), defaults);

    // The 32-bit word on the millisecond clock.
    let narrow: &NamedBreaker<(), MillisClock, W32> = &NARROW;
    assert_eq!(narrow.config().failure_threshold(), 4095);
    assert_eq!(narrow.config().open_for(), 600_001);

    // Any `const` expression.
    assert_eq!(EXPRESSIONS.config().failure_threshold(), 3);
    assert_eq!(EXPRESSIONS.config().open_for(), 1_500_001);
}

#[test]
fn a_declared_clock_moves_by_hand() {
    let _ = MOVED.call(|| Err::<(), _>("down"));
    assert_eq!(MOVED.status(), Status::Open);
    let rejected = MOVED.call(|| Ok::<_, ()>(())).unwrap_err();
    assert_eq!(
        rejected.retry_after(),
        Some(Duration::from_micros(10_000_001))
    );
    TIME.advance(Duration::from_secs(11));
    assert_eq!(MOVED.status(), Status::HalfOpen);
    assert_eq!(MOVED.call(|| Ok::<_, ()>(1)), Ok(1)); // the probe
    assert_eq!(MOVED.status(), Status::Closed);
}

/// Every transition of the observed breaker, with the name it was made
/// from.
static SEEN: Mutex<Vec<String>> = Mutex::new(Vec::new());

struct Recorder(&'static str);

impl Observer for Recorder {
    fn on_transition(&self, t: Transition) {
        SEEN.lock()
            .unwrap()
            .push(format!("{} {:?}->{:?}", self.0, t.from, t.to));
    }
    fn on_rejected(&self, rejected: Rejected) {
        SEEN.lock()
            .unwrap()
            .push(format!("{} rejected {:?}", self.0, rejected.cause()));
    }
}

#[test]
fn the_observer_is_made_from_the_name() {
    let observed: &NamedBreaker<LazyObserver> = &OBSERVED;
    assert_eq!(observed.observer().name(), "observed");
    let _ = OBSERVED.call(|| Err::<(), _>("down"));
    let _ = OBSERVED.call(|| Ok::<_, ()>(()));
    assert_eq!(
        *SEEN.lock().unwrap(),
        ["observed Closed->Open", "observed rejected Open"]
    );
}
