//! The RISC-V side of the test firmware: `riscv32imac` on QEMU's `virt`
//! machine (`qemu-system-riscv32`, Debian's `qemu-system-misc`).
//!
//! It runs the same suites as the Cortex-M builds (lock-freedom, scenarios,
//! the model-checked random run), a breaker on the hardware clock (the
//! CLINT's 64-bit `mtime` counter, 10 MHz on `virt`), and the interrupt suite
//! (`interrupts.rs`): a breaker shared by the main loop and the machine-timer
//! interrupt, which `mtimecmp` raises every 16 clock ticks, the SysTick period
//! of the Cortex-M builds. Its handler is bound through `riscv-rt`'s
//! `#[core_interrupt]` (direct mode: `riscv-rt` points `mtvec` at its trap
//! entry, which dispatches on `mcause`). Only the 32-bit word is shared with
//! the handler, as on Cortex-M3/M4: see `interrupts::SHARED_W64`.

use crate::check::Checks;
use crate::prng::XorShift;
use core::cell::RefCell;
use critical_section::Mutex;
use riscv::interrupt::Interrupt;
use riscv_semihosting::debug;
use tripword::{Clock, Config, Const, ConstBreaker, ConstConfig, Outcome, Status, W32};

/// `mtime` on QEMU `virt`: the CLINT at `0x0200_0000`, `mtime` at `+0xBFF8`.
const MTIME: usize = 0x0200_BFF8;
/// Hart 0's `mtimecmp` on QEMU `virt`: the CLINT at `+0x4000`.
const MTIMECMP: usize = 0x0200_4000;
/// One tick of [`MtimeClock`] is `2^TICK_SHIFT` `mtime` counts (about
/// 102 µs at 10 MHz).
const TICK_SHIFT: u32 = 10;
/// The machine-timer interrupt's period in `mtime` counts: the interrupt
/// suite's period in ticks (16, about 1.6 ms).
const TIMER_PERIOD: u64 = crate::interrupts::HANDLER_PERIOD << TICK_SHIFT;

/// The machine timer as a tripword clock: zero-sized, reads `mtime`.
#[derive(Clone, Copy, Debug)]
pub struct MtimeClock;

impl MtimeClock {
    /// The 64-bit `mtime`, read as two 32-bit halves (RV32 has no 64-bit
    /// load): high, low, high again, retried if the high half moved.
    pub fn mtime() -> u64 {
        let lo = MTIME as *const u32;
        let hi = (MTIME + 4) as *const u32;
        loop {
            // SAFETY: on QEMU `virt` these are the CLINT's `mtime` registers,
            // always mapped and readable; volatile, as hardware changes them.
            let (h1, l, h2) = unsafe {
                (
                    core::ptr::read_volatile(hi),
                    core::ptr::read_volatile(lo),
                    core::ptr::read_volatile(hi),
                )
            };
            if h1 == h2 {
                return (u64::from(h1) << 32) | u64::from(l);
            }
        }
    }

    /// Hart 0's `mtimecmp`, read as two halves: only [`Self::set_mtimecmp`]
    /// writes it, on this hart, and never while this runs.
    fn mtimecmp() -> u64 {
        // SAFETY: the CLINT's `mtimecmp` for hart 0, always mapped on `virt`.
        let (l, h) = unsafe {
            (
                core::ptr::read_volatile(MTIMECMP as *const u32),
                core::ptr::read_volatile((MTIMECMP + 4) as *const u32),
            )
        };
        (u64::from(h) << 32) | u64::from(l)
    }

    /// Sets `mtimecmp` as two 32-bit halves (RV32 has no 64-bit store) in
    /// the standard order: the high half to `u32::MAX` first, so that no
    /// mixture of old and new halves lies in the past and raises a spurious
    /// interrupt; then the low half, then the high half.
    fn set_mtimecmp(at: u64) {
        let lo = MTIMECMP as *mut u32;
        let hi = (MTIMECMP + 4) as *mut u32;
        // SAFETY: the CLINT's `mtimecmp` for hart 0, always mapped and
        // writable in machine mode on `virt`; volatile, it is a device.
        unsafe {
            core::ptr::write_volatile(hi, u32::MAX);
            core::ptr::write_volatile(lo, at as u32);
            core::ptr::write_volatile(hi, (at >> 32) as u32);
        }
    }

    /// Arms the machine-timer interrupt one period from now and enables it
    /// (`mie.MTIE`, then `mstatus.MIE`).
    pub fn start_timer_interrupt() {
        Self::set_mtimecmp(Self::mtime() + TIMER_PERIOD);
        // SAFETY: single hart; nothing here relies on interrupts being
        // masked, and the handler only touches atomics and its own RNG.
        unsafe {
            riscv::interrupt::enable_interrupt(Interrupt::MachineTimer);
            riscv::interrupt::enable();
        }
    }

    /// Re-arms the timer one period after the deadline that just passed; if
    /// the host stalled the emulator past that one too, one period from now
    /// (missed periods are skipped, not delivered in a burst).
    fn rearm() {
        let now = Self::mtime();
        let next = Self::mtimecmp().wrapping_add(TIMER_PERIOD);
        Self::set_mtimecmp(if next > now { next } else { now + TIMER_PERIOD });
    }
}

impl Clock for MtimeClock {
    fn now(&self) -> u64 {
        Self::mtime() >> TICK_SHIFT
    }
}

struct Uplink;
impl ConstConfig for Uplink {
    // Open for 20 ticks (about 2 ms), a probe gets 10.
    const CONFIG: Config = Config::new()
        .failure_threshold(2)
        .open_for(20)
        .probe_timeout(10);
}

/// The default horizon: 128-tick units, so the open time of 20 ticks lasts
/// from 20 up to `20 + 3 * 128` ticks.
static BREAKER: ConstBreaker<Uplink, MtimeClock, W32> =
    ConstBreaker::from_parts(Const::new(), MtimeClock, ());

/// A breaker on the real machine timer: trips, rejects while the time is not
/// up, admits exactly one probe once it is, and closes on its success.
fn hardware_clock(c: &mut Checks) {
    c.suite("hardware clock (mtime)");
    let t0 = MtimeClock.now();
    let mut spins = 0u32;
    while MtimeClock.now() == t0 && spins < 10_000_000 {
        spins += 1;
    }
    c.check(MtimeClock.now() > t0, "mtime advances");
    for _ in 0..2 {
        match BREAKER.acquire() {
            Ok(t) => {
                BREAKER.release(t, Outcome::Failure);
            }
            Err(_) => {
                c.check(false, "closed breaker admits");
            }
        }
    }
    let opened = MtimeClock.now();
    c.eq(BREAKER.status(), Status::Open, "two failures open it");
    c.check(BREAKER.acquire().is_err(), "open rejects at once");
    // The documented bound: less than open_for + 3 * 2^s ticks.
    let latest = BREAKER.config().open_for() + (3 << BREAKER.config().time_shift());
    while MtimeClock.now().wrapping_sub(opened) < latest {}
    let probe = BREAKER.acquire();
    c.check(
        probe.as_ref().is_ok_and(|t| t.is_probe()),
        "after open_for of real time (and the units' rounding), the first caller is the probe",
    );
    c.check(BREAKER.acquire().is_err(), "a second caller is rejected");
    if let Ok(t) = probe {
        c.eq(
            BREAKER.release(t, Outcome::Success),
            tripword::Release::Recorded,
            "the probe's success counts",
        );
    }
    c.eq(BREAKER.status(), Status::Closed, "and closes the breaker");
}

#[riscv_rt::entry]
fn main() -> ! {
    crate::out!(
        "tripword on-target: {} on QEMU {}",
        env!("TRIPWORD_TARGET"),
        env!("TRIPWORD_QEMU_MACHINE"),
    );
    let mut checks = Checks::new();
    crate::lock_free::run(&mut checks);
    crate::scenarios::run(&mut checks);
    crate::recovery::run(&mut checks);
    crate::recovery_random::run(&mut checks);
    crate::random_run::run(&mut checks);
    crate::sparse::run(&mut checks);
    hardware_clock(&mut checks);
    MtimeClock::start_timer_interrupt();
    crate::interrupts::run(&mut checks);
    crate::table_log::run(&mut checks);
    crate::finish(&mut checks);
    halt()
}

/// The handler's random source, used only by the interrupt handler (which
/// does not nest); the mutex just makes that `static mut`-free.
static RNG: Mutex<RefCell<XorShift>> = Mutex::new(RefCell::new(XorShift::new(0x1357_9BDF)));

/// The machine-timer interrupt: re-arms `mtimecmp`, then runs the handler's
/// share of the interrupt suite.
#[riscv_rt::core_interrupt(Interrupt::MachineTimer)]
fn machine_timer() {
    MtimeClock::rearm();
    critical_section::with(|cs| {
        crate::interrupts::on_timer_interrupt(&mut RNG.borrow_ref_mut(cs));
    });
}

/// After a semihosting exit (QEMU has already stopped).
fn halt() -> ! {
    loop {
        core::hint::spin_loop();
    }
}

#[panic_handler]
fn panic(info: &core::panic::PanicInfo) -> ! {
    crate::out!("FAIL: panic: {}", info);
    debug::exit(debug::EXIT_FAILURE);
    halt()
}
