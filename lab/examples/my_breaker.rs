//! Your breaker in the lab (`docs/lab.md`): `cargo run --release -p tripword-lab --example my_breaker -- --quick`
use std::sync::Mutex;
use tripword_lab::{Call, Lab, Setup, SimpleSubject, Workload};

/// Consecutive failures behind a lock, and the count that opens it for good.
struct Naive(Mutex<u32>, u32);

impl SimpleSubject for Naive {
    const NAME: &'static str = "naive_mutex";
    fn build(workload: &Workload) -> Option<Self> {
        match workload.setup {
            Setup::Trips => Some(Naive(Mutex::new(0), 5)),
            Setup::NeverTrips => Some(Naive(Mutex::new(0), u32::MAX)), // never reached
            Setup::Tripped => None, // no half-open state: its cells are skipped
        }
    }
    fn call(&self, call: Call) -> bool {
        let mut failures = self.0.lock().unwrap();
        if *failures >= self.1 {
            return false; // open: rejected
        }
        *failures = if call.perform() { 0 } else { *failures + 1 };
        true
    }
}

fn main() {
    let lab = Lab::from_args().baselines().simple::<Naive>();
    lab.run().report(&[]);
}
