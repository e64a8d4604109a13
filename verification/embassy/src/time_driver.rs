//! An embassy time driver on SysTick, written for this example (the
//! mps2-an386 board has no embassy HAL).
//!
//! SysTick interrupts once per tick (1 kHz: `tick-hz-1_000` on
//! `embassy-time-driver`); its handler counts the tick and wakes the timers
//! that are due. `now` reads the count; `schedule_wake` puts the waker in
//! embassy's integrated timer queue, which the next tick checks. Both run
//! in a critical section, so thread-mode tasks and the handler never see
//! the count or the queue half-written. The only `unsafe` is in
//! `time_driver_impl!`, which exports the two functions `embassy-time`
//! links against.

use core::cell::{Cell, RefCell};
use core::task::Waker;

use cortex_m::peripheral::SYST;
use cortex_m::peripheral::syst::SystClkSource;
use cortex_m_rt::exception;
use critical_section::Mutex;
use embassy_time_driver::{Driver, TICK_HZ};
use embassy_time_queue_utils::Queue;

/// The core clock of QEMU's mps2-an386 (`SYSCLK`, 25 MHz), which SysTick
/// counts with its core clock source.
pub const CORE_HZ: u32 = 25_000_000;
const RELOAD: u32 = CORE_HZ / TICK_HZ as u32 - 1;

struct SysTickDriver {
    /// Ticks since `start`.
    ticks: Mutex<Cell<u64>>,
    /// The timers waiting for a tick.
    queue: Mutex<RefCell<Queue>>,
}

impl Driver for SysTickDriver {
    fn now(&self) -> u64 {
        critical_section::with(|cs| self.ticks.borrow(cs).get())
    }

    fn schedule_wake(&self, at: u64, waker: &Waker) {
        critical_section::with(|cs| {
            // The queue returns whether the next expiry moved; nothing to
            // re-arm: every tick looks at the queue.
            let _ = self.queue.borrow_ref_mut(cs).schedule_wake(at, waker);
        });
    }
}

embassy_time_driver::time_driver_impl!(static DRIVER: SysTickDriver = SysTickDriver {
    ticks: Mutex::new(Cell::new(0)),
    queue: Mutex::new(RefCell::new(Queue::new())),
});

/// Starts SysTick: one interrupt per embassy tick.
pub fn start(syst: &mut SYST) {
    syst.disable_counter();
    syst.set_clock_source(SystClkSource::Core);
    syst.set_reload(RELOAD);
    syst.clear_current();
    syst.enable_interrupt();
    syst.enable_counter();
}

#[exception]
fn SysTick() {
    critical_section::with(|cs| {
        let ticks = DRIVER.ticks.borrow(cs);
        let now = ticks.get() + 1;
        ticks.set(now);
        // Wakes every timer due by now; the next expiry it returns is
        // checked again on the next tick anyway.
        let _ = DRIVER.queue.borrow_ref_mut(cs).next_expiration(now);
    });
}
