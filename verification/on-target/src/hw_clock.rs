//! A hardware clock: SysTick's 24-bit down-counter extended to 64 bits by
//! counting its wraps in the SysTick exception.
//!
//! One tick is `2^TICK_SHIFT` core cycles (256). SysTick reloads every
//! `2^PERIOD_BITS` cycles (4096, so 16 ticks a period); the exception adds one
//! period. `now` reads the period count and the counter with interrupts masked
//! for a handful of instructions, and if the wrap that ends the current period
//! is already pending (`ICSR.PENDSTSET`, the exception has not run yet, for
//! example because we *are* in an exception), counts that period too, so the
//! clock never goes backwards in the main loop or in any handler.
//!
//! That is exact on silicon, where the exception is pended on the same cycle
//! the counter reaches zero. QEMU can show the reloaded counter a moment
//! before it pends the exception (its timer callback runs between translated
//! blocks), which would read as one period back in time; so `now` also never
//! returns less than it returned last (a clock may stall, never go back).
//!
//! DWT's cycle counter would be the other choice on Cortex-M3/M4, but QEMU does
//! not emulate it (`CYCCNT` stays 0) and the Cortex-M0 has none.

use core::cell::Cell;
use core::sync::atomic::{AtomicU32, Ordering};
use cortex_m::interrupt::Mutex;
use cortex_m::peripheral::syst::SystClkSource;
use cortex_m::peripheral::{SCB, SYST};
use tripword::Clock;

/// SysTick period: `2^PERIOD_BITS` core cycles.
pub const PERIOD_BITS: u32 = 12;
/// One tick of the clock: `2^TICK_SHIFT` core cycles.
pub const TICK_SHIFT: u32 = 8;
const RELOAD: u32 = (1 << PERIOD_BITS) - 1;

/// Completed SysTick periods. Written only by the SysTick exception (a load
/// and a store: Cortex-M0 has no atomic read-modify-write), read by `now`.
static PERIODS: AtomicU32 = AtomicU32::new(0);
/// The last value `cycles` returned (read and written with interrupts masked).
static LAST: Mutex<Cell<u64>> = Mutex::new(Cell::new(0));
/// How often that floor was needed (0 on silicon; QEMU, now and then).
static STALLS: AtomicU32 = AtomicU32::new(0);

/// The clock: a zero-sized handle, so a breaker holding it costs no RAM.
#[derive(Clone, Copy, Debug)]
pub struct SysTickClock;

impl SysTickClock {
    /// Starts SysTick on the core clock with its exception enabled, and waits
    /// for its first reload so that the counter is running.
    pub fn start(syst: &mut SYST) {
        syst.disable_counter();
        syst.set_clock_source(SystClkSource::Core);
        syst.set_reload(RELOAD);
        syst.clear_current();
        syst.enable_interrupt();
        syst.enable_counter();
        while SYST::get_current() == 0 {}
    }

    /// Counts a period. Call first thing in the SysTick exception.
    pub fn on_systick() {
        PERIODS.store(
            PERIODS.load(Ordering::Relaxed).wrapping_add(1),
            Ordering::Relaxed,
        );
    }

    /// Core cycles since `start`; never less than the last value returned.
    pub fn cycles() -> u64 {
        cortex_m::interrupt::free(|cs| {
            let periods = PERIODS.load(Ordering::Relaxed) as u64;
            let current = SYST::get_current();
            let (periods, current) = if SCB::is_pendst_pending() {
                // The period has ended but has not been counted. Read the
                // counter again, now surely after the wrap; 0 means it has
                // not reloaded yet: the last cycle of the old period.
                match SYST::get_current() {
                    0 => (periods, 0),
                    after => (periods + 1, after),
                }
            } else {
                (periods, current)
            };
            let read = (periods << PERIOD_BITS) + (RELOAD - current) as u64;
            let last = LAST.borrow(cs).get();
            if read < last {
                STALLS.store(STALLS.load(Ordering::Relaxed) + 1, Ordering::Relaxed);
                return last;
            }
            LAST.borrow(cs).set(read);
            read
        })
    }
}

impl SysTickClock {
    /// Reads that would have gone back in time and returned the last value.
    pub fn stalls() -> u32 {
        STALLS.load(Ordering::Relaxed)
    }
}

impl Clock for SysTickClock {
    fn now(&self) -> u64 {
        Self::cycles() >> TICK_SHIFT
    }
}
