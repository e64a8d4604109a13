//! Breakers declared by name in one place, and a function guarded by one:
//! `breakers!` and `#[breaker]` (feature `macros`). Three failures open the
//! payments breaker; the next charge is answered at once, without calling
//! the provider; after the open time a probe closes it again.
//!
//! Run it with `cargo run -p tripword-std --features macros --example declared`.

use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use std::time::Duration;

use tripword::{OnTransition, Status};
use tripword_std::{Rejection, breaker, breakers};

breakers! {
    /// The payment provider: three failures in a row open it for 100 ms.
    pub PAYMENTS: failure_threshold = 3, open_for = 100ms, probe_timeout = 1s,
        observer = |name| OnTransition(move |t| println!("  [{name}] {t}"));
}

/// Whether the pretend provider is up, and how often it was called.
static PROVIDER_UP: AtomicBool = AtomicBool::new(true);
static PROVIDER_CALLS: AtomicU32 = AtomicU32::new(0);

/// How a charge can fail. A rejected call is an error of its own, so that
/// the caller can tell "the provider said no" from "we did not ask".
#[derive(Debug)]
pub enum PaymentError {
    /// The provider answered with an error.
    ProviderDown,
    /// The breaker is open: the provider was not called.
    Unavailable(Rejection),
}

impl From<Rejection> for PaymentError {
    fn from(rejected: Rejection) -> Self {
        PaymentError::Unavailable(rejected)
    }
}

/// Charges `cents` through the payments breaker.
#[breaker(PAYMENTS)]
pub fn charge(cents: u64) -> Result<String, PaymentError> {
    PROVIDER_CALLS.fetch_add(1, Ordering::SeqCst);
    if PROVIDER_UP.load(Ordering::SeqCst) {
        Ok(format!("charged {cents} cents"))
    } else {
        Err(PaymentError::ProviderDown)
    }
}

fn show(result: Result<String, PaymentError>) {
    match result {
        Ok(receipt) => println!("{receipt}"),
        Err(PaymentError::ProviderDown) => println!("the provider is down"),
        // `circuit 'payments' open: call not admitted (retry after 0.3s)`
        Err(PaymentError::Unavailable(rejected)) => println!("not called: {rejected}"),
    }
}

fn main() {
    println!("breaker `{}`, {:?}", PAYMENTS.name(), PAYMENTS.status());
    show(charge(250));

    PROVIDER_UP.store(false, Ordering::SeqCst);
    for _ in 0..3 {
        show(charge(250));
    }
    let calls = PROVIDER_CALLS.load(Ordering::SeqCst);
    show(charge(250));
    assert_eq!(
        PROVIDER_CALLS.load(Ordering::SeqCst),
        calls,
        "an open breaker called the provider"
    );

    PROVIDER_UP.store(true, Ordering::SeqCst);
    std::thread::sleep(Duration::from_millis(150));
    show(charge(250)); // the probe
    assert_eq!(PAYMENTS.status(), Status::Closed);
    println!("breaker `{}`, {:?}", PAYMENTS.name(), PAYMENTS.status());
}
