//! Your breaker in the lab (`docs/lab.md`): `cargo run --release -p tripword-benches --example my_breaker -- --quick`
use std::sync::Mutex;
use tripword_benches::lab::{Lab, Scenario, SimpleSubject};

/// Consecutive failures behind a lock, and the count that opens it for good.
struct Naive(Mutex<u32>, u32);

impl SimpleSubject for Naive {
    const NAME: &'static str = "naive_mutex";
    fn build(scenario: Scenario) -> Option<Self> {
        match scenario {
            Scenario::Closed => Some(Naive(Mutex::new(0), 5)),
            Scenario::FailureStorm => Some(Naive(Mutex::new(0), u32::MAX)), // never reached
            Scenario::HalfOpenStorm => None, // no half-open state: its cells are skipped
        }
    }
    fn call(&self, ok: bool) -> bool {
        let mut failures = self.0.lock().unwrap();
        if *failures >= self.1 {
            return false; // open: rejected
        }
        *failures = if ok { 0 } else { *failures + 1 };
        true
    }
}

fn main() {
    let lab = Lab::from_args().baselines().simple::<Naive>();
    lab.run().report(&[]);
}
