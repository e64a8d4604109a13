//! A firmware that does nothing but call a static breaker, so its size can be
//! measured: `acquire`, `release` and `status` as separate non-generic,
//! never-inlined functions per word width, on a zero-sized tick-counter clock
//! and no observer. Built without features it is the baseline (vector table,
//! reset handler, an idle loop); the difference is what the breaker costs.
//!
//! Not run anywhere: `cargo size` / `cargo nm` read it (see
//! `docs/embedded.md`, "Footprint").

#![no_std]
#![no_main]

// The critical-section implementation (cortex-m, single core) must be linked.
use core::hint::black_box;
use core::sync::atomic::{AtomicU32, Ordering};
use cortex_m as _;
use cortex_m_rt::{entry, exception};

/// Milliseconds, counted by the SysTick exception: the usual firmware tick.
static TICKS: AtomicU32 = AtomicU32::new(0);

/// The clock: zero-sized, reads the tick counter.
pub struct Ticks;

impl tripword::Clock for Ticks {
    #[inline]
    fn now(&self) -> u64 {
        u64::from(TICKS.load(Ordering::Relaxed))
    }
}

#[exception]
fn SysTick() {
    // Single writer: a load and a store (Cortex-M0 has no atomic add).
    TICKS.store(
        TICKS.load(Ordering::Relaxed).wrapping_add(1),
        Ordering::Relaxed,
    );
}

#[cfg(feature = "w32")]
mod w32 {
    use super::Ticks;
    use tripword::{Breaker32, Config, Outcome, Rejected, Release, Status, Ticket};

    #[unsafe(no_mangle)]
    pub static BREAKER_W32: Breaker32<Ticks> = Breaker32::from_parts(
        Config::new()
            .failure_threshold(5)
            .open_for(1_000)
            .probe_timeout(500),
        Ticks,
        (),
    );

    #[inline(never)]
    #[unsafe(no_mangle)]
    pub fn w32_acquire() -> Result<Ticket, Rejected> {
        BREAKER_W32.acquire()
    }

    #[inline(never)]
    #[unsafe(no_mangle)]
    pub fn w32_release(ticket: Ticket, outcome: Outcome) -> Release {
        BREAKER_W32.release(ticket, outcome)
    }

    #[inline(never)]
    #[unsafe(no_mangle)]
    pub fn w32_status() -> Status {
        BREAKER_W32.status()
    }
}

#[cfg(feature = "w64")]
mod w64 {
    use super::Ticks;
    use tripword::{Breaker, Config, Outcome, Rejected, Release, Status, Ticket};

    #[unsafe(no_mangle)]
    pub static BREAKER_W64: Breaker<Ticks> = Breaker::new(
        Config::new()
            .failure_threshold(5)
            .open_for(1_000)
            .probe_timeout(500),
        Ticks,
    );

    #[inline(never)]
    #[unsafe(no_mangle)]
    pub fn w64_acquire() -> Result<Ticket, Rejected> {
        BREAKER_W64.acquire()
    }

    #[inline(never)]
    #[unsafe(no_mangle)]
    pub fn w64_release(ticket: Ticket, outcome: Outcome) -> Release {
        BREAKER_W64.release(ticket, outcome)
    }

    #[inline(never)]
    #[unsafe(no_mangle)]
    pub fn w64_status() -> Status {
        BREAKER_W64.status()
    }
}

#[cfg(feature = "w32-const-config")]
mod w32_const_config {
    use super::Ticks;
    use portable_atomic::{AtomicU32, Ordering};
    use tripword::transition::{Event, Verdict, apply};
    use tripword::{Clock, Config, Outcome, W32};

    const CONFIG: Config = match Config::new()
        .failure_threshold(5)
        .open_for(1_000)
        .probe_timeout(500)
        .validate::<W32>()
    {
        Ok(c) => c,
        Err(_) => panic!("config out of range"),
    };

    /// The whole breaker in RAM: the word.
    #[unsafe(no_mangle)]
    pub static WORD_W32: AtomicU32 = AtomicU32::new(0);

    #[inline(never)]
    fn run(event: Event) -> Verdict {
        let mut current = WORD_W32.load(Ordering::Acquire);
        loop {
            let step = apply::<W32>(&CONFIG, current, event, || Ticks.now());
            if step.word == current {
                return step.verdict;
            }
            match WORD_W32.compare_exchange_weak(
                current,
                step.word,
                Ordering::AcqRel,
                Ordering::Acquire,
            ) {
                Ok(_) => return step.verdict,
                Err(seen) => current = seen,
            }
        }
    }

    #[inline(never)]
    #[unsafe(no_mangle)]
    pub fn w32c_acquire() -> Verdict {
        run(Event::Admit)
    }

    #[inline(never)]
    #[unsafe(no_mangle)]
    pub fn w32c_release(counter: u32, outcome: Outcome) -> Verdict {
        run(Event::Release { counter, outcome })
    }

    #[inline(never)]
    #[unsafe(no_mangle)]
    pub fn w32c_status() -> Verdict {
        run(Event::Status)
    }
}

#[entry]
fn main() -> ! {
    loop {
        // The outcome is opaque to the optimiser, so every path is kept.
        let outcome = black_box(tripword::Outcome::Failure);
        #[cfg(feature = "w32")]
        {
            if let Ok(t) = w32::w32_acquire() {
                black_box(w32::w32_release(t, outcome));
            }
            black_box(w32::w32_status());
        }
        #[cfg(feature = "w64")]
        {
            if let Ok(t) = w64::w64_acquire() {
                black_box(w64::w64_release(t, outcome));
            }
            black_box(w64::w64_status());
        }
        #[cfg(feature = "w32-const-config")]
        {
            if let tripword::transition::Verdict::Admitted { counter, .. } =
                w32_const_config::w32c_acquire()
            {
                black_box(w32_const_config::w32c_release(counter, outcome));
            }
            black_box(w32_const_config::w32c_status());
        }
        black_box(outcome);
    }
}

#[panic_handler]
fn panic(_: &core::panic::PanicInfo) -> ! {
    loop {
        cortex_m::asm::wfi();
    }
}
