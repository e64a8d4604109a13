//! The RISC-V side of the test firmware: `riscv32imac` on QEMU's `virt`
//! machine (`qemu-system-riscv32`, Debian's `qemu-system-misc`).
//!
//! It runs the same portable suites as the Cortex-M builds (lock-freedom,
//! scenarios, the model-checked random run) and a breaker on the hardware
//! clock: the CLINT's 64-bit `mtime` counter (10 MHz on `virt`). The
//! exception-handler suite (a breaker shared with the SysTick handler) is
//! Cortex-M only: on RISC-V it would need the machine-timer interrupt wired
//! through `riscv-rt`, which this firmware does not do yet.

use crate::check::Checks;
use riscv_semihosting::debug;
use tripword::{Breaker, Clock, Config, ConstConfig, Outcome, Status, W32};

/// `mtime` on QEMU `virt`: the CLINT at `0x0200_0000`, `mtime` at `+0xBFF8`.
const MTIME: usize = 0x0200_BFF8;
/// One tick of [`MtimeClock`] is `2^TICK_SHIFT` `mtime` counts (about
/// 102 µs at 10 MHz).
const TICK_SHIFT: u32 = 10;

/// The machine timer as a tripword clock: zero-sized, reads `mtime`.
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

static BREAKER: Breaker<MtimeClock, W32, (), tripword::config::Const<Uplink>> =
    Breaker::from_const(MtimeClock, ());

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
    while MtimeClock.now().wrapping_sub(opened) < 25 {}
    let probe = BREAKER.acquire();
    c.check(
        probe.as_ref().is_ok_and(|t| t.is_probe()),
        "after open_for of real time, the first caller is the probe",
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
    crate::random_run::run(&mut checks);
    hardware_clock(&mut checks);
    crate::finish(&mut checks);
    halt()
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
