//! Futures on a real tokio runtime (feature `tokio`): tasks aborted
//! mid-probe, tasks that panic, timeouts against cancellation, a race of
//! tasks for the probe. Time is a `ManualTime` moved by the test; the only
//! real time is the deadline of a future that never completes, so nothing
//! depends on the machine's speed.

use std::future::pending;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::sync::{Notify, oneshot};
use tripword::{Breaker, Observer, Outcome, Status, Transition};
use tripword_std::clock::ManualTime;
use tripword_std::tokio::{TimeoutError, timeout};
use tripword_std::{BreakerExt, CallError, CallPolicy, Settings};

/// Records every transition.
#[derive(Default)]
struct Log(Mutex<Vec<(Status, Status)>>);

impl Observer for Log {
    fn on_transition(&self, t: Transition) {
        self.0.lock().unwrap().push((t.from, t.to));
    }
}

type TestBreaker = Breaker<&'static ManualTime, tripword::W64, Log>;

/// A breaker (threshold 1, open 1 s) on its own clock, both living for the
/// whole test process, as a service's `static` would.
fn breaker() -> (&'static TestBreaker, &'static ManualTime) {
    let clock: &'static ManualTime = Box::leak(Box::new(ManualTime::new()));
    let b = Settings::new()
        .failure_threshold(1)
        .open_for(Duration::from_secs(1))
        .probe_timeout(Duration::from_secs(60))
        .build_on(clock, Log::default())
        .expect("in range");
    (Box::leak(Box::new(b)), clock)
}

/// Trips `b` and lets its open time pass: the next caller is the probe.
fn half_open(b: &TestBreaker, clock: &ManualTime) {
    let _ = b.call(|| Err::<(), _>("down"));
    clock.advance(Duration::from_secs(2));
    assert_eq!(b.status(), Status::HalfOpen);
    b.observer().0.lock().unwrap().clear();
}

fn transitions(b: &TestBreaker) -> Vec<(Status, Status)> {
    b.observer().0.lock().unwrap().clone()
}

/// A task holding the probe, parked on a future that never completes.
async fn spawn_probe(b: &'static TestBreaker, policy: CallPolicy) -> tokio::task::JoinHandle<()> {
    let (admitted, is_admitted) = oneshot::channel();
    let task = tokio::spawn(async move {
        let call = b.call_async_with(&policy, pending::<Result<(), ()>>());
        admitted.send(call.is_admitted()).unwrap();
        let _ = call.await;
    });
    // Wait (on the runtime, not the clock) until the task has its answer.
    assert!(is_admitted.await.unwrap(), "the task is the probe");
    task
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_task_aborted_mid_probe_leaks_no_probe() {
    let (b, clock) = breaker();
    half_open(b, clock);
    let task = spawn_probe(b, CallPolicy::new()).await;
    assert_eq!(b.status(), Status::Probing);
    assert!(b.call(|| Ok::<_, ()>(())).unwrap_err().is_open());
    task.abort();
    assert!(task.await.unwrap_err().is_cancelled());
    // Cancelled: ignored, so half-open again at once (no wait for the
    // 60 s probe timeout), and the next caller probes.
    assert_eq!(b.status(), Status::HalfOpen);
    assert_eq!(b.call_async(async { Ok::<_, ()>(1) }).await, Ok(1));
    assert_eq!(
        transitions(b),
        [
            (Status::Open, Status::HalfOpen),
            (Status::HalfOpen, Status::Probing),
            (Status::Probing, Status::HalfOpen),
            (Status::HalfOpen, Status::Probing),
            (Status::Probing, Status::Closed),
        ]
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_aborted_probe_can_count_as_a_failure() {
    let (b, clock) = breaker();
    half_open(b, clock);
    let task = spawn_probe(b, CallPolicy::new().on_cancel(Outcome::Failure)).await;
    task.abort();
    assert!(task.await.unwrap_err().is_cancelled());
    assert_eq!(b.status(), Status::Open, "the probe failed: open again");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_task_that_panics_mid_probe_is_a_failure() {
    let (b, clock) = breaker();
    half_open(b, clock);
    let task = tokio::spawn(async move {
        b.call_async(async {
            tokio::task::yield_now().await;
            if true {
                panic!("the request handler panicked");
            }
            Ok::<(), ()>(())
        })
        .await
    });
    let err = task.await.unwrap_err();
    assert!(err.is_panic(), "the panic reaches the JoinHandle");
    assert_eq!(b.status(), Status::Open);
    // Recorded once: the runtime drops the panicked task afterwards, and
    // that adds nothing.
    assert_eq!(
        transitions(b),
        [
            (Status::Open, Status::HalfOpen),
            (Status::HalfOpen, Status::Probing),
            (Status::Probing, Status::Open),
        ]
    );
}

#[tokio::test]
async fn a_timeout_is_a_failure_and_a_cancellation_is_not() {
    let (b, _clock) = breaker();
    // The caller goes away (the other branch of a select wins): ignored.
    tokio::select! {
        biased;
        _ = std::future::ready(()) => {}
        _ = b.call_async(pending::<Result<(), ()>>()) => unreachable!(),
    }
    assert_eq!(b.status(), Status::Closed);
    // The deadline inside the breaker passes: a failure.
    let hang = pending::<Result<(), std::io::Error>>();
    let r = b.call_async(timeout(Duration::from_millis(5), hang)).await;
    let Err(CallError::Inner(e)) = r else {
        panic!("{r:?}")
    };
    assert!(e.is_elapsed());
    assert_eq!(e.to_string(), "timed out after 5ms");
    assert_eq!(b.status(), Status::Open);
}

#[tokio::test]
async fn a_timeout_passes_the_result_through() {
    let (b, _clock) = breaker();
    let fine = async { Ok::<_, std::io::Error>(7) };
    assert_eq!(
        b.call_async(timeout(Duration::from_secs(60), fine))
            .await
            .unwrap(),
        7
    );
    let failed = async { Err::<(), _>(std::io::Error::other("refused")) };
    let r = b.call_async(timeout(Duration::from_secs(60), failed)).await;
    let Err(CallError::Inner(TimeoutError::Inner(e))) = r else {
        panic!("{r:?}")
    };
    assert_eq!(e.to_string(), "refused");
    assert_eq!(b.status(), Status::Open);
}

/// Sixteen tasks on two worker threads reach a half-open breaker: exactly
/// one is admitted, as the probe. The probe holds its call until every
/// other task has been answered, so the count does not depend on timing.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tasks_racing_for_the_probe_elect_exactly_one() {
    const TASKS: usize = 16;
    let (b, clock) = breaker();
    half_open(b, clock);
    let answered = Arc::new(AtomicUsize::new(0));
    let all_answered = Arc::new(Notify::new());
    let ran = Arc::new(AtomicUsize::new(0));
    let tasks: Vec<_> = (0..TASKS)
        .map(|_| {
            let (answered, all_answered, ran) =
                (answered.clone(), all_answered.clone(), ran.clone());
            tokio::spawn(async move {
                let call = b.call_async(async {
                    ran.fetch_add(1, Ordering::SeqCst);
                    if answered.fetch_add(1, Ordering::SeqCst) + 1 < TASKS {
                        all_answered.notified().await;
                    }
                    Ok::<_, ()>(())
                });
                if !call.is_admitted() && answered.fetch_add(1, Ordering::SeqCst) + 1 == TASKS {
                    all_answered.notify_one();
                }
                call.await.is_ok()
            })
        })
        .collect();
    let mut admitted = 0;
    for task in tasks {
        admitted += usize::from(task.await.unwrap());
    }
    assert_eq!(admitted, 1);
    assert_eq!(ran.load(Ordering::SeqCst), 1);
    assert_eq!(b.status(), Status::Closed);
}

/// An error with a source, as a client library's would be.
#[derive(Debug)]
struct Refused(std::io::Error);

impl std::fmt::Display for Refused {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("connection refused")
    }
}

impl std::error::Error for Refused {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        Some(&self.0)
    }
}

/// `TimeoutError`'s accessors tell the two cases apart: an inner error is
/// not elapsed and comes back out, and its `source` is the inner error's
/// own (the inner error is what `Display` shows); an elapsed deadline has
/// neither. Mutation testing found them unpinned (`is_elapsed` as `true`,
/// `into_inner` and `source` as `None`).
#[test]
fn timeout_error_tells_the_deadline_from_the_inner_error() {
    use std::error::Error;
    let inner = TimeoutError::Inner(Refused(std::io::Error::other("reset by peer")));
    assert!(!inner.is_elapsed());
    assert_eq!(inner.to_string(), "connection refused");
    assert_eq!(
        inner.source().map(|s| s.to_string()).as_deref(),
        Some("reset by peer")
    );
    let Refused(cause) = inner.into_inner().expect("the inner error");
    assert_eq!(cause.to_string(), "reset by peer");

    let elapsed = TimeoutError::<Refused>::Elapsed(Duration::from_secs(1));
    assert!(elapsed.is_elapsed());
    assert!(elapsed.source().is_none());
    assert!(elapsed.into_inner().is_none());
}
