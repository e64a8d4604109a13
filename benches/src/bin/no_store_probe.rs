//! Runs `tripword`'s closed path and, as a control, its failure path on
//! `static` breakers between markers, for `tests/no_store.rs` to trace with
//! valgrind's `lackey` tool (every load and store, with its address).
//!
//! ```text
//! no-store-probe [CALLS]
//! ```
//!
//! Prints the address and size of each breaker, of the clock and of the
//! marker, then makes `CALLS` calls (default 100) in four windows, each
//! opened and closed by a store to the marker: closed calls on the 64-bit
//! word, closed calls on the 32-bit word, failure calls on the 64-bit word,
//! failure calls on the 32-bit word.

use std::hint::black_box;
use std::sync::atomic::{AtomicU64, Ordering, fence};

use tripword::clock::ManualClock;
use tripword::{Breaker, Config, ValidConfig, W32, W64, Word};
use tripword_benches::probe::{
    Breaker32, Breaker64, closed_call_w32, closed_call_w64, failure_call_w32, failure_call_w64,
};

static CLOCK: ManualClock = ManualClock::new(0);
// Thresholds the failure windows cannot reach: every failure is counted
// (a compare-and-swap) and none trips.
static B64: Breaker64 = Breaker::new(
    Config::new()
        .failure_threshold(W64::LAYOUT.max_failures())
        .open_for(100),
    &CLOCK,
);
static B32: Breaker32 = Breaker::from_parts(
    ValidConfig::new(
        Config::new()
            .failure_threshold(W32::LAYOUT.max_failures())
            .open_for(100),
    ),
    &CLOCK,
    (),
);
static MARK: AtomicU64 = AtomicU64::new(0);

fn mark(n: u64) {
    // A plain store (one `S` in the trace); the fences keep the calls on
    // their side of it.
    fence(Ordering::SeqCst);
    MARK.store(n, Ordering::Relaxed);
    fence(Ordering::SeqCst);
}

fn show<T>(name: &str, item: &T) {
    println!(
        "{name} {:#x} {}",
        std::ptr::from_ref(item).addr(),
        size_of_val(item)
    );
}

fn main() {
    let calls: u64 = std::env::args()
        .nth(1)
        .and_then(|a| a.parse().ok())
        .unwrap_or(100);
    show("breaker64", &B64);
    show("breaker32", &B32);
    show("clock", &CLOCK);
    show("mark", &MARK);
    let max = u64::from(W32::LAYOUT.max_failures());
    let calls = calls.min(max - 1);

    mark(1);
    for _ in 0..calls {
        black_box(closed_call_w64(black_box(&B64)));
    }
    mark(2);
    for _ in 0..calls {
        black_box(closed_call_w32(black_box(&B32)));
    }
    mark(3);
    for _ in 0..calls {
        black_box(failure_call_w64(black_box(&B64)));
    }
    mark(4);
    for _ in 0..calls {
        black_box(failure_call_w32(black_box(&B32)));
    }
    mark(5);
    println!("calls {calls}");
}
