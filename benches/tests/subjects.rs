//! The subjects of the services adapter (`tripword-std`'s `call`,
//! `call_async` and tower layer) and the peers do what their scenario says,
//! on plain threads (in a batch and call by call) and in tokio tasks.

use std::sync::Arc;
use std::time::Duration;

use tripword_benches::subjects::{
    Failsafe, Recloser, Seatbelt, Subject, TowerResilience, TripwordCall, TripwordCallAsync,
    TripwordTower, Worker, run_calls,
};
use tripword_lab::{Call, Workload};

fn closed<S: Subject>() {
    let subject = Arc::new(S::build(&Workload::closed()).expect("closed"));
    let mut w = subject.worker();
    assert_eq!(
        run_calls(&mut w, &Workload::closed().plan(0), 0, 100),
        100,
        "{}",
        S::NAME
    );
    assert!(
        w.call(Call::SUCCESS),
        "{}: one call outside a batch",
        S::NAME
    );
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .build()
        .expect("runtime");
    let admitted = rt.block_on(async {
        let mut n = 0;
        for _ in 0..100 {
            n += u64::from(w.call_async(Call::SUCCESS).await);
        }
        n
    });
    assert_eq!(admitted, 100, "{}: in a task", S::NAME);
}

#[test]
fn closed_calls_are_admitted() {
    closed::<TripwordCall>();
    closed::<TripwordCallAsync>();
    closed::<TripwordTower>();
    closed::<TowerResilience>();
    closed::<Seatbelt>();
}

/// The failure storm trips the breaker after 65 535 failures; the call
/// that is rejected closes it again.
fn storm<S: Subject>() {
    let subject = Arc::new(S::build(&Workload::failure_storm()).expect("storm"));
    let mut w = subject.worker();
    let calls = 70_000;
    let admitted = run_calls(&mut w, &Workload::failure_storm().plan(0), 0, calls);
    assert_eq!(
        admitted,
        calls - 1,
        "{}: one rejection, then reset",
        S::NAME
    );
    let rt = tokio::runtime::Builder::new_current_thread()
        .build()
        .expect("runtime");
    let admitted = rt.block_on(async {
        let mut n = 0;
        for _ in 0..calls {
            n += u64::from(w.call_async(Call::FAILURE).await);
        }
        n
    });
    assert_eq!(admitted, calls - 1, "{}: in a task", S::NAME);
}

#[test]
fn failure_storm_trips_and_resets() {
    storm::<TripwordCall>();
    storm::<TripwordCallAsync>();
    storm::<TripwordTower>();
}

/// Tripped at start, open for 1 µs: after a pause the next call is the
/// probe, admitted; it fails and reopens the breaker.
fn half_open<S: Subject>() {
    let subject = Arc::new(S::build(&Workload::half_open_storm()).expect("half-open"));
    let mut w = subject.worker();
    std::thread::sleep(Duration::from_millis(2));
    assert!(w.call(Call::FAILURE), "{}: the probe", S::NAME);
}

#[test]
fn half_open_storm_admits_a_probe() {
    half_open::<TripwordCall>();
    half_open::<TripwordCallAsync>();
    half_open::<TripwordTower>();
    half_open::<TowerResilience>();
    half_open::<Seatbelt>();
}

/// The peers never trip in the failure storm: every call is admitted.
fn storm_never_trips<S: Subject>() {
    let subject = Arc::new(S::build(&Workload::failure_storm()).expect("storm"));
    let mut w = subject.worker();
    assert_eq!(
        run_calls(&mut w, &Workload::failure_storm().plan(0), 0, 1000),
        1000,
        "{}",
        S::NAME
    );
}

#[test]
fn peers_never_trip_in_the_failure_storm() {
    storm_never_trips::<Seatbelt>();
    storm_never_trips::<Failsafe>();
    storm_never_trips::<Recloser>();
    storm_never_trips::<TowerResilience>();
}
